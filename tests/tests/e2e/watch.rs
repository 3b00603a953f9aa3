//! Watches through the aggregator: kubectl get -w, kube-rs watchers,
//! resuming, 410 Expired, streaming lists.

use crate::harness::{Auth, SendExt, TestCluster};
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": "v"}})).expect("cm")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_sees_added_and_modified() {
    let c = TestCluster::start().await;
    let client = c.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    cms.create(&PostParams::default(), &cm("before"))
        .await
        .expect("create");

    let mut child = c.kubectl_spawn(&["get", "configmaps", "-w", "--output-watch-events"]);
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = Vec::new();
    let wait_for = |seen: &Vec<String>, event: &str, name: &str| {
        seen.iter().any(|l| {
            l.split_whitespace().next() == Some(event) && l.split_whitespace().nth(1) == Some(name)
        })
    };
    let read = async {
        let mut created = false;
        let mut modified = false;
        while let Ok(Some(line)) = lines.next_line().await {
            seen.push(line);
            if !created && wait_for(&seen, "ADDED", "before") {
                cms.create(&PostParams::default(), &cm("during"))
                    .await
                    .expect("create during");
                created = true;
            }
            if created && !modified && wait_for(&seen, "ADDED", "during") {
                cms.patch(
                    "during",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"data": {"k": "v2"}})),
                )
                .await
                .expect("patch");
                modified = true;
            }
            if wait_for(&seen, "MODIFIED", "during") {
                return true;
            }
        }
        false
    };
    let ok = tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .unwrap_or(false);
    let _ = child.kill().await;
    assert!(ok, "kubectl get -w output:\n{}", seen.join("\n"));
    assert!(
        seen[0].starts_with("EVENT") || seen[0].contains("NAME"),
        "header: {}",
        seen[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_rs_watcher_list_watch_and_streaming_list() {
    let c = TestCluster::start().await;
    let client = c.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for i in 0..3 {
        cms.create(&PostParams::default(), &cm(&format!("w{i}")))
            .await
            .expect("create");
    }
    for cfg in [
        watcher::Config::default(),
        watcher::Config::default().streaming_lists(),
    ] {
        let stream = watcher(cms.clone(), cfg);
        tokio::pin!(stream);
        let mut names = std::collections::BTreeSet::new();
        let synced = tokio::time::timeout(Duration::from_secs(20), async {
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
        assert!(synced, "initial sync did not finish");
        assert!(
            ["w0", "w1", "w2"].iter().all(|n| names.contains(*n)),
            "{names:?}"
        );
        let name = format!("live-{}", names.len());
        cms.create(&PostParams::default(), &cm(&name))
            .await
            .expect("create live");
        let got = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(ev) = stream.next().await {
                if let Ok(watcher::Event::Apply(o)) = ev {
                    if o.metadata.name.as_deref() == Some(name.as_str()) {
                        return true;
                    }
                }
            }
            false
        })
        .await
        .unwrap_or(false);
        assert!(got, "live event not delivered");
        cms.delete(&name, &Default::default())
            .await
            .expect("delete");
    }
}

/// Reads newline-delimited watch events from a raw response until `stop`
/// returns true or the time runs out.
async fn read_events(
    resp: reqwest::Response,
    max: Duration,
    stop: impl Fn(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let mut events = Vec::new();
    let mut buf = Vec::new();
    let mut resp = resp;
    let _ = tokio::time::timeout(max, async {
        while let Ok(Some(chunk)) = resp.chunk().await {
            buf.extend_from_slice(&chunk);
            while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=pos).collect();
                if let Ok(v) = serde_json::from_slice(&line) {
                    events.push(v);
                }
            }
            if stop(&events) {
                return;
            }
        }
    })
    .await;
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_expired_and_initial_events_end_bookmark() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let client = c.client().await;
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let a = cms
        .create(&PostParams::default(), &cm("a"))
        .await
        .expect("a");
    let rv_a: i64 = a
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("0")
        .parse()
        .expect("rv");
    cms.create(&PostParams::default(), &cm("b"))
        .await
        .expect("b");
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .expect("patch");

    // Resuming from a resourceVersion replays exactly what came after it.
    let resp = http
        .get(c.url(&format!(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv_a}"
        )))
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let evs = read_events(resp, Duration::from_secs(10), |e| e.len() >= 2).await;
    let summary: Vec<(String, String)> = evs
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("ADDED".into(), "b".into()),
            ("MODIFIED".into(), "a".into())
        ]
    );
    assert_eq!(evs[0]["object"]["kind"], "ConfigMap");

    // After a restart the cache's window starts anew, but a watch from an
    // older resourceVersion still resumes (from etcd's history) instead of
    // sending the client back to relist.
    let mut c = c;
    c.cluster
        .stop_tier(deploy::Tier::KubeCore)
        .await
        .expect("stop kube-core");
    c.cluster
        .start_tier(deploy::Tier::KubeCore)
        .await
        .expect("start kube-core");
    let resp = http
        .get(c.url(&format!(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv_a}"
        )))
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let evs = read_events(resp, Duration::from_secs(10), |e| e.len() >= 2).await;
    let summary: Vec<(String, String)> = evs
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("ADDED".into(), "b".into()),
            ("MODIFIED".into(), "a".into())
        ],
        "{evs:?}"
    );

    // An exact LIST at a revision etcd has compacted is 410 Expired.
    let current: serde_json::Value = http
        .get(c.url("/api/v1/namespaces/default/configmaps"))
        .fetch_json()
        .await;
    let rv: i64 = current["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .parse()
        .expect("rv");
    // Compact etcd through its HTTP gateway, as the apiserver's compactor would.
    let compacted = c
        .cluster
        .etcd_http_client()
        .post(format!("{}/v3/kv/compaction", c.cluster.etcd_url()))
        .body(format!(r#"{{"revision":"{rv}","physical":true}}"#))
        .sent()
        .await;
    assert!(
        compacted.status().is_success(),
        "{:?}",
        compacted.text().await
    );
    let old = http
        .get(c.url(&format!("/api/v1/namespaces/default/configmaps?resourceVersion={rv_a}&resourceVersionMatch=Exact")))
        .sent().await;
    crate::harness::expect_status(old, 410, "Expired").await;
    // Once etcd has compacted it, resuming from that resourceVersion ends the
    // stream with an in-stream 410, and the client relists.
    let resp = http
        .get(c.url(&format!(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv_a}"
        )))
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let evs = read_events(resp, Duration::from_secs(10), |e| !e.is_empty()).await;
    assert_eq!(
        evs.first().map(|e| e["type"].clone()),
        Some(json!("ERROR")),
        "{evs:?}"
    );
    assert_eq!(evs[0]["object"]["code"], 410);
    assert_eq!(evs[0]["object"]["reason"], "Expired");

    // A streaming list: current state, then the initial-events-end bookmark.
    let resp = http
        .get(c.url("/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"))
        .sent().await;
    let evs = read_events(resp, Duration::from_secs(10), |e| {
        e.iter().any(|e| e["type"] == "BOOKMARK")
    })
    .await;
    let adds = evs.iter().filter(|e| e["type"] == "ADDED").count();
    assert_eq!(adds, 2, "{evs:?}");
    let bm = evs.last().expect("bookmark");
    assert_eq!(bm["type"], "BOOKMARK");
    assert_eq!(
        bm["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    // Without the required options it is rejected, so clients fall back to LIST+WATCH.
    let resp = http
        .get(c.url("/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true"))
        .sent()
        .await;
    assert_eq!(resp.status(), 422);
}

/// As upstream's cacher: a watch with `allowWatchBookmarks` and
/// `timeoutSeconds` gets a BOOKMARK shortly before its deadline carrying the
/// newest resourceVersion, even when no event matched its selector.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmark_shortly_before_the_watch_deadline() {
    let c = TestCluster::start().await;
    let http = c.http(crate::harness::Auth::AdminCert);
    let created: serde_json::Value = http
        .post(c.url("/api/v1/namespaces/default/configmaps"))
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "unwatched"}}))
        .fetch_json()
        .await;
    let newest: i64 = created["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("rv");
    let started = std::time::Instant::now();
    let body = http
        .get(c.url(&format!(
            "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true\
             &timeoutSeconds=4&labelSelector=app%3Dnone&resourceVersion={newest}"
        )))
        .sent()
        .await
        .text()
        .await
        .expect("stream");
    let events: Vec<serde_json::Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).expect("event"))
        .collect();
    assert_eq!(events.len(), 1, "{body}");
    assert_eq!(events[0]["type"], "BOOKMARK", "{body}");
    let rv: i64 = events[0]["object"]["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("bookmark rv");
    assert!(rv >= newest, "{rv} < {newest}");
    assert!(started.elapsed() >= std::time::Duration::from_secs(3));
}
