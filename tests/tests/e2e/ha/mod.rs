//! Issue 17's acceptance for the highly available layout (`up --ha`): here
//! a write load and a watch through one aggregator while one replica of
//! each tier and one etcd member are killed (SIGKILL) and restarted in
//! turn. Every acknowledged write is readable with its content, the
//! watcher (resuming from its last resourceVersion whenever its stream
//! ends) sees every object exactly once, and kube-core's singleton loops
//! never have two leaders. A rolling restart under load
//! ([`rolling_restart`]) and configuration reaching every replica
//! ([`propagation`]) are beside it.

use crate::harness::SendExt;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deploy::ha::{HaCluster, HaConfig, HaPorts, Member};
use deploy::Tier;
use serde_json::{json, Value};

use crate::resilient_client::{
    delivery, watch_resuming, Delivery, Resumed, Retry, WriteLoad, Written,
};

fn admin_client(c: &HaCluster) -> reqwest::Client {
    let pki = c.pki();
    let ca = std::fs::read(&pki.ca_cert).expect("ca");
    let mut pem = std::fs::read(&pki.admin_cert).expect("cert");
    pem.extend(std::fs::read(&pki.admin_key).expect("key"));
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("ca"))
        .identity(reqwest::Identity::from_pem(&pem).expect("identity"))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// `leader_election_master_status` of the `lease` election at `base`.
