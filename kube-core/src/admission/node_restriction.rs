//! NodeRestriction (upstream's `plugin/pkg/admission/noderestriction`):
//! what a kubelet (`system:node:<name>` in `system:nodes`) may write is
//! narrowed to its own node. The Node authorizer lets nodes create pods,
//! write Node objects and Leases, ...; this plugin checks the objects:
//!
//! - pods: only mirror pods bound to the node and owned by its Node (no
//!   service account, secrets, ConfigMaps, claims, ...), deleting, status
//!   updates (not of labels or claim statuses) and evictions only of pods
//!   bound to it, no other subresource;
//! - nodes: only its own, without `configSource`, without changing taints or
//!   owner references, and without setting `node-restriction.kubernetes.io/`
//!   or other `kubernetes.io`/`k8s.io` labels a kubelet does not own;
//! - PVCs: only the status, and of it only capacity, conditions and the
//!   allocated resources;
//! - service account tokens: only bound to a pod running on the node, for
//!   an audience the pod uses (or that the node is authorized for);
//! - its own Lease in `kube-node-lease`, its own CSINode, ResourceSlices
//!   for itself, node CSRs for its own name, PodCertificateRequests for
//!   pods running on it.
//!
//! Requests of other users pass untouched. The plugin runs in the mutating
//! phase, as upstream's, and never changes the object.

use std::collections::BTreeSet;
use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::{ApiError, GroupResource};
use apiserver::apimachinery::meta;
use apiserver::authorization::Authorizer;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use crate::authorization::node::authorizer::NODE_LEASE_NAMESPACE;
use crate::authorization::node::node_identity;
use crate::authorization::node::references::{
    api_object_reference, is_mirror_pod, MIRROR_POD_ANNOTATION,
};

#[path = "node_restriction_objects.rs"]
mod objects;

pub use objects::Objects;

/// The plugin.
pub struct NodeRestriction {
    /// Pods, nodes, service accounts, claims, volumes and CSI drivers.
    pub objects: Arc<dyn Objects>,
    /// Decides whether a node may ask for a token audience its pod does not
    /// use (`request-serviceaccounts-token-audience`).
    pub authorizer: Arc<dyn Authorizer>,
}

impl NodeRestriction {
    /// The plugin reading through `objects`.
    pub fn new(objects: Arc<ObjectReader>, authorizer: Arc<dyn Authorizer>) -> Self {
        NodeRestriction {
            objects,
            authorizer,
        }
    }
}

/// One admission request of one node.
struct Request<'a> {
    attrs: &'a Attributes<'a>,
    object: Option<&'a Value>,
    node: &'a str,
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A 500 carrying only `message`, as upstream answers a plain error.
fn plain_error(message: String) -> ApiError {
    ApiError {
        code: 500,
        reason: "",
        message,
        details: None,
        continue_token: None,
    }
}

/// Upstream's lister `NotFound` (named by the singular resource).
fn not_found(resource: &str, name: &str) -> ApiError {
    ApiError::not_found(
        GroupResource {
            group: "",
            resource,
        },
        name,
    )
}

impl Request<'_> {
    /// Upstream's `admission.NewForbidden`: 403 on the admitted object,
    /// named by the request, else by the object's name or generateName.
    fn forbidden(&self, why: &str) -> ApiError {
        let mut name = self.attrs.name.to_string();
        if name.is_empty() {
            name = match self.object {
                Some(o) if !meta::name(o).is_empty() => meta::name(o).to_string(),
                Some(o) if !meta::meta_str(o, "generateName").is_empty() => {
                    meta::meta_str(o, "generateName").to_string()
                }
                _ => "Unknown".to_string(),
            };
        }
        ApiError::forbidden(self.attrs.resource.group_resource(), &name, why)
    }

    /// The object being admitted, required by the operation.
    fn object(&self) -> Result<&Value, ApiError> {
        self.object
            .ok_or_else(|| self.forbidden("unexpected type <nil>"))
    }

    fn old_object(&self) -> Result<&Value, ApiError> {
        self.attrs
            .old_object
            .ok_or_else(|| self.forbidden("unexpected type <nil>"))
    }

    fn operation(&self) -> &'static str {
        self.attrs.operation.as_str()
    }
}

