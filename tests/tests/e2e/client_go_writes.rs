//! Writes as client-go programs (Helm, the controller manager, kubelets)
//! send them: protobuf bodies for PUT and DELETE, unconditional updates
//! without `metadata.resourceVersion`, and no `User-Agent` at all.
//!
//! Helm keeps each release in a Secret: it creates it `pending-install`,
//! then replaces it with a PUT that names no resourceVersion, and
//! `helm uninstall` deletes with a protobuf `DeleteOptions` body. Bodies are
//! encoded with prost and the `k8s-pb` bindings of upstream's
//! `generated.proto`, independently of our own encoder.

use crate::harness::{expect_code, expect_json, expect_status, Auth, SendExt, TestCluster};
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use prost::Message as _;
use serde_json::{json, Value};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The `k8s\0` + runtime.Unknown envelope upstream's serializer writes.
pub(crate) fn envelope(api_version: &str, kind: &str, message: &impl prost::Message) -> Vec<u8> {
    let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
        }),
        raw: Some(message.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\0".to_vec();
    out.extend_from_slice(&unknown.encode_to_vec());
    out
}

fn release_secret(status: &str) -> core::Secret {
    core::Secret {
        metadata: Some(meta::ObjectMeta {
            name: Some("sh.helm.release.v1.demo.v1".into()),
            namespace: Some("default".into()),
            labels: [
                ("owner".to_owned(), "helm".to_owned()),
                ("status".to_owned(), status.to_owned()),
            ]
            .into(),
            ..Default::default()
        }),
        r#type: Some("helm.sh/release.v1".into()),
        data: [("release".to_owned(), status.as_bytes().to_vec())].into(),
        ..Default::default()
    }
}

async fn get_json(http: &reqwest::Client, url: &str) -> (u16, Value) {
    let resp = http.get(url).sent().await;
    let code = resp.status().as_u16();
    (code, resp.json().await.expect("json"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helm_release_lifecycle_in_protobuf() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let secrets = c.url("/api/v1/namespaces/default/secrets");
    let one = format!("{secrets}/sh.helm.release.v1.demo.v1");

    // Create, in protobuf, with no User-Agent: the manager is `unknown`.
    let resp = http
        .post(&secrets)
        .header("content-type", PROTOBUF)
        .header("accept", "application/json")
        .body(envelope("v1", "Secret", &release_secret("pending-install")))
        .sent()
        .await;
    let created = expect_json(resp, 201).await;
    let managers: Vec<&str> = created["metadata"]["managedFields"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["manager"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(managers, ["unknown"], "{created}");
    let created_rv = crate::harness::resource_version(&created);

    // Helm's status change: a protobuf PUT without resourceVersion.
    let resp = http
        .put(&one)
        .header("content-type", PROTOBUF)
        .header("accept", "application/json")
        .body(envelope("v1", "Secret", &release_secret("deployed")))
        .sent()
        .await;
    expect_code(resp, 200).await;
    let (code, stored) = get_json(&http, &one).await;
    assert_eq!(code, 200);
    assert_eq!(stored["metadata"]["labels"]["status"], "deployed");
    assert_eq!(stored["data"]["release"], "ZGVwbG95ZWQ="); // "deployed"
    assert_ne!(stored["metadata"]["resourceVersion"], created_rv.as_str());
    // System fields survive a body that omits them.
    assert_eq!(stored["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(
        stored["metadata"]["creationTimestamp"],
        created["metadata"]["creationTimestamp"]
    );

    // The same in JSON, as `kubectl replace` of a hand-written manifest.
    let resp = http
        .put(&one)
        .json(&json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "sh.helm.release.v1.demo.v1", "namespace": "default",
                         "labels": {"owner": "helm", "status": "superseded"}},
            "type": "helm.sh/release.v1",
            "data": {"release": "c3VwZXJzZWRlZA=="}
        }))
        .sent()
        .await;
    expect_code(resp, 200).await;
    let (_, stored) = get_json(&http, &one).await;
    assert_eq!(stored["metadata"]["labels"]["status"], "superseded");

    // A stale resourceVersion is still a conflict.
    let resp = http
        .put(&one)
        .json(&json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "sh.helm.release.v1.demo.v1", "namespace": "default",
                         "resourceVersion": created_rv},
            "type": "helm.sh/release.v1",
        }))
        .sent()
        .await;
    expect_status(resp, 409, "Conflict").await;

    // `helm uninstall`: DELETE with a protobuf DeleteOptions body. A uid
    // precondition that does not hold proves the body is read.
    let delete_body = |uid: &str| {
        envelope(
            "v1",
            "DeleteOptions",
            &meta::DeleteOptions {
                propagation_policy: Some("Background".into()),
                preconditions: Some(meta::Preconditions {
                    uid: Some(uid.to_owned()),
                    resource_version: None,
                }),
                ..Default::default()
            },
        )
    };
    let resp = http
        .delete(&one)
        .header("content-type", PROTOBUF)
        .body(delete_body("00000000-0000-0000-0000-000000000000"))
        .sent()
        .await;
    expect_status(resp, 409, "Conflict").await;
    let uid = created["metadata"]["uid"].as_str().expect("uid");
    let resp = http
        .delete(&one)
        .header("content-type", PROTOBUF)
        .header("accept", PROTOBUF)
        .body(delete_body(uid))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some(PROTOBUF)
    );
    let (code, _) = get_json(&http, &one).await;
    assert_eq!(code, 404);

    // A malformed protobuf DeleteOptions is a 400 Status, not a crash.
    http.post(&secrets)
        .json(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "other"}}))
        .sent()
        .await;
    let resp = http
        .delete(format!("{secrets}/other"))
        .header("content-type", PROTOBUF)
        .body(b"k8s\0\x0a\xff\xff".to_vec())
        .sent()
        .await;
    expect_status(resp, 400, "BadRequest").await;
}

