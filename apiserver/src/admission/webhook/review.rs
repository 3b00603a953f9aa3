//! `AdmissionReview` (`admission.k8s.io/v1`, or `v1beta1` for a webhook that
//! only speaks it): the request built from a write's attributes and the
//! answer checked as upstream's `VerifyAdmissionResponse` checks it.

use base64::Engine;
use serde_json::{json, Map, Value};

use crate::admission::{Attributes, Operation};

/// The version of `admission.k8s.io` a webhook is sent, from its
/// `admissionReviewVersions` (the first one known).
pub fn review_version(accepted: &[String]) -> Result<&'static str, String> {
    accepted
        .iter()
        .find_map(|v| match v.as_str() {
            "v1" => Some("v1"),
            "v1beta1" => Some("v1beta1"),
            _ => None,
        })
        .ok_or_else(|| {
            "webhook does not accept known AdmissionReview versions (v1, v1beta1)".into()
        })
}

/// The resource and kind a webhook is sent the object as (the request's own,
/// or an equivalent version's under `matchPolicy: Equivalent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub resource: String,
    /// Group and version of the kind (the resource's unless the object is
    /// a subresource's body of another group, such as `policy/v1` Eviction).
    pub kind_group: String,
    pub kind_version: String,
    pub kind: String,
}

impl Gvk {
    /// The request's own resource and kind.
    pub fn of(attrs: &Attributes<'_>) -> Gvk {
        let r = attrs.resource;
        let (kind_group, kind_version, kind) = match attrs.kind {
            Some((g, v, k)) => (g.to_string(), v.to_string(), k.to_string()),
            None => (r.group.clone(), r.version.clone(), r.kind.clone()),
        };
        Gvk {
            group: r.group.clone(),
            version: r.version.clone(),
            resource: r.resource.clone(),
            kind_group,
            kind_version,
            kind,
        }
    }
}

/// The `request` of an AdmissionReview (also CEL's `request` variable).
pub fn admission_request(
    attrs: &Attributes<'_>,
    uid: &str,
    sent_as: &Gvk,
    object: Option<&Value>,
    old_object: Option<&Value>,
) -> Value {
    let own = Gvk::of(attrs);
    let mut req = Map::new();
    req.insert("uid".into(), json!(uid));
    req.insert(
        "kind".into(),
        json!({"group": sent_as.kind_group, "version": sent_as.kind_version, "kind": sent_as.kind}),
    );
    req.insert(
        "resource".into(),
        json!({"group": sent_as.group, "version": sent_as.version, "resource": sent_as.resource}),
    );
    if !attrs.subresource.is_empty() {
        req.insert("subResource".into(), json!(attrs.subresource));
    }
    req.insert(
        "requestKind".into(),
        json!({"group": own.kind_group, "version": own.kind_version, "kind": own.kind}),
    );
    req.insert(
        "requestResource".into(),
        json!({"group": own.group, "version": own.version, "resource": own.resource}),
    );
    if !attrs.subresource.is_empty() {
        req.insert("requestSubResource".into(), json!(attrs.subresource));
    }
    if !attrs.name.is_empty() {
        req.insert("name".into(), json!(attrs.name));
    }
    let namespace = request_namespace(attrs);
    if !namespace.is_empty() {
        req.insert("namespace".into(), json!(namespace));
    }
    req.insert("operation".into(), json!(attrs.operation.as_str()));
    let mut user = Map::new();
    if let Some(u) = attrs.user {
        if !u.name.is_empty() {
            user.insert("username".into(), json!(u.name));
        }
        if !u.uid.is_empty() {
            user.insert("uid".into(), json!(u.uid));
        }
        if !u.groups.is_empty() {
            user.insert("groups".into(), json!(u.groups));
        }
        if !u.extra.is_empty() {
            user.insert("extra".into(), json!(u.extra));
        }
    }
    req.insert("userInfo".into(), Value::Object(user));
    req.insert("object".into(), object.cloned().unwrap_or(Value::Null));
    req.insert(
        "oldObject".into(),
        old_object.cloned().unwrap_or(Value::Null),
    );
    req.insert("dryRun".into(), json!(attrs.dry_run));
    let kind = match attrs.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
        Operation::Connect => "",
    };
    let options = if kind.is_empty() {
        Value::Null
    } else {
        let mut o = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
        if attrs.dry_run {
            o["dryRun"] = json!(["All"]);
        }
        o
    };
    req.insert("options".into(), options);
    Value::Object(req)
}

