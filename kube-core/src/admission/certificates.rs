//! The certificate plugins (upstream's `plugin/pkg/admission/certificates`):
//!
//! - CertificateApproval: approving or denying a CertificateSigningRequest
//!   (`certificatesigningrequests/approval`) needs the `approve` verb on
//!   `signers` for its `signerName` (or `<domain>/*`);
//! - CertificateSigning: changing a CSR's `status.certificate` or
//!   conditions (`/status`) needs the `sign` verb likewise;
//! - CertificateSubjectRestriction: no CSR for the
//!   `kubernetes.io/kube-apiserver-client` signer may ask for the
//!   `system:masters` group;
//! - ClusterTrustBundleAttest: writing a ClusterTrustBundle with a
//!   `signerName` needs the `attest` verb on that signer (an update that
//!   only changes owner references or finalizers does not).

use std::sync::Arc;

use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use apiserver::authorization::{self, Authorizer, Decision};
use apiserver::request::info::RequestInfo;
use base64::Engine;
use futures_util::future::BoxFuture;
use serde_json::Value;

use super::forbidden;

const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";

fn signer_name(csr: &Value) -> &str {
    csr.pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Upstream's `IsAuthorizedForSignerName`: `verb` on `signers` named
/// `signer`, or on `<domain>/*`.
async fn authorized_for_signer(
    authorizer: &dyn Authorizer,
    attrs: &Attributes<'_>,
    verb: &str,
    signer: &str,
) -> bool {
    let Some(user) = attrs.user else {
        return false;
    };
    let domain_wildcard = format!("{}/*", signer.split('/').next().unwrap_or(""));
    for name in [signer, domain_wildcard.as_str()] {
        let request = RequestInfo {
            is_resource_request: true,
            verb: verb.into(),
            api_group: "certificates.k8s.io".into(),
            api_version: "*".into(),
            resource: "signers".into(),
            name: name.into(),
            ..Default::default()
        };
        let decision = authorizer
            .authorize(&authorization::Attributes {
                user,
                request: &request,
            })
            .await;
        if decision == Decision::Allow {
            return true;
        }
    }
    false
}

fn is_csr(attrs: &Attributes<'_>, subresource: &str) -> bool {
    attrs.is("certificates.k8s.io", "certificatesigningrequests")
        && attrs.subresource == subresource
        && attrs.operation == Operation::Update
}

/// CertificateApproval.
pub struct CertificateApproval {
    pub authorizer: Arc<dyn Authorizer>,
}

impl AdmissionPlugin for CertificateApproval {
    fn name(&self) -> &'static str {
        "CertificateApproval"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let (true, Some(old)) = (is_csr(attrs, "approval"), attrs.old_object) else {
                return Ok(());
            };
            let signer = signer_name(old);
            if authorized_for_signer(self.authorizer.as_ref(), attrs, "approve", signer).await {
                return Ok(());
            }
            Err(forbidden(
                attrs,
                &format!("user not permitted to approve requests with signerName {signer:?}"),
            ))
        })
    }
}

/// CertificateSigning.
pub struct CertificateSigning {
    pub authorizer: Arc<dyn Authorizer>,
}

impl AdmissionPlugin for CertificateSigning {
    fn name(&self) -> &'static str {
        "CertificateSigning"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let (true, Some(old), Some(new)) =
                (is_csr(attrs, "status"), attrs.old_object, attrs.object)
            else {
                return Ok(());
            };
            let same = |p: &str| old.pointer(p) == new.pointer(p);
            if same("/status/certificate") && same("/status/conditions") {
                return Ok(());
            }
            let signer = signer_name(old);
            if authorized_for_signer(self.authorizer.as_ref(), attrs, "sign", signer).await {
                return Ok(());
            }
            Err(forbidden(
                attrs,
                &format!("user not permitted to sign requests with signerName {signer:?}"),
            ))
        })
    }
}

/// ClusterTrustBundleAttest.
pub struct ClusterTrustBundleAttest {
    pub authorizer: Arc<dyn Authorizer>,
}

