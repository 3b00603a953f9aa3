//! A failing dependency gets 5xx for what depends on it, and recovery when it
//! returns.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use deploy::Tier;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_and_tier_outages_give_5xx_then_recover() {
    let mut c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps");
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"before"}}"#;
    let r = http
        .post(&url)
        .header("content-type", "application/json")
        .body(body)
        .sent()
        .await;
    assert_eq!(r.status(), 201);

    c.cluster.stop_etcd().await.expect("stop etcd");
    let r = http.get(&url).sent().await;
    let code = r.status().as_u16();
    let v: serde_json::Value = r.json().await.expect("a Status body");
    assert!((500..600).contains(&code), "got {code}: {v}");
    assert_eq!(v["kind"], "Status");
    assert_eq!(v["code"], code);

    c.cluster.start_etcd().await.expect("start etcd");
    let ok = eventually(Duration::from_secs(30), || async {
        http.get(&url)
            .send()
            .await
            .map(|r| r.status() == 200)
            .unwrap_or(false)
    })
    .await;
    assert!(ok, "requests did not succeed again after etcd came back");
    let r = http
        .post(&url)
        .header("content-type", "application/json")
        .body(body.replace("before", "after"))
        .sent()
        .await;
    assert_eq!(r.status(), 201);

    // kube-core down: the aggregator answers 503 with a Status, then recovers.
    c.cluster
        .stop_tier(Tier::KubeCore)
        .await
        .expect("stop kube-core");
    let r = http.get(&url).sent().await;
    assert_eq!(r.status(), 503);
    let v: serde_json::Value = r.json().await.expect("Status");
    assert_eq!(v["reason"], "ServiceUnavailable");
    c.cluster
        .start_tier(Tier::KubeCore)
        .await
        .expect("start kube-core");
    let ok = eventually(Duration::from_secs(30), || async {
        http.get(&url)
            .send()
            .await
            .map(|r| r.status() == 200)
            .unwrap_or(false)
    })
    .await;
    assert!(
        ok,
        "the aggregator did not recover after kube-core came back"
    );
}