/// The controller manager's legacy token cleaner reads the ConfigMap that
/// upstream's API server publishes at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_token_tracking_configmap_is_published() {
    let c = TestCluster::start().await;
    let mut since = String::new();
    for _ in 0..100 {
        let (ok, out, _) = c
            .kubectl(&[
                "-n",
                "kube-system",
                "get",
                "configmap",
                "kube-apiserver-legacy-service-account-token-tracking",
                "-o",
                "jsonpath={.data.since}",
            ])
            .await;
        if ok {
            since = out;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // YYYY-MM-DD, today in UTC.
    let date = since.trim();
    let parts: Vec<&str> = date.split('-').collect();
    assert_eq!(parts.len(), 3, "ConfigMap missing or malformed: {date:?}");
    assert!(
        parts
            .iter()
            .zip([4, 2, 2])
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_digit())),
        "{date:?}"
    );
}

/// A kubelet registers its CSINode in protobuf; the HPA controller's scale
/// client reads and writes `/scale` in protobuf.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubelet_and_scale_client_bodies_in_protobuf() {
    use k8s_pb::api::autoscaling::v1 as autoscaling;
    use k8s_pb::api::storage::v1 as storage;

    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);

    let csinode = storage::CSINode {
        metadata: Some(meta::ObjectMeta {
            name: Some("hollow-node-1".into()),
            ..Default::default()
        }),
        spec: Some(storage::CSINodeSpec {
            drivers: vec![storage::CSINodeDriver {
                name: Some("csi.example.com".into()),
                node_id: Some("hollow-node-1".into()),
                topology_keys: vec!["topology.example.com/zone".into()],
                allocatable: Some(storage::VolumeNodeResources { count: Some(0) }),
            }],
        }),
    };
    let resp = http
        .post(c.url("/apis/storage.k8s.io/v1/csinodes"))
        .header("content-type", PROTOBUF)
        .header("accept", "application/json")
        .body(envelope("storage.k8s.io/v1", "CSINode", &csinode))
        .sent()
        .await;
    expect_code(resp, 201).await;
    let (_, stored) = get_json(
        &http,
        &c.url("/apis/storage.k8s.io/v1/csinodes/hollow-node-1"),
    )
    .await;
    assert_eq!(stored["spec"]["drivers"][0]["nodeID"], "hollow-node-1");
    assert_eq!(stored["spec"]["drivers"][0]["allocatable"]["count"], 0);

    c.kubectl_ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=1",
    ])
    .await;
    let scale_url = c.url("/apis/apps/v1/namespaces/default/deployments/web/scale");
    let resp = http.get(&scale_url).header("accept", PROTOBUF).sent().await;
    assert_eq!(resp.status().as_u16(), 200);
    let body = resp.bytes().await.expect("body");
    let rest = body
        .strip_prefix(b"k8s\0".as_slice())
        .expect("protobuf magic");
    let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown::decode(rest).expect("unknown");
    let mut scale =
        autoscaling::Scale::decode(unknown.raw.unwrap_or_default().as_slice()).expect("Scale");
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    scale.spec = Some(autoscaling::ScaleSpec { replicas: Some(4) });
    let resp = http
        .put(&scale_url)
        .header("content-type", PROTOBUF)
        .header("accept", "application/json")
        .body(envelope("autoscaling/v1", "Scale", &scale))
        .sent()
        .await;
    expect_code(resp, 200).await;
    let (_, deployment) = get_json(
        &http,
        &c.url("/apis/apps/v1/namespaces/default/deployments/web"),
    )
    .await;
    assert_eq!(deployment["spec"]["replicas"], 4);
}

