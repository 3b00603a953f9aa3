//! A kubeadm-style cluster: kube-core runs `--authorization-mode=Node,RBAC`
//! and `--enable-admission-plugins=NodeRestriction`, and a kubelet's
//! identity (`system:node:n1` in `system:nodes`, here by impersonation
//! through the aggregator with the admin credentials) reaches only what the
//! pods bound to its node use, and writes only its own objects.

use crate::harness::{eventually, expect_status, Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::{json, Value};

const NODE_USER: &str = "system:node:n1";
const NODES_GROUP: &str = "system:nodes";

async fn start() -> TestCluster {
    TestCluster::start_with(deploy::ExtraArgs {
        kube_core: vec![
            "--authorization-mode=Node,RBAC".into(),
            "--enable-admission-plugins=NodeRestriction".into(),
        ],
        ..Default::default()
    })
    .await
}

/// A request as node n1: the admin client impersonating the kubelet.
fn as_node(tc: &TestCluster, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
    tc.http(Auth::AdminCert)
        .request(method, tc.url(path))
        .header("Impersonate-User", NODE_USER)
        .header("Impersonate-Group", NODES_GROUP)
}

/// An HTTPS client with a kubelet's client certificate for `node`
/// (CN=system:node:<node>, O=system:nodes), issued from the cluster CA.
fn kubelet_client(tc: &TestCluster, node: &str) -> reqwest::Client {
    let pki = tc.cluster.pki();
    let ca_pem = std::fs::read_to_string(&pki.ca_cert).expect("ca");
    let ca_key = std::fs::read_to_string(&pki.ca_key).expect("ca key");
    let ca_key = rcgen::KeyPair::from_pem(&ca_key).expect("ca key pem");
    let issuer = rcgen::Issuer::from_ca_cert_pem(&ca_pem, ca_key).expect("ca issuer");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, NODES_GROUP);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("system:node:{node}"));
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, &issuer).expect("signing");
    let mut pem = cert.pem().into_bytes();
    pem.extend(key.serialize_pem().as_bytes());
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem.as_bytes()).expect("ca pem"))
        .identity(reqwest::Identity::from_pem(&pem).expect("identity"))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

async fn json_of(resp: reqwest::Response) -> (u16, Value) {
    let code = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    let v = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({code}): {text}"));
    (code, v)
}

async fn admin_create(tc: &TestCluster, path: &str, body: Value) -> Value {
    let (code, v) = json_of(
        tc.http(Auth::AdminCert)
            .post(tc.url(path))
            .json(&body)
            .sent()
            .await,
    )
    .await;
    assert_eq!(code, 201, "creating at {path}: {v}");
    v
}

