//! `authorization.k8s.io/v1`: SubjectAccessReview (asked by aggregated API
//! servers for delegated authorization), LocalSubjectAccessReview,
//! SelfSubjectAccessReview (`kubectl auth can-i`), answered by this server's
//! authorizer, and SelfSubjectRulesReview (`kubectl auth can-i --list`),
//! answered from the RBAC rules.

use std::sync::Arc;

use apiserver::apimachinery::errors::{ApiError, GroupResource};
use apiserver::apimachinery::validation::FieldError;
use apiserver::authentication::UserInfo;
use apiserver::authorization::rbac::{review_rules, RbacAuthorizer};
use apiserver::authorization::{Attributes, Authorizer, Decision};
use apiserver::endpoints::handlers::{read_object_body, respond_to_object_only, Query};
use apiserver::registry::catalog::Catalog;
use apiserver::registry::resource::ResourceDef;
use apiserver::request::info::RequestInfo;
use k8s_openapi::api::authorization::v1 as authorization;
use k8s_openapi::Resource;
use serde_json::{json, Value};

const GROUP: &str = "authorization.k8s.io";

/// Which review a request is.
#[derive(Clone, Copy, PartialEq)]
enum Review {
    Subject,
    SelfSubject,
    Local,
    SelfRules,
}

/// One review resource: which review it is, its declaration (names and
/// scope from its type), its resource name and kind.
struct ReviewResource {
    review: Review,
    declare: fn() -> ResourceDef,
    plural: &'static str,
    kind: &'static str,
}

impl ReviewResource {
    const fn of<T>(review: Review) -> Self
    where
        T: Resource + schemars::JsonSchema,
        T::Scope: 'static,
    {
        ReviewResource {
            review,
            declare: super::kind::<T>,
            plural: T::URL_PATH_SEGMENT,
            kind: T::KIND,
        }
    }
}

/// The four reviews.
const REVIEWS: [ReviewResource; 4] = [
    ReviewResource::of::<authorization::SubjectAccessReview>(Review::Subject),
    ReviewResource::of::<authorization::SelfSubjectAccessReview>(Review::SelfSubject),
    ReviewResource::of::<authorization::LocalSubjectAccessReview>(Review::Local),
    ReviewResource::of::<authorization::SelfSubjectRulesReview>(Review::SelfRules),
];

/// Registers the access reviews, decided by `authorizer`; rules reviews
/// list what `rbac` grants (not served without it).
pub fn register(
    groups: &mut Catalog,
    authorizer: Arc<dyn Authorizer>,
    rbac: Option<Arc<RbacAuthorizer>>,
) {
    for ReviewResource {
        review,
        declare,
        plural,
        kind,
    } in REVIEWS
    {
        if review == Review::SelfRules && rbac.is_none() {
            continue;
        }
        let def = declare().verbs(&["create"]);
        let authorizer = authorizer.clone();
        let rbac = rbac.clone();
        groups.add_handler(
            def,
            Arc::new(move |req, info| {
                let authorizer = authorizer.clone();
                let rbac = rbac.clone();
                Box::pin(async move {
                    let gr = GroupResource {
                        group: GROUP,
                        resource: plural,
                    };
                    if info.verb != "create" || !info.name.is_empty() {
                        return ApiError::method_not_supported(gr, &info.verb).into_response();
                    }
                    let caller = req.extensions().get::<UserInfo>().cloned();
                    let (headers, query) = (req.headers().clone(), Query::of(&info));
                    let review_obj = match read_object_body(req).await {
                        Ok(Value::Null) => {
                            return ApiError::bad_request("the body of the request was empty")
                                .into_response()
                        }
                        Ok(v) => v,
                        Err(e) => return e.into_response(),
                    };
                    let spec = review_obj.get("spec").cloned().unwrap_or(json!({}));
                    let mut metadata = json!({"creationTimestamp": null});
                    let (status, spec_out) = match review {
                        Review::SelfRules => {
                            let user = caller.unwrap_or_default();
                            let ns = str_at(&spec, "namespace").to_string();
                            let status = match &rbac {
                                Some(rbac) => rules_status(rbac, &user, &ns),
                                None => json!({"incomplete": true}),
                            };
                            (status, json!({"namespace": ns}))
                        }
                        _ => {
                            let self_review = review == Review::SelfSubject;
                            let user = if self_review {
                                caller.unwrap_or_default()
                            } else {
                                subject(&spec)
                            };
                            let mut errors = validate(&spec, self_review);
                            if review == Review::Local {
                                let body_ns = review_obj
                                    .pointer("/metadata/namespace")
                                    .and_then(Value::as_str)
                                    .unwrap_or("");
                                if !body_ns.is_empty() && body_ns != info.namespace {
                                    return ApiError::bad_request(
                                        "the namespace of the provided object does not match the namespace sent on the request",
                                    )
                                    .into_response();
                                }
                                errors.extend(validate_local(&spec, &info.namespace));
                                metadata["namespace"] = json!(info.namespace);
                            }
                            if !errors.is_empty() {
                                return ApiError::invalid(GROUP, kind, "", &errors).into_response();
                            }
                            let status = decide(authorizer.as_ref(), &user, &spec).await;
                            let mut spec_out = spec.clone();
                            if self_review {
                                if let Some(m) = spec_out.as_object_mut() {
                                    m.retain(|k, _| {
                                        k == "resourceAttributes" || k == "nonResourceAttributes"
                                    });
                                }
                            }
                            (status, spec_out)
                        }
                    };
                    let out = json!({
                        "kind": kind,
                        "apiVersion": "authorization.k8s.io/v1",
                        "metadata": metadata,
                        "spec": spec_out,
                        "status": status,
                    });
                    respond_to_object_only(&headers, &query, 201, &out)
                })
            }),
        );
    }
}

