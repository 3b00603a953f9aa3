//! `resource.k8s.io/v1`: dynamic resource allocation (DeviceClasses,
//! ResourceClaims and their templates, ResourceSlices, DeviceTaintRules).
//! The scheduler's and controller manager's informers need them served
//! before they start; allocation itself is the scheduler's work.

use apiserver::apimachinery::validation::FieldError;
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::{SpecStrategy, Strategy};
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::resource::v1;
use serde_json::{json, Value};

use super::columns::{array_at, str_or};
use super::kind;

/// resource.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        kind::<v1::DeviceClass>()
            .returns_deleted_object()
            .columns(vec![Column::age()])
            .strategy(SpecStrategy),
        kind::<v1::ResourceClaim>()
            .returns_deleted_object()
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
            .columns(vec![
                Column::func("State", "string", |o| json!(resource_claim_state(o))),
                Column::age(),
            ])
            .strategy(ResourceClaimStrategy),
        kind::<v1::ResourceClaimTemplate>()
            .returns_deleted_object()
            .columns(vec![Column::age()])
            .strategy(SpecStrategy),
        kind::<v1::ResourceSlice>()
            .returns_deleted_object()
            .selectable_fields(&["spec.nodeName", "spec.driver"])
            .columns(vec![
                Column::path("Node", "spec.nodeName"),
                Column::path("Driver", "spec.driver"),
                Column::path("Pool", "spec.pool.name"),
                Column::age(),
            ])
            .strategy(SpecStrategy),
        kind::<v1::DeviceTaintRule>()
            .returns_deleted_object()
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
            .columns(vec![Column::age()])
            .strategy(SpecStrategy),
    ]
}

/// Upstream's `resourceClaimState`: `deleted`, then `pending` or
/// `allocated` (with `reserved` when something uses the claim).
fn resource_claim_state(o: &Value) -> String {
    let mut states = Vec::new();
    let deleting = lookup(o, "metadata.deletionTimestamp").is_some_and(|v| !v.is_null());
    if deleting {
        states.push("deleted");
    }
    match lookup(o, "status.allocation").filter(|a| a.is_object()) {
        None if !deleting => states.push("pending"),
        None => {}
        Some(_) => {
            states.push("allocated");
            if !array_at(o, "status.reservedFor").is_empty() {
                states.push("reserved");
            }
        }
    }
    states.join(",")
}

/// ResourceClaims: the spec is immutable (upstream's
/// `ValidateResourceClaimUpdate`); status is written by the scheduler and
/// the resource claim controller through `/status`.
pub struct ResourceClaimStrategy;

impl Strategy for ResourceClaimStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for (i, r) in array_at(obj, "spec.devices.requests").iter().enumerate() {
            if str_or(r, "name", "").is_empty() {
                errs.push(FieldError::required(
                    format!("spec.devices.requests[{i}].name"),
                    "",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if new.get("spec") != old.get("spec") {
            errs.push(FieldError::invalid(
                "spec",
                new.get("spec").cloned().unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_states_as_upstream_prints_them() {
        assert_eq!(resource_claim_state(&json!({"metadata": {}})), "pending");
        assert_eq!(
            resource_claim_state(
                &json!({"status": {"allocation": {}, "reservedFor": [{"name": "p"}]}})
            ),
            "allocated,reserved"
        );
        assert_eq!(
            resource_claim_state(
                &json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})
            ),
            "deleted"
        );
    }

    #[test]
    fn claim_spec_is_immutable() {
        let old = json!({"spec": {"devices": {"requests": [{"name": "gpu"}]}}});
        let new = json!({"spec": {"devices": {"requests": [{"name": "tpu"}]}}});
        let errs = ResourceClaimStrategy.validate_update(&new, &old);
        assert_eq!(errs.len(), 1);
        assert!(ResourceClaimStrategy.validate_update(&old, &old).is_empty());
    }
}
