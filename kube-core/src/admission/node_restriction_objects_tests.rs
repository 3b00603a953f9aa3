//! Tests of NodeRestriction's checks that read other objects: token
//! requests, node CSRs and PodCertificateRequests.

use std::sync::Arc;

use apiserver::admission::Operation;
use serde_json::{json, Value};

use super::tests::{call, plugin, pod, Audiences, Call, Fake};
use super::NodeRestriction;

fn token_request(uid: &str, pod: &str, audiences: Value) -> Call {
    call("", "ServiceAccount", "serviceaccounts", Operation::Create)
        .ns("ns")
        .sub("token")
        .name("sa")
        .object(
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": audiences,
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid}}}),
        )
}

#[tokio::test]
async fn tokens_only_for_pods_on_the_node_and_their_audiences() {
    let p = plugin();
    let prefix = "serviceaccounts \"sa\" is forbidden: ";
    assert_eq!(token_request("uid-p1", "p1", json!([])).run(&p).await, None);
    // A CSI driver of its claim's volume asks for it.
    assert_eq!(
        token_request("uid-p1", "p1", json!(["csi-aud"]))
            .run(&p)
            .await,
        None
    );
    // Not used by the pod, but the node is authorized for it.
    assert_eq!(
        token_request("uid-p1", "p1", json!(["vault"]))
            .run(&p)
            .await,
        None
    );
    assert_eq!(
        token_request("uid-p1", "p1", json!(["other"])).run(&p).await,
        Some(format!("{prefix}audience \"other\" not found in pod spec volume, system:node:n1 is not authorized to request tokens for this audience"))
    );
    assert_eq!(
        token_request("uid-p1", "p1", json!(["a", "b"]))
            .run(&p)
            .await,
        Some(format!("{prefix}node may only request 0 or 1 audiences"))
    );
    assert_eq!(
        token_request("uid-p2", "p2", json!([])).run(&p).await,
        Some(format!(
            "{prefix}node requested token bound to a pod scheduled on a different node"
        ))
    );
    assert_eq!(
        token_request("old", "p1", json!([])).run(&p).await,
        Some(format!("{prefix}the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated"))
    );
    assert_eq!(
        token_request("", "p1", json!([])).run(&p).await,
        Some(format!(
            "{prefix}node requested token with a pod binding without a uid"
        ))
    );
    assert_eq!(
        token_request("u", "gone", json!([]))
            .run(&p)
            .await
            .as_deref(),
        Some("pod \"gone\" not found")
    );
    let unbound = call("", "ServiceAccount", "serviceaccounts", Operation::Create)
        .ns("ns")
        .sub("token")
        .name("sa")
        .object(json!({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u"}}}));
    assert_eq!(
        unbound.run(&p).await,
        Some(format!("{prefix}node requested token not bound to a pod"))
    );
    // A missing claim is an error naming it.
    let mut p3 = pod("p3", "n1");
    p3["spec"]["volumes"] = json!([{"name": "d", "persistentVolumeClaim": {"claimName": "nope"}}]);
    let p = NodeRestriction {
        objects: Arc::new(Fake::default().with("", "pods", p3)),
        authorizer: Arc::new(Audiences),
    };
    assert_eq!(
        token_request("uid-p3", "p3", json!(["x"])).run(&p).await,
        Some(format!(
            "{prefix}error validating audience \"x\": persistentvolumeclaim \"nope\" not found"
        ))
    );
    // Other writes of service accounts are not the plugin's.
    assert_eq!(
        call("", "ServiceAccount", "serviceaccounts", Operation::Update)
            .ns("ns")
            .name("sa")
            .run(&p)
            .await,
        None
    );
}

fn csr_request(cn: &str) -> String {
    use base64::Engine;
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:nodes");
    let pem = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    base64::engine::general_purpose::STANDARD.encode(pem)
}

#[tokio::test]
async fn node_csrs_for_its_own_name() {
    let p = plugin();
    let csr = |signer: &str, request: String| {
        call(
            "certificates.k8s.io",
            "CertificateSigningRequest",
            "certificatesigningrequests",
            Operation::Create,
        )
        .name("csr-1")
        .object(json!({"metadata": {"name": "csr-1"},
            "spec": {"signerName": signer, "request": request}}))
    };
    let serving = "kubernetes.io/kubelet-serving";
    let client = "kubernetes.io/kube-apiserver-client-kubelet";
    assert_eq!(
        csr(serving, csr_request("system:node:n1")).run(&p).await,
        None
    );
    assert_eq!(
        csr(client, csr_request("system:node:n2")).run(&p).await.as_deref(),
        Some("certificatesigningrequests.certificates.k8s.io \"csr-1\" is forbidden: can only create a node CSR with CN=system:node:n1")
    );
    assert_eq!(
        csr(serving, "bm90IHBlbQ==".into()).run(&p).await.as_deref(),
        Some("certificatesigningrequests.certificates.k8s.io \"csr-1\" is forbidden: unable to parse csr: PEM block type must be CERTIFICATE REQUEST")
    );
    // Other signers are not checked.
    assert_eq!(csr("example.com/x", "junk".into()).run(&p).await, None);
}

#[tokio::test]
async fn pod_certificate_requests_for_its_running_pods() {
    let mut mirror = pod("m1", "n1");
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "h"});
    let objects = Fake::default()
        .with(
            "",
            "nodes",
            json!({"metadata": {"name": "n1", "uid": "node-uid"}}),
        )
        .with("", "pods", pod("p1", "n1"))
        .with("", "pods", pod("p2", "n2"))
        .with("", "pods", mirror)
        .with(
            "",
            "serviceaccounts",
            json!({"metadata": {"name": "sa", "namespace": "ns", "uid": "sa-uid"}}),
        );
    let p = NodeRestriction {
        objects: Arc::new(objects),
        authorizer: Arc::new(Audiences),
    };
    let spec = json!({"nodeName": "n1", "nodeUID": "node-uid", "podName": "p1", "podUID": "uid-p1",
        "serviceAccountName": "sa", "serviceAccountUID": "sa-uid", "signerName": "x/y"});
    let pcr = |changes: Value| {
        let mut s = spec.clone();
        if let (Some(s), Some(c)) = (s.as_object_mut(), changes.as_object()) {
            s.extend(c.clone());
        }
        call(
            "certificates.k8s.io",
            "PodCertificateRequest",
            "podcertificaterequests",
            Operation::Create,
        )
        .ns("ns")
        .object(json!({"metadata": {"generateName": "req-", "namespace": "ns"}, "spec": s}))
    };
    let prefix = "podcertificaterequests.certificates.k8s.io \"req-\" is forbidden: ";
    assert_eq!(pcr(json!({})).run(&p).await, None);
    assert_eq!(
        pcr(json!({"nodeName": "n2"})).run(&p).await,
        Some(format!("{prefix}PodCertificateRequest.Spec.NodeName=\"n2\", which is not the requesting node \"n1\""))
    );
    assert_eq!(
        pcr(json!({"nodeUID": "x"})).run(&p).await.as_deref(),
        Some("PodCertificateRequest for pod \"ns/p1\" names node UID \"x\", inconsistent with the running node (\"node-uid\")")
    );
    assert_eq!(
        pcr(json!({"podName": "gone"})).run(&p).await.as_deref(),
        Some("while retrieving pod \"ns/gone\" named in the PodCertificateRequest: pod \"gone\" not found")
    );
    assert_eq!(
        pcr(json!({"podUID": "x"})).run(&p).await.as_deref(),
        Some("PodCertificateRequest for pod \"ns/p1\" contains pod UID (\"x\") which differs from running pod \"uid-p1\"")
    );
    assert_eq!(
        pcr(json!({"podName": "p2", "podUID": "uid-p2"})).run(&p).await,
        Some(format!("{prefix}pod \"ns/p2\" is not running on node \"n1\" named in the PodCertificateRequest"))
    );
    assert_eq!(
        pcr(json!({"podName": "m1", "podUID": "uid-m1"}))
            .run(&p)
            .await,
        Some(format!("{prefix}pod \"ns/m1\" is a mirror pod"))
    );
    assert_eq!(
        pcr(json!({"serviceAccountName": "other"})).run(&p).await,
        Some(format!("{prefix}PodCertificateRequest for pod \"ns/p1\" contains serviceAccountName (\"other\") that differs from running pod (\"sa\")"))
    );
    assert_eq!(
        pcr(json!({"serviceAccountUID": "x"})).run(&p).await.as_deref(),
        Some("PodCertificateRequest for pod \"ns/p1\" names service account UID \"x\", which differs from the running service account (\"sa-uid\")")
    );
    let update = call(
        "certificates.k8s.io",
        "PodCertificateRequest",
        "podcertificaterequests",
        Operation::Update,
    )
    .ns("ns")
    .name("r");
    assert_eq!(
        update.run(&p).await.as_deref(),
        Some("podcertificaterequests.certificates.k8s.io \"r\" is forbidden: unexpected operation UPDATE")
    );
}
