//! Protobuf and YAML responses through the aggregator, read the way Go
//! clients read them: raw HTTPS with `Accept: application/vnd.kubernetes.protobuf`,
//! bodies decoded with prost and the `k8s-pb` bindings of upstream's
//! `generated.proto` (an implementation independent of ours).

use crate::harness::{Auth, SendExt, TestCluster};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use prost::Message as _;
use serde_json::json;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The `runtime.Unknown` of a `k8s\0`-prefixed body.
fn unknown(body: &[u8]) -> k8s_pb::apimachinery::pkg::runtime::Unknown {
    let Some(rest) = body.strip_prefix(b"k8s\0".as_slice()) else {
        panic!("no protobuf magic: {:?}", String::from_utf8_lossy(body))
    };
    k8s_pb::apimachinery::pkg::runtime::Unknown::decode(rest).expect("runtime.Unknown")
}

/// Decodes a protobuf body as `T`, checking the envelope's kind.
fn decode<T: prost::Message + Default>(body: &[u8], api_version: &str, kind: &str) -> T {
    let unknown = unknown(body);
    let type_meta = unknown.type_meta.unwrap_or_default();
    assert_eq!(type_meta.api_version.as_deref(), Some(api_version));
    assert_eq!(type_meta.kind.as_deref(), Some(kind));
    T::decode(unknown.raw.unwrap_or_default().as_slice()).expect(kind)
}

async fn get(http: &reqwest::Client, url: &str, accept: &str) -> (u16, String, Vec<u8>) {
    let resp = http.get(url).header("accept", accept).sent().await;
    let code = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = resp.bytes().await.expect("body").to_vec();
    (code, content_type, body)
}