fn pod_on(name: &str, node: &str, secret: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
            "volumes": [{"name": "s", "secret": {"secretName": secret}}]
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_reaches_only_what_its_pods_use_and_writes_only_its_own() {
    let tc = start().await;
    let n1 = admin_create(
        &tc,
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
    )
    .await;
    admin_create(
        &tc,
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}),
    )
    .await;
    for s in ["s1", "s2"] {
        admin_create(
            &tc,
            "/api/v1/namespaces/default/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": s},
                "stringData": {"k": "v"}}),
        )
        .await;
    }
    admin_create(
        &tc,
        "/api/v1/namespaces/default/pods",
        pod_on("p1", "n1", "s1"),
    )
    .await;
    admin_create(
        &tc,
        "/api/v1/namespaces/default/pods",
        pod_on("p2", "n2", "s2"),
    )
    .await;

    // The secret of its pod: the graph follows the pods' watch.
    let readable = eventually(Duration::from_secs(10), || async {
        as_node(
            &tc,
            reqwest::Method::GET,
            "/api/v1/namespaces/default/secrets/s1",
        )
        .send()
        .await
        .is_ok_and(|r| r.status().as_u16() == 200)
    })
    .await;
    assert!(readable, "node n1 never got the secret of its pod");
    let (ok, out, err) = tc
        .kubectl(&[
            "get",
            "secret",
            "s1",
            "-o",
            "name",
            "--as",
            NODE_USER,
            "--as-group",
            NODES_GROUP,
        ])
        .await;
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "secret/s1");

    // The same with a kubelet's own client certificate.
    let kubelet = kubelet_client(&tc, "n1");
    let get = |path: &str| kubelet.get(tc.url(path)).send();
    let resp = get("/api/v1/namespaces/default/secrets/s1")
        .await
        .expect("get");
    assert_eq!(resp.status().as_u16(), 200);
    let resp = get("/api/v1/namespaces/default/secrets/s2")
        .await
        .expect("get");
    let v = expect_status(resp, 403, "Forbidden").await;
    assert_eq!(
        v["message"],
        "secrets \"s2\" is forbidden: User \"system:node:n1\" cannot get resource \"secrets\" in API group \"\" in the namespace \"default\": no relationship found between node 'n1' and this object"
    );

    // Another node's pod's secret: upstream's reason.
    let (ok, _, err) = tc
        .kubectl(&[
            "get",
            "secret",
            "s2",
            "--as",
            NODE_USER,
            "--as-group",
            NODES_GROUP,
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains("Error from server (Forbidden): secrets \"s2\" is forbidden: User \"system:node:n1\" cannot get resource \"secrets\" in API group \"\" in the namespace \"default\": no relationship found between node 'n1' and this object"),
        "{err}"
    );
    let resp = as_node(
        &tc,
        reqwest::Method::GET,
        "/api/v1/namespaces/default/secrets",
    )
    .sent()
    .await;
    let v = expect_status(resp, 403, "Forbidden").await;
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.ends_with(": No Object name found")),
        "{v}"
    );
    // Its own pods: by name, or listed by spec.nodeName.
    let code = |path: &'static str| {
        let tc = &tc;
        async move {
            as_node(tc, reqwest::Method::GET, path)
                .sent()
                .await
                .status()
                .as_u16()
        }
    };
    assert_eq!(code("/api/v1/namespaces/default/pods/p1").await, 200);
    assert_eq!(code("/api/v1/namespaces/default/pods/p2").await, 403);
    assert_eq!(
        code("/api/v1/pods?fieldSelector=spec.nodeName%3Dn1").await,
        200
    );
    assert_eq!(code("/api/v1/pods").await, 403);
    assert_eq!(code("/api/v1/nodes/n1").await, 200);
    assert_eq!(code("/api/v1/nodes/n2").await, 403);

    // Another node: allowed by the authorizer, refused by NodeRestriction
    // (kubectl would read the node first, which the authorizer refuses).
    let (ok, _, err) = tc
        .kubectl(&[
            "label",
            "node",
            "n2",
            "a=b",
            "--as",
            NODE_USER,
            "--as-group",
            NODES_GROUP,
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains("nodes \"n2\" is forbidden: User \"system:node:n1\" cannot get resource \"nodes\" in API group \"\" at the cluster scope: node 'n1' cannot read 'n2', only its own Node object"),
        "{err}"
    );
    let resp = as_node(&tc, reqwest::Method::PATCH, "/api/v1/nodes/n2")
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"metadata":{"labels":{"a":"b"}}}"#)
        .sent()
        .await;
    let v = expect_status(resp, 403, "Forbidden").await;
    assert_eq!(
        v["message"],
        "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""
    );
    // Nor a label reserved for the cluster on its own node.
    let resp = as_node(&tc, reqwest::Method::PATCH, "/api/v1/nodes/n1")
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"gold"}}}"#)
        .sent()
        .await;
    let v = expect_status(resp, 403, "Forbidden").await;
    assert_eq!(
        v["message"],
        "nodes \"n1\" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool"
    );

    // Its own status.
    let resp = as_node(&tc, reqwest::Method::PATCH, "/api/v1/nodes/n1/status")
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready"}]}}"#)
        .sent().await;
    let (code, v) = json_of(resp).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["conditions"][0]["reason"], "KubeletReady");

    // Only mirror pods.
    let resp = as_node(
        &tc,
        reqwest::Method::POST,
        "/api/v1/namespaces/default/pods",
    )
    .json(
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}}),
    )
    .sent()
    .await;
    let v = expect_status(resp, 403, "Forbidden").await;
    assert_eq!(
        v["message"],
        "pods \"plain\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods"
    );
    let mirror = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "static-web-n1",
            "annotations": {"kubernetes.io/config.mirror": "abc123"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1",
                "uid": n1["metadata"]["uid"], "controller": true}]
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}
    });
    let resp = as_node(
        &tc,
        reqwest::Method::POST,
        "/api/v1/namespaces/default/pods",
    )
    .json(&mirror)
    .sent()
    .await;
    let (code, v) = json_of(resp).await;
    assert_eq!(code, 201, "{v}");
    // Bound elsewhere.
    let mut elsewhere = mirror.clone();
    elsewhere["metadata"]["name"] = json!("static-web-n2");
    elsewhere["spec"]["nodeName"] = json!("n2");
    let resp = as_node(
        &tc,
        reqwest::Method::POST,
        "/api/v1/namespaces/default/pods",
    )
    .json(&elsewhere)
    .sent()
    .await;
    let v = expect_status(resp, 403, "Forbidden").await;
    assert_eq!(
        v["message"],
        "pods \"static-web-n2\" is forbidden: node \"n1\" can only create pods with spec.nodeName set to itself"
    );

    // Another node's pod cannot be deleted; its own can.
    let (ok, _, err) = tc
        .kubectl(&[
            "delete",
            "pod",
            "p2",
            "--wait=false",
            "--as",
            NODE_USER,
            "--as-group",
            NODES_GROUP,
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains("pods \"p2\" is forbidden: node \"n1\" can only delete pods with spec.nodeName set to itself"),
        "{err}"
    );
    tc.kubectl_ok(&[
        "delete",
        "pod",
        "static-web-n1",
        "--wait=false",
        "--as",
        NODE_USER,
        "--as-group",
        NODES_GROUP,
    ])
    .await;

    // Its own lease only.
    let lease = |name: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name}, "spec": {"holderIdentity": name}})
    };
    let path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
    let resp = as_node(&tc, reqwest::Method::POST, path)
        .json(&lease("n1"))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 201);
    let resp = as_node(&tc, reqwest::Method::POST, path)
        .json(&lease("n2"))
        .sent()
        .await;
    let v = expect_status(resp, 403, "Forbidden").await;
    assert_eq!(
        v["message"],
        "leases.coordination.k8s.io \"n2\" is forbidden: can only access node lease with the same name as the requesting node"
    );

    // When the pod goes, so does the access to its secret.
    tc.kubectl_ok(&["delete", "pod", "p1", "--grace-period=0", "--force"])
        .await;
    let revoked = eventually(Duration::from_secs(10), || async {
        as_node(
            &tc,
            reqwest::Method::GET,
            "/api/v1/namespaces/default/secrets/s1",
        )
        .send()
        .await
        .is_ok_and(|r| r.status().as_u16() == 403)
    })
    .await;
    assert!(revoked, "node n1 kept the secret of a deleted pod");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_mode_stops_kube_core() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = deploy::ClusterConfig::new(dir.path().join("state"));
    cfg.ports = deploy::Ports::free().expect("free ports");
    cfg.extra_args.kube_core = vec!["--authorization-mode=Node,Bogus".into()];
    let err = match deploy::Cluster::start(cfg).await {
        Ok(_) => panic!("kube-core started with an unknown authorization mode"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        err.contains("--authorization-mode: unsupported mode \"Bogus\" (supported: Node, RBAC, AlwaysAllow, AlwaysDeny)"),
        "{err}"
    );
}
