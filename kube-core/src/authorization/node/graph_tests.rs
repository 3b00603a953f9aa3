//! Tests of the Node authorizer's graph.

use std::collections::BTreeSet;

use super::super::references::{PodRefs, PvRefs};
use super::*;

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn pod(name: &str, node: &str) -> PodRefs {
    PodRefs {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        node_name: node.into(),
        service_account: "default".into(),
        secrets: set(&["s1"]),
        config_maps: set(&["kube-root-ca.crt"]),
        claims: set(&["data"]),
        resource_claims: set(&["gpu"]),
        ..Default::default()
    }
}

fn reaches(g: &Graph, node: &str, kind: VertexType, ns: &str, name: &str) -> bool {
    g.has_path_from(node, kind, ns, name).is_ok()
}

#[test]
fn a_bound_pod_links_what_it_uses_to_its_node() {
    let g = Graph::new();
    g.add_pod(&pod("p1", "n1"));
    for (kind, name) in [
        (VertexType::Pod, "p1"),
        (VertexType::Secret, "s1"),
        (VertexType::ConfigMap, "kube-root-ca.crt"),
        (VertexType::Pvc, "data"),
        (VertexType::ResourceClaim, "gpu"),
        (VertexType::ServiceAccount, "default"),
    ] {
        assert!(reaches(&g, "n1", kind, "ns", name), "{kind:?} {name}");
        assert!(!reaches(&g, "n2", kind, "ns", name), "{kind:?} {name}");
        assert!(!reaches(&g, "n1", kind, "other", name), "{kind:?} {name}");
    }
    assert!(!reaches(&g, "n1", VertexType::Secret, "ns", "s2"));
    // pod, node, sa, secret, configmap, pvc, claim; six edges.
    assert_eq!(g.size(), (7, 6));
}

#[test]
fn the_reasons_name_what_was_missing() {
    let g = Graph::new();
    g.add_pod(&pod("p1", "n1"));
    assert_eq!(
        g.has_path_from("n2", VertexType::Secret, "ns", "s1"),
        Err(NoPath("unknown node 'n2' cannot get secret ns/s1".into()))
    );
    assert_eq!(
        g.has_path_from("n1", VertexType::Secret, "ns", "s2"),
        Err(NoPath("node 'n1' cannot get unknown secret ns/s2".into()))
    );
    g.add_pod(&PodRefs {
        secrets: set(&["s2"]),
        ..pod("p2", "n2")
    });
    assert_eq!(
        g.has_path_from("n1", VertexType::Secret, "ns", "s2"),
        Err(NoPath(
            "node 'n1' cannot get secret ns/s2, no relationship to this object was found in the node authorizer graph".into()
        ))
    );
}

#[test]
fn deleting_a_pod_removes_what_only_it_used() {
    let g = Graph::new();
    g.add_pod(&pod("p1", "n1"));
    g.add_pod(&PodRefs {
        secrets: set(&["s2"]),
        claims: BTreeSet::new(),
        resource_claims: BTreeSet::new(),
        ..pod("p2", "n1")
    });
    g.delete_pod("ns", "p1");
    assert!(!g.contains(VertexType::Pod, "ns", "p1"));
    assert!(!g.contains(VertexType::Secret, "ns", "s1"));
    assert!(!g.contains(VertexType::Pvc, "ns", "data"));
    // Still used by p2.
    assert!(reaches(
        &g,
        "n1",
        VertexType::ConfigMap,
        "ns",
        "kube-root-ca.crt"
    ));
    assert!(reaches(
        &g,
        "n1",
        VertexType::ServiceAccount,
        "ns",
        "default"
    ));
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "s2"));
    g.delete_pod("ns", "p2");
    assert_eq!(g.size(), (0, 0));
    // Deleting what is not there is harmless.
    g.delete_pod("ns", "p2");
}

#[test]
fn a_shared_object_reaches_each_node_of_its_pods_only_while_they_run() {
    let g = Graph::new();
    g.add_pod(&pod("p1", "n1"));
    g.add_pod(&pod("p2", "n2"));
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "s1"));
    assert!(reaches(&g, "n2", VertexType::Secret, "ns", "s1"));
    g.delete_pod("ns", "p2");
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "s1"));
    assert!(!reaches(&g, "n2", VertexType::Secret, "ns", "s1"));
    assert!(!g.contains(VertexType::Node, "", "n2"));
}

#[test]
fn re_adding_a_pod_replaces_its_edges() {
    let g = Graph::new();
    g.add_pod(&pod("p1", "n1"));
    g.add_pod(&PodRefs {
        secrets: set(&["s9"]),
        ..pod("p1", "n1")
    });
    assert!(!g.contains(VertexType::Secret, "ns", "s1"));
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "s9"));
    // Recreated on another node.
    g.add_pod(&pod("p1", "n2"));
    assert!(!reaches(&g, "n1", VertexType::Secret, "ns", "s1"));
    assert!(reaches(&g, "n2", VertexType::Secret, "ns", "s1"));
    assert!(!g.contains(VertexType::Node, "", "n1"));
}

