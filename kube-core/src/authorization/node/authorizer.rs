//! The Node authorizer (`--authorization-mode=Node`), upstream's
//! `NodeAuthorizer`: requests of kubelets (`system:node:<name>` in
//! `system:nodes`) are decided from the graph of what the pods bound to
//! that node use:
//!
//! - secrets, ConfigMaps (get, list, watch of one object), PVCs, PVs,
//!   ResourceClaims, VolumeAttachments (get) and service accounts (get, and
//!   `create` of their `token`) only when related to the node;
//! - its own Lease in `kube-node-lease` and its own CSINode, ResourceSlices
//!   bound to it, PodCertificateRequests for it;
//! - pods: get of a related pod, list/watch with `spec.nodeName=<node>`,
//!   create/delete and status/eviction (NodeRestriction narrows those);
//!   nodes: its own get/list/watch, create/update/patch and status
//!   (NodeRestriction again);
//! - anything else by upstream's static node rules (the `system:node`
//!   ClusterRole's).
//!
//! It never denies: a request it does not allow gets no opinion (with
//! upstream's reason), so a later authorizer (RBAC) may still allow it.
//! Users who are not nodes get no opinion at once.

use std::sync::Arc;

use apiserver::apimachinery::fields::{FieldOperator, FieldSelector};
use apiserver::authentication::UserInfo;
use apiserver::authorization::rbac::PolicyRule;
use apiserver::authorization::{decided, Attributes, Authorizer, Decision, DecisionFuture};
use apiserver::request::info::RequestInfo;

use super::graph::{Graph, VertexType};

/// The prefix of node user names.
pub const NODE_USER_PREFIX: &str = "system:node:";
/// The group every node is in.
pub const NODES_GROUP: &str = "system:nodes";
/// The namespace of node Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// Upstream's `NodeIdentity`: `Some(node name)` for a user named
/// `system:node:<name>` in `system:nodes` (the name may be empty), `None`
/// for anyone else.
pub fn node_identity(user: &UserInfo) -> Option<&str> {
    let name = user.name.strip_prefix(NODE_USER_PREFIX)?;
    user.in_group(NODES_GROUP).then_some(name)
}

/// The authorizer.
pub struct NodeAuthorizer {
    graph: Arc<Graph>,
    rules: Vec<PolicyRule>,
}

fn no_opinion(reason: impl Into<String>) -> Decision {
    Decision::NoOpinion(reason.into())
}

fn no_relationship(node: &str) -> Decision {
    no_opinion(format!(
        "no relationship found between node '{node}' and this object"
    ))
}

/// Whether the request's field selector has the term `field=value`.
fn selects(r: &RequestInfo, field: &str, value: &str) -> bool {
    let Some(raw) = r.field_selector.as_deref() else {
        return false;
    };
    FieldSelector::parse(raw).is_ok_and(|s| {
        s.terms()
            .iter()
            .any(|t| t.field == field && t.operator == FieldOperator::Equals && t.value == value)
    })
}

impl NodeAuthorizer {
    /// An authorizer reading `graph` and allowing what `rules` (upstream's
    /// `NodeRules()`) allow for everything it does not subdivide.
    pub fn new(graph: Arc<Graph>, rules: Vec<PolicyRule>) -> Self {
        NodeAuthorizer { graph, rules }
    }

    /// The decision for `user` doing `r`.
    pub fn decide(&self, user: &UserInfo, r: &RequestInfo) -> Decision {
        let Some(node) = node_identity(user) else {
            return no_opinion("");
        };
        if node.is_empty() {
            tracing::debug!(user = %user.name, "NODE DENY: unknown node");
            return no_opinion(format!("unknown node for user {:?}", user.name));
        }
        let decision = if r.is_resource_request {
            self.subdivided(node, r)
        } else {
            None
        };
        let decision = decision.unwrap_or_else(|| {
            if self.rules.iter().any(|rule| rule.allows(r)) {
                Decision::Allow
            } else {
                no_opinion("")
            }
        });
        if decision != Decision::Allow {
            tracing::debug!(node, verb = %r.verb, resource = %r.resource, subresource = %r.subresource,
                namespace = %r.namespace, name = %r.name, "NODE DENY");
        }
        decision
    }

