//! Tests of NodeRestriction, one per rule.

use std::collections::HashMap;

use apiserver::authentication::UserInfo;
use apiserver::authorization::{decided, Decision, DecisionFuture};
use apiserver::registry::resource::ResourceDef;
use serde_json::json;

use super::*;

/// Objects from a map.
#[derive(Default)]
pub(super) struct Fake(HashMap<(String, String, String, String), Value>);

impl Fake {
    pub(super) fn with(mut self, group: &str, resource: &str, obj: Value) -> Self {
        let key = (
            group.to_string(),
            resource.to_string(),
            meta::namespace(&obj).to_string(),
            meta::name(&obj).to_string(),
        );
        self.0.insert(key, obj);
        self
    }
}

impl Objects for Fake {
    fn get<'a>(
        &'a self,
        group: &'a str,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, ApiError>> {
        let key = (group.into(), resource.into(), namespace.into(), name.into());
        Box::pin(std::future::ready(Ok(self.0.get(&key).cloned())))
    }
}

/// Allows asking for the `vault` audience only.
pub(super) struct Audiences;

impl Authorizer for Audiences {
    fn authorize<'a>(
        &'a self,
        attrs: &'a apiserver::authorization::Attributes<'a>,
    ) -> DecisionFuture<'a> {
        let r = attrs.request;
        decided(
            if r.verb == "request-serviceaccounts-token-audience" && r.resource == "vault" {
                Decision::Allow
            } else {
                Decision::NoOpinion(String::new())
            },
        )
    }
}

pub(super) fn node_user(name: &str) -> UserInfo {
    UserInfo {
        name: format!("system:node:{name}"),
        groups: vec!["system:nodes".into()],
        ..Default::default()
    }
}

pub(super) fn pod(name: &str, node: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
        "labels": {"app": "a"}},
        "spec": {"nodeName": node, "serviceAccountName": "sa",
            "volumes": [{"name": "kube-api-access", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}}]}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}})
}

pub(super) fn plugin() -> NodeRestriction {
    let objects = Fake::default()
        .with(
            "",
            "nodes",
            json!({"metadata": {"name": "n1", "uid": "node-uid"}}),
        )
        .with("", "pods", pod("p1", "n1"))
        .with("", "pods", pod("p2", "n2"))
        .with(
            "",
            "serviceaccounts",
            json!({"metadata": {"name": "sa", "namespace": "ns", "uid": "sa-uid"}}),
        )
        .with(
            "",
            "persistentvolumeclaims",
            json!({"metadata": {"name": "data", "namespace": "ns"}, "spec": {"volumeName": "pv1"}}),
        )
        .with(
            "",
            "persistentvolumes",
            json!({"metadata": {"name": "pv1"}, "spec": {"csi": {"driver": "csi.example.com"}}}),
        )
        .with(
            "storage.k8s.io",
            "csidrivers",
            json!({"metadata": {"name": "csi.example.com"},
                "spec": {"tokenRequests": [{"audience": "csi-aud"}]}}),
        );
    NodeRestriction {
        objects: Arc::new(objects),
        authorizer: Arc::new(Audiences),
    }
}

/// One admission call.
pub(super) struct Call {
    def: ResourceDef,
    op: Operation,
    sub: &'static str,
    ns: &'static str,
    name: String,
    object: Option<Value>,
    old: Option<Value>,
    user: UserInfo,
}

pub(super) fn call(group: &str, kind: &str, resource: &str, op: Operation) -> Call {
    Call {
        def: ResourceDef::new(group, "v1", kind, resource),
        op,
        sub: "",
        ns: "",
        name: String::new(),
        object: None,
        old: None,
        user: node_user("n1"),
    }
}

impl Call {
    pub(super) fn sub(mut self, s: &'static str) -> Self {
        self.sub = s;
        self
    }
    pub(super) fn ns(mut self, ns: &'static str) -> Self {
        self.ns = ns;
        self
    }
    pub(super) fn name(mut self, n: &str) -> Self {
        self.name = n.into();
        self
    }
    pub(super) fn object(mut self, o: Value) -> Self {
        self.object = Some(o);
        self
    }
    pub(super) fn old(mut self, o: Value) -> Self {
        self.old = Some(o);
        self
    }
    pub(super) fn user(mut self, u: UserInfo) -> Self {
        self.user = u;
        self
    }