/// A SelfSubjectRulesReview's status: what RBAC grants `user` in `ns`.
fn rules_status(rbac: &RbacAuthorizer, user: &UserInfo, ns: &str) -> Value {
    let (rules, errors) = rbac.read(|index| index.rules_for(user, ns));
    let (resource_rules, non_resource_rules) = review_rules(&rules);
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !rbac.synced(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    status
}

/// Upstream's `ValidateLocalSubjectAccessReview` beyond the spec rules.
fn validate_local(spec: &Value, namespace: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(n) = spec.get("nonResourceAttributes").filter(|v| !v.is_null()) {
        errs.push(FieldError::invalid(
            "spec.nonResourceAttributes",
            n.to_string(),
            "disallowed on this kind of request",
        ));
    }
    if let Some(r) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
        let ns = str_at(r, "namespace");
        if ns != namespace {
            errs.push(FieldError::invalid(
                "spec.resourceAttributes.namespace",
                ns,
                "must match metadata.namespace",
            ));
        }
    }
    errs
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
async fn decide(authorizer: &dyn Authorizer, user: &UserInfo, spec: &Value) -> Value {
    let info = request_info(spec);
    match authorizer
        .authorize(&Attributes {
            user,
            request: &info,
        })
        .await
    {
        Decision::Allow => json!({"allowed": true}),
        Decision::Deny(reason) => json!({"allowed": false, "denied": true, "reason": reason}),
        Decision::NoOpinion(reason) if reason.is_empty() => json!({"allowed": false}),
        Decision::NoOpinion(reason) => json!({"allowed": false, "reason": reason}),
        Decision::Error(e) => json!({"allowed": false, "evaluationError": e}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apiserver::authorization::{decided, DecisionFuture};

    struct OnlyGets;

    impl Authorizer for OnlyGets {
        fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
            decided(
                if attrs.request.verb == "get" && attrs.user.name == "alice" {
                    Decision::Allow
                } else {
                    Decision::NoOpinion(String::new())
                },
            )
        }
    }

    #[tokio::test]
    async fn decisions_follow_the_authorizer() {
        let spec =
            json!({"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}});
        assert_eq!(
            decide(&OnlyGets, &subject(&spec), &spec).await,
            json!({"allowed": true})
        );
        let spec =
            json!({"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods"}});
        assert_eq!(
            decide(&OnlyGets, &subject(&spec), &spec).await,
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
