//! Watches and lists served from memory: continuity across replicas and
//! restarts, and informer-style sync of a large resource.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::{json, Value};

/// Reads watch events from `resp` into `out` until `until` holds, the stream
/// ends, or `max` passes.
async fn collect(
    mut resp: reqwest::Response,
    out: &mut Vec<Value>,
    max: Duration,
    until: impl Fn(&[Value]) -> bool,
) {
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(max, async {
        while let Ok(Some(chunk)) = resp.chunk().await {
            buf.extend_from_slice(&chunk);
            while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=pos).collect();
                if let Ok(v) = serde_json::from_slice(&line) {
                    out.push(v);
                }
            }
            if until(out) {
                return;
            }
        }
    })
    .await;
}

fn rv(v: &Value) -> i64 {
    v["object"]["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_on_one_replica_sees_writes_through_another_across_its_restart() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let (mut replica, port) = c.extra_kube_core(None);
    let replica_url = format!("https://127.0.0.1:{port}");
    let ready = |url: String| {
        let http = http.clone();
        async move {
            eventually(Duration::from_secs(30), || {
                let http = http.clone();
                let url = format!("{url}/readyz");
                async move {
                    http.get(url)
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success())
                }
            })
            .await
        }
    };
    assert!(ready(replica_url.clone()).await, "replica not ready");

    let client = c.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let start: Value = http
        .get(c.url("/api/v1/namespaces/default/configmaps"))
        .fetch_json()
        .await;
    let start_rv = start["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();

    // Writes go through the aggregator (the first kube-core); the revision
    // of each write is what the watch must report, in order.
    let mut written: Vec<(String, String, i64)> = Vec::new();
    let write = |i: usize| {
        let cms = cms.clone();
        async move {
            let name = format!("w{}", i / 2);
            let obj = if i % 2 == 0 {
                let cm: ConfigMap = serde_json::from_value(
                    json!({"metadata": {"name": name}, "data": {"i": i.to_string()}}),
                )
                .expect("cm");
                cms.create(&PostParams::default(), &cm)
                    .await
                    .expect("create")
            } else {
                cms.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"data": {"i": i.to_string()}})),
                )
                .await
                .expect("patch")
            };
            let kind = if i % 2 == 0 { "ADDED" } else { "MODIFIED" };
            (
                kind.to_string(),
                name,
                obj.metadata
                    .resource_version
                    .unwrap_or_default()
                    .parse::<i64>()
                    .unwrap_or(0),
            )
        }
    };
    for i in 0..20 {
        written.push(write(i).await);
    }

    // Watch the replica from the start; read the first 10 events, then
    // restart the replica and resume from the last resourceVersion seen while
    // more writes happen.
    let mut seen = Vec::new();
    let resp = http
        .get(format!("{replica_url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={start_rv}"))
        .sent().await;
    assert_eq!(resp.status(), 200);
    collect(resp, &mut seen, Duration::from_secs(20), |e| e.len() >= 10).await;
    assert_eq!(seen.len(), 10, "first half: {seen:?}");
    let _ = replica.kill().await;
    let _ = replica.wait().await;
    for i in 20..40 {
        written.push(write(i).await);
    }
    let (_replica, _) = c.extra_kube_core(Some(port));
    assert!(
        ready(replica_url.clone()).await,
        "replica not ready after restart"
    );
    for i in 40..50 {
        written.push(write(i).await);
    }
    let last = rv(seen.last().expect("events"));
    let resp = http
        .get(format!(
            "{replica_url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={last}"
        ))
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    collect(resp, &mut seen, Duration::from_secs(20), |e| e.len() >= 50).await;

    let got: Vec<(String, String, i64)> = seen
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                rv(e),
            )
        })
        .collect();
    assert_eq!(
        got, written,
        "every write, in order, no gaps, no duplicates"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_sync_a_5000_object_resource() {
    let c = TestCluster::start().await;
    let client = c.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    futures_util::stream::iter(0..5000)
        .map(|i| {
            let cms = cms.clone();
            async move {
                let cm: ConfigMap = serde_json::from_value(
                    json!({"metadata": {"name": format!("o{i}")}, "data": {"i": "x"}}),
                )
                .expect("cm");
                cms.create(&PostParams::default(), &cm).await.map(|_| ())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<_>>()
        .await
        .expect("creating 5000 objects");

    // One LIST from the cache and one from etcd at an exact revision (read
    // in pages of 1,000 and streamed as they are read) agree: the same 5,000
    // objects, items without kind/apiVersion (as upstream's built-in lists),
    // and nothing written after that revision.
    let http = c.http(Auth::AdminCert);
    let list = |query: String| {
        let http = http.clone();
        let url = c.url(&format!("/api/v1/namespaces/default/configmaps{query}"));
        async move {
            let resp = http.get(url).sent().await;
            assert_eq!(resp.status().as_u16(), 200);
            resp.json::<Value>().await.expect("list json")
        }
    };
    // resourceVersion=0 serves whatever the cache holds, which may trail the
    // last acknowledged creates by a few events: wait until it has them all.
    let mut cached = list("?resourceVersion=0".into()).await;
    for _ in 0..100 {
        if cached["items"].as_array().map_or(0, Vec::len) >= 5000 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        cached = list("?resourceVersion=0".into()).await;
    }
    let at = crate::harness::resource_version(&cached);
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "zz-late"}})).expect("cm"),
    )
    .await
    .expect("late create");
    let exact = list(format!("?resourceVersion={at}&resourceVersionMatch=Exact")).await;
    assert_eq!(exact["metadata"]["resourceVersion"], at.as_str());
    let names = |l: &Value| -> Vec<String> {
        l["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                assert_eq!(i.get("kind"), None, "{i}");
                assert_eq!(i.get("apiVersion"), None, "{i}");
                i["metadata"]["name"].as_str().expect("name").to_string()
            })
            .collect()
    };
    let (from_cache, from_etcd) = (names(&cached), names(&exact));
    assert_eq!(from_etcd.len(), 5000);
    assert_eq!(from_cache, from_etcd);
    // A selector applied page by page finds the one match in the last page.
    let one = list(format!(
        "?resourceVersion={at}&resourceVersionMatch=Exact&fieldSelector=metadata.name%3Do999"
    ))
    .await;
    assert_eq!(names(&one), vec!["o999".to_string()]);
    cms.delete("zz-late", &Default::default())
        .await
        .expect("delete late");

    // kube-rs's watcher, with client-go's classic LIST (paged) + WATCH and
    // with a streaming list (sendInitialEvents).
    let listwatch = watcher::Config::default().page_size(500);
    for (label, cfg) in [
        ("list+watch", listwatch),
        (
            "streaming list",
            watcher::Config::default().streaming_lists(),
        ),
    ] {
        let stream = watcher(cms.clone(), cfg);
        tokio::pin!(stream);
        let mut names = BTreeSet::new();
        let synced = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(ev) = stream.try_next().await.expect("watch") {
                match ev {
                    watcher::Event::InitApply(o) => {
                        names.insert(o.metadata.name.unwrap_or_default());
                    }
                    watcher::Event::InitDone => return true,
                    _ => {}
                }
            }
            false
        })
        .await
        .unwrap_or(false);
        assert!(synced, "{label}: initial sync did not finish");
        assert_eq!(names.len(), 5000, "{label}: objects after sync");
    }
}

