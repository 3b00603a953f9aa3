//! Validation of Events, after upstream 1.33's
//! `pkg/apis/core/validation/events.go` (`ValidateEventCreate`,
//! `ValidateEventUpdate`).
//!
//! Both versions are validated on the stored core/v1 form. Every Event
//! passes upstream's legacy checks (namespaces agree; an Event with an
//! `eventTime` names its reporting controller and instance, action and
//! reason, within upstream's length limits); events.k8s.io/v1 requests are
//! held to the strict rules as well (`eventTime` required, `type` Normal or
//! Warning, the deprecated fields unset, a valid `series`, and on update
//! everything but the series and metadata immutable). Field paths are the
//! ones upstream reports: the internal (core) field names, except that the
//! reporting controller is `reportingComponent` for core/v1 requests.

use apiserver::apimachinery::validation::names::{is_dns1123_subdomain, is_qualified_name};
use apiserver::apimachinery::validation::object_meta::validate_immutable_field;
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::strategy::Strategy;
use serde_json::{Map, Value};

/// `ReportingInstanceLengthLimit`, `ActionLengthLimit`, `ReasonLengthLimit`.
const SHORT_LIMIT: usize = 128;
/// `NoteLengthLimit`.
const NOTE_LIMIT: usize = 1024;

/// The strategy of Events; `strict` for events.k8s.io/v1 requests.
pub struct EventStrategy {
    /// Whether the events.k8s.io/v1 rules apply on top of the legacy ones.
    pub strict: bool,
}

impl Strategy for EventStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = legacy(obj, self.strict);
        if self.strict {
            errs.extend(strict_create(obj));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = legacy(new, self.strict);
        if self.strict {
            errs.extend(strict_update(new, old));
        }
        errs
    }
}

fn text<'a>(o: &'a Value, pointer: &str) -> &'a str {
    o.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Whether a timestamp field is Go's zero time (absent, null or empty).
fn zero_time(o: &Value, key: &str) -> bool {
    match o.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty() || s.starts_with("0001-01-01T00:00:00"),
        Some(_) => false,
    }
}

fn too_long(field: &str, limit: usize) -> FieldError {
    FieldError::invalid(field, "", format!("can have at most {limit} characters"))
}

/// `legacyValidateEvent`.
fn legacy(e: &Value, events_v1: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ns = text(e, "/metadata/namespace");
    let involved_ns = text(e, "/involvedObject/namespace");
    let mismatch = || {
        FieldError::invalid(
            "involvedObject.namespace",
            involved_ns,
            "does not match event.namespace",
        )
    };
    if zero_time(e, "eventTime") {
        let agree = if involved_ns.is_empty() {
            ns.is_empty() || ns == "default"
        } else {
            ns == involved_ns
        };
        if !agree {
            errs.push(mismatch());
        }
    } else {
        if involved_ns.is_empty() && ns != "default" && ns != "kube-system" {
            errs.push(mismatch());
        }
        let controller_field = if events_v1 {
            "reportingController"
        } else {
            "reportingComponent"
        };
        let controller = text(e, "/reportingComponent");
        if controller.is_empty() {
            errs.push(FieldError::required(controller_field, ""));
        }
        for msg in is_qualified_name(controller) {
            errs.push(FieldError::invalid(controller_field, controller, msg));
        }
        for (field, limit) in [
            ("reportingInstance", SHORT_LIMIT),
            ("action", SHORT_LIMIT),
            ("reason", SHORT_LIMIT),
        ] {
            let v = text(e, &format!("/{field}"));
            if v.is_empty() {
                errs.push(FieldError::required(field, ""));
            }
            if v.len() > limit {
                errs.push(too_long(field, limit));
            }
        }
        if text(e, "/message").len() > NOTE_LIMIT {
            errs.push(too_long("message", NOTE_LIMIT));
        }
    }
    for msg in is_dns1123_subdomain(ns) {
        errs.push(FieldError::invalid("namespace", ns, msg));
    }
    errs
}

/// `validateV1EventSeries`.
fn series(e: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(s) = e.get("series").filter(|s| !s.is_null()) {
        if s.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
            errs.push(FieldError::invalid(
                "series.count",
                "",
                "should be at least 2",
            ));
        }
        if zero_time(s, "lastObservedTime") {
            errs.push(FieldError::required("series.lastObservedTime", ""));
        }
    }
    errs
}

/// The strict part of `ValidateEventCreate` (events.k8s.io/v1).
fn strict_create(e: &Value) -> Vec<FieldError> {
    let mut errs = series(e);
    if zero_time(e, "eventTime") {
        errs.push(FieldError::required("eventTime", ""));
    }
    let ty = text(e, "/type");
    if ty != "Normal" && ty != "Warning" {
        errs.push(FieldError::invalid(
            "type",
            "",
            format!("has invalid value: {ty}"),
        ));
    }
    let unset = |field: &str| FieldError::invalid(field, "", "needs to be unset");
    for f in ["firstTimestamp", "lastTimestamp"] {
        if !zero_time(e, f) {
            errs.push(unset(f));
        }
    }
    if e.get("count").and_then(Value::as_i64).unwrap_or(0) != 0 {
        errs.push(unset("count"));
    }
    if !text(e, "/source/component").is_empty() || !text(e, "/source/host").is_empty() {
        errs.push(unset("source"));
    }
    errs
}

/// A value with Go's zero values (null, `""`, `0`, `false`, empty
/// objects and lists) removed, so that absent and zero compare equal as
/// they do on upstream's typed objects.
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let out: Map<String, Value> = m
                .iter()
                .map(|(k, v)| (k.clone(), normalized(v)))
                .filter(|(_, v)| !is_zero(v))
                .collect();
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
    }
}

fn field_of(o: &Value, key: &str) -> Value {
    normalized(o.get(key).unwrap_or(&Value::Null))
}

/// `eventTime` to the microsecond (upstream tolerates sub-microsecond
/// changes from clients that truncate or serialize nanoseconds).
fn event_time_micros(o: &Value) -> Option<i128> {
    o.get("eventTime")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_microsecond() as i128)
}

/// The strict part of `ValidateEventUpdate` (events.k8s.io/v1).
fn strict_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if field_of(new, "series") != field_of(old, "series") {
        errs.extend(series(new));
    }
    let immutable = |errs: &mut Vec<FieldError>, key: &str| {
        let (n, o) = (field_of(new, key), field_of(old, key));
        if n != o {
            let raw_new = new.get(key).cloned().unwrap_or(Value::Null);
            let raw_old = old.get(key).cloned().unwrap_or(Value::Null);
            errs.extend(validate_immutable_field(
                &raw_new,
                &raw_old,
                &FieldPath::new(key),
            ));
        }
    };
    // Upstream's order, `reason` checked twice.
    for key in [
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "reason",
        "type",
    ] {
        immutable(&mut errs, key);
    }
    let times_differ = match (event_time_micros(new), event_time_micros(old)) {
        (Some(n), Some(o)) => n != o,
        _ => field_of(new, "eventTime") != field_of(old, "eventTime"),
    };
    if times_differ {
        immutable(&mut errs, "eventTime");
    }
    for key in [
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ] {
        if key == "reportingComponent" {
            let (n, o) = (field_of(new, key), field_of(old, key));
            if n != o {
                errs.push(FieldError::invalid(
                    "reportingController",
                    new.get(key).cloned().unwrap_or(Value::Null),
                    "field is immutable",
                ));
            }
        } else {
            immutable(&mut errs, key);
        }
    }
    errs
}