/// The kubelet's status manager patches pod status with the strategic merge
/// patch of its last view: only the conditions that changed, plus the order
/// of all of them. The others stay, and merged entries keep their fields
/// (conditions are a list keyed by `type`, as upstream declares).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubelet_status_patches_merge_conditions_by_type() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let pods = c.url("/api/v1/namespaces/default/pods");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "pause"}]}});
    let resp = http.post(&pods).json(&pod).sent().await;
    assert_eq!(resp.status(), 201);
    let t = "2026-12-04T17:55:32Z";
    let cond = |ty: &str, status: &str| json!({"type": ty, "status": status, "lastProbeTime": null, "lastTransitionTime": t});
    let types = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ];
    let smp = "application/strategic-merge-patch+json";
    let status_url = format!("{pods}/p/status");
    let first = json!({"status": {"conditions": types.iter().map(|ty| cond(ty, if *ty == "PodReadyToStartContainers" { "False" } else { "True" })).collect::<Vec<_>>()}});
    let resp = http
        .patch(&status_url)
        .header("content-type", smp)
        .body(first.to_string())
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let order: Vec<Value> = types.iter().map(|ty| json!({"type": ty})).collect();
    let second = json!({"status": {"$setElementOrder/conditions": order,
        "conditions": [{"type": "PodReadyToStartContainers", "status": "True"}]}});
    let resp = http
        .patch(&status_url)
        .header("content-type", smp)
        .body(second.to_string())
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let (_, got) = get_json(&http, &format!("{pods}/p")).await;
    let conds = got["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let got_types: Vec<&str> = conds.iter().filter_map(|c| c["type"].as_str()).collect();
    assert_eq!(got_types, types, "{got}");
    assert_eq!(conds[0]["status"], "True", "{got}");
    assert_eq!(
        conds[0]["lastTransitionTime"], t,
        "merged, not replaced: {got}"
    );
}

/// Controllers patch shared objects concurrently (the TTL controller and the
/// kubelet both patch Nodes): a patch that names no resourceVersion is
/// re-applied to the newer object after a conflict, never answered 409.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_patches_without_resource_version_all_apply() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps");
    let resp = http
        .post(&url)
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}}))
        .sent()
        .await;
    assert_eq!(resp.status(), 201);
    let patches = (0..24).map(|i| {
        let http = http.clone();
        let url = format!("{url}/shared");
        async move {
            let body = json!({"metadata": {"annotations": {format!("writer-{i}"): "done"}}});
            let resp = http
                .patch(&url)
                .header("content-type", "application/strategic-merge-patch+json")
                .body(body.to_string())
                .sent()
                .await;
            resp.status().as_u16()
        }
    });
    let codes = futures_util::future::join_all(patches).await;
    assert!(codes.iter().all(|c| *c == 200), "{codes:?}");
    let (_, got) = get_json(&http, &format!("{url}/shared")).await;
    let annotations = got["metadata"]["annotations"].as_object().map(|a| a.len());
    assert_eq!(annotations, Some(24), "every patch applied: {got}");
}