/// GETs that name a resourceVersion are served from the watch cache, as
/// upstream serves them: `0` gives the cached object (JSON and protobuf
/// bytes straight from memory), `N` waits until the cache has reached `N`,
/// a missing object is a 404 Status either way, and a GET without a
/// resourceVersion still reads etcd.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gets_with_a_resource_version_are_served_from_memory() {
    let c = TestCluster::start().await;
    let client = c.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "cached"}, "data": {"a": "1"}}))
            .expect("cm");
    let created = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let patched = cms
        .patch(
            "cached",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": "2"}})),
        )
        .await
        .expect("patch");
    let patched_rv = patched.metadata.resource_version.clone().expect("rv");
    assert_ne!(
        created.metadata.resource_version.as_deref(),
        Some(&*patched_rv)
    );

    let http = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps/cached");
    // Not older than the patch: the cache waits for it and serves it.
    let resp = http
        .get(format!("{url}?resourceVersion={patched_rv}"))
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap_or_default(),
        "application/json"
    );
    let got: Value = resp.json().await.expect("json");
    assert_eq!(got["data"]["a"], "2");
    assert_eq!(got["kind"], "ConfigMap");
    assert_eq!(got["apiVersion"], "v1");
    assert_eq!(got["metadata"]["resourceVersion"], json!(patched_rv));
    assert_eq!(got["metadata"]["uid"], json!(created.metadata.uid));

    // kube-rs's `GetParams::any()` (resourceVersion=0) agrees with etcd.
    let any = cms
        .get_with("cached", &kube::api::GetParams::any())
        .await
        .expect("GET rv=0");
    let consistent = cms.get("cached").await.expect("GET");
    assert_eq!(any.data, consistent.data);
    assert_eq!(
        any.metadata.resource_version,
        consistent.metadata.resource_version
    );

    // Protobuf from the cache.
    let resp = http
        .get(format!("{url}?resourceVersion=0"))
        .header("accept", "application/vnd.kubernetes.protobuf")
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let body = resp.bytes().await.expect("body");
    assert!(body.starts_with(b"k8s\0"), "protobuf envelope");

    // A missing object: 404 NotFound Status, as from etcd.
    let resp = http
        .get(c.url("/api/v1/namespaces/default/configmaps/absent?resourceVersion=0"))
        .sent()
        .await;
    crate::harness::expect_status(resp, 404, "NotFound").await;

    // A malformed resourceVersion is a 400 BadRequest.
    let resp = http.get(format!("{url}?resourceVersion=abc")).sent().await;
    crate::harness::expect_status(resp, 400, "BadRequest").await;
}

