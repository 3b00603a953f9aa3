//! `coordination.k8s.io/v1`: Leases (leader election, node heartbeats).

use apiserver::apimachinery::validation::FieldError;
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::coordination::v1;
use serde_json::{json, Value};

use super::kind;

/// coordination.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![kind::<v1::Lease>()
        .columns(vec![
            Column::path("Holder", "spec.holderIdentity"),
            Column::age(),
        ])
        .strategy(LeaseStrategy)]
}

/// Leases: upstream's `ValidateLeaseSpec`.
pub struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if let Some(d) = lookup(obj, "spec.leaseDurationSeconds").and_then(Value::as_i64) {
            if d <= 0 {
                errs.push(FieldError::invalid(
                    "spec.leaseDurationSeconds",
                    json!(d),
                    "must be greater than 0",
                ));
            }
        }
        if let Some(t) = lookup(obj, "spec.leaseTransitions").and_then(Value::as_i64) {
            if t < 0 {
                errs.push(FieldError::invalid(
                    "spec.leaseTransitions",
                    json!(t),
                    "must be greater than or equal to 0",
                ));
            }
        }
        errs
    }
}
