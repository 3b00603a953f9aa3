//! `certificates.k8s.io/v1`: CertificateSigningRequests, ClusterTrustBundles
//! and PodCertificateRequests (both GA in v1.37).

use apiserver::apimachinery::validation::FieldError;
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::certificates::v1;
use serde_json::{json, Value};

use super::columns::{array_at, str_or};
use super::kind;

/// certificates.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        csr(),
        kind::<v1::ClusterTrustBundle>()
            // Upstream names signer-linked bundles `<signer with / as :>:<suffix>`.
            .name_rule(apiserver::apimachinery::validation::NameRule::PathSegment)
            .selectable_fields(&["spec.signerName"])
            .columns(vec![Column::path("SignerName", "spec.signerName")])
            .strategy(ClusterTrustBundleStrategy),
        kind::<v1::PodCertificateRequest>()
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
            .selectable_fields(&["spec.signerName", "spec.podName", "spec.nodeName"])
            .columns(vec![
                Column::path("PodName", "spec.podName"),
                Column::path("ServiceAccountName", "spec.serviceAccountName"),
                Column::path("NodeName", "spec.nodeName"),
                Column::path("SignerName", "spec.signerName"),
                Column::func("State", "string", pod_certificate_request_state),
                Column::func("UnverifiedUserAnnotations", "string", |o| {
                    json!(super::columns::format_labels(lookup(
                        o,
                        "spec.unverifiedUserAnnotations"
                    )))
                })
                .wide(),
            ])
            .strategy(PodCertificateRequestStrategy),
    ]
}

fn csr() -> ResourceDef {
    kind::<v1::CertificateSigningRequest>()
        .short_names(&["csr"])
        .with_status()
        .selectable_fields(&["spec.signerName"])
        .with_custom_subresource(super::part_subresources::csr_approval())
        .columns(vec![
            Column::age(),
            Column::path("SignerName", "spec.signerName"),
            Column::path("Requestor", "spec.username"),
            Column::func("RequestedDuration", "string", |o| {
                json!(
                    match lookup(o, "spec.expirationSeconds").and_then(Value::as_i64) {
                        Some(s) => apiserver::registry::table::human_duration(s),
                        None => "<none>".into(),
                    }
                )
            }),
            Column::func("Condition", "string", csr_condition),
        ])
        .strategy(CsrStrategy)
}

/// Upstream's printer: `Issued`, `Denied` and `Failed` are exclusive
/// condition types; without one the request is `Pending`.
fn pod_certificate_request_state(o: &Value) -> Value {
    let mut state = "Pending";
    for c in array_at(o, "status.conditions") {
        match c.get("type").and_then(Value::as_str) {
            Some("Issued") => state = "Issued",
            Some("Denied") => state = "Denied",
            Some("Failed") => state = "Failed",
            _ => {}
        }
    }
    json!(state)
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

/// ClusterTrustBundles: `spec.trustBundle` required; `spec.signerName`
/// cannot change (a bundle's signer decides who may write it).
pub struct ClusterTrustBundleStrategy;

impl Strategy for ClusterTrustBundleStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if str_or(obj, "spec.trustBundle", "").is_empty() {
            errs.push(FieldError::required("spec.trustBundle", ""));
        }
        let signer = str_or(obj, "spec.signerName", "");
        let name = str_or(obj, "metadata.name", "");
        if !signer.is_empty() {
            // Upstream: a signer-linked bundle is named `<signer with / as :>:<suffix>`.
            let prefix = format!("{}:", signer.replace('/', ":"));
            if !name.starts_with(&prefix) {
                errs.push(FieldError::invalid(
                    "metadata.name",
                    json!(name),
                    &format!("ClusterTrustBundle for signerName {signer} must be named with prefix {prefix}"),
                ));
            }
        } else if name.contains(':') {
            errs.push(FieldError::invalid(
                "metadata.name",
                json!(name),
                "ClusterTrustBundle without signer name must not have \":\" in its name",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if lookup(new, "spec.signerName") != lookup(old, "spec.signerName") {
            errs.push(FieldError::invalid(
                "spec.signerName",
                lookup(new, "spec.signerName")
                    .cloned()
                    .unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
        errs
    }
}

/// PodCertificateRequests: the identity fields and the stub request are
/// required and the spec is immutable; the signer answers through `/status`.
pub struct PodCertificateRequestStrategy;

const PCR_REQUIRED: [&str; 8] = [
    "spec.signerName",
    "spec.podName",
    "spec.podUID",
    "spec.serviceAccountName",
    "spec.serviceAccountUID",
    "spec.nodeName",
    "spec.nodeUID",
    "spec.stubPKCS10Request",
];

impl Strategy for PodCertificateRequestStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        PCR_REQUIRED
            .iter()
            .filter(|p| str_or(obj, p, "").is_empty())
            .map(|p| FieldError::required(p, ""))
            .collect()
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
