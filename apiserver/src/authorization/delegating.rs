//! Delegated authorization: ask the cluster with a SubjectAccessReview, as
//! upstream's aggregated API servers do (`--authorization-kubeconfig`).
//!
//! Answers are cached per request attributes, allowed ones for
//! `allow_ttl` and denied ones for `deny_ttl` (upstream's defaults: 10 s
//! each), so a busy client costs one review per distinct request every ten
//! seconds. A review that fails (the cluster unreachable, a non-201 answer)
//! is not cached and fails the request with 500, as upstream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Attributes, Authorizer, Decision, DecisionFuture};

/// Upstream's default TTL of cached allowed and denied reviews.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);
/// Cached decisions beyond which the cache is emptied (a bound on memory,
/// not an LRU: ten seconds of distinct requests rarely reach it).
const MAX_CACHED: usize = 10_000;

/// How reviews reach the API server that decides.
pub trait ReviewClient: Send + Sync {
    /// POSTs `body` as JSON to `path`; the answer's status code and JSON body.
    fn post_json<'a>(
        &'a self,
        path: &'a str,
        body: &'a Value,
    ) -> BoxFuture<'a, Result<(u16, Value), String>>;
}

/// Authorizes with SubjectAccessReviews sent through a [`ReviewClient`].
pub struct DelegatingAuthorizer {
    client: Arc<dyn ReviewClient>,
    allow_ttl: Duration,
    deny_ttl: Duration,
    cache: Mutex<HashMap<String, (Decision, Instant)>>,
}

impl DelegatingAuthorizer {
    /// An authorizer with upstream's default TTLs.
    pub fn new(client: Arc<dyn ReviewClient>) -> Self {
        Self::with_ttls(client, DEFAULT_TTL, DEFAULT_TTL)
    }

    /// An authorizer caching allowed answers for `allow_ttl` and denied ones
    /// for `deny_ttl` (zero: not cached).
    pub fn with_ttls(
        client: Arc<dyn ReviewClient>,
        allow_ttl: Duration,
        deny_ttl: Duration,
    ) -> Self {
        DelegatingAuthorizer {
            client,
            allow_ttl,
            deny_ttl,
            cache: Mutex::new(HashMap::new()),
        }
    }

    fn cached(&self, key: &str) -> Option<Decision> {
        let cache = self.cache.lock().ok()?;
        let (d, until) = cache.get(key)?;
        (Instant::now() < *until).then(|| d.clone())
    }

    fn remember(&self, key: String, d: &Decision) {
        let ttl = match d {
            Decision::Allow => self.allow_ttl,
            Decision::Error(_) => return,
            _ => self.deny_ttl,
        };
        if ttl.is_zero() {
            return;
        }
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= MAX_CACHED {
                let now = Instant::now();
                cache.retain(|_, (_, until)| *until > now);
                if cache.len() >= MAX_CACHED {
                    cache.clear();
                }
            }
            cache.insert(key, (d.clone(), Instant::now() + ttl));
        }
    }
}

/// The SubjectAccessReview spec describing `attrs`.
pub fn review_spec(attrs: &Attributes<'_>) -> Value {
    let u = attrs.user;
    let r = attrs.request;
    let mut spec = json!({"user": u.name, "groups": u.groups});
    if !u.uid.is_empty() {
        spec["uid"] = json!(u.uid);
    }
    if !u.extra.is_empty() {
        spec["extra"] = json!(u.extra);
    }
    if r.is_resource_request {
        spec["resourceAttributes"] = json!({
            "namespace": r.namespace,
            "verb": r.verb,
            "group": r.api_group,
            "version": r.api_version,
            "resource": r.resource,
            "subresource": r.subresource,
            "name": r.name,
        });
    } else {
        spec["nonResourceAttributes"] = json!({"path": r.path, "verb": r.verb});
    }
    spec
}

/// The decision a SubjectAccessReview's status says.
pub fn decision_of(status: &Value) -> Decision {
    let reason = status
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if status.get("allowed").and_then(Value::as_bool) == Some(true) {
        Decision::Allow
    } else if status.get("denied").and_then(Value::as_bool) == Some(true) {
        Decision::Deny(reason)
    } else {
        Decision::NoOpinion(reason)
    }
}

impl Authorizer for DelegatingAuthorizer {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        Box::pin(async move {
            let spec = review_spec(attrs);
            let key = spec.to_string();
            if let Some(d) = self.cached(&key) {
                return d;
            }
            let review = json!({
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": spec,
            });
            let d = match self
                .client
                .post_json(
                    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                    &review,
                )
                .await
            {
                Ok((200 | 201, answer)) => {
                    decision_of(answer.get("status").unwrap_or(&Value::Null))
                }
                Ok((code, answer)) => Decision::Error(format!(
                    "SubjectAccessReview failed with status {code}: {}",
                    answer
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message")
                )),
                Err(e) => Decision::Error(format!("SubjectAccessReview failed: {e}")),
            };
            self.remember(key, &d);
            d
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authentication::UserInfo;
    use crate::request::info::RequestInfo;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting {
        calls: AtomicUsize,
        answer: Result<(u16, Value), String>,
    }

    impl ReviewClient for Counting {
        fn post_json<'a>(
            &'a self,
            path: &'a str,
            body: &'a Value,
        ) -> BoxFuture<'a, Result<(u16, Value), String>> {
            assert_eq!(path, "/apis/authorization.k8s.io/v1/subjectaccessreviews");
            assert_eq!(body["spec"]["user"], "alice");
            self.calls.fetch_add(1, Ordering::SeqCst);
            Box::pin(std::future::ready(self.answer.clone()))
        }
    }

    fn attrs_for<'a>(user: &'a UserInfo, req: &'a RequestInfo) -> Attributes<'a> {
        Attributes { user, request: req }
    }

    #[tokio::test]
    async fn answers_are_cached_and_failures_are_errors() {
        let user = UserInfo {
            name: "alice".into(),
            ..Default::default()
        };
        let req = RequestInfo {
            is_resource_request: true,
            verb: "get".into(),
            resource: "nodes".into(),
            ..Default::default()
        };
        let client = Arc::new(Counting {
            calls: AtomicUsize::new(0),
            answer: Ok((201, json!({"status": {"allowed": true}}))),
        });
        let a = DelegatingAuthorizer::new(client.clone());
        assert_eq!(a.authorize(&attrs_for(&user, &req)).await, Decision::Allow);
        assert_eq!(a.authorize(&attrs_for(&user, &req)).await, Decision::Allow);
        assert_eq!(client.calls.load(Ordering::SeqCst), 1);

        let failing = Arc::new(Counting {
            calls: AtomicUsize::new(0),
            answer: Err("connection refused".into()),
        });
        let a = DelegatingAuthorizer::new(failing.clone());
        assert!(matches!(
            a.authorize(&attrs_for(&user, &req)).await,
            Decision::Error(_)
        ));
        assert!(matches!(
            a.authorize(&attrs_for(&user, &req)).await,
            Decision::Error(_)
        ));
        assert_eq!(failing.calls.load(Ordering::SeqCst), 2);

        assert_eq!(
            decision_of(&json!({"allowed": false, "denied": true, "reason": "no"})),
            Decision::Deny("no".into())
        );
    }
}