/// Pods selected by `spec.nodeName` (what every kubelet lists and watches)
/// come from the cache's index and agree with etcd through binding and
/// deletion, in one namespace and across all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_by_node_from_the_index_agree_with_etcd() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    for ns in ["a", "b"] {
        c.create_namespace_for_pods(ns).await;
        for (i, node) in ["n1", "n2", ""].iter().enumerate() {
            let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("p{i}")},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
            if !node.is_empty() {
                pod["spec"]["nodeName"] = json!(node);
            }
            let r = http
                .post(c.url(&format!("/api/v1/namespaces/{ns}/pods")))
                .json(&pod)
                .sent()
                .await;
            assert_eq!(r.status(), 201);
        }
    }
    // The unscheduled pod in `a` is bound to n1.
    let r = http
        .post(c.url("/api/v1/namespaces/a/pods/p2/binding"))
        .json(
            &json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p2"},
            "target": {"kind": "Node", "name": "n1"}}),
        )
        .sent()
        .await;
    assert_eq!(r.status(), 201);
    c.kubectl_ok(&[
        "delete",
        "pod",
        "p0",
        "-n",
        "b",
        "--grace-period=0",
        "--force",
    ])
    .await;
    let names = |v: Value| -> Vec<String> {
        let mut n: Vec<String> = v["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                format!(
                    "{}/{}",
                    i["metadata"]["namespace"].as_str().unwrap_or(""),
                    i["metadata"]["name"].as_str().unwrap_or("")
                )
            })
            .collect();
        n.sort();
        n
    };
    for (path, selector, want) in [
        ("/api/v1/pods", "spec.nodeName%3Dn1", vec!["a/p0", "a/p2"]),
        (
            "/api/v1/namespaces/a/pods",
            "spec.nodeName%3Dn1",
            vec!["a/p0", "a/p2"],
        ),
        ("/api/v1/pods", "spec.nodeName%3D", vec!["b/p2"]),
        ("/api/v1/pods", "spec.nodeName%3Dn2", vec!["a/p1", "b/p1"]),
        (
            "/api/v1/pods",
            "spec.nodeName%3Dn2%2Cmetadata.namespace%3Db",
            vec!["b/p1"],
        ),
    ] {
        let ok = crate::harness::eventually(std::time::Duration::from_secs(10), || async {
            let get = |rv: &str| {
                let url = c.url(&format!("{path}?fieldSelector={selector}{rv}"));
                let http = http.clone();
                async move { http.get(url).fetch_json::<Value>().await }
            };
            let cached = names(get("&resourceVersion=0").await);
            let etcd = names(get("").await);
            cached == want && etcd == want
        })
        .await;
        assert!(ok, "{path}?fieldSelector={selector}: want {want:?}");
    }
}