    /// The decision for the resources the authorizer looks at itself;
    /// `None` leaves the request to the static rules.
    fn subdivided(&self, node: &str, r: &RequestInfo) -> Option<Decision> {
        let d = match (r.api_group.as_str(), r.resource.as_str()) {
            ("", "secrets") => self.read_namespaced(node, VertexType::Secret, r),
            ("", "configmaps") => self.read_namespaced(node, VertexType::ConfigMap, r),
            ("", "persistentvolumeclaims") if r.subresource == "status" => {
                self.status_update(node, VertexType::Pvc, r)
            }
            ("", "persistentvolumeclaims") => self.get(node, VertexType::Pvc, r),
            ("", "persistentvolumes") => self.get(node, VertexType::Pv, r),
            ("resource.k8s.io", "resourceclaims") => self.get(node, VertexType::ResourceClaim, r),
            ("storage.k8s.io", "volumeattachments") => {
                self.get(node, VertexType::VolumeAttachment, r)
            }
            ("", "serviceaccounts") => self.service_account(node, r),
            ("coordination.k8s.io", "leases") => lease(node, r),
            ("storage.k8s.io", "csinodes") => csi_node(node, r),
            ("resource.k8s.io", "resourceslices") => self.resource_slice(node, r),
            ("", "nodes") => return node_object(node, r),
            ("", "pods") => return self.pod(node, r),
            ("certificates.k8s.io", "podcertificaterequests") => {
                self.pod_certificate_request(node, r)
            }
            _ => return None,
        };
        Some(d)
    }

    /// Upstream's `authorize`: allowed when the named object leads to the
    /// node.
    fn related(&self, node: &str, kind: VertexType, r: &RequestInfo) -> Decision {
        if r.name.is_empty() {
            return no_opinion("No Object name found");
        }
        match self.graph.has_path_from(node, kind, &r.namespace, &r.name) {
            Ok(()) => Decision::Allow,
            Err(why) => {
                tracing::debug!(reason = %why.0, "NODE DENY");
                no_relationship(node)
            }
        }
    }

    fn status_update(&self, node: &str, kind: VertexType, r: &RequestInfo) -> Decision {
        if !matches!(r.verb.as_str(), "update" | "patch") {
            return no_opinion("can only get/update/patch this type");
        }
        if r.subresource != "status" {
            return no_opinion("can only update status subresource");
        }
        self.related(node, kind, r)
    }

    fn get(&self, node: &str, kind: VertexType, r: &RequestInfo) -> Decision {
        if r.verb != "get" {
            return no_opinion("can only get individual resources of this type");
        }
        if !r.subresource.is_empty() {
            return no_opinion("cannot get subresource");
        }
        self.related(node, kind, r)
    }

    fn read_namespaced(&self, node: &str, kind: VertexType, r: &RequestInfo) -> Decision {
        if !matches!(r.verb.as_str(), "get" | "list" | "watch") {
            return no_opinion("can only read resources of this type");
        }
        if !r.subresource.is_empty() {
            return no_opinion("cannot read subresource");
        }
        if r.namespace.is_empty() {
            return no_opinion("can only read namespaced object of this type");
        }
        self.related(node, kind, r)
    }

    /// Get of a related account (the credential providers' tokens), create
    /// of a related account's token.
    fn service_account(&self, node: &str, r: &RequestInfo) -> Decision {
        if r.verb == "get" && r.subresource.is_empty() {
            return self.read_namespaced(node, VertexType::ServiceAccount, r);
        }
        if r.verb != "create" || r.name.is_empty() {
            return no_opinion("can only create tokens for individual service accounts");
        }
        if r.subresource != "token" {
            return no_opinion("can only create token subresource of serviceaccount");
        }
        self.related(node, VertexType::ServiceAccount, r)
    }

    fn resource_slice(&self, node: &str, r: &RequestInfo) -> Decision {
        if !r.subresource.is_empty() {
            return no_opinion("cannot authorize ResourceSlice subresources");
        }
        match r.verb.as_str() {
            // NodeRestriction checks the new slice's node.
            "create" => Decision::Allow,
            "get" | "update" | "patch" | "delete" => {
                self.related(node, VertexType::ResourceSlice, r)
            }
            "watch" | "list" | "deletecollection" => {
                if selects(r, "spec.nodeName", node) {
                    Decision::Allow
                } else {
                    no_opinion(
                        "can only list/watch/deletecollection resourceslices with nodeName field selector",
                    )
                }
            }
            _ => no_opinion(
                "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection",
            ),
        }
    }

