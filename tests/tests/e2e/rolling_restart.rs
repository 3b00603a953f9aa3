//! A rolling restart of kube-core behind the aggregator, as operators do it
//! with two replicas: the aggregator spreads requests over both
//! (`--delegate-url a,b`), a replica told to stop (SIGTERM) fails `/readyz`
//! for `--shutdown-delay-duration` so the aggregator stops sending it new
//! requests, finishes what it has and ends its watches with a bookmark.
//! Under a write load and a watch, no write fails beyond a client retry,
//! every acknowledged write is readable, and the watcher, resuming from its
//! last resourceVersion each time its stream ends, sees every object once
//! and never has to relist.

use crate::harness::{Auth, SendExt, TestCluster};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::resilient_client::{
    delivery, watch_resuming, Delivery, Resumed, Retry, WriteLoad, Written,
};

async fn wait_ready(http: &reqwest::Client, base: &str) {
    for _ in 0..300 {
        if let Ok(r) = http.get(format!("{base}/readyz")).send().await {
            if r.status().is_success() {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{base} never became ready");
}

async fn terminate_and_wait(pid: u32) {
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok);
    for _ in 0..300 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("process {pid} did not stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_restart_of_kube_core_fails_no_request_and_relists_no_watch() {
    let delay = "--shutdown-delay-duration=3s".to_string();
    let second_port = deploy::free_port().expect("port");
    let mut c = TestCluster::start_with(deploy::ExtraArgs {
        aggregator: vec![format!("--delegate-url=https://127.0.0.1:{second_port}")],
        kube_core: vec![delay.clone()],
        ..Default::default()
    })
    .await;
    let http = c.http(Auth::AdminCert);
    let (mut second, _) = c.extra_kube_core_with(Some(second_port), std::slice::from_ref(&delay));
    let second_url = format!("https://127.0.0.1:{second_port}");
    wait_ready(&http, &second_url).await;

    let ns_url = c.url("/api/v1/namespaces/default/configmaps");
    // The watcher: re-watches from its last resourceVersion whenever its
    // stream ends; a 410 would force a relist.
    let start_rv: String = {
        let list: Value = http.get(&ns_url).fetch_json().await;
        crate::harness::resource_version(&list)
    };
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let relists = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (http, url, seen, relists, stop) = (
            http.clone(),
            ns_url.clone(),
            seen.clone(),
            relists.clone(),
            stop.clone(),
        );
        tokio::spawn(async move {
            watch_resuming(
                &http,
                &[url],
                start_rv,
                Duration::from_secs(300),
                Duration::from_millis(200),
                &stop,
                |r, rv| match r {
                    Resumed::Refused(410) => relists.lock().unwrap().push(format!("410 at {rv}")),
                    Resumed::Error(ev) if ev["object"]["code"] == 410 => {
                        relists.lock().unwrap().push(format!("410 event at {rv}"))
                    }
                    Resumed::Event(ev) if ev["type"] == "ADDED" => {
                        if let Some(n) = ev["object"]["metadata"]["name"].as_str() {
                            seen.lock().unwrap().push(n.to_string());
                        }
                    }
                    _ => {}
                },
            )
            .await
        })
    };

    // The write load.
    let writer = WriteLoad::start(
        &http,
        vec![ns_url.clone()],
        "roll-",
        Retry {
            attempts: 3,
            within: Duration::from_secs(3600),
            pause: Duration::from_millis(300),
            not_found: false,
        },
        stop.clone(),
    );

    tokio::time::sleep(Duration::from_secs(1)).await;
    // Replica 1 (managed by the cluster): stop, restart.
    let first_pid = c
        .cluster
        .tier_pid(deploy::Tier::KubeCore)
        .expect("kube-core");
    terminate_and_wait(first_pid).await;
    let _ = c.cluster.poll_exited();
    c.cluster
        .start_tier(deploy::Tier::KubeCore)
        .await
        .expect("restart replica 1");
    // Let the aggregator see it ready again.
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Replica 2: stop, restart.
    let second_pid = second.id().expect("pid");
    terminate_and_wait(second_pid).await;
    let _ = second.wait().await;
    let (again, _) = c.extra_kube_core_with(Some(second_port), std::slice::from_ref(&delay));
    second = again;
    wait_ready(&http, &second_url).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    stop.store(true, Ordering::SeqCst);
    let Written {
        acked,
        failed,
        retries,
    } = writer.finish().await;
    assert!(failed.is_empty(), "writes failed after retries: {failed:?}");
    assert!(acked.len() > 20, "the load ran: {} writes", acked.len());

    // Every acknowledged write is readable.
    let list: Value = http.get(&ns_url).fetch_json().await;
    let stored: BTreeSet<String> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    for name in &acked {
        assert!(
            stored.contains(name),
            "{name} was acknowledged but is not stored"
        );
    }
    // The watcher saw each exactly once, without relisting.
    let Delivery {
        distinct,
        duplicated,
        missed,
    } = delivery(&seen, "roll-", &acked, Duration::from_secs(10)).await;
    watcher.abort();
    assert!(duplicated.is_empty(), "seen twice: {duplicated:?}");
    assert!(missed.is_empty(), "the watcher missed {missed:?}");
    assert!(
        relists.lock().unwrap().is_empty(),
        "the watcher had to relist: {:?}",
        relists.lock().unwrap()
    );
    eprintln!(
        "rolling restart: {} writes acknowledged ({} client retries), 0 failed, {} events seen once each, 0 relists",
        acked.len(),
        retries,
        distinct.len()
    );
    drop(second);
}
