//! Two kube-core replicas elect one leader for their singleton loops
//! through the Lease `kube-system/kube-core-controllers` (upstream's
//! `--leader-elect*` flags); when the leader is killed the other takes
//! over within a lease duration and runs the loops (here: the namespace
//! controller finalizing a deleted namespace). Each replica holds its own
//! API server identity Lease.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::{json, Value};

const LEASE: &str =
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-core-controllers";

/// `leader_election_master_status{name="kube-core-controllers"}` of the
/// replica at `base` (`None` when unreachable).
async fn leading(http: &reqwest::Client, base: &str) -> Option<bool> {
    let text = crate::harness::metrics_text(http, base).await?;
    text.lines()
        .find(|l| l.starts_with("leader_election_master_status{name=\"kube-core-controllers\"}"))
        .map(|l| l.trim_end().ends_with(" 1"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_and_a_takeover_when_it_dies() {
    let flags: Vec<String> = [
        "--leader-elect-lease-duration=4s",
        "--leader-elect-renew-deadline=3s",
        "--leader-elect-retry-period=500ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let second_port = deploy::free_port().expect("port");
    let mut c = TestCluster::start_with(deploy::ExtraArgs {
        aggregator: vec![format!("--delegate-url=https://127.0.0.1:{second_port}")],
        kube_core: flags.clone(),
        ..Default::default()
    })
    .await;
    let http = c.http(Auth::AdminCert);
    let (mut second, _) = c.extra_kube_core_with(Some(second_port), &flags);
    let first_url = c.cluster.kube_core_url();
    let second_url = format!("https://127.0.0.1:{second_port}");

    // Exactly one replica leads.
    let mut statuses = (None, None);
    for _ in 0..40 {
        statuses = (
            leading(&http, &first_url).await,
            leading(&http, &second_url).await,
        );
        if matches!(statuses, (Some(a), Some(b)) if a != b) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        matches!(statuses, (Some(a), Some(b)) if a != b),
        "not exactly one leader: {statuses:?}"
    );
    let first_leads = statuses.0 == Some(true);
    let lease: Value = http.get(c.url(LEASE)).fetch_json().await;
    let holder = lease["spec"]["holderIdentity"]
        .as_str()
        .expect("holder")
        .to_string();
    let transitions = lease["spec"]["leaseTransitions"].as_i64().unwrap_or(0);
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 4);

    // Each replica has its identity Lease.
    let identities = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=apiserver.kubernetes.io%2Fidentity%3Dkube-apiserver";
    let mut count = None;
    for _ in 0..30 {
        let ids: Value = http.get(c.url(identities)).fetch_json().await;
        count = ids["items"].as_array().map(Vec::len);
        if count == Some(2) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(count, Some(2), "one identity Lease per replica");

    // Kill the leader without a chance to release the Lease.
    let survivor = if first_leads {
        let pid = c.cluster.tier_pid(deploy::Tier::KubeCore).expect("pid");
        std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill");
        second_url.clone()
    } else {
        second.kill().await.expect("kill");
        first_url.clone()
    };
    assert!(
        eventually(Duration::from_secs(15), || async {
            leading(&http, &survivor).await == Some(true)
        })
        .await,
        "the survivor never took over"
    );
    let lease: Value = http.get(c.url(LEASE)).fetch_json().await;
    assert_ne!(lease["spec"]["holderIdentity"], holder.as_str());
    assert_eq!(
        lease["spec"]["leaseTransitions"],
        transitions + 1,
        "{lease}"
    );

    // The survivor runs the singleton loops: a deleted namespace is finalized.
    let resp = http
        .post(c.url("/api/v1/namespaces"))
        .json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "after-takeover"}}))
        .sent().await;
    assert_eq!(resp.status().as_u16(), 201);
    let resp = http
        .delete(c.url("/api/v1/namespaces/after-takeover"))
        .sent()
        .await;
    assert!(resp.status().is_success());
    assert!(
        eventually(Duration::from_secs(20), || async {
            http.get(c.url("/api/v1/namespaces/after-takeover"))
                .send()
                .await
                .is_ok_and(|r| r.status().as_u16() == 404)
        })
        .await,
        "the namespace controller did not finalize the namespace after the takeover"
    );
    let _ = c.cluster.poll_exited();
    drop(second);
}
