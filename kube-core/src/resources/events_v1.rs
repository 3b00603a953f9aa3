//! `events.k8s.io/v1`: Events in the new shape (`note`, `regarding`,
//! `reportingController`), served from the core/v1 Event storage.
//!
//! As upstream (core and events.k8s.io events cohabit, stored as core/v1 at
//! `/registry/events/<ns>/<name>`), both versions show the same objects,
//! converted field by field the way upstream's `pkg/apis/events/v1`
//! conversion does: `regarding` ↔ `involvedObject`, `note` ↔ `message`,
//! `reportingController` ↔ `reportingComponent`, `deprecatedSource` ↔
//! `source`, `deprecatedFirstTimestamp`/`deprecatedLastTimestamp`/
//! `deprecatedCount` ↔ `firstTimestamp`/`lastTimestamp`/`count`; `series`,
//! `eventTime`, `action`, `reason`, `type`, `related` and
//! `reportingInstance` keep their names.

use std::sync::Arc;

use apiserver::registry::resource::ResourceDef;
use serde_json::{Map, Value};

use super::event_validation::EventStrategy;

/// (events.k8s.io/v1 field, core/v1 field).
const RENAMED: [(&str, &str); 7] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Fields with the same name in both versions.
const SAME: [&str; 8] = [
    "metadata",
    "eventTime",
    "series",
    "reportingInstance",
    "action",
    "reason",
    "related",
    "type",
];

/// events.k8s.io/v1 Event, served from `core_event` (the core/v1 Event
/// declaration: same keys and Table columns; validation adds upstream's
/// strict events.k8s.io/v1 rules to the core ones). Field selectors are
/// upstream's field labels of events.k8s.io/v1 (`reason`, `regarding.*`,
/// `reportingController`, `type`), read on the served form.
pub fn definition(core_event: &ResourceDef) -> ResourceDef {
    let mut storage = core_event.clone();
    storage.strategy = Arc::new(EventStrategy { strict: true });
    let mut def = super::served_as::<k8s_openapi::api::events::v1::Event>(
        &storage,
        Arc::new(|o: &Value| Ok(to_core(o))),
        Arc::new(|o: &Value| Ok(from_core(o))),
    );
    let labels = [
        ("reason", "reason"),
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("regarding.apiVersion", "involvedObject.apiVersion"),
        (
            "regarding.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("regarding.fieldPath", "involvedObject.fieldPath"),
        ("reportingController", "reportingComponent"),
        ("type", "type"),
    ];
    def.selectable_fields = labels.iter().map(|(s, _)| s.to_string()).collect();
    def.field_labels = labels
        .iter()
        .map(|(s, c)| (s.to_string(), c.to_string()))
        .collect();
    def.indexed_fields.clear();
    def
}

fn convert(
    o: &Value,
    api_version: &str,
    pairs: impl Iterator<Item = (&'static str, &'static str)>,
) -> Value {
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::String(api_version.into()));
    out.insert("kind".into(), Value::String("Event".into()));
    for (from, to) in pairs {
        if let Some(v) = o.get(from) {
            out.insert(to.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// An events.k8s.io/v1 Event as core/v1 stores it.
pub fn to_core(o: &Value) -> Value {
    convert(
        o,
        "v1",
        SAME.iter().map(|f| (*f, *f)).chain(RENAMED.iter().copied()),
    )
}

/// A stored core/v1 Event as events.k8s.io/v1.
pub fn from_core(o: &Value) -> Value {
    convert(
        o,
        "events.k8s.io/v1",
        SAME.iter()
            .map(|f| (*f, *f))
            .chain(RENAMED.iter().map(|(a, b)| (*b, *a))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_both_ways() {
        let new = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "d"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
            "action": "Sync", "reason": "Synced", "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "d"},
            "note": "done", "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"},
            "deprecatedSource": {"component": "ctl"}, "deprecatedCount": 3,
        });
        let core = to_core(&new);
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "p");
        assert_eq!(core["message"], "done");
        assert_eq!(core["reportingComponent"], "example.com/ctl");
        assert_eq!(core["source"]["component"], "ctl");
        assert_eq!(core["count"], 3);
        assert_eq!(core["series"]["count"], 2);
        assert!(core.get("note").is_none());
        assert_eq!(from_core(&core), new);
    }
}