async fn leads_election(http: &reqwest::Client, base: &str, lease: &str) -> bool {
    let Ok(r) = http
        .get(format!("{base}/metrics"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
    else {
        return false;
    };
    r.text().await.unwrap_or_default().lines().any(|l| {
        l.starts_with(&format!(
            "leader_election_master_status{{name=\"{lease}\"}}"
        )) && l.trim_end().ends_with(" 1")
    })
}

/// Whether the kube-core at `base` leads its controllers.
async fn leads(http: &reqwest::Client, base: &str) -> bool {
    leads_election(http, base, "kube-core-controllers").await
}

/// What the HA tests' watchers keep: the names of ADDED objects, and
/// every refusal with 410 and every ERROR event as a relist.
fn record_added(r: Resumed<'_>, rv: &str, seen: &Mutex<Vec<String>>, relists: &Mutex<Vec<String>>) {
    match r {
        Resumed::Refused(410) => relists.lock().unwrap().push(format!("410 at {rv}")),
        Resumed::Error(ev) => relists
            .lock()
            .unwrap()
            .push(format!("ERROR event at {rv}: {}", ev["object"])),
        Resumed::Event(ev) if ev["type"] == "ADDED" => {
            if let Some(n) = ev["object"]["metadata"]["name"].as_str() {
                seen.lock().unwrap().push(n.to_string());
            }
        }
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_one_of_each_loses_no_write_and_no_event() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = HaConfig::new(dir.path().join("state"));
    cfg.ports = HaPorts::free().expect("ports");
    cfg.extra_args.kube_core.extend(
        [
            "--leader-elect-lease-duration=4s",
            "--leader-elect-renew-deadline=3s",
            "--leader-elect-retry-period=500ms",
        ]
        .map(String::from),
    );
    let mut c = HaCluster::start(cfg).await.expect("the HA layout starts");
    let http = admin_client(&c);
    let front = c.url(Member::Tier(Tier::Aggregator, 0));
    let url = format!("{front}/api/v1/namespaces/default/configmaps");
    let cores = [
        c.url(Member::Tier(Tier::KubeCore, 0)),
        c.url(Member::Tier(Tier::KubeCore, 1)),
    ];

    let start_rv = {
        let list: Value = http.get(&url).fetch_json().await;
        crate::harness::resource_version(&list)
    };
    let stop = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let relists: Arc<Mutex<Vec<String>>> = Arc::default();
    let watcher = {
        let (http, url, seen, relists, stop) = (
            http.clone(),
            url.clone(),
            seen.clone(),
            relists.clone(),
            stop.clone(),
        );
        tokio::spawn(async move {
            watch_resuming(
                &http,
                &[url],
                start_rv,
                Duration::from_secs(600),
                Duration::from_millis(300),
                &stop,
                |r, rv| record_added(r, rv, &seen, &relists),
            )
            .await;
        })
    };
    let writer = WriteLoad::start(
        &http,
        vec![url.clone()],
        "ha-",
        Retry {
            attempts: 8,
            within: Duration::from_secs(3600),
            pause: Duration::from_millis(500),
            not_found: false,
        },
        stop.clone(),
    );
    // Leaders, sampled twice a second: never two at once.
    let two_leaders = Arc::new(AtomicUsize::new(0));
    let samples = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (http, stop, two, samples, cores) = (
            http.clone(),
            stop.clone(),
            two_leaders.clone(),
            samples.clone(),
            cores.clone(),
        );
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let (a, b) = tokio::join!(leads(&http, &cores[0]), leads(&http, &cores[1]));
                if a && b {
                    two.fetch_add(1, Ordering::SeqCst);
                }
                samples.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        })
    };

    tokio::time::sleep(Duration::from_secs(2)).await;
    for member in [
        Member::Tier(Tier::KubeCore, 1),
        Member::Tier(Tier::Extensions, 1),
        Member::Tier(Tier::Aggregator, 1),
        Member::Etcd(2),
        Member::Tier(Tier::KubeCore, 0),
    ] {
        c.kill(member).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        c.start_member(member)
            .await
            .unwrap_or_else(|e| panic!("restarting {}: {e:#}", member.name()));
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    stop.store(true, Ordering::SeqCst);
    let Written {
        acked,
        failed,
        retries,
    } = writer.finish().await;
    sampler.await.expect("sampler");
    assert!(
        failed.is_empty(),
        "writes failed after client retries: {failed:?}"
    );
    assert!(acked.len() > 50, "the load ran: {}", acked.len());

    let list: Value = http.get(&url).fetch_json().await;
    let stored: std::collections::BTreeMap<String, String> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| {
            Some((
                i["metadata"]["name"].as_str()?.to_string(),
                i["data"]["n"].as_str()?.to_string(),
            ))
        })
        .collect();
    for name in &acked {
        assert_eq!(
            stored.get(name),
            Some(name),
            "{name} was acknowledged but is not stored with its content"
        );
    }
    let Delivery {
        distinct,
        duplicated,
        missed,
    } = delivery(&seen, "ha-", &acked, Duration::from_secs(15)).await;
    watcher.abort();
    let relists = relists.lock().unwrap().clone();
    eprintln!(
        "HA kill test: {} writes acknowledged ({} client retries), {} lost, {} events seen, {} duplicated, {} missed, {} relists; {} leader samples, {} with two leaders",
        acked.len(),
        retries,
        acked.iter().filter(|n| !stored.contains_key(*n)).count(),
        distinct.len(),
        duplicated.len(),
        missed.len(),
        relists.len(),
        samples.load(Ordering::SeqCst),
        two_leaders.load(Ordering::SeqCst),
    );
    assert!(duplicated.is_empty(), "events seen twice: {duplicated:?}");
    assert!(missed.is_empty(), "events missed: {missed:?}");
    assert!(relists.is_empty(), "the watcher had to relist: {relists:?}");
    assert_eq!(
        two_leaders.load(Ordering::SeqCst),
        0,
        "two kube-core replicas led at once"
    );
    assert!(
        leads(&http, &cores[0]).await ^ leads(&http, &cores[1]).await,
        "exactly one leader at the end"
    );
    // The aggregators elect their APIService status writer the same way.
    let fronts = [
        c.url(Member::Tier(Tier::Aggregator, 0)),
        c.url(Member::Tier(Tier::Aggregator, 1)),
    ];
    let mut one_writer = false;
    for _ in 0..100 {
        let a = leads_election(&http, &fronts[0], "kube-aggregator-controllers").await;
        let b = leads_election(&http, &fronts[1], "kube-aggregator-controllers").await;
        if a ^ b {
            one_writer = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        one_writer,
        "exactly one aggregator writes APIService statuses"
    );
    c.stop().await.expect("stop");
}

mod propagation;
mod rolling_restart;
