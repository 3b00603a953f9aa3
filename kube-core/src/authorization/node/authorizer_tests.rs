//! Tests of the Node authorizer's decisions.

use std::collections::BTreeSet;

use super::super::references::{PodRefs, PvRefs};
use super::*;

fn node_user(name: &str) -> UserInfo {
    UserInfo {
        name: format!("system:node:{name}"),
        groups: vec![NODES_GROUP.into(), "system:authenticated".into()],
        ..Default::default()
    }
}

fn authorizer() -> NodeAuthorizer {
    let graph = Arc::new(Graph::new());
    graph.add_pod(&PodRefs {
        namespace: "ns".into(),
        name: "p1".into(),
        uid: "u1".into(),
        node_name: "n1".into(),
        service_account: "sa1".into(),
        secrets: BTreeSet::from(["s1".to_string()]),
        config_maps: BTreeSet::from(["cm1".to_string()]),
        claims: BTreeSet::from(["pvc1".to_string()]),
        resource_claims: BTreeSet::from(["rc1".to_string()]),
        ..Default::default()
    });
    graph.add_pod(&PodRefs {
        namespace: "ns".into(),
        name: "p2".into(),
        node_name: "n2".into(),
        secrets: BTreeSet::from(["s2".to_string()]),
        ..Default::default()
    });
    graph.add_pv(&PvRefs {
        name: "pv1".into(),
        claim: Some(("ns".into(), "pvc1".into())),
        secrets: vec![("ns".into(), "pv-secret".into())],
    });
    graph.add_node_object(VertexType::VolumeAttachment, "", "va1", "n1");
    graph.add_node_object(VertexType::ResourceSlice, "", "slice1", "n1");
    graph.add_node_object(VertexType::ResourceSlice, "", "slice2", "n2");
    graph.add_node_object(VertexType::PodCertificateRequest, "ns", "pcr1", "n1");
    let rules = crate::rbac::policy::node_rules()
        .iter()
        .map(PolicyRule::from_json)
        .collect();
    NodeAuthorizer::new(graph, rules)
}

fn req(verb: &str, group: &str, resource: &str, ns: &str, name: &str) -> RequestInfo {
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    RequestInfo {
        is_resource_request: true,
        verb: verb.into(),
        api_group: group.into(),
        api_version: "v1".into(),
        namespace: ns.into(),
        resource: resource.into(),
        subresource: subresource.into(),
        name: name.into(),
        ..Default::default()
    }
}

fn with_selector(mut r: RequestInfo, selector: &str) -> RequestInfo {
    r.field_selector = Some(selector.into());
    r
}

fn n1(a: &NodeAuthorizer, r: &RequestInfo) -> Decision {
    a.decide(&node_user("n1"), r)
}

fn none(reason: &str) -> Decision {
    Decision::NoOpinion(reason.into())
}

const NO_RELATIONSHIP: &str = "no relationship found between node 'n1' and this object";

#[test]
fn only_nodes_are_node_users() {
    let a = authorizer();
    let r = req("get", "", "secrets", "ns", "s1");
    let alice = UserInfo {
        name: "alice".into(),
        groups: vec![NODES_GROUP.into()],
        ..Default::default()
    };
    assert_eq!(a.decide(&alice, &r), none(""));
    let no_group = UserInfo {
        name: "system:node:n1".into(),
        ..Default::default()
    };
    assert_eq!(a.decide(&no_group, &r), none(""));
    assert_eq!(
        a.decide(&node_user(""), &r),
        none("unknown node for user \"system:node:\"")
    );
    assert_eq!(node_identity(&node_user("n1")), Some("n1"));
    assert_eq!(node_identity(&alice), None);
}

#[test]
fn secrets_and_config_maps_of_its_pods() {
    let a = authorizer();
    for verb in ["get", "list", "watch"] {
        assert_eq!(
            n1(&a, &req(verb, "", "secrets", "ns", "s1")),
            Decision::Allow
        );
    }
    assert_eq!(
        n1(&a, &req("get", "", "configmaps", "ns", "cm1")),
        Decision::Allow
    );
    // Through its pod's claim's volume.
    assert_eq!(
        n1(&a, &req("get", "", "secrets", "ns", "pv-secret")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &req("get", "", "secrets", "ns", "s2")),
        none(NO_RELATIONSHIP)
    );
    assert_eq!(
        n1(&a, &req("get", "", "secrets", "ns", "unknown")),
        none(NO_RELATIONSHIP)
    );
    assert_eq!(
        a.decide(&node_user("n9"), &req("get", "", "secrets", "ns", "s1")),
        none("no relationship found between node 'n9' and this object")
    );
    assert_eq!(
        n1(&a, &req("update", "", "secrets", "ns", "s1")),
        none("can only read resources of this type")
    );
    assert_eq!(
        n1(&a, &req("get", "", "secrets/x", "ns", "s1")),
        none("cannot read subresource")
    );
    assert_eq!(
        n1(&a, &req("list", "", "secrets", "", "")),
        none("can only read namespaced object of this type")
    );
    assert_eq!(
        n1(&a, &req("list", "", "configmaps", "ns", "")),
        none("No Object name found")
    );
}

