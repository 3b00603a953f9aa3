//! Authorization: may this user do this?
//!
//! The `authorization` filter builds [`Attributes`] from the authenticated user
//! and the parsed RequestInfo and asks an [`Authorizer`]. Tiers plug in their
//! own: allow-all for now, RBAC (in kube-core) and delegated
//! SubjectAccessReview (in the other tiers and external servers) later.

use crate::authentication::{UserInfo, SYSTEM_MASTERS};
use crate::endpoints::request_info::RequestInfo;

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
}

/// Decides requests. Implementations must be cheap: they run on every request.
pub trait Authorizer: Send + Sync {
    fn authorize(&self, attrs: &Attributes<'_>) -> Decision;
}

/// Allows everything.
pub struct AlwaysAllow;

impl Authorizer for AlwaysAllow {
    fn authorize(&self, _: &Attributes<'_>) -> Decision {
        Decision::Allow
    }
}

/// Allows members of `system:masters`, otherwise no opinion (upstream's
/// privileged-group authorizer, placed first in the chain).
pub struct PrivilegedGroups;

impl Authorizer for PrivilegedGroups {
    fn authorize(&self, attrs: &Attributes<'_>) -> Decision {
        if attrs.user.in_group(SYSTEM_MASTERS) {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }
}

/// Asks each authorizer in turn; the first Allow or Deny decides.
pub struct UnionAuthorizer(pub Vec<Box<dyn Authorizer>>);

impl Authorizer for UnionAuthorizer {
    fn authorize(&self, attrs: &Attributes<'_>) -> Decision {
        let mut reasons = Vec::new();
        for a in &self.0 {
            match a.authorize(attrs) {
                Decision::NoOpinion(r) => {
                    if !r.is_empty() {
                        reasons.push(r)
                    }
                }
                decided => return decided,
            }
        }
        Decision::NoOpinion(reasons.join(", "))
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