/// The namespace as admission names it: a namespace's own name for a write
/// of the namespace object (upstream sets it so).
pub fn request_namespace<'a>(attrs: &'a Attributes<'a>) -> &'a str {
    if attrs.is("", "namespaces") {
        attrs.name
    } else {
        attrs.namespace
    }
}

/// The whole review to send.
pub fn review(version: &str, request: Value) -> Value {
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": request,
    })
}

/// A webhook's verified answer.
#[derive(Debug, Default)]
pub struct Answer {
    pub allowed: bool,
    /// `response.status`, the reason of a denial.
    pub status: Option<Value>,
    /// The decoded JSON Patch (mutating webhooks only).
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
    pub audit_annotations: Map<String, Value>,
}

/// Checks the answer as upstream does; the error is upstream's message.
pub fn verify(version: &str, uid: &str, mutating: bool, answer: &Value) -> Result<Answer, String> {
    let response = answer
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("webhook response was absent")?;
    if version == "v1" {
        let api_version = answer
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = answer.get("kind").and_then(Value::as_str).unwrap_or("");
        if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let (group, ver) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            return Err(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {group}/{ver}, Kind={kind}"
            ));
        }
    }
    let got = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let patch = response
        .get("patch")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    let patch_type = response
        .get("patchType")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    let patch = if mutating {
        match (patch, patch_type) {
            (Some(_), None) if version == "v1" => {
                return Err("webhook returned response.patch but not response.patchType".into())
            }
            (None, Some(_)) if version == "v1" => {
                return Err("webhook returned response.patchType but not response.patch".into())
            }
            (_, Some(t)) if t != "JSONPatch" => {
                return Err(format!(
                    "webhook returned invalid response.patchType of {t:?}"
                ))
            }
            (Some(p), _) => Some(
                base64::engine::general_purpose::STANDARD
                    .decode(p)
                    .map_err(|e| format!("response.patch is not base64: {e}"))?,
            ),
            (None, _) => None,
        }
    } else {
        if patch.is_some() {
            return Err("validating webhook may not return response.patch".into());
        }
        if patch_type.is_some() {
            return Err("validating webhook may not return response.patchType".into());
        }
        None
    };
    Ok(Answer {
        allowed: response
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: response.get("status").filter(|s| s.is_object()).cloned(),
        patch,
        warnings: response
            .get("warnings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        audit_annotations: response
            .get("auditAnnotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(uid: &str) -> Value {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
               "response": {"uid": uid, "allowed": true}})
    }

    #[test]
    fn verifies_like_upstream() {
        assert!(verify("v1", "u", false, &ok("u")).unwrap().allowed);
        assert_eq!(
            verify("v1", "u", false, &ok("x")).unwrap_err(),
            r#"expected response.uid="u", got "x""#
        );
        assert_eq!(
            verify("v1", "u", false, &json!({})).unwrap_err(),
            "webhook response was absent"
        );
        let mut wrong = ok("u");
        wrong["apiVersion"] = json!("v1");
        assert_eq!(
            verify("v1", "u", false, &wrong).unwrap_err(),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /v1, Kind=AdmissionReview"
        );
        let mut patched = ok("u");
        patched["response"]["patch"] = json!("W10=");
        assert_eq!(
            verify("v1", "u", true, &patched).unwrap_err(),
            "webhook returned response.patch but not response.patchType"
        );
        assert_eq!(
            verify("v1", "u", false, &patched).unwrap_err(),
            "validating webhook may not return response.patch"
        );
        patched["response"]["patchType"] = json!("JSONPatch");
        assert_eq!(
            verify("v1", "u", true, &patched).unwrap().patch,
            Some(b"[]".to_vec())
        );
        patched["response"]["patchType"] = json!("Merge");
        assert_eq!(
            verify("v1", "u", true, &patched).unwrap_err(),
            r#"webhook returned invalid response.patchType of "Merge""#
        );
    }

    #[test]
    fn picks_a_known_review_version() {
        assert_eq!(
            review_version(&["v2".into(), "v1beta1".into()]),
            Ok("v1beta1")
        );
        assert!(review_version(&["v2".into()]).is_err());
    }
}
