//! Issue 16's "nothing lost": a write load through the aggregator, to
//! kube-core (ConfigMaps) and to the extensions tier (a custom resource),
//! while kube-core, then extensions, then the aggregator, then etcd are
//! killed with SIGKILL and restarted. Every acknowledged write is readable
//! afterwards with its content; a watcher of each kind that resumes from
//! its last resourceVersion whenever its stream ends sees every object's
//! ADDED exactly once, in resourceVersion order. While etcd is down a read
//! fails with a 5xx `Status` (it does not hang) and `/readyz` names etcd;
//! the tiers recover by themselves when it returns.
//!
//! `KILL_TEST_ROUNDS=n` repeats the whole sequence n times on one cluster
//! (the README's figures come from `KILL_TEST_ROUNDS=10`).

use crate::harness::{eventually, expect_code, Auth, SendExt, TestCluster};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deploy::Tier;
use serde_json::{json, Value};

use crate::resilient_client::{create_retrying, watch_resuming, Resumed, Retry};

const CM_PATH: &str = "/api/v1/namespaces/default/configmaps";
const WIDGET_PATH: &str = "/apis/crash.example.com/v1/namespaces/default/widgets";

/// One kind under load: where it lives, and how to write an object of it
/// whose content names it.
#[derive(Clone, Copy)]
struct Kind {
    path: &'static str,
    prefix: &'static str,
}

impl Kind {
    fn body(self, name: &str) -> Value {
        if self.path == CM_PATH {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"n": name}})
        } else {
            json!({"apiVersion": "crash.example.com/v1", "kind": "Widget",
                "metadata": {"name": name}, "spec": {"n": name}})
        }
    }

    fn content(self, item: &Value) -> Option<&str> {
        if self.path == CM_PATH {
            item["data"]["n"].as_str()
        } else {
            item["spec"]["n"].as_str()
        }
    }
}

/// What one kind's writer and watcher saw.
#[derive(Default)]
struct Record {
    acked: Mutex<Vec<String>>,
    failed: Mutex<Vec<String>>,
    retries: AtomicUsize,
    /// (name, resourceVersion) of each ADDED event of ours, in arrival order.
    added: Mutex<Vec<(String, u64)>>,
    /// resourceVersions of every event, in arrival order.
    order: Mutex<Vec<u64>>,
    relists: Mutex<Vec<String>>,
    resumes: AtomicUsize,
}

fn spawn_writer(
    http: reqwest::Client,
    base: String,
    kind: Kind,
    rec: Arc<Record>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let url = format!("{base}{}", kind.path);
        // Up to a minute; the extensions tier restarting makes its group
        // briefly unknown to the aggregator's discovery of it.
        let retry = Retry {
            attempts: usize::MAX,
            within: Duration::from_secs(60),
            pause: Duration::from_millis(250),
            not_found: url.contains("/apis/crash."),
        };
        let mut i = 0;
        while !stop.load(Ordering::SeqCst) {
            let name = format!("{}-{i}", kind.prefix);
            match create_retrying(
                &http,
                &[url.clone()],
                &kind.body(&name),
                &retry,
                &rec.retries,
            )
            .await
            {
                Ok(_) => rec.acked.lock().unwrap().push(name),
                Err(e) => rec.failed.lock().unwrap().push(format!("{name}: {e}")),
            }
            i += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

/// Watches `kind` from `rv`, resuming from the last resourceVersion seen
/// (bookmarks included) whenever the stream ends or cannot be opened.
fn spawn_watcher(
    http: reqwest::Client,
    base: String,
    kind: Kind,
    rv: String,
    rec: Arc<Record>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let url = format!("{base}{}", kind.path);
        let mut first = true;
        watch_resuming(
            &http,
            &[url],
            rv,
            Duration::from_secs(3600),
            Duration::from_millis(250),
            &stop,
            |r, rv| match r {
                Resumed::Opening => {
                    if !first {
                        rec.resumes.fetch_add(1, Ordering::SeqCst);
                    }
                    first = false;
                }
                Resumed::Refused(410) => rec.relists.lock().unwrap().push(format!("410 at {rv}")),
                Resumed::Refused(_) => {}
                Resumed::Error(ev) => rec
                    .relists
                    .lock()
                    .unwrap()
                    .push(format!("ERROR event at {rv}: {}", ev["object"])),
                Resumed::Event(ev) => {
                    let Some(v) = ev["object"]["metadata"]["resourceVersion"].as_str() else {
                        return;
                    };
                    if ev["type"] == "BOOKMARK" {
                        return;
                    }
                    let n: u64 = v.parse().unwrap_or_default();
                    rec.order.lock().unwrap().push(n);
                    if ev["type"] == "ADDED" {
                        if let Some(name) = ev["object"]["metadata"]["name"].as_str() {
                            if name.starts_with(kind.prefix) {
                                rec.added.lock().unwrap().push((name.to_string(), n));
                            }
                        }
                    }
                }
            },
        )
        .await;
    })
}