#[test]
fn a_mirror_pod_links_only_itself() {
    let g = Graph::new();
    g.add_pod(&PodRefs {
        mirror: true,
        ..pod("static", "n1")
    });
    assert!(reaches(&g, "n1", VertexType::Pod, "ns", "static"));
    assert!(!g.contains(VertexType::Secret, "ns", "s1"));
    assert!(!g.contains(VertexType::ServiceAccount, "ns", "default"));
    assert_eq!(g.size(), (2, 1));
}

fn pv(name: &str, claim: Option<(&str, &str)>, secrets: &[(&str, &str)]) -> PvRefs {
    PvRefs {
        name: name.into(),
        claim: claim.map(|(a, b)| (a.into(), b.into())),
        secrets: secrets
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    }
}

#[test]
fn a_volume_and_its_secrets_reach_the_nodes_of_the_claims_pods() {
    let g = Graph::new();
    g.add_pv(&pv("vol", Some(("ns", "data")), &[("ns", "pv-secret")]));
    // Bound but no pod uses the claim yet.
    assert!(!reaches(&g, "n1", VertexType::Pv, "", "vol"));
    g.add_pod(&pod("p1", "n1"));
    assert!(reaches(&g, "n1", VertexType::Pv, "", "vol"));
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "pv-secret"));
    assert!(!reaches(&g, "n2", VertexType::Secret, "ns", "pv-secret"));
    g.delete_pod("ns", "p1");
    // The claim stays (the volume points at it), without a pod.
    assert!(g.contains(VertexType::Pvc, "ns", "data"));
    assert!(!reaches(&g, "n1", VertexType::Pv, "", "vol"));
    g.add_pod(&pod("p1", "n1"));
    // Unbinding the volume drops its edges.
    g.add_pv(&pv("vol", None, &[]));
    assert!(!g.contains(VertexType::Pv, "", "vol"));
    assert!(!g.contains(VertexType::Secret, "ns", "pv-secret"));
    assert!(reaches(&g, "n1", VertexType::Pvc, "ns", "data"));
    g.add_pv(&pv("vol", Some(("ns", "data")), &[]));
    g.delete_pv("vol");
    assert!(!g.contains(VertexType::Pv, "", "vol"));
}

#[test]
fn a_secret_used_by_a_pod_and_a_volume_reaches_both_ways() {
    let g = Graph::new();
    g.add_pv(&pv("vol", Some(("ns", "data")), &[("ns", "s1")]));
    g.add_pod(&PodRefs {
        claims: BTreeSet::new(),
        ..pod("p1", "n1")
    });
    g.add_pod(&PodRefs {
        secrets: BTreeSet::new(),
        ..pod("p2", "n2")
    });
    // s1 → p1 → n1 directly, s1 → vol → data → p2 → n2 by the walk.
    assert!(reaches(&g, "n1", VertexType::Secret, "ns", "s1"));
    assert!(reaches(&g, "n2", VertexType::Secret, "ns", "s1"));
    g.delete_pod("ns", "p2");
    assert!(!reaches(&g, "n2", VertexType::Secret, "ns", "s1"));
}

#[test]
fn node_bound_objects() {
    let g = Graph::new();
    g.add_node_object(VertexType::VolumeAttachment, "", "va1", "n1");
    g.add_node_object(VertexType::ResourceSlice, "", "slice1", "n1");
    g.add_node_object(VertexType::PodCertificateRequest, "ns", "pcr1", "n1");
    assert!(reaches(&g, "n1", VertexType::VolumeAttachment, "", "va1"));
    assert!(reaches(&g, "n1", VertexType::ResourceSlice, "", "slice1"));
    assert!(reaches(
        &g,
        "n1",
        VertexType::PodCertificateRequest,
        "ns",
        "pcr1"
    ));
    assert!(!reaches(&g, "n2", VertexType::ResourceSlice, "", "slice1"));
    // Moved to another node, then to none.
    g.add_node_object(VertexType::VolumeAttachment, "", "va1", "n2");
    assert!(!reaches(&g, "n1", VertexType::VolumeAttachment, "", "va1"));
    assert!(reaches(&g, "n2", VertexType::VolumeAttachment, "", "va1"));
    g.add_node_object(VertexType::VolumeAttachment, "", "va1", "");
    assert!(!g.contains(VertexType::VolumeAttachment, "", "va1"));
    g.delete_object(VertexType::ResourceSlice, "", "slice1");
    g.delete_object(VertexType::PodCertificateRequest, "ns", "pcr1");
    assert_eq!(g.size(), (0, 0));
}

#[test]
fn many_pods_sharing_an_object_stay_consistent() {
    let g = Graph::new();
    for i in 0..500 {
        g.add_pod(&pod(&format!("p{i}"), &format!("n{}", i % 7)));
    }
    for n in 0..7 {
        assert!(reaches(
            &g,
            &format!("n{n}"),
            VertexType::ConfigMap,
            "ns",
            "kube-root-ca.crt"
        ));
    }
    for i in (0..500).filter(|i| i % 7 == 3) {
        g.delete_pod("ns", &format!("p{i}"));
    }
    assert!(!reaches(
        &g,
        "n3",
        VertexType::ConfigMap,
        "ns",
        "kube-root-ca.crt"
    ));
    assert!(reaches(
        &g,
        "n4",
        VertexType::ConfigMap,
        "ns",
        "kube-root-ca.crt"
    ));
}
