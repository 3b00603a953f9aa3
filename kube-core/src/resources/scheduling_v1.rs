//! `scheduling.k8s.io/v1`: PriorityClasses.

use apiserver::apimachinery::validation::FieldError;
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::scheduling::v1;
use serde_json::{json, Value};

use super::columns::{int_at, str_or};
use super::kind;

/// scheduling.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![kind::<v1::PriorityClass>()
        .short_names(&["pc"])
        .columns(vec![
            Column::func("Value", "integer", |o| json!(int_at(o, "value"))),
            Column::func("Global-Default", "boolean", |o| {
                json!(lookup(o, "globalDefault").and_then(Value::as_bool) == Some(true))
            }),
            Column::age(),
            Column::func("PreemptionPolicy", "string", |o| {
                json!(str_or(o, "preemptionPolicy", "PreemptLowerPriority"))
            }),
        ])
        .strategy(PriorityClassStrategy)]
}

/// PriorityClasses: `preemptionPolicy` defaults to `PreemptLowerPriority`;
/// `value`, `preemptionPolicy` are immutable.
pub struct PriorityClassStrategy;

impl Strategy for PriorityClassStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            m.entry("preemptionPolicy")
                .or_insert_with(|| json!("PreemptLowerPriority"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        match obj.get("preemptionPolicy").and_then(Value::as_str) {
            None | Some("PreemptLowerPriority") | Some("Never") => {}
            Some(other) => errs.push(FieldError::not_supported(
                "preemptionPolicy",
                json!(other),
                &["Never", "PreemptLowerPriority"],
            )),
        }
        let name = lookup(obj, "metadata.name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let value = int_at(obj, "value");
        if name.starts_with("system-") && value <= 1_000_000_000 {
            errs.push(FieldError::forbidden(
                "metadata.name",
                "name prefix 'system-' is reserved for system use only",
            ));
        } else if value > 1_000_000_000 && !name.starts_with("system-") {
            errs.push(FieldError::forbidden(
                "value",
                "maximum allowed value of a user defined priority is 1000000000",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if new.get("value") != old.get("value") {
            errs.push(FieldError::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        errs
    }
}