impl NodeRestriction {
    async fn admit(&self, req: &Request<'_>) -> Result<(), ApiError> {
        let a = req.attrs;
        let r = &a.resource;
        match (r.group.as_str(), r.resource.as_str()) {
            ("", "pods") => match a.subresource {
                "" => self.admit_pod(req).await,
                "status" => admit_pod_status(req),
                "eviction" => self.admit_pod_eviction(req).await,
                other => Err(req.forbidden(&format!(
                    "unexpected pod subresource {other:?}, only 'status' and 'eviction' are allowed"
                ))),
            },
            ("", "nodes") => admit_node(req),
            ("", "persistentvolumeclaims") if a.subresource == "status" => admit_pvc_status(req),
            ("", "persistentvolumeclaims") => Err(req.forbidden("may only update PVC status")),
            ("", "serviceaccounts") => self.admit_token_request(req).await,
            ("certificates.k8s.io", "podcertificaterequests") => {
                self.admit_pod_certificate_request(req).await
            }
            ("coordination.k8s.io", "leases") => admit_lease(req),
            ("storage.k8s.io", "csinodes") => admit_csi_node(req),
            ("resource.k8s.io", "resourceslices") => admit_resource_slice(req),
            ("certificates.k8s.io", "certificatesigningrequests") => admit_csr(req),
            _ => Ok(()),
        }
    }

    async fn admit_pod(&self, req: &Request<'_>) -> Result<(), ApiError> {
        let node = req.node;
        match req.attrs.operation {
            Operation::Create => self.admit_pod_create(req).await,
            Operation::Delete => {
                let existing = match req.attrs.old_object {
                    Some(o) => o.clone(),
                    None => self.pod(req, req.attrs.name).await?,
                };
                if str_at(&existing, "/spec/nodeName") != node {
                    return Err(req.forbidden(&format!(
                        "node {node:?} can only delete pods with spec.nodeName set to itself"
                    )));
                }
                Ok(())
            }
            _ => Err(req.forbidden(&format!(
                "unexpected operation {:?}, node {node:?} can only create and delete mirror pods",
                req.operation()
            ))),
        }
    }

    /// The pod `name` in the request's namespace; 404 when missing.
    async fn pod(&self, req: &Request<'_>, name: &str) -> Result<Value, ApiError> {
        match self
            .objects
            .get("", "pods", req.attrs.namespace, name)
            .await
        {
            Ok(Some(p)) => Ok(p),
            Ok(None) => Err(not_found("pod", name)),
            Err(e) => Err(req.forbidden(&e.message)),
        }
    }

    async fn admit_pod_create(&self, req: &Request<'_>) -> Result<(), ApiError> {
        let node = req.node;
        let pod = req.object()?;
        if !is_mirror_pod(pod) {
            return Err(req.forbidden(&format!(
                "pod does not have {MIRROR_POD_ANNOTATION:?} annotation, node {node:?} can only create mirror pods"
            )));
        }
        if str_at(pod, "/spec/nodeName") != node {
            return Err(req.forbidden(&format!(
                "node {node:?} can only create pods with spec.nodeName set to itself"
            )));
        }
        let owners: Vec<&Value> = pod
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        let owner = match owners.as_slice() {
            [] => {
                return Err(req.forbidden(&format!(
                    "node {node:?} can only create pods with an owner reference set to itself"
                )))
            }
            [one] => *one,
            _ => {
                return Err(req.forbidden(&format!(
                    "node {node:?} can only create pods with a single owner reference set to itself"
                )))
            }
        };
        if str_at(owner, "/apiVersion") != "v1"
            || str_at(owner, "/kind") != "Node"
            || str_at(owner, "/name") != node
        {
            return Err(req.forbidden(&format!(
                "node {node:?} can only create pods with an owner reference set to itself"
            )));
        }
        if owner.get("controller").and_then(Value::as_bool) != Some(true) {
            return Err(req.forbidden(&format!(
                "node {node:?} can only create pods with a controller owner reference set to itself"
            )));
        }
        if owner.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true) {
            return Err(req.forbidden(&format!(
                "node {node:?} must not set blockOwnerDeletion on an owner reference"
            )));
        }
        let node_object = match self.objects.get("", "nodes", "", node).await {
            Ok(Some(n)) => n,
            Ok(None) => return Err(not_found("node", node)),
            Err(e) => {
                return Err(req.forbidden(&format!(
                    "error looking up node {node} to verify uid: {}",
                    e.message
                )))
            }
        };
        let owner_uid = str_at(owner, "/uid");
        let node_uid = meta::uid(&node_object);
        if owner_uid != node_uid {
            return Err(req.forbidden(&format!(
                "node {node} UID mismatch: expected {owner_uid} got {node_uid}"
            )));
        }
        match api_object_reference(pod) {
            Err(e) => Err(req.forbidden(&format!(
                "error checking mirror pod for API references: {e}"
            ))),
            Ok(Some(what)) => Err(req.forbidden(&format!(
                "node {node:?} can not create pods that reference {what}"
            ))),
            Ok(None) => Ok(()),
        }
    }

    async fn admit_pod_eviction(&self, req: &Request<'_>) -> Result<(), ApiError> {
        let node = req.node;
        if req.attrs.operation != Operation::Create {
            return Err(req.forbidden(&format!("unexpected operation {}", req.operation())));
        }
        let eviction = req.object()?;
        let mut name = req.attrs.name;
        if name.is_empty() {
            name = meta::name(eviction);
            if name.is_empty() {
                return Err(req.forbidden("could not determine pod from request data"));
            }
        }
        let pod = self.pod(req, name).await?;
        if str_at(&pod, "/spec/nodeName") != node {
            return Err(req.forbidden(&format!(
                "node {node} can only evict pods with spec.nodeName set to itself"
            )));
        }
        Ok(())
    }
}