fn cm(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"app": "pb"}},
        "data": {"k": value}}))
    .expect("cm")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_and_yaml_responses() {
    let c = TestCluster::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(c.client().await, "default");
    for name in ["a", "b"] {
        cms.create(&PostParams::default(), &cm(name, name))
            .await
            .expect("create");
    }
    c.kubectl_ok(&[
        "run",
        "web",
        "--image=nginx:1.27",
        "--port=80",
        "--labels=app=web",
    ])
    .await;
    let http = c.http(Auth::AdminCert);
    let base = c.url("/api/v1/namespaces/default");

    // One object.
    let (code, content_type, body) = get(&http, &format!("{base}/configmaps/a"), PROTOBUF).await;
    assert_eq!((code, content_type.as_str()), (200, PROTOBUF));
    let got: k8s_pb::api::core::v1::ConfigMap = decode(&body, "v1", "ConfigMap");
    let meta = got.metadata.unwrap_or_default();
    assert_eq!(meta.name.as_deref(), Some("a"));
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert!(meta.uid.is_some_and(|u| !u.is_empty()));
    assert!(meta.creation_timestamp.and_then(|t| t.seconds).unwrap_or(0) > 1_600_000_000);
    assert_eq!(got.data.get("k").map(String::as_str), Some("a"));

    let (code, _, body) = get(&http, &format!("{base}/pods/web"), PROTOBUF).await;
    assert_eq!(code, 200);
    let pod: k8s_pb::api::core::v1::Pod = decode(&body, "v1", "Pod");
    let spec = pod.spec.unwrap_or_default();
    assert_eq!(spec.containers[0].image.as_deref(), Some("nginx:1.27"));
    assert_eq!(spec.containers[0].ports[0].container_port, Some(80));
    let labels = pod.metadata.unwrap_or_default().labels;
    assert_eq!(labels.get("app").map(String::as_str), Some("web"));

    // Lists: from the watch cache (resourceVersion=0) and a consistent read.
    for query in ["?resourceVersion=0", "", "?limit=1"] {
        let (code, content_type, body) =
            get(&http, &format!("{base}/configmaps{query}"), PROTOBUF).await;
        assert_eq!((code, content_type.as_str()), (200, PROTOBUF), "{query}");
        let list: k8s_pb::api::core::v1::ConfigMapList = decode(&body, "v1", "ConfigMapList");
        let names: Vec<String> = list
            .items
            .iter()
            .filter_map(|i| i.metadata.clone().and_then(|m| m.name))
            .filter(|n| n == "a" || n == "b")
            .collect();
        let list_meta = list.metadata.unwrap_or_default();
        assert!(
            list_meta
                .resource_version
                .is_some_and(|rv| rv.parse::<i64>().is_ok()),
            "{query}"
        );
        if query == "?limit=1" {
            assert_eq!(list.items.len(), 1);
            assert!(list_meta.r#continue.is_some_and(|c| !c.is_empty()));
        } else {
            assert_eq!(names, ["a", "b"], "{query}");
        }
    }

    // Errors are Status messages for protobuf clients.
    let (code, content_type, body) = get(&http, &format!("{base}/configmaps/nope"), PROTOBUF).await;
    assert_eq!((code, content_type.as_str()), (404, PROTOBUF));
    let status: k8s_pb::apimachinery::pkg::apis::meta::v1::Status = decode(&body, "v1", "Status");
    assert_eq!(status.code, Some(404));
    assert_eq!(status.reason.as_deref(), Some("NotFound"));
    assert_eq!(
        status.message.as_deref(),
        Some("configmaps \"nope\" not found")
    );

    // client-go's metadata client asks for protobuf PartialObjectMetadataList first.
    let metadata_accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let (code, _, body) = get(&http, &format!("{base}/configmaps"), metadata_accept).await;
    assert_eq!(code, 200);
    let list: k8s_pb::apimachinery::pkg::apis::meta::v1::PartialObjectMetadataList =
        decode(&body, "meta.k8s.io/v1", "PartialObjectMetadataList");
    assert!(list
        .items
        .iter()
        .any(|i| i.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("b")));

    // Table has no protobuf form: kubectl's JSON fallback is used.
    let table_accept =
        "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json";
    let (code, content_type, body) =
        get(&http, &format!("{base}/configmaps/a"), table_accept).await;
    assert_eq!((code, content_type.as_str()), (200, "application/json"));
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["kind"], "ConfigMap");

    // YAML.
    let (code, content_type, body) =
        get(&http, &format!("{base}/configmaps/a"), "application/yaml").await;
    assert_eq!((code, content_type.as_str()), (200, "application/yaml"));
    let text = String::from_utf8(body).expect("utf-8");
    // Built-in objects come in upstream's field order.
    assert!(
        text.starts_with("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: a\n"),
        "{text}"
    );
    assert!(text.contains("\n    app: pb\n"), "{text}");
    assert!(text.contains("\ndata:\n  k: a\n"), "{text}");

    // YAML request bodies.
    let resp = http
        .post(format!("{base}/configmaps"))
        .header("content-type", "application/yaml")
        .header("accept", PROTOBUF)
        .body("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  n: \"1\"\n")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 201);
    let body = resp.bytes().await.expect("body");
    let created: k8s_pb::api::core::v1::ConfigMap = decode(&body, "v1", "ConfigMap");
    assert_eq!(created.data.get("n").map(String::as_str), Some("1"));
    let got = cms.get("from-yaml").await.expect("get");
    assert_eq!(
        got.data.unwrap_or_default().get("n").map(String::as_str),
        Some("1")
    );

    // JSON stays the default.
    let (code, content_type, _) = get(&http, &format!("{base}/configmaps/a"), "").await;
    assert_eq!((code, content_type.as_str()), (200, "application/json"));
}