    /// The message of the rejection, `None` when admitted.
    pub(super) async fn run(self, p: &NodeRestriction) -> Option<String> {
        let mut object = self.object.clone();
        let attrs = Attributes {
            operation: self.op,
            resource: &self.def,
            subresource: self.sub,
            namespace: self.ns,
            name: &self.name,
            object: None,
            old_object: self.old.as_ref(),
            user: Some(&self.user),
            dry_run: false,
            warnings: None,
            started: None,
            kind: None,
        };
        let result = p.mutate(&attrs, object.as_mut()).await;
        assert_eq!(object, self.object, "NodeRestriction never mutates");
        match result {
            Ok(changed) => {
                assert!(!changed);
                None
            }
            Err(e) => Some(e.message),
        }
    }
}

fn pods(op: Operation) -> Call {
    call("", "Pod", "pods", op).ns("ns")
}

fn mirror_pod() -> Value {
    json!({"metadata": {"name": "static-n1", "namespace": "ns",
        "annotations": {"kubernetes.io/config.mirror": "hash"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1",
            "uid": "node-uid", "controller": true}]},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "h", "hostPath": {"path": "/etc"}}]}})
}

#[tokio::test]
async fn other_users_and_connects_pass() {
    let p = plugin();
    let admin = UserInfo {
        name: "admin".into(),
        groups: vec!["system:masters".into()],
        ..Default::default()
    };
    assert_eq!(
        pods(Operation::Create)
            .object(pod("x", "n2"))
            .user(admin)
            .run(&p)
            .await,
        None
    );
    // Named like a node but not in system:nodes.
    let impostor = UserInfo {
        name: "system:node:n1".into(),
        ..Default::default()
    };
    let node2 = call("", "Node", "nodes", Operation::Update).name("n2");
    assert_eq!(node2.user(impostor).run(&p).await, None);
    assert_eq!(
        call("", "Node", "nodes", Operation::Connect)
            .sub("proxy")
            .name("n2")
            .run(&p)
            .await,
        None
    );
    assert_eq!(
        pods(Operation::Create)
            .object(pod("x", "n1"))
            .user(node_user(""))
            .run(&p)
            .await,
        Some("pods \"x\" is forbidden: could not determine node from user \"system:node:\"".into())
    );
    // Kinds the plugin does not restrict.
    assert_eq!(
        call("", "ConfigMap", "configmaps", Operation::Create)
            .ns("ns")
            .run(&p)
            .await,
        None
    );
}

#[tokio::test]
async fn only_mirror_pods_bound_to_the_node_and_owned_by_it() {
    let p = plugin();
    assert_eq!(
        pods(Operation::Create).object(mirror_pod()).run(&p).await,
        None
    );
    let create = |pod: Value| pods(Operation::Create).object(pod);
    let mut plain = mirror_pod();
    plain["metadata"]["annotations"] = json!({});
    assert_eq!(
        create(plain).run(&p).await.as_deref(),
        Some("pods \"static-n1\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods")
    );
    let mut other_node = mirror_pod();
    other_node["spec"]["nodeName"] = json!("n2");
    assert_eq!(
        create(other_node).run(&p).await.as_deref(),
        Some("pods \"static-n1\" is forbidden: node \"n1\" can only create pods with spec.nodeName set to itself")
    );
    let with_owners = |owners: Value| {
        let mut pod = mirror_pod();
        pod["metadata"]["ownerReferences"] = owners;
        create(pod)
    };
    let owner = mirror_pod()["metadata"]["ownerReferences"][0].clone();
    let prefix = "pods \"static-n1\" is forbidden: node \"n1\" ";
    let cases = [
        (
            json!([]),
            "can only create pods with an owner reference set to itself",
        ),
        (
            json!([owner, owner]),
            "can only create pods with a single owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "v1", "kind": "Node", "name": "n2", "uid": "node-uid", "controller": true}]),
            "can only create pods with an owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "apps/v1", "kind": "Node", "name": "n1", "uid": "node-uid", "controller": true}]),
            "can only create pods with an owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "node-uid"}]),
            "can only create pods with a controller owner reference set to itself",
        ),
        (
            json!([{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "node-uid",
                "controller": true, "blockOwnerDeletion": true}]),
            "must not set blockOwnerDeletion on an owner reference",
        ),
    ];
    for (owners, why) in cases {
        assert_eq!(
            with_owners(owners).run(&p).await,
            Some(format!("{prefix}{why}"))
        );
    }
    assert_eq!(
        with_owners(json!([{"apiVersion": "v1", "kind": "Node", "name": "n1",
            "uid": "stale", "controller": true}]))
        .run(&p)
        .await
        .as_deref(),
        Some("pods \"static-n1\" is forbidden: node n1 UID mismatch: expected stale got node-uid")
    );
    // The node itself must exist.
    let mut unknown = mirror_pod();
    unknown["spec"]["nodeName"] = json!("n3");
    unknown["metadata"]["ownerReferences"][0]["name"] = json!("n3");
    assert_eq!(
        create(unknown)
            .user(node_user("n3"))
            .run(&p)
            .await
            .as_deref(),
        Some("node \"n3\" not found")
    );
    // No API objects.
    for (field, value, what) in [
        ("serviceAccountName", json!("default"), "serviceaccounts"),
        ("imagePullSecrets", json!([{"name": "pull"}]), "secrets"),
        (
            "volumes",
            json!([{"name": "c", "configMap": {"name": "cm"}}]),
            "configmaps",
        ),
        (
            "volumes",
            json!([{"name": "d", "persistentVolumeClaim": {"claimName": "d"}}]),
            "persistentvolumeclaims",
        ),
        ("resourceClaims", json!([{"name": "gpu"}]), "resourceclaims"),
    ] {
        let mut pod = mirror_pod();
        pod["spec"][field] = value;
        assert_eq!(
            create(pod).run(&p).await,
            Some(format!("{prefix}can not create pods that reference {what}"))
        );
    }
    let mut odd = mirror_pod();
    odd["spec"]["volumes"] = json!([{"name": "v", "mystery": {}}]);
    assert_eq!(
        create(odd).run(&p).await,
        Some("pods \"static-n1\" is forbidden: error checking mirror pod for API references: unknown volume type for volume  \"v\"".into())
    );
    // A generated name names the object in the message.
    let mut generated = mirror_pod();
    generated["metadata"] = json!({"generateName": "static-", "namespace": "ns"});
    assert_eq!(
        create(generated).run(&p).await.as_deref(),
        Some("pods \"static-\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods")
    );
}

