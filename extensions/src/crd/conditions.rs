//! CRD status conditions (`NamesAccepted`, `Established`, `Terminating`).

use apiserver::apimachinery::meta;
use serde_json::{json, Value};

/// The condition of `type_`, if set.
pub fn get<'a>(crd: &'a Value, type_: &str) -> Option<&'a Value> {
    crd.get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Whether condition `type_` is `True`.
pub fn is_true(crd: &Value, type_: &str) -> bool {
    get(crd, type_)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

/// Sets a condition; `lastTransitionTime` changes only when the status does.
/// Returns whether anything changed.
pub fn set(crd: &mut Value, type_: &str, status: &str, reason: &str, message: &str) -> bool {
    let Value::Object(obj) = crd else {
        return false;
    };
    let st = obj.entry("status").or_insert_with(|| json!({}));
    if !st.is_object() {
        *st = json!({});
    }
    let Some(st) = st.as_object_mut() else {
        return false;
    };
    let conds = st.entry("conditions").or_insert_with(|| json!([]));
    if !conds.is_array() {
        *conds = json!([]);
    }
    let Some(conds) = conds.as_array_mut() else {
        return false;
    };
    let now = meta::now_rfc3339();
    match conds
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
    {
        Some(c) => {
            let same_status = c.get("status").and_then(Value::as_str) == Some(status);
            if same_status
                && c.get("reason").and_then(Value::as_str) == Some(reason)
                && c.get("message").and_then(Value::as_str) == Some(message)
            {
                return false;
            }
            let ltt = if same_status {
                c.get("lastTransitionTime").cloned().unwrap_or(json!(now))
            } else {
                json!(now)
            };
            *c = json!({"type": type_, "status": status, "lastTransitionTime": ltt, "reason": reason, "message": message});
        }
        None => conds.push(json!({"type": type_, "status": status, "lastTransitionTime": now, "reason": reason, "message": message})),
    }
    true
}
