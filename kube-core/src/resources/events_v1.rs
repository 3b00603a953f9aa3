//! `events.k8s.io/v1`: Events in the new shape (`note`, `regarding`,
//! `reportingController`).
//!
//! Upstream stores both Event versions under `/registry/events` and converts
//! between them. This server has no cross-version conversion yet, so
//! events.k8s.io Events live under their own key prefix and are not visible
//! through core/v1 (and the reverse).

use serde_json::{json, Value};
use shared::registry::resource::ResourceDef;
use shared::registry::table::{lookup, Column};

use super::columns::{int_at, since, str_or};

/// events.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![ResourceDef::new("events.k8s.io", "v1", "Event", "events")
        .short_names(&["ev"])
        .storage_path("events.k8s.io/events")
        .without_name_column()
        .columns(vec![
            Column::func("Last Seen", "string", |o| {
                for p in [
                    "series.lastObservedTime",
                    "deprecatedLastTimestamp",
                    "eventTime",
                ] {
                    if lookup(o, p).and_then(Value::as_str).is_some() {
                        return json!(since(o, p));
                    }
                }
                json!("<unknown>")
            }),
            Column::path("Type", "type"),
            Column::path("Reason", "reason"),
            Column::func("Object", "string", |o| {
                json!(format!(
                    "{}/{}",
                    str_or(o, "regarding.kind", "").to_lowercase(),
                    str_or(o, "regarding.name", "")
                ))
            }),
            Column::path("Subobject", "regarding.fieldPath").wide(),
            Column::func("Source", "string", |o| {
                let c = str_or(o, "reportingController", "");
                let h = str_or(o, "reportingInstance", "");
                json!(if h.is_empty() { c } else { format!("{c}, {h}") })
            })
            .wide(),
            Column::path("Message", "note"),
            Column::func("First Seen", "string", |o| {
                json!(if lookup(o, "deprecatedFirstTimestamp").is_some() {
                    since(o, "deprecatedFirstTimestamp")
                } else {
                    since(o, "eventTime")
                })
            })
            .wide(),
            Column::func("Count", "integer", |o| {
                json!(lookup(o, "series.count")
                    .and_then(Value::as_i64)
                    .unwrap_or_else(|| int_at(o, "deprecatedCount")))
            })
            .wide(),
            Column::path("Name", "metadata.name").wide(),
        ])]
}
