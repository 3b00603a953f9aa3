//! The CRD strategy: defaults, validation, `status.storedVersions`, and the
//! cleanup finalizer added on delete (upstream's
//! `registry/customresourcedefinition/strategy.go` and `etcd.go`).

use apiserver::apimachinery::meta;
use apiserver::apimachinery::validation::FieldError;
use apiserver::registry::strategy::Strategy;
use serde_json::{json, Value};

use super::{conditions, storage_version, CLEANUP_FINALIZER};

/// Behaviour of CustomResourceDefinitions.
pub struct CrdStrategy;

/// Upstream's defaults for a v1 CRD: `singular`, `listKind`, conversion
/// strategy `None`.
fn set_defaults(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let empty = |v: Option<&Value>| v.and_then(Value::as_str).is_none_or(str::is_empty);
        if empty(names.get("singular")) && !kind.is_empty() {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if empty(names.get("listKind")) && !kind.is_empty() {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    let conv = spec.entry("conversion").or_insert_with(|| json!({}));
    if let Some(c) = conv.as_object_mut() {
        c.entry("strategy").or_insert_with(|| json!("None"));
    }
}

/// Adds the storage version to `status.storedVersions` when missing.
fn record_storage_version(crd: &mut Value) {
    let Some(storage) = storage_version(crd).map(str::to_string) else {
        return;
    };
    let Value::Object(obj) = crd else {
        return;
    };
    let status = obj.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    if let Some(st) = status.as_object_mut() {
        let stored = st.entry("storedVersions").or_insert_with(|| json!([]));
        if !stored.is_array() {
            *stored = json!([]);
        }
        if let Some(list) = stored.as_array_mut() {
            if !list.iter().any(|v| v.as_str() == Some(&storage)) {
                list.push(json!(storage));
            }
        }
    }
}

impl Strategy for CrdStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj);
        if let Value::Object(m) = obj {
            m.insert(
                "status".into(),
                json!({"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}),
            );
        }
        record_storage_version(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        set_defaults(new);
        record_storage_version(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        super::validation::validate(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        super::validation::validate_update(new, old)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn retain_on_delete(&self, obj: &mut Value) -> bool {
        if meta::is_deleting(obj) {
            return false;
        }
        let mut finalizers = meta::finalizers(obj);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.to_string());
        }
        meta::set(obj, "finalizers", json!(finalizers));
        conditions::set(
            obj,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        );
        true
    }
}