fn admit_pod_status(req: &Request<'_>) -> Result<(), ApiError> {
    let node = req.node;
    if req.attrs.operation != Operation::Update {
        return Err(req.forbidden(&format!("unexpected operation {:?}", req.operation())));
    }
    let old = req.old_object()?;
    if str_at(old, "/spec/nodeName") != node {
        return Err(req.forbidden(&format!(
            "node {node:?} can only update pod status for pods with spec.nodeName set to itself"
        )));
    }
    let new = req.object()?;
    if meta::labels(old) != meta::labels(new) {
        return Err(req.forbidden(&format!(
            "node {node:?} cannot update labels through pod status"
        )));
    }
    let claim_statuses = |p: &Value| -> Vec<(String, Option<String>)> {
        p.pointer("/status/resourceClaimStatuses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|s| {
                (
                    str_at(s, "/name").to_string(),
                    s.get("resourceClaimName")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                )
            })
            .collect()
    };
    if claim_statuses(old) != claim_statuses(new) {
        return Err(req.forbidden(&format!(
            "node {node:?} cannot update resource claim statues"
        )));
    }
    fn extended(p: &Value) -> Option<&Value> {
        p.pointer("/status/extendedResourceClaimStatus")
    }
    if !semantically_equal(extended(old), extended(new)) {
        return Err(req.forbidden(&format!(
            "node {node:?} cannot update extended resource claim status"
        )));
    }
    Ok(())
}

/// `v` with nulls, empty lists and empty objects dropped from objects, so
/// that an absent field and an empty one compare equal (upstream's
/// semantic equality).
fn normalized(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), normalized(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

fn semantically_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    let norm = |v: Option<&Value>| {
        let v = normalized(v.unwrap_or(&Value::Null));
        if is_empty(&v) {
            Value::Null
        } else {
            v
        }
    };
    norm(a) == norm(b)
}

/// The dotted paths at which two (normalized) values differ.
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differences(p, q, &sub, out),
                    _ => out.push(sub),
                }
            }
        }
        _ if a != b => out.push(path.to_string()),
        _ => {}
    }
}

fn admit_pvc_status(req: &Request<'_>) -> Result<(), ApiError> {
    if req.attrs.operation != Operation::Update {
        return Err(req.forbidden(&format!("unexpected operation {:?}", req.operation())));
    }
    // What a node may change (upstream also ignores managedFields, and
    // the resourceVersion an unconditional update leaves empty).
    const IGNORED: &[(&str, &[&str])] = &[
        ("/metadata", &["resourceVersion", "managedFields"]),
        (
            "/status",
            &[
                "capacity",
                "conditions",
                "allocatedResourceStatuses",
                "allocatedResources",
            ],
        ),
    ];
    let strip = |pvc: &Value| {
        let mut pvc = pvc.clone();
        for (pointer, keys) in IGNORED {
            if let Some(m) = pvc.pointer_mut(pointer).and_then(Value::as_object_mut) {
                for key in *keys {
                    m.remove(*key);
                }
            }
        }
        normalized(&pvc)
    };
    let (old, new) = (strip(req.old_object()?), strip(req.object()?));
    if old != new {
        let mut paths = Vec::new();
        differences(&old, &new, "", &mut paths);
        return Err(req.forbidden(&format!(
            "node {:?} is not allowed to update fields other than status.quantity and status.conditions: {}",
            req.node,
            paths.join(", ")
        )));
    }
    Ok(())
}

