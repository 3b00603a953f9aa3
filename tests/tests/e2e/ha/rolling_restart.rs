//! A rolling restart of every tier of the highly available layout under load.

use super::*;
use crate::harness::SendExt;

/// A rolling restart of every tier (each replica SIGTERMed and restarted in
/// turn, extensions, kube-core, then the aggregators) under a write load
/// and a watch, with a client that, as behind a load balancer, goes to the
/// other aggregator when one does not answer: no write fails beyond a
/// client retry, nothing is lost, and the watch resumes from its last
/// resourceVersion each time without a relist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_restart_of_every_tier_fails_no_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = HaConfig::new(dir.path().join("state"));
    cfg.ports = HaPorts::free().expect("ports");
    let mut c = HaCluster::start(cfg).await.expect("the HA layout starts");
    let http = admin_client(&c);
    let fronts = vec![
        c.url(Member::Tier(Tier::Aggregator, 0)),
        c.url(Member::Tier(Tier::Aggregator, 1)),
    ];
    let list_url = format!("{}/api/v1/namespaces/default/configmaps", fronts[0]);
    let start_rv = {
        let list: Value = http.get(&list_url).fetch_json().await;
        crate::harness::resource_version(&list)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let relists: Arc<Mutex<Vec<String>>> = Arc::default();
    let watcher = {
        let (http, fronts, seen, relists, stop) = (
            http.clone(),
            fronts.clone(),
            seen.clone(),
            relists.clone(),
            stop.clone(),
        );
        tokio::spawn(async move {
            let urls: Vec<String> = fronts
                .iter()
                .map(|f| format!("{f}/api/v1/namespaces/default/configmaps"))
                .collect();
            watch_resuming(
                &http,
                &urls,
                start_rv,
                Duration::from_secs(600),
                Duration::from_millis(200),
                &stop,
                |r, rv| record_added(r, rv, &seen, &relists),
            )
            .await;
        })
    };
    // As behind a load balancer over both aggregators: each attempt goes
    // to the next one.
    let writer = WriteLoad::start(
        &http,
        fronts
            .iter()
            .map(|f| format!("{f}/api/v1/namespaces/default/configmaps"))
            .collect(),
        "roll-",
        Retry {
            attempts: 8,
            within: Duration::from_secs(3600),
            pause: Duration::from_millis(300),
            not_found: false,
        },
        stop.clone(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    for tier in Tier::START_ORDER {
        for replica in 0..2 {
            let m = Member::Tier(tier, replica);
            c.stop_member(m)
                .await
                .unwrap_or_else(|e| panic!("stopping {}: {e:#}", m.name()));
            c.start_member(m)
                .await
                .unwrap_or_else(|e| panic!("restarting {}: {e:#}", m.name()));
            // The next tier's readiness probes see it back.
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let Written {
        acked,
        failed,
        retries,
    } = writer.finish().await;
    assert!(
        failed.is_empty(),
        "writes failed after client retries: {failed:?}"
    );
    let list: Value = http.get(&list_url).fetch_json().await;
    let stored: BTreeSet<String> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    let lost: Vec<&String> = acked.iter().filter(|n| !stored.contains(*n)).collect();
    let Delivery {
        duplicated, missed, ..
    } = delivery(&seen, "roll-", &acked, Duration::from_secs(15)).await;
    watcher.abort();
    let relists = relists.lock().unwrap().clone();
    eprintln!(
        "rolling restart of every tier: {} writes acknowledged ({} client retries), {} lost, {} duplicated, {} missed, {} relists",
        acked.len(),
        retries,
        lost.len(),
        duplicated.len(),
        missed.len(),
        relists.len()
    );
    assert!(lost.is_empty(), "acknowledged but not stored: {lost:?}");
    assert!(duplicated.is_empty(), "events seen twice: {duplicated:?}");
    assert!(missed.is_empty(), "events missed: {missed:?}");
    assert!(relists.is_empty(), "the watcher had to relist: {relists:?}");
    c.stop().await.expect("stop");
}