#[tokio::test]
async fn pods_deleted_updated_and_their_subresources() {
    let p = plugin();
    let delete = |name: &str, old: Value| pods(Operation::Delete).name(name).old(old);
    assert_eq!(delete("p1", pod("p1", "n1")).run(&p).await, None);
    assert_eq!(
        delete("p2", pod("p2", "n2")).run(&p).await.as_deref(),
        Some("pods \"p2\" is forbidden: node \"n1\" can only delete pods with spec.nodeName set to itself")
    );
    assert_eq!(
        pods(Operation::Update).name("p1").object(pod("p1", "n1")).old(pod("p1", "n1")).run(&p).await.as_deref(),
        Some("pods \"p1\" is forbidden: unexpected operation \"UPDATE\", node \"n1\" can only create and delete mirror pods")
    );
    for sub in ["binding", "ephemeralcontainers", "resize"] {
        assert_eq!(
            pods(Operation::Update).sub(sub).name("p1").run(&p).await,
            Some(format!("pods \"p1\" is forbidden: unexpected pod subresource {sub:?}, only 'status' and 'eviction' are allowed"))
        );
    }
}

#[tokio::test]
async fn pod_status_of_its_own_pods_only() {
    let p = plugin();
    let status = |old: Value, new: Value| {
        let name = meta::name(&old).to_string();
        pods(Operation::Update)
            .sub("status")
            .name(&name)
            .old(old)
            .object(new)
    };
    let mut running = pod("p1", "n1");
    running["status"] = json!({"phase": "Running"});
    assert_eq!(status(pod("p1", "n1"), running).run(&p).await, None);
    assert_eq!(
        status(pod("p2", "n2"), pod("p2", "n2")).run(&p).await.as_deref(),
        Some("pods \"p2\" is forbidden: node \"n1\" can only update pod status for pods with spec.nodeName set to itself")
    );
    let mut relabeled = pod("p1", "n1");
    relabeled["metadata"]["labels"]["app"] = json!("b");
    assert_eq!(
        status(pod("p1", "n1"), relabeled).run(&p).await.as_deref(),
        Some("pods \"p1\" is forbidden: node \"n1\" cannot update labels through pod status")
    );
    let mut claims = pod("p1", "n1");
    claims["status"] =
        json!({"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "x"}]});
    assert_eq!(
        status(pod("p1", "n1"), claims).run(&p).await.as_deref(),
        Some("pods \"p1\" is forbidden: node \"n1\" cannot update resource claim statues")
    );
    let mut extended = pod("p1", "n1");
    extended["status"] = json!({"extendedResourceClaimStatus": {"resourceClaimName": "x"}});
    assert_eq!(
        status(pod("p1", "n1"), extended).run(&p).await.as_deref(),
        Some("pods \"p1\" is forbidden: node \"n1\" cannot update extended resource claim status")
    );
    assert_eq!(
        pods(Operation::Create)
            .sub("status")
            .name("p1")
            .object(pod("p1", "n1"))
            .run(&p)
            .await
            .as_deref(),
        Some("pods \"p1\" is forbidden: unexpected operation \"CREATE\"")
    );
}

#[tokio::test]
async fn evictions_of_its_own_pods_only() {
    let p = plugin();
    let evict = |name: &str| {
        pods(Operation::Create)
            .sub("eviction")
            .name(name)
            .object(json!({"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": name, "namespace": "ns"}}))
    };
    assert_eq!(evict("p1").run(&p).await, None);
    assert_eq!(
        evict("p2").run(&p).await.as_deref(),
        Some("pods \"p2\" is forbidden: node n1 can only evict pods with spec.nodeName set to itself")
    );
    assert_eq!(
        evict("gone").run(&p).await.as_deref(),
        Some("pod \"gone\" not found")
    );
    // The name from the body when the request has none.
    let body_only = pods(Operation::Create)
        .sub("eviction")
        .object(json!({"metadata": {"name": "p2"}}));
    assert!(body_only
        .run(&p)
        .await
        .is_some_and(|m| m.contains("can only evict")));
    let nameless = pods(Operation::Create)
        .sub("eviction")
        .object(json!({"metadata": {}}));
    assert_eq!(
        nameless.run(&p).await.as_deref(),
        Some("pods \"Unknown\" is forbidden: could not determine pod from request data")
    );
    assert_eq!(
        pods(Operation::Update)
            .sub("eviction")
            .name("p1")
            .run(&p)
            .await
            .as_deref(),
        Some("pods \"p1\" is forbidden: unexpected operation UPDATE")
    );
}

fn node(name: &str, labels: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels}, "spec": {}})
}