/// The namespace of a label key (`""` without a `/`).
fn label_namespace(key: &str) -> &str {
    key.split_once('/').map(|(ns, _)| ns).unwrap_or("")
}

fn in_namespace(namespace: &str, domain: &str) -> bool {
    namespace == domain
        || namespace
            .strip_suffix(domain)
            .is_some_and(|p| p.ends_with('.'))
}

/// The labels a kubelet sets on its own Node (upstream's `IsKubeletLabel`).
fn is_kubelet_label(key: &str) -> bool {
    const LABELS: &[&str] = &[
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
    ];
    let ns = label_namespace(key);
    LABELS.contains(&key)
        || in_namespace(ns, "kubelet.kubernetes.io")
        || in_namespace(ns, "node.kubernetes.io")
}

/// The label keys that differ between two label maps.
fn modified_labels(a: &Map<String, Value>, b: &Map<String, Value>) -> BTreeSet<String> {
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .chain(b.iter().filter(|(k, v)| a.get(*k) != Some(*v)))
        .map(|(k, _)| k.clone())
        .collect()
}

/// The modified labels a node may not add, change or remove (sorted).
fn forbidden_labels(modified: &BTreeSet<String>) -> Vec<String> {
    modified
        .iter()
        .filter(|key| {
            let ns = label_namespace(key);
            let restricted = in_namespace(ns, "node-restriction.kubernetes.io");
            let kubernetes = in_namespace(ns, "kubernetes.io") || in_namespace(ns, "k8s.io");
            restricted || (kubernetes && !is_kubelet_label(key))
        })
        .cloned()
        .collect()
}

fn admit_node(req: &Request<'_>) -> Result<(), ApiError> {
    let node = req.node;
    let requested = req.attrs.name;
    if requested != node {
        return Err(req.forbidden(&format!(
            "node {node:?} is not allowed to modify node {requested:?}"
        )));
    }
    match req.attrs.operation {
        Operation::Create => {
            let obj = req.object()?;
            if !is_empty(obj.pointer("/spec/configSource").unwrap_or(&Value::Null)) {
                return Err(req.forbidden(&format!(
                    "node {node:?} is not allowed to create pods with a non-nil configSource"
                )));
            }
            let forbidden = forbidden_labels(&modified_labels(meta::labels(obj), &Map::new()));
            if !forbidden.is_empty() {
                return Err(req.forbidden(&format!(
                    "node {node:?} is not allowed to set the following labels: {}",
                    forbidden.join(", ")
                )));
            }
        }
        Operation::Update => {
            let (new, old) = (req.object()?, req.old_object()?);
            let source = new.pointer("/spec/configSource");
            if source.is_some_and(|s| !s.is_null())
                && !semantically_equal(source, old.pointer("/spec/configSource"))
            {
                return Err(req.forbidden(&format!(
                    "node {node:?} is not allowed to update configSource to a new non-nil configSource"
                )));
            }
            if !semantically_equal(new.pointer("/spec/taints"), old.pointer("/spec/taints")) {
                return Err(
                    req.forbidden(&format!("node {node:?} is not allowed to modify taints"))
                );
            }
            if !semantically_equal(
                new.pointer("/metadata/ownerReferences"),
                old.pointer("/metadata/ownerReferences"),
            ) {
                return Err(req.forbidden(&format!(
                    "node {node:?} is not allowed to modify ownerReferences"
                )));
            }
            let forbidden =
                forbidden_labels(&modified_labels(meta::labels(new), meta::labels(old)));
            if !forbidden.is_empty() {
                return Err(req.forbidden(&format!(
                    "is not allowed to modify labels: {}",
                    forbidden.join(", ")
                )));
            }
        }
        _ => {}
    }
    Ok(())
}