/// Whether `new` differs from `old` only in the garbage collector's
/// fields (owner references, finalizers) and bookkeeping metadata.
fn only_gc_fields_changed(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in [
                "ownerReferences",
                "finalizers",
                "managedFields",
                "resourceVersion",
                "generation",
            ] {
                m.remove(k);
            }
        }
        v
    };
    strip(new) == strip(old)
}

impl AdmissionPlugin for ClusterTrustBundleAttest {
    fn name(&self) -> &'static str {
        "ClusterTrustBundleAttest"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            if !attrs.is("certificates.k8s.io", "clustertrustbundles")
                || !matches!(attrs.operation, Operation::Create | Operation::Update)
            {
                return Ok(());
            }
            let Some(bundle) = attrs.object else {
                return Ok(());
            };
            let signer = signer_name(bundle);
            if signer.is_empty() {
                return Ok(());
            }
            if let (Operation::Update, Some(old)) = (attrs.operation, attrs.old_object) {
                if only_gc_fields_changed(bundle, old) {
                    return Ok(());
                }
            }
            if authorized_for_signer(self.authorizer.as_ref(), attrs, "attest", signer).await {
                return Ok(());
            }
            Err(forbidden(
                attrs,
                &format!("user not permitted to attest for signerName {signer:?}"),
            ))
        })
    }
}

/// CertificateSubjectRestriction.
pub struct CertificateSubjectRestriction;

/// The organizations (groups) of the subject of a PEM CSR.
fn requested_groups(pem: &[u8]) -> Result<Vec<String>, String> {
    use x509_parser::prelude::FromDer;
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem).map_err(|e| e.to_string())?;
    if pem.label != "CERTIFICATE REQUEST" && pem.label != "NEW CERTIFICATE REQUEST" {
        return Err(format!(
            "PEM block type must be CERTIFICATE REQUEST, not {:?}",
            pem.label
        ));
    }
    let (_, csr) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&pem.contents)
            .map_err(|e| e.to_string())?;
    Ok(csr
        .certification_request_info
        .subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(str::to_string)
        .collect())
}

impl AdmissionPlugin for CertificateSubjectRestriction {
    fn name(&self) -> &'static str {
        "CertificateSubjectRestriction"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        let result = (|| {
            let (true, Some(csr)) = (
                attrs.is("certificates.k8s.io", "certificatesigningrequests")
                    && attrs.subresource.is_empty()
                    && attrs.operation == Operation::Create,
                attrs.object,
            ) else {
                return Ok(());
            };
            if signer_name(csr) != KUBE_APISERVER_CLIENT {
                return Ok(());
            }
            let request = csr
                .pointer("/spec/request")
                .and_then(Value::as_str)
                .unwrap_or("");
            let pem = base64::engine::general_purpose::STANDARD
                .decode(request)
                .map_err(|e| forbidden(attrs, &format!("failed to parse CSR: {e}")))?;
            let groups = requested_groups(&pem)
                .map_err(|e| forbidden(attrs, &format!("failed to parse CSR: {e}")))?;
            if groups.iter().any(|g| g == "system:masters") {
                return Err(forbidden(
                    attrs,
                    &format!("use of {KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed"),
                ));
            }
            Ok(())
        })();
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gc_field_changes_are_told_apart() {
        let old = serde_json::json!({"metadata": {"name": "b", "resourceVersion": "1"}, "spec": {"signerName": "a/b"}});
        let mut new = old.clone();
        new["metadata"]["finalizers"] = serde_json::json!(["x"]);
        assert!(only_gc_fields_changed(&new, &old));
        new["spec"]["trustBundle"] = serde_json::json!("pem");
        assert!(!only_gc_fields_changed(&new, &old));
    }

    #[test]
    fn reads_the_groups_of_a_csr() {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "alice");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "system:masters");
        let csr = params.serialize_request(&key).expect("csr");
        let pem = csr.pem().expect("pem");
        assert_eq!(
            requested_groups(pem.as_bytes()),
            Ok(vec!["system:masters".to_string()])
        );
        assert!(requested_groups(b"not pem").is_err());
    }
}