    fn pod_certificate_request(&self, node: &str, r: &RequestInfo) -> Decision {
        if !r.subresource.is_empty() {
            return no_opinion(
                "nodes may not access the status subresource of PodCertificateRequests",
            );
        }
        match r.verb.as_str() {
            // NodeRestriction checks the request's node, pod and account.
            "create" => Decision::Allow,
            "get" => self.related(node, VertexType::PodCertificateRequest, r),
            "list" | "watch" if selects(r, "spec.nodeName", node) => Decision::Allow,
            "list" | "watch" => no_opinion(
                "can only list/watch podcertificaterequests with nodeName field selector",
            ),
            verb => no_opinion(format!("nodes may not {verb} podcertificaterequests")),
        }
    }

    fn pod(&self, node: &str, r: &RequestInfo) -> Option<Decision> {
        let d = match (r.subresource.as_str(), r.verb.as_str()) {
            ("", "get") => self.get(node, VertexType::Pod, r),
            ("", "list" | "watch") => {
                if selects(r, "spec.nodeName", node) {
                    Decision::Allow
                } else if !r.name.is_empty() {
                    self.related(node, VertexType::Pod, r)
                } else {
                    no_opinion("can only list/watch pods with spec.nodeName field selector")
                }
            }
            // Mirror pods; NodeRestriction limits them to the node's own.
            ("", "create" | "delete") => Decision::Allow,
            ("status", "update" | "patch") => Decision::Allow,
            ("eviction", "create") => Decision::Allow,
            _ => no_opinion(""),
        };
        Some(d)
    }
}

fn lease(node: &str, r: &RequestInfo) -> Decision {
    if !matches!(
        r.verb.as_str(),
        "get" | "create" | "update" | "patch" | "delete"
    ) {
        return no_opinion("can only get, create, update, patch, or delete a node lease");
    }
    if r.namespace != NODE_LEASE_NAMESPACE {
        return no_opinion(format!(
            "can only access leases in the {NODE_LEASE_NAMESPACE:?} system namespace"
        ));
    }
    // A create names no object; NodeRestriction checks the new lease.
    if r.verb != "create" && r.name != node {
        return no_opinion("can only access node lease with the same name as the requesting node");
    }
    Decision::Allow
}

fn csi_node(node: &str, r: &RequestInfo) -> Decision {
    if !matches!(
        r.verb.as_str(),
        "get" | "create" | "update" | "patch" | "delete"
    ) {
        return no_opinion("can only get, create, update, patch, or delete a CSINode");
    }
    if !r.subresource.is_empty() {
        return no_opinion("cannot authorize CSINode subresources");
    }
    if r.verb != "create" && r.name != node {
        return no_opinion("can only access CSINode with the same name as the requesting node");
    }
    Decision::Allow
}

/// Node objects: a node reads only its own (by name, so a kubelet can look
/// for it before registering); writes are NodeRestriction's to narrow.
fn node_object(node: &str, r: &RequestInfo) -> Option<Decision> {
    let d = match (r.subresource.as_str(), r.verb.as_str()) {
        ("", "create" | "update" | "patch") => Decision::Allow,
        ("", "get" | "list" | "watch") => {
            if r.name == node {
                Decision::Allow
            } else if r.name.is_empty() {
                no_opinion(format!(
                    "node '{node}' cannot read all nodes, only its own Node object"
                ))
            } else {
                no_opinion(format!(
                    "node '{node}' cannot read '{}', only its own Node object",
                    r.name
                ))
            }
        }
        ("status", "update" | "patch") => Decision::Allow,
        _ => no_opinion(""),
    };
    Some(d)
}

impl Authorizer for NodeAuthorizer {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        decided(self.decide(attrs.user, attrs.request))
    }
}

#[cfg(test)]
#[path = "authorizer_tests.rs"]
mod tests;