async fn list_rv(http: &reqwest::Client, url: &str) -> String {
    let list: Value = http.get(url).fetch_json().await;
    crate::harness::resource_version(&list)
}

/// SIGKILLs `victim`, leaves it down for a moment, restarts it.
async fn crash_and_restart(c: &mut TestCluster, victim: Option<Tier>, http: &reqwest::Client) {
    match victim {
        Some(tier) => {
            c.cluster.kill_tier(tier);
            tokio::time::sleep(Duration::from_secs(2)).await;
            c.cluster
                .start_tier(tier)
                .await
                .unwrap_or_else(|e| panic!("restarting {}: {e:#}", tier.name()));
        }
        None => {
            c.cluster.kill_etcd();
            // Down: a read fails with a 5xx Status well before the
            // client's own timeout, and every tier's /readyz names etcd.
            let url = c.url(&format!("{CM_PATH}?resourceVersion="));
            let started = Instant::now();
            let r = http.get(&url).timeout(Duration::from_secs(30)).sent().await;
            let code = r.status().as_u16();
            let v: Value = r.json().await.expect("a Status body");
            assert!((500..600).contains(&code), "etcd down, got {code}: {v}");
            assert_eq!(v["kind"], "Status", "{v}");
            eprintln!(
                "etcd down: a consistent LIST answered {code} {} in {:?}",
                v["reason"],
                started.elapsed()
            );
            let admin = c.http(Auth::AdminCert);
            for tier in [Tier::Aggregator, Tier::KubeCore, Tier::Extensions] {
                let url = format!("{}/readyz?verbose", c.cluster.tier_url(tier));
                let named = eventually(Duration::from_secs(20), || async {
                    let Ok(r) = admin.get(&url).send().await else {
                        return false;
                    };
                    let code = r.status().as_u16();
                    let text = r.text().await.unwrap_or_default();
                    code == 500 && text.contains("[-]etcd failed")
                })
                .await;
                assert!(named, "{}'s /readyz does not say etcd failed", tier.name());
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            c.cluster.start_etcd().await.expect("restarting etcd");
            // The tiers find etcd again on their own.
            for tier in [Tier::Aggregator, Tier::KubeCore, Tier::Extensions] {
                let url = format!("{}/readyz", c.cluster.tier_url(tier));
                let ready = eventually(Duration::from_secs(60), || async {
                    admin
                        .get(&url)
                        .send()
                        .await
                        .is_ok_and(|r| r.status().as_u16() == 200)
                })
                .await;
                assert!(
                    ready,
                    "{} did not become ready after etcd returned",
                    tier.name()
                );
            }
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
}

/// Checks one kind's record against what is stored; returns
/// (acknowledged, lost, duplicated, missed, out of order).
async fn verify(http: &reqwest::Client, base: &str, kind: Kind, rec: &Record) -> [usize; 5] {
    let list: Value = http.get(format!("{base}{}", kind.path)).fetch_json().await;
    let stored: std::collections::BTreeMap<String, String> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| {
            Some((
                i["metadata"]["name"].as_str()?.to_string(),
                kind.content(i)?.to_string(),
            ))
        })
        .collect();
    let acked = rec.acked.lock().unwrap().clone();
    let lost: Vec<&String> = acked
        .iter()
        .filter(|n| stored.get(*n) != Some(*n))
        .collect();
    // Wait for the watcher to catch up with the last acknowledged write.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::time::Instant::now() < deadline {
        let seen: BTreeSet<String> = rec
            .added
            .lock()
            .unwrap()
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        if acked.iter().all(|n| seen.contains(n)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let added = rec.added.lock().unwrap().clone();
    let mut once = BTreeSet::new();
    let duplicated: Vec<&String> = added
        .iter()
        .map(|(n, _)| n)
        .filter(|n| !once.insert((*n).clone()))
        .collect();
    let missed: Vec<&String> = acked.iter().filter(|n| !once.contains(*n)).collect();
    let order = rec.order.lock().unwrap().clone();
    let out_of_order = order.windows(2).filter(|w| w[1] <= w[0]).count();
    assert!(
        lost.is_empty(),
        "{}: acknowledged but not stored with its content: {lost:?}",
        kind.prefix
    );
    assert!(
        duplicated.is_empty(),
        "{}: ADDED seen twice: {duplicated:?}",
        kind.prefix
    );
    assert!(
        missed.is_empty(),
        "{}: ADDED never seen: {missed:?}",
        kind.prefix
    );
    assert_eq!(
        out_of_order, 0,
        "{}: events out of resourceVersion order",
        kind.prefix
    );
    [
        acked.len(),
        lost.len(),
        duplicated.len(),
        missed.len(),
        out_of_order,
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashes_of_every_process_lose_no_acknowledged_write_or_event() {
    let rounds: usize = std::env::var("KILL_TEST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let base = c.url("");
    let base = base.trim_end_matches('/').to_string();

    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.crash.example.com"},
        "spec": {"group": "crash.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"n": {"type": "string"}}}}}}}]}
    });
    let r = http
        .post(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))
        .json(&crd)
        .sent()
        .await;
    expect_code(r, 201).await;
    let served = eventually(Duration::from_secs(30), || async {
        http.get(c.url(WIDGET_PATH))
            .send()
            .await
            .is_ok_and(|r| r.status().as_u16() == 200)
    })
    .await;
    assert!(served, "the custom resource is never served");

    let kinds = [
        Kind {
            path: CM_PATH,
            prefix: "crash-cm",
        },
        Kind {
            path: WIDGET_PATH,
            prefix: "crash-widget",
        },
    ];
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    let mut records = Vec::new();
    for kind in kinds {
        let rec = Arc::new(Record::default());
        let rv = list_rv(&http, &c.url(kind.path)).await;
        tasks.push(spawn_watcher(
            http.clone(),
            base.clone(),
            kind,
            rv,
            rec.clone(),
            stop.clone(),
        ));
        tasks.push(spawn_writer(
            http.clone(),
            base.clone(),
            kind,
            rec.clone(),
            stop.clone(),
        ));
        records.push(rec);
    }

    tokio::time::sleep(Duration::from_secs(2)).await;
    for _ in 0..rounds {
        for victim in [
            Some(Tier::KubeCore),
            Some(Tier::Extensions),
            Some(Tier::Aggregator),
            None,
        ] {
            crash_and_restart(&mut c, victim, &http).await;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let (watchers, writers): (Vec<_>, Vec<_>) =
        tasks.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    for (_, w) in writers {
        w.await.expect("writer");
    }
    for (kind, rec) in kinds.iter().zip(&records) {
        let failed = rec.failed.lock().unwrap().clone();
        assert!(
            failed.is_empty(),
            "{}: writes failed after a minute of retries: {failed:?}",
            kind.prefix
        );
        assert!(
            rec.acked.lock().unwrap().len() > 20 * rounds,
            "{}: the load ran",
            kind.prefix
        );
    }
    let mut figures = Vec::new();
    for (kind, rec) in kinds.iter().zip(&records) {
        let [acked, lost, duplicated, missed, out_of_order] =
            verify(&http, &base, *kind, rec).await;
        let relists = rec.relists.lock().unwrap().clone();
        figures.push(format!(
            "{}: {acked} writes acknowledged ({} client retries), {lost} lost, {duplicated} duplicated events, {missed} missed, {out_of_order} out of order, {} watch reconnection attempts, {} relists",
            kind.prefix,
            rec.retries.load(Ordering::SeqCst),
            rec.resumes.load(Ordering::SeqCst),
            relists.len(),
        ));
        assert!(
            relists.is_empty(),
            "{}: the watcher had to relist: {relists:?}",
            kind.prefix
        );
    }
    stop.store(true, Ordering::SeqCst);
    for (_, w) in watchers {
        w.abort();
    }
    eprintln!(
        "kill test ({rounds} rounds of kube-core, extensions, aggregator, etcd): {}",
        figures.join("; ")
    );
}
