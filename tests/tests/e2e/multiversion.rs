//! One resource served at several versions over one storage, as upstream:
//! autoscaling/v2 and v1 HorizontalPodAutoscalers, core/v1 and
//! events.k8s.io/v1 Events. What a user sees through either version is the
//! same object, converted (GET, LIST, WATCH, protobuf, kubectl).

use crate::harness::{Auth, SendExt, TestCluster};
use std::time::Duration;

use prost::Message as _;
use serde_json::{json, Value};

const HPA_V2: &str = r#"{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
 "metadata": {"name": "web", "namespace": "default"},
 "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
  "minReplicas": 2, "maxReplicas": 6,
  "metrics": [
   {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
   {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}],
  "behavior": {"scaleDown": {"stabilizationWindowSeconds": 120, "selectPolicy": "Min",
   "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}]}}}}"#;

const HPA_V1: &str = r#"{"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
 "metadata": {"name": "old", "namespace": "default"},
 "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "old"},
  "maxReplicas": 4, "targetCPUUtilizationPercentage": 50}}"#;

async fn get_json(c: &TestCluster, path: &str) -> Value {
    let out = c.kubectl_ok(&["get", "--raw", path]).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{path}: {e}: {out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hpa_served_as_v2_and_v1_from_one_storage() {
    let c = TestCluster::start().await;

    // Discovery: v2 preferred, v1 also served, one storage version hash.
    let group = get_json(&c, "/apis/autoscaling").await;
    assert_eq!(group["preferredVersion"]["version"], "v2", "{group}");
    let versions: Vec<&str> = group["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter_map(|v| v["version"].as_str())
        .collect();
    assert_eq!(versions, ["v2", "v1"]);
    let hash = |list: &Value| {
        list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == "horizontalpodautoscalers"))
            .map(|r| r["storageVersionHash"].clone())
    };
    let v1_list = get_json(&c, "/apis/autoscaling/v1").await;
    let v2_list = get_json(&c, "/apis/autoscaling/v2").await;
    assert!(hash(&v1_list).is_some(), "{v1_list}");
    assert_eq!(hash(&v1_list), hash(&v2_list));

    // A watch through v1 (served from the watch cache) sees objects
    // written through v2, converted.
    let http = c.http(Auth::AdminCert);
    let list: Value = http
        .get(c.url("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"))
        .fetch_json()
        .await;
    let rv = crate::harness::resource_version(&list);
    let mut watch = http
        .get(c.url(&format!(
            "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers?watch=1&resourceVersion={rv}&timeoutSeconds=30"
        )))
        .sent().await;

    // Written as v2 ...
    let (ok, _, err) = c.kubectl_stdin(&["create", "-f", "-"], Some(HPA_V2)).await;
    assert!(ok, "{err}");

    let mut seen = String::new();
    let got = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(chunk)) = watch.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains('\n') {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(got, "no watch event through v1: {seen}");
    let event: Value = serde_json::from_str(seen.lines().next().unwrap_or("")).expect("event");
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["apiVersion"], "autoscaling/v1");
    assert_eq!(
        event["object"]["spec"]["targetCPUUtilizationPercentage"],
        60
    );

    // ... read as v1: the CPU target in v1's field, the rest in upstream's
    // round-trip annotations.
    let v1 = get_json(
        &c,
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web",
    )
    .await;
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    assert_eq!(v1["spec"]["minReplicas"], 2);
    let ann = &v1["metadata"]["annotations"];
    let metrics: Value = serde_json::from_str(
        ann["autoscaling.alpha.kubernetes.io/metrics"]
            .as_str()
            .expect("metrics annotation"),
    )
    .expect("metrics json");
    assert_eq!(
        metrics,
        json!([{"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "100Mi"}}])
    );
    let behavior = ann["autoscaling.alpha.kubernetes.io/behavior"]
        .as_str()
        .expect("behavior annotation");
    assert!(behavior.contains("\"SelectPolicy\":\"Min\""), "{behavior}");

    // A read-modify-write through v1 keeps what only v2 can say.
    let mut edited = v1.clone();
    edited["spec"]["maxReplicas"] = json!(8);
    let (ok, _, err) = c
        .kubectl_stdin(&["replace", "-f", "-"], Some(&edited.to_string()))
        .await;
    assert!(ok, "{err}");
    let v2 = get_json(
        &c,
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web",
    )
    .await;
    assert_eq!(v2["spec"]["maxReplicas"], 8);
    let metrics = v2["spec"]["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 2, "{v2}");
    assert!(metrics.iter().any(|m| m["resource"]["name"] == "memory"));
    assert_eq!(v2["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Min");
    assert!(
        v2["metadata"]
            .get("annotations")
            .is_none_or(|a| a.get("autoscaling.alpha.kubernetes.io/metrics").is_none()),
        "round-trip annotations are not stored: {v2}"
    );

    // Written as v1, read as v2 (kubectl's preferred version).
    let (ok, _, err) = c.kubectl_stdin(&["create", "-f", "-"], Some(HPA_V1)).await;
    assert!(ok, "{err}");
    let old = get_json(
        &c,
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/old",
    )
    .await;
    assert_eq!(
        old["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}])
    );
    assert_eq!(old["spec"]["minReplicas"], 1, "v2 defaulting applies");

    // kubectl lists the same objects through both versions.
    for resource in ["hpa", "horizontalpodautoscalers.v1.autoscaling"] {
        let out = c
            .kubectl_ok(&["get", resource, "-n", "default", "--no-headers"])
            .await;
        assert!(
            out.contains("web") && out.contains("old"),
            "{resource}: {out}"
        );
        assert!(out.contains("Deployment/old"), "{resource}: {out}");
    }
    let list = get_json(
        &c,
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
    )
    .await;
    assert_eq!(list["kind"], "HorizontalPodAutoscalerList");
    assert_eq!(list["apiVersion"], "autoscaling/v1");
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    // Items of built-in lists carry no apiVersion, as upstream: the shape
    // tells the version.
    assert!(
        items
            .iter()
            .all(|i| i["spec"]["targetCPUUtilizationPercentage"].is_number()
                && i["spec"].get("metrics").is_none()),
        "{list}"
    );

    // Protobuf through v1.
    let body = http
        .get(c.url("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/old"))
        .header("accept", "application/vnd.kubernetes.protobuf")
        .sent()
        .await
        .bytes()
        .await
        .expect("body");
    let rest = body.strip_prefix(b"k8s\0".as_slice()).expect("magic");
    let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown::decode(rest).expect("unknown");
    let tm = unknown.type_meta.unwrap_or_default();
    assert_eq!(tm.api_version.as_deref(), Some("autoscaling/v1"));
    let hpa = k8s_pb::api::autoscaling::v1::HorizontalPodAutoscaler::decode(
        unknown.raw.unwrap_or_default().as_slice(),
    )
    .expect("v1 hpa");
    let spec = hpa.spec.unwrap_or_default();
    assert_eq!(spec.target_cpu_utilization_percentage, Some(50));
    assert_eq!(spec.max_replicas, Some(4));

    // Deleting through v1 deletes the one object.
    c.kubectl_ok(&[
        "delete",
        "horizontalpodautoscalers.v1.autoscaling",
        "web",
        "-n",
        "default",
    ])
    .await;
    let (ok, _, err) = c.kubectl(&["get", "hpa", "web", "-n", "default"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
}

const CORE_EVENT: &str = r#"{"apiVersion": "v1", "kind": "Event",
 "metadata": {"name": "core-ev", "namespace": "default"},
 "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "default"},
 "reason": "Started", "message": "started container", "type": "Normal",
 "source": {"component": "kubelet", "host": "node-1"}, "count": 3,
 "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:05:00Z"}"#;

const NEW_EVENT: &str = r#"{"apiVersion": "events.k8s.io/v1", "kind": "Event",
 "metadata": {"name": "new-ev", "namespace": "default"},
 "eventTime": "2026-01-01T00:00:00.000000Z",
 "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
 "action": "Sync", "reason": "Synced", "type": "Normal",
 "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"},
 "note": "synced the deployment"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_and_events_k8s_io_events_are_one_resource() {
    let c = TestCluster::start().await;
    for body in [CORE_EVENT, NEW_EVENT] {
        let (ok, _, err) = c.kubectl_stdin(&["create", "-f", "-"], Some(body)).await;
        assert!(ok, "{err}");
    }

    // The core event through events.k8s.io.
    let e = get_json(
        &c,
        "/apis/events.k8s.io/v1/namespaces/default/events/core-ev",
    )
    .await;
    assert_eq!(e["apiVersion"], "events.k8s.io/v1");
    assert_eq!(e["note"], "started container");
    assert_eq!(e["regarding"]["name"], "p1");
    assert_eq!(e["deprecatedSource"]["component"], "kubelet");
    assert_eq!(e["deprecatedCount"], 3);
    assert!(e.get("message").is_none() && e.get("involvedObject").is_none());

    // The events.k8s.io event through core.
    let e = get_json(&c, "/api/v1/namespaces/default/events/new-ev").await;
    assert_eq!(e["apiVersion"], "v1");
    assert_eq!(e["message"], "synced the deployment");
    assert_eq!(e["involvedObject"]["kind"], "Deployment");
    assert_eq!(e["reportingComponent"], "example.com/ctl");
    assert_eq!(e["reportingInstance"], "ctl-0");

    // Both listings show both events.
    for resource in ["events", "events.v1.events.k8s.io"] {
        let out = c
            .kubectl_ok(&["get", resource, "-n", "default", "-o", "wide"])
            .await;
        assert!(
            out.contains("started container") && out.contains("synced the deployment"),
            "{resource}: {out}"
        );
        assert!(out.contains("deployment/web"), "{resource}: {out}");
    }
    let list = get_json(&c, "/apis/events.k8s.io/v1/namespaces/default/events").await;
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{list}");
    assert!(
        items
            .iter()
            .all(|i| i["note"].is_string() && i.get("message").is_none()),
        "{list}"
    );

    // Core's field selectors keep working on events written either way.
    let out = c
        .kubectl_ok(&[
            "get",
            "events",
            "-n",
            "default",
            "--field-selector",
            "involvedObject.kind=Deployment",
            "--no-headers",
        ])
        .await;
    assert!(
        out.contains("synced the deployment") && !out.contains("started container"),
        "{out}"
    );

    // Deleting through one version deletes the one object.
    c.kubectl_ok(&[
        "delete",
        "events.v1.events.k8s.io",
        "core-ev",
        "-n",
        "default",
    ])
    .await;
    let (ok, _, err) = c
        .kubectl(&["get", "events", "core-ev", "-n", "default"])
        .await;
    assert!(!ok && err.contains("NotFound"), "{err}");
}