/// Reads length-prefixed `WatchEvent` frames until `want` returns true.
async fn read_frames(
    resp: &mut reqwest::Response,
    mut want: impl FnMut(&str, k8s_pb::api::core::v1::ConfigMap) -> bool,
) {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        while buf.len() >= 4 {
            let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
            if buf.len() < 4 + len {
                break;
            }
            let frame: Vec<u8> = buf.drain(..4 + len).skip(4).collect();
            let event =
                k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent::decode(frame.as_slice())
                    .expect("WatchEvent");
            let event_type = event.r#type.unwrap_or_default();
            let raw = event.object.and_then(|o| o.raw).unwrap_or_default();
            assert_ne!(event_type, "ERROR", "{:?}", String::from_utf8_lossy(&raw));
            let object: k8s_pb::api::core::v1::ConfigMap = decode(&raw, "v1", "ConfigMap");
            if want(&event_type, object) {
                return;
            }
        }
        let chunk = tokio::time::timeout(Duration::from_secs(20), resp.chunk())
            .await
            .expect("watch event in time")
            .expect("watch stream");
        let Some(chunk) = chunk else {
            panic!("watch ended early")
        };
        buf.extend_from_slice(&chunk);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_watch_stream() {
    let c = TestCluster::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(c.client().await, "default");
    cms.create(&PostParams::default(), &cm("first", "1"))
        .await
        .expect("create");
    let http = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dpb&allowWatchBookmarks=true");
    let mut resp = http
        .get(&url)
        .header(
            "accept",
            "application/vnd.kubernetes.protobuf, application/json",
        )
        .timeout(Duration::from_secs(60))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/vnd.kubernetes.protobuf;stream=watch")
    );
    // The initial state, then a write made while watching.
    read_frames(&mut resp, |t, o| {
        t == "ADDED" && o.metadata.and_then(|m| m.name).as_deref() == Some("first")
    })
    .await;
    cms.create(&PostParams::default(), &cm("second", "2"))
        .await
        .expect("create");
    let mut seen = None;
    read_frames(&mut resp, |t, o| {
        if t == "ADDED" && o.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("second") {
            seen = o.data.get("k").cloned();
            return true;
        }
        false
    })
    .await;
    assert_eq!(seen.as_deref(), Some("2"));

    // A YAML-only watch is not served (no stream framing upstream either).
    let resp = http
        .get(&url)
        .header("accept", "application/yaml")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 406);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_data_in_upstreams_encoding() {
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;

    let c = TestCluster::start().await;
    let mut etcd = c.etcd().await;

    // An object as upstream kube-apiserver writes it, put straight into etcd.
    let pod = core::Pod {
        metadata: Some(meta::ObjectMeta {
            name: Some("legacy".into()),
            namespace: Some("default".into()),
            uid: Some("6a1b0c57-0000-4000-8000-000000000001".into()),
            creation_timestamp: Some(meta::Time {
                seconds: Some(1_700_000_000),
                nanos: Some(0),
            }),
            labels: [("app".to_owned(), "legacy".to_owned())].into(),
            ..Default::default()
        }),
        spec: Some(core::PodSpec {
            containers: vec![core::Container {
                name: Some("main".into()),
                image: Some("busybox:1.36".into()),
                command: vec!["sleep".into(), "3600".into()],
                ports: vec![core::ContainerPort {
                    container_port: Some(8080),
                    protocol: Some("TCP".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            restart_policy: Some("Always".into()),
            ..Default::default()
        }),
        status: Some(core::PodStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        }),
    };
    etcd.put(
        "/registry/pods/default/legacy",
        crate::client_go_writes::envelope("v1", "Pod", &pod),
        None,
    )
    .await
    .expect("put");

    // kubectl and kube-rs read it through the API.
    let out = c
        .kubectl_ok(&["get", "pod", "legacy", "-o", "jsonpath={.spec.containers[0].image} {.spec.containers[0].ports[0].containerPort} {.metadata.labels.app} {.metadata.creationTimestamp}"])
        .await;
    assert_eq!(out, "busybox:1.36 8080 legacy 2023-11-14T22:13:20Z");
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(c.client().await, "default");
    let got = pods.get("legacy").await.expect("get");
    let spec = got.spec.expect("spec");
    assert_eq!(
        spec.containers[0].command.as_deref(),
        Some(["sleep".to_owned(), "3600".to_owned()].as_slice())
    );
    assert_eq!(got.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
    // And it can be updated and deleted like any other.
    c.kubectl_ok(&["label", "pod", "legacy", "tier=old"]).await;
    let got = pods.get("legacy").await.expect("get");
    assert_eq!(
        got.metadata
            .labels
            .unwrap_or_default()
            .get("tier")
            .map(String::as_str),
        Some("old")
    );

    // Objects written through the API are stored as upstream stores them.
    c.kubectl_ok(&[
        "create",
        "configmap",
        "written",
        "--from-literal=greeting=hello",
    ])
    .await;
    let resp = etcd
        .get("/registry/configmaps/default/written", None)
        .await
        .expect("etcd get");
    let value = resp.kvs().first().expect("stored").value().to_vec();
    let stored: core::ConfigMap = decode(&value, "v1", "ConfigMap");
    let meta = stored.metadata.unwrap_or_default();
    assert_eq!(meta.name.as_deref(), Some("written"));
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert!(meta.uid.is_some_and(|u| u.len() == 36));
    assert_eq!(
        stored.data.get("greeting").map(String::as_str),
        Some("hello")
    );
    // The updated legacy pod too.
    let resp = etcd
        .get("/registry/pods/default/legacy", None)
        .await
        .expect("etcd get");
    let value = resp.kvs().first().expect("stored").value().to_vec();
    let stored: core::Pod = decode(&value, "v1", "Pod");
    let labels = stored.metadata.unwrap_or_default().labels;
    assert_eq!(labels.get("tier").map(String::as_str), Some("old"));
    let spec = stored.spec.unwrap_or_default();
    assert_eq!(spec.containers[0].ports[0].container_port, Some(8080));
}
