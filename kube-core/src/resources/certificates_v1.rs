//! `certificates.k8s.io/v1`: CertificateSigningRequests.

use serde_json::{json, Value};
use shared::registry::resource::ResourceDef;
use shared::registry::strategy::Strategy;
use shared::registry::table::{lookup, Column};
use shared::registry::validation::FieldError;

use super::columns::{array_at, str_or};

/// certificates.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![ResourceDef::new(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
    )
    .cluster_scoped()
    .short_names(&["csr"])
    .with_status()
    .selectable_fields(&["spec.signerName"])
    .with_custom_subresource(super::subresources::csr_approval())
    .columns(vec![
        Column::age(),
        Column::path("SignerName", "spec.signerName"),
        Column::path("Requestor", "spec.username"),
        Column::func("RequestedDuration", "string", |o| {
            json!(
                match lookup(o, "spec.expirationSeconds").and_then(Value::as_i64) {
                    Some(s) => shared::registry::table::human_duration(s),
                    None => "<none>".into(),
                }
            )
        }),
        Column::func("Condition", "string", csr_condition),
    ])
    .strategy(CsrStrategy)]
}

fn csr_condition(o: &Value) -> Value {
    let mut conds: Vec<String> = array_at(o, "status.conditions")
        .iter()
        .map(|c| str_or(c, "type", ""))
        .collect();
    if conds.is_empty() {
        return json!("Pending");
    }
    if !array_at(o, "status.certificate").is_empty()
        || lookup(o, "status.certificate")
            .and_then(Value::as_str)
            .is_some_and(|c| !c.is_empty())
    {
        conds.push("Issued".into());
    }
    json!(conds.join(","))
}

/// CSRs: `spec.request` and `spec.signerName` required; `spec.usages`
/// defaulted by clients only; the requester identity is set by the server
/// from the authenticated user (not available to the strategy, so kept as
/// sent).
pub struct CsrStrategy;

impl Strategy for CsrStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if str_or(obj, "spec.request", "").is_empty() {
            errs.push(FieldError::required("spec.request", ""));
        }
        if str_or(obj, "spec.signerName", "").is_empty() {
            errs.push(FieldError::required("spec.signerName", ""));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
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
