//! `authorization.k8s.io/v1`: SubjectAccessReview (asked by aggregated API
//! servers for delegated authorization) and SelfSubjectAccessReview
//! (`kubectl auth can-i`), answered by this server's authorizer.

use std::sync::Arc;

use serde_json::{json, Value};
use shared::authentication::UserInfo;
use shared::authorization::{Attributes, Authorizer, Decision};
use shared::endpoints::discovery::GroupSet;
use shared::endpoints::handlers::{decode_json, json_response, read_body};
use shared::endpoints::request_info::RequestInfo;
use shared::endpoints::status::{ApiError, GroupResource};
use shared::registry::resource::ResourceDef;
use shared::registry::validation::FieldError;

const GROUP: &str = "authorization.k8s.io";

/// Registers the access reviews, decided by `authorizer`.
pub fn register(groups: &mut GroupSet, authorizer: Arc<dyn Authorizer>) {
    for (kind, plural, self_review) in [
        ("SubjectAccessReview", "subjectaccessreviews", false),
        ("SelfSubjectAccessReview", "selfsubjectaccessreviews", true),
    ] {
        let def = ResourceDef::new(GROUP, "v1", kind, plural)
            .cluster_scoped()
            .verbs(&["create"]);
        let authorizer = authorizer.clone();
        groups.add_handler(
            def,
            Arc::new(move |req, info| {
                let authorizer = authorizer.clone();
                Box::pin(async move {
                    let gr = GroupResource {
                        group: GROUP,
                        resource: plural,
                    };
                    if info.verb != "create" || !info.name.is_empty() {
                        return ApiError::method_not_supported(gr, &info.verb).into_response();
                    }
                    let caller = req.extensions().get::<UserInfo>().cloned();
                    let ct = req
                        .headers()
                        .get(http::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok());
                    if !matches!(
                        shared::endpoints::negotiation::body_format(ct),
                        Ok(shared::endpoints::negotiation::BodyFormat::Json)
                    ) {
                        return ApiError::unsupported_media_type(
                            ct.unwrap_or(""),
                            &["application/json"],
                        )
                        .into_response();
                    }
                    let body = match read_body(req).await {
                        Ok(b) => b,
                        Err(e) => return e.into_response(),
                    };
                    let review = match decode_json(&body) {
                        Ok(v) => v,
                        Err(e) => return e.into_response(),
                    };
                    let spec = review.get("spec").cloned().unwrap_or(json!({}));
                    let user = if self_review {
                        caller.unwrap_or_default()
                    } else {
                        subject(&spec)
                    };
                    let errors = validate(&spec, self_review);
                    if !errors.is_empty() {
                        return ApiError::invalid(GROUP, kind, "", &errors).into_response();
                    }
                    let status = decide(authorizer.as_ref(), &user, &spec);
                    let mut spec_out = spec.clone();
                    if self_review {
                        if let Some(m) = spec_out.as_object_mut() {
                            m.retain(|k, _| {
                                k == "resourceAttributes" || k == "nonResourceAttributes"
                            });
                        }
                    }
                    let out = json!({
                        "kind": kind,
                        "apiVersion": "authorization.k8s.io/v1",
                        "metadata": {"creationTimestamp": null},
                        "spec": spec_out,
                        "status": status,
                    });
                    json_response(201, &out, false)
                })
            }),
        );
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The user a SubjectAccessReview asks about.
fn subject(spec: &Value) -> UserInfo {
    let strings = |key: &str| -> Vec<String> {
        spec.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let extra = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let vals = v
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                    (k.clone(), vals)
                })
                .collect()
        })
        .unwrap_or_default();
    UserInfo {
        name: str_at(spec, "user").to_string(),
        uid: str_at(spec, "uid").to_string(),
        groups: strings("groups"),
        extra,
    }
}

/// Upstream's `ValidateSubjectAccessReviewSpec` (and the self variant).
fn validate(spec: &Value, self_review: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let res = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    match (res, non) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            "spec.nonResourceAttributes",
            non.cloned().unwrap_or(Value::Null).to_string(),
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => errs.push(FieldError::invalid(
            "spec.resourceAttributes",
            "nil",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    if !self_review
        && str_at(spec, "user").is_empty()
        && spec
            .get("groups")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    {
        errs.push(FieldError::invalid(
            "spec.user",
            "",
            "at least one of user or group must be specified",
        ));
    }
    errs
}

/// The request the review describes, as the authorizer sees requests.
fn request_info(spec: &Value) -> RequestInfo {
    if let Some(r) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
        RequestInfo {
            is_resource_request: true,
            verb: str_at(r, "verb").to_string(),
            api_group: str_at(r, "group").to_string(),
            api_version: str_at(r, "version").to_string(),
            namespace: str_at(r, "namespace").to_string(),
            resource: str_at(r, "resource").to_string(),
            subresource: str_at(r, "subresource").to_string(),
            name: str_at(r, "name").to_string(),
            ..RequestInfo::default()
        }
    } else {
        let n = spec
            .get("nonResourceAttributes")
            .cloned()
            .unwrap_or(Value::Null);
        RequestInfo {
            is_resource_request: false,
            path: str_at(&n, "path").to_string(),
            verb: str_at(&n, "verb").to_string(),
            ..RequestInfo::default()
        }
    }
}

/// The review's status.
fn decide(authorizer: &dyn Authorizer, user: &UserInfo, spec: &Value) -> Value {
    let info = request_info(spec);
    match authorizer.authorize(&Attributes {
        user,
        request: &info,
    }) {
        Decision::Allow => json!({"allowed": true}),
        Decision::Deny(reason) => json!({"allowed": false, "denied": true, "reason": reason}),
        Decision::NoOpinion(reason) if reason.is_empty() => json!({"allowed": false}),
        Decision::NoOpinion(reason) => json!({"allowed": false, "reason": reason}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct OnlyGets;

    impl Authorizer for OnlyGets {
        fn authorize(&self, attrs: &Attributes<'_>) -> Decision {
            if attrs.request.verb == "get" && attrs.user.name == "alice" {
                Decision::Allow
            } else {
                Decision::NoOpinion(String::new())
            }
        }
    }

    #[test]
    fn decisions_follow_the_authorizer() {
        let spec =
            json!({"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}});
        assert_eq!(
            decide(&OnlyGets, &subject(&spec), &spec),
            json!({"allowed": true})
        );
        let spec =
            json!({"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods"}});
        assert_eq!(
            decide(&OnlyGets, &subject(&spec), &spec),
            json!({"allowed": false})
        );
    }

    #[test]
    fn exactly_one_kind_of_attributes_and_a_subject() {
        let errs = validate(&json!({}), false);
        assert_eq!(errs.len(), 2);
        assert!(errs[0]
            .message_body()
            .contains("exactly one of nonResourceAttributes or resourceAttributes"));
        assert!(errs[1]
            .message_body()
            .contains("at least one of user or group must be specified"));
        assert!(validate(
            &json!({"nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            true
        )
        .is_empty());
    }
}