#[tokio::test]
async fn its_own_node_without_privileged_labels_taints_or_owners() {
    let p = plugin();
    let nodes = |op| call("", "Node", "nodes", op);
    assert_eq!(
        nodes(Operation::Update).name("n2").run(&p).await.as_deref(),
        Some("nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"")
    );
    assert_eq!(
        nodes(Operation::Create)
            .name("n2")
            .object(node("n2", json!({})))
            .run(&p)
            .await
            .as_deref(),
        Some("nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"")
    );
    let kubelet_labels = json!({"kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "big", "x.kubelet.kubernetes.io/a": "b",
        "example.com/anything": "ok"});
    assert_eq!(
        nodes(Operation::Create)
            .name("n1")
            .object(node("n1", kubelet_labels.clone()))
            .run(&p)
            .await,
        None
    );
    assert_eq!(
        nodes(Operation::Create)
            .name("n1")
            .object(node("n1", json!({"node-restriction.kubernetes.io/a": "x",
                "foo.node-restriction.kubernetes.io/b": "y", "node-role.kubernetes.io/control-plane": "",
                "example.k8s.io/c": "z", "kubernetes.io/hostname": "n1"})))
            .run(&p)
            .await
            .as_deref(),
        Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to set the following labels: example.k8s.io/c, foo.node-restriction.kubernetes.io/b, node-restriction.kubernetes.io/a, node-role.kubernetes.io/control-plane")
    );
    let mut sourced = node("n1", json!({}));
    sourced["spec"]["configSource"] = json!({"configMap": {"name": "c"}});
    assert_eq!(
        nodes(Operation::Create).name("n1").object(sourced.clone()).run(&p).await.as_deref(),
        Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to create pods with a non-nil configSource")
    );
    let old = node("n1", kubelet_labels.clone());
    let update = |new: Value| {
        nodes(Operation::Update)
            .name("n1")
            .old(old.clone())
            .object(new)
    };
    let mut status = old.clone();
    status["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    assert_eq!(update(status).run(&p).await, None);
    assert_eq!(
        update(sourced).run(&p).await.as_deref(),
        Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to update configSource to a new non-nil configSource")
    );
    let mut tainted = old.clone();
    tainted["spec"]["taints"] = json!([{"key": "k", "effect": "NoSchedule"}]);
    assert_eq!(
        update(tainted).run(&p).await.as_deref(),
        Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify taints")
    );
    // An empty list is no change.
    let mut empty = old.clone();
    empty["spec"]["taints"] = json!([]);
    assert_eq!(update(empty).run(&p).await, None);
    let mut owned = old.clone();
    owned["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u"}]);
    assert_eq!(
        update(owned).run(&p).await.as_deref(),
        Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify ownerReferences")
    );
    let mut relabeled = old.clone();
    relabeled["metadata"]["labels"]["node-role.kubernetes.io/worker"] = json!("");
    relabeled["metadata"]["labels"]["example.com/free"] = json!("x");
    assert_eq!(
        update(relabeled).run(&p).await.as_deref(),
        Some("nodes \"n1\" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/worker")
    );
    let mut removed = old.clone();
    removed["metadata"]["labels"] = json!({});
    assert_eq!(update(removed).run(&p).await, None);
}

#[tokio::test]
async fn only_the_status_of_claims() {
    let p = plugin();
    let claim = json!({"metadata": {"name": "data", "namespace": "ns", "resourceVersion": "5"},
        "spec": {"volumeName": "pv1"}, "status": {"phase": "Bound"}});
    let status = |new: Value| {
        call(
            "",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            Operation::Update,
        )
        .ns("ns")
        .sub("status")
        .name("data")
        .old(claim.clone())
        .object(new)
    };
    let mut resized = claim.clone();
    resized["metadata"]["resourceVersion"] = json!("");
    resized["status"]["capacity"] = json!({"storage": "2Gi"});
    resized["status"]["conditions"] = json!([{"type": "Resizing", "status": "True"}]);
    resized["status"]["allocatedResources"] = json!({"storage": "2Gi"});
    assert_eq!(status(resized).run(&p).await, None);
    let mut relabeled = claim.clone();
    relabeled["metadata"]["labels"] = json!({"a": "b"});
    relabeled["status"]["phase"] = json!("Lost");
    assert_eq!(
        status(relabeled).run(&p).await.as_deref(),
        Some("persistentvolumeclaims \"data\" is forbidden: node \"n1\" is not allowed to update fields other than status.quantity and status.conditions: metadata.labels, status.phase")
    );
    assert_eq!(
        call(
            "",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            Operation::Create
        )
        .ns("ns")
        .object(claim.clone())
        .run(&p)
        .await
        .as_deref(),
        Some("persistentvolumeclaims \"data\" is forbidden: may only update PVC status")
    );
}

#[tokio::test]
async fn its_own_lease_csi_node_and_slices() {
    let p = plugin();
    let lease = |op, ns: &'static str, name: &str| {
        call("coordination.k8s.io", "Lease", "leases", op)
            .ns(ns)
            .name(name)
            .object(json!({"metadata": {"name": name, "namespace": ns}}))
    };
    assert_eq!(
        lease(Operation::Create, "kube-node-lease", "n1")
            .run(&p)
            .await,
        None
    );
    assert_eq!(
        lease(Operation::Update, "kube-node-lease", "n1")
            .run(&p)
            .await,
        None
    );
    assert_eq!(
        lease(Operation::Create, "kube-node-lease", "n2").run(&p).await.as_deref(),
        Some("leases.coordination.k8s.io \"n2\" is forbidden: can only access node lease with the same name as the requesting node")
    );
    assert_eq!(
        lease(Operation::Delete, "default", "n1").run(&p).await.as_deref(),
        Some("leases.coordination.k8s.io \"n1\" is forbidden: can only access leases in the \"kube-node-lease\" system namespace")
    );
    let csi = |op, name: &str| {
        call("storage.k8s.io", "CSINode", "csinodes", op)
            .name(name)
            .object(json!({"metadata": {"name": name}}))
    };
    assert_eq!(csi(Operation::Create, "n1").run(&p).await, None);
    assert_eq!(
        csi(Operation::Update, "n2").run(&p).await.as_deref(),
        Some("csinodes.storage.k8s.io \"n2\" is forbidden: can only access CSINode with the same name as the requesting node")
    );
    let slice =
        |node: &str| json!({"metadata": {"name": "s"}, "spec": {"nodeName": node, "driver": "d"}});
    let slices = |op| call("resource.k8s.io", "ResourceSlice", "resourceslices", op).name("s");
    assert_eq!(
        slices(Operation::Create).object(slice("n1")).run(&p).await,
        None
    );
    assert_eq!(
        slices(Operation::Create).object(slice("n2")).run(&p).await.as_deref(),
        Some("resourceslices.resource.k8s.io \"s\" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node")
    );
    // A slice for all nodes is no node's.
    assert!(slices(Operation::Create)
        .object(json!({"metadata": {"name": "s"}, "spec": {"allNodes": true}}))
        .run(&p)
        .await
        .is_some());
    assert_eq!(
        slices(Operation::Delete).old(slice("n1")).run(&p).await,
        None
    );
    assert_eq!(
        slices(Operation::Delete).old(slice("n2")).run(&p).await.as_deref(),
        Some("resourceslices.resource.k8s.io \"s\" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node")
    );
    assert_eq!(
        slices(Operation::Update).object(slice("n2")).run(&p).await,
        None
    );
}