fn admit_lease(req: &Request<'_>) -> Result<(), ApiError> {
    if req.attrs.namespace != NODE_LEASE_NAMESPACE {
        return Err(req.forbidden(&format!(
            "can only access leases in the {NODE_LEASE_NAMESPACE:?} system namespace"
        )));
    }
    let name = match req.attrs.operation {
        Operation::Create => meta::name(req.object()?),
        _ => req.attrs.name,
    };
    if name != req.node {
        return Err(
            req.forbidden("can only access node lease with the same name as the requesting node")
        );
    }
    Ok(())
}

fn admit_csi_node(req: &Request<'_>) -> Result<(), ApiError> {
    let name = match req.attrs.operation {
        Operation::Create => match req.object {
            Some(o) if o.is_object() => meta::name(o),
            _ => return Err(req.forbidden("unable to access the object name")),
        },
        _ => req.attrs.name,
    };
    if name != req.node {
        return Err(
            req.forbidden("can only access CSINode with the same name as the requesting node")
        );
    }
    Ok(())
}

fn admit_resource_slice(req: &Request<'_>) -> Result<(), ApiError> {
    let (slice, verb) = match req.attrs.operation {
        Operation::Create => (req.object()?, "create"),
        Operation::Delete => (req.old_object()?, "delete"),
        _ => return Ok(()),
    };
    if str_at(slice, "/spec/nodeName") != req.node {
        return Err(req.forbidden(&format!(
            "can only {verb} ResourceSlice with the same NodeName as the requesting node"
        )));
    }
    Ok(())
}

const KUBELET_SERVING_SIGNER: &str = "kubernetes.io/kubelet-serving";
const KUBELET_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client-kubelet";

/// The subject common name of a base64 PEM `CERTIFICATE REQUEST`
/// (the last CN attribute, as Go's `pkix.Name`).
fn csr_common_name(request_b64: &str) -> Result<String, String> {
    use base64::Engine;
    use x509_parser::prelude::FromDer;
    const NOT_PEM: &str = "PEM block type must be CERTIFICATE REQUEST";
    let pem = base64::engine::general_purpose::STANDARD
        .decode(request_b64)
        .map_err(|_| NOT_PEM.to_string())?;
    let (_, pem) = x509_parser::pem::parse_x509_pem(&pem).map_err(|_| NOT_PEM.to_string())?;
    if pem.label != "CERTIFICATE REQUEST" {
        return Err(NOT_PEM.to_string());
    }
    let (_, csr) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&pem.contents)
            .map_err(|e| e.to_string())?;
    Ok(csr
        .certification_request_info
        .subject
        .iter_common_name()
        .filter_map(|cn| cn.as_str().ok())
        .last()
        .unwrap_or("")
        .to_string())
}

fn admit_csr(req: &Request<'_>) -> Result<(), ApiError> {
    if req.attrs.operation != Operation::Create {
        return Ok(());
    }
    let csr = req.object()?;
    let signer = str_at(csr, "/spec/signerName");
    if signer != KUBELET_SERVING_SIGNER && signer != KUBELET_CLIENT_SIGNER {
        return Ok(());
    }
    let cn = csr_common_name(str_at(csr, "/spec/request"))
        .map_err(|e| req.forbidden(&format!("unable to parse csr: {e}")))?;
    if cn != format!("system:node:{}", req.node) {
        return Err(req.forbidden(&format!(
            "can only create a node CSR with CN=system:node:{}",
            req.node
        )));
    }
    Ok(())
}

impl AdmissionPlugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(async move {
            if attrs.operation == Operation::Connect {
                return Ok(false);
            }
            let Some(user) = attrs.user else {
                return Ok(false);
            };
            let Some(node) = node_identity(user) else {
                return Ok(false);
            };
            let object = obj.map(|o| &*o);
            let req = Request {
                attrs,
                object,
                node,
            };
            if node.is_empty() {
                return Err(req.forbidden(&format!(
                    "could not determine node from user {:?}",
                    user.name
                )));
            }
            self.admit(&req).await.map(|()| false)
        })
    }
}

#[cfg(test)]
#[path = "node_restriction_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "node_restriction_objects_tests.rs"]
mod objects_tests;