#[test]
fn claims_volumes_and_attachments_by_get() {
    let a = authorizer();
    assert_eq!(
        n1(&a, &req("get", "", "persistentvolumeclaims", "ns", "pvc1")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &req("get", "", "persistentvolumes", "", "pv1")),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &req("get", "resource.k8s.io", "resourceclaims", "ns", "rc1")
        ),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &req("get", "storage.k8s.io", "volumeattachments", "", "va1")
        ),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &req("list", "", "persistentvolumes", "", "")),
        none("can only get individual resources of this type")
    );
    assert_eq!(
        n1(&a, &req("get", "", "persistentvolumes/status", "", "pv1")),
        none("cannot get subresource")
    );
    assert_eq!(
        a.decide(
            &node_user("n2"),
            &req("get", "", "persistentvolumes", "", "pv1")
        ),
        none("no relationship found between node 'n2' and this object")
    );
    // Claim status.
    assert_eq!(
        n1(
            &a,
            &req("patch", "", "persistentvolumeclaims/status", "ns", "pvc1")
        ),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &req("get", "", "persistentvolumeclaims/status", "ns", "pvc1")
        ),
        none("can only get/update/patch this type")
    );
    assert_eq!(
        n1(
            &a,
            &req("update", "", "persistentvolumeclaims/status", "ns", "other")
        ),
        none(NO_RELATIONSHIP)
    );
}

#[test]
fn service_accounts_and_their_tokens() {
    let a = authorizer();
    assert_eq!(
        n1(&a, &req("get", "", "serviceaccounts", "ns", "sa1")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &req("create", "", "serviceaccounts/token", "ns", "sa1")),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &req("create", "", "serviceaccounts/token", "ns", "default")
        ),
        none(NO_RELATIONSHIP)
    );
    assert_eq!(
        n1(&a, &req("list", "", "serviceaccounts", "ns", "")),
        none("can only create tokens for individual service accounts")
    );
    assert_eq!(
        n1(&a, &req("create", "", "serviceaccounts", "ns", "sa1")),
        none("can only create token subresource of serviceaccount")
    );
}

#[test]
fn its_own_lease_and_csi_node() {
    let a = authorizer();
    let lease =
        |verb: &str, ns: &str, name: &str| req(verb, "coordination.k8s.io", "leases", ns, name);
    assert_eq!(
        n1(&a, &lease("create", "kube-node-lease", "")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &lease("update", "kube-node-lease", "n1")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &lease("update", "kube-node-lease", "n2")),
        none("can only access node lease with the same name as the requesting node")
    );
    assert_eq!(
        n1(&a, &lease("get", "default", "n1")),
        none("can only access leases in the \"kube-node-lease\" system namespace")
    );
    assert_eq!(
        n1(&a, &lease("list", "kube-node-lease", "")),
        none("can only get, create, update, patch, or delete a node lease")
    );
    let csi = |verb: &str, name: &str| req(verb, "storage.k8s.io", "csinodes", "", name);
    assert_eq!(n1(&a, &csi("create", "")), Decision::Allow);
    assert_eq!(n1(&a, &csi("patch", "n1")), Decision::Allow);
    assert_eq!(
        n1(&a, &csi("delete", "n2")),
        none("can only access CSINode with the same name as the requesting node")
    );
    assert_eq!(
        n1(&a, &csi("watch", "n1")),
        none("can only get, create, update, patch, or delete a CSINode")
    );
    assert_eq!(
        n1(
            &a,
            &req("get", "storage.k8s.io", "csinodes/status", "", "n1")
        ),
        none("cannot authorize CSINode subresources")
    );
}

#[test]
fn resource_slices_of_the_node() {
    let a = authorizer();
    let slice = |verb: &str, name: &str| req(verb, "resource.k8s.io", "resourceslices", "", name);
    assert_eq!(n1(&a, &slice("create", "")), Decision::Allow);
    assert_eq!(n1(&a, &slice("update", "slice1")), Decision::Allow);
    assert_eq!(n1(&a, &slice("delete", "slice2")), none(NO_RELATIONSHIP));
    assert_eq!(
        n1(&a, &with_selector(slice("list", ""), "spec.nodeName=n1")),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &with_selector(slice("deletecollection", ""), "spec.nodeName=n2")
        ),
        none("can only list/watch/deletecollection resourceslices with nodeName field selector")
    );
    assert_eq!(
        n1(&a, &slice("proxy", "slice1")),
        none("only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection")
    );
    assert_eq!(
        n1(
            &a,
            &req(
                "get",
                "resource.k8s.io",
                "resourceslices/status",
                "",
                "slice1"
            )
        ),
        none("cannot authorize ResourceSlice subresources")
    );
}

