//! Authorization: may this user do this?
//!
//! The `authorization` filter builds [`Attributes`] from the authenticated user
//! and the parsed RequestInfo and asks an [`Authorizer`]. Each tier plugs in
//! its own: [`rbac::RbacAuthorizer`] where the RBAC objects live (kube-core),
//! [`delegating::DelegatingAuthorizer`] (SubjectAccessReview with a TTL
//! cache) in the aggregator and in external API servers built on this crate.

pub mod delegating;
pub mod rbac;

use futures_util::future::BoxFuture;

use crate::authentication::{UserInfo, SYSTEM_MASTERS};
use crate::request::info::RequestInfo;

/// What is being asked, as upstream's `authorizer.Attributes`.
pub struct Attributes<'a> {
    pub user: &'a UserInfo,
    pub request: &'a RequestInfo,
}

/// An authorizer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Denied, with a reason appended to the 403 message (may be empty).
    Deny(String),
    /// This authorizer has no opinion; the next one decides (deny if none).
    NoOpinion(String),
    /// The authorizer could not decide (a SubjectAccessReview failed): the
    /// request fails with 500, as upstream's authorization filter answers.
    Error(String),
}

/// The future an [`Authorizer`] returns.
pub type DecisionFuture<'a> = BoxFuture<'a, Decision>;

/// An already known decision as a [`DecisionFuture`].
pub fn decided<'a>(d: Decision) -> DecisionFuture<'a> {
    Box::pin(std::future::ready(d))
}

/// Decides requests. Implementations must be cheap: they run on every
/// request (in-memory rules, or a cache in front of a remote review).
pub trait Authorizer: Send + Sync {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a>;
}

/// Allows everything (`--authorization-mode=AlwaysAllow`).
pub struct AlwaysAllow;

impl Authorizer for AlwaysAllow {
    fn authorize<'a>(&'a self, _: &'a Attributes<'a>) -> DecisionFuture<'a> {
        decided(Decision::Allow)
    }
}

/// Allows members of `system:masters`, otherwise no opinion (upstream's
/// privileged-group authorizer, placed first in the chain).
pub struct PrivilegedGroups;

impl Authorizer for PrivilegedGroups {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        decided(if attrs.user.in_group(SYSTEM_MASTERS) {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        })
    }
}

/// Allows `GET /metrics` to members of `system:monitoring`, the grant of
/// upstream's bootstrap `system:monitoring` ClusterRole, for a tier that
/// has no RBAC of its own (the extensions tier): operators scrape it with
/// the same identity as the others.
pub struct MonitoringGroup;

/// The group upstream's bootstrap policy lets read `/metrics` and the
/// health endpoints' details.
pub const SYSTEM_MONITORING: &str = "system:monitoring";

impl Authorizer for MonitoringGroup {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        let r = attrs.request;
        let allowed = attrs.user.in_group(SYSTEM_MONITORING)
            && !r.is_resource_request
            && r.verb == "get"
            && r.path == "/metrics";
        decided(if allowed {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        })
    }
}

/// Asks each authorizer in turn; the first Allow or Deny decides. Errors do
/// not stop the walk (a later authorizer may still allow), but fail the
/// request when nobody allowed it.
pub struct UnionAuthorizer(pub Vec<std::sync::Arc<dyn Authorizer>>);

impl Authorizer for UnionAuthorizer {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        Box::pin(async move {
            let mut reasons = Vec::new();
            let mut errors = Vec::new();
            for a in &self.0 {
                match a.authorize(attrs).await {
                    Decision::NoOpinion(r) => {
                        if !r.is_empty() {
                            reasons.push(r)
                        }
                    }
                    Decision::Error(e) => errors.push(e),
                    decided => return decided,
                }
            }
            if errors.is_empty() {
                Decision::NoOpinion(reasons.join(", "))
            } else {
                Decision::Error(errors.join(", "))
            }
        })
    }
}

/// The health and version paths every tier lets anyone GET without asking
/// the cluster, so probes never depend on another process.
pub const HEALTH_PATHS: &[&str] = &[
    "/healthz",
    "/healthz/*",
    "/livez",
    "/livez/*",
    "/readyz",
    "/readyz/*",
    "/version",
    "/version/",
];

/// Allows requests of these non-resource paths to everyone (upstream's
/// `--authorization-always-allow-paths`, `/healthz`, `/readyz` and `/livez`
/// by default for delegated servers); a trailing `*` matches a prefix.
pub struct AlwaysAllowPaths(pub Vec<String>);

impl Authorizer for AlwaysAllowPaths {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        let r = attrs.request;
        let allowed = !r.is_resource_request
            && self
                .0
                .iter()
                .any(|p| rbac::non_resource_url_matches(p, &r.path));
        decided(if allowed {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        })
    }
}

/// The 403 message upstream writes for a denied request.
pub fn forbidden_message(user: &UserInfo, ri: &RequestInfo, reason: &str) -> String {
    let mut msg = if ri.is_resource_request {
        let resource = if ri.subresource.is_empty() {
            ri.resource.clone()
        } else {
            format!("{}/{}", ri.resource, ri.subresource)
        };
        let scope = if ri.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace \"{}\"", ri.namespace)
        };
        format!(
            "User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {}",
            user.name, ri.verb, resource, ri.api_group, scope
        )
    } else {
        format!(
            "User \"{}\" cannot {} path \"{}\"",
            user.name, ri.verb, ri.path
        )
    };
    if !reason.is_empty() {
        msg.push_str(": ");
        msg.push_str(reason);
    }
    msg
}