#[test]
fn pod_certificate_requests() {
    let a = authorizer();
    let pcr = |verb: &str, name: &str| {
        req(
            verb,
            "certificates.k8s.io",
            "podcertificaterequests",
            "ns",
            name,
        )
    };
    assert_eq!(n1(&a, &pcr("create", "")), Decision::Allow);
    assert_eq!(n1(&a, &pcr("get", "pcr1")), Decision::Allow);
    assert_eq!(
        n1(&a, &with_selector(pcr("watch", ""), "spec.nodeName=n1")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &pcr("list", "")),
        none("can only list/watch podcertificaterequests with nodeName field selector")
    );
    assert_eq!(
        n1(&a, &pcr("delete", "pcr1")),
        none("nodes may not delete podcertificaterequests")
    );
    assert_eq!(
        n1(
            &a,
            &req(
                "update",
                "certificates.k8s.io",
                "podcertificaterequests/status",
                "ns",
                "pcr1"
            )
        ),
        none("nodes may not access the status subresource of PodCertificateRequests")
    );
}

#[test]
fn nodes_read_only_themselves() {
    let a = authorizer();
    let node = |verb: &str, name: &str| req(verb, "", "nodes", "", name);
    assert_eq!(n1(&a, &node("get", "n1")), Decision::Allow);
    assert_eq!(n1(&a, &node("create", "")), Decision::Allow);
    assert_eq!(n1(&a, &node("patch", "n2")), Decision::Allow);
    assert_eq!(
        n1(&a, &req("update", "", "nodes/status", "", "n1")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &node("get", "n2")),
        none("node 'n1' cannot read 'n2', only its own Node object")
    );
    assert_eq!(
        n1(&a, &node("list", "")),
        none("node 'n1' cannot read all nodes, only its own Node object")
    );
    assert_eq!(n1(&a, &node("delete", "n1")), none(""));
    assert_eq!(n1(&a, &req("get", "", "nodes/proxy", "", "n1")), none(""));
}

#[test]
fn pods_of_the_node() {
    let a = authorizer();
    let pod = |verb: &str, name: &str| req(verb, "", "pods", "ns", name);
    assert_eq!(n1(&a, &pod("get", "p1")), Decision::Allow);
    assert_eq!(n1(&a, &pod("get", "p2")), none(NO_RELATIONSHIP));
    assert_eq!(
        n1(&a, &with_selector(pod("watch", ""), "spec.nodeName=n1")),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &with_selector(pod("list", ""), "spec.nodeName==n1,status.phase=Running")
        ),
        Decision::Allow
    );
    assert_eq!(n1(&a, &pod("list", "p1")), Decision::Allow);
    assert_eq!(
        n1(&a, &with_selector(pod("list", ""), "spec.nodeName!=n1")),
        none("can only list/watch pods with spec.nodeName field selector")
    );
    assert_eq!(n1(&a, &pod("create", "")), Decision::Allow);
    assert_eq!(n1(&a, &pod("delete", "p2")), Decision::Allow);
    assert_eq!(
        n1(&a, &req("patch", "", "pods/status", "ns", "p2")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &req("create", "", "pods/eviction", "ns", "p1")),
        Decision::Allow
    );
    assert_eq!(n1(&a, &pod("update", "p1")), none(""));
    assert_eq!(
        n1(&a, &req("create", "", "pods/exec", "ns", "p1")),
        none("")
    );
}

#[test]
fn everything_else_by_the_node_rules() {
    let a = authorizer();
    assert_eq!(
        n1(&a, &req("list", "", "services", "", "")),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &req("create", "events.k8s.io", "events", "ns", "")),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &req(
                "create",
                "authorization.k8s.io",
                "subjectaccessreviews",
                "",
                ""
            )
        ),
        Decision::Allow
    );
    assert_eq!(
        n1(
            &a,
            &req(
                "watch",
                "certificates.k8s.io",
                "certificatesigningrequests",
                "",
                ""
            )
        ),
        Decision::Allow
    );
    assert_eq!(
        n1(&a, &req("get", "node.k8s.io", "runtimeclasses", "", "x")),
        Decision::Allow
    );
    assert_eq!(n1(&a, &req("list", "", "namespaces", "", "")), none(""));
    assert_eq!(n1(&a, &req("delete", "", "services", "ns", "x")), none(""));
    let path = RequestInfo {
        is_resource_request: false,
        verb: "get".into(),
        path: "/healthz".into(),
        ..Default::default()
    };
    assert_eq!(n1(&a, &path), none(""));
}
