//! Discovery through the aggregator: served from memory (ETags, no requests
//! to the tiers while nothing changes, cached groups while a tier is down)
//! and a remote legacy `v1.` APIService taking the `/api` tree.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use crate::aggregator::AGGREGATED;

/// Merged discovery comes from the aggregator's caches: the same document
/// (same ETag, 304 on `If-None-Match`) while nothing changes, and still
/// served, every group listed, while kube-core is down; a CRD group created
/// afterwards shows up without any change to the APIServices by hand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_is_served_from_memory() {
    let mut tc = TestCluster::start().await;
    let admin = tc.http(Auth::AdminCert);
    let url = tc.url("/apis");
    let get = |inm: Option<String>| {
        let mut r = admin.get(&url).header("Accept", AGGREGATED);
        if let Some(tag) = inm {
            r = r.header("If-None-Match", tag);
        }
        r.send()
    };
    let first = get(None).await.expect("discovery");
    assert_eq!(first.status(), 200);
    let etag = first.headers()["etag"].to_str().expect("etag").to_string();
    let doc: serde_json::Value = first.json().await.expect("json");
    let groups = |doc: &serde_json::Value| -> Vec<String> {
        doc["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    };
    assert!(groups(&doc).contains(&"apps".to_string()), "{doc}");
    let again = get(Some(etag.clone())).await.expect("discovery");
    assert_eq!(again.status(), 304);

    tc.cluster
        .stop_tier(deploy::Tier::KubeCore)
        .await
        .expect("stop kube-core");
    let down = get(None).await.expect("discovery");
    assert_eq!(down.status(), 200);
    let down: serde_json::Value = down.json().await.expect("json");
    assert_eq!(groups(&down), groups(&doc));
    // The cached resources are still listed, as current (no request was
    // needed, and clients must not drop the group over a tier restart).
    let apps = down["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|g| g["metadata"]["name"] == "apps")
        .cloned()
        .unwrap_or_default();
    assert!(
        apps["versions"][0]["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["resource"] == "deployments")),
        "{apps}"
    );
    assert_eq!(apps["versions"][0]["freshness"], "Current", "{apps}");
    let legacy: serde_json::Value = admin.get(&url).fetch_json().await;
    assert!(legacy["groups"]
        .as_array()
        .is_some_and(|g| g.iter().any(|g| g["name"] == "apps")));
    tc.cluster
        .start_tier(deploy::Tier::KubeCore)
        .await
        .expect("start kube-core");

    // A new CRD group: in aggregated discovery promptly, as `Current`.
    crate::crds::create_json(&tc, &crate::crds::widget_crd("Namespaced")).await;
    crate::crds::wait_established(&tc, "widgets.example.com").await;
    let ok = eventually(Duration::from_secs(5), || async {
        let Ok(r) = get(None).await else { return false };
        let doc: serde_json::Value = r.json().await.unwrap_or_default();
        doc["items"].as_array().into_iter().flatten().any(|g| {
            g["metadata"]["name"] == "example.com"
                && g["versions"][0]["freshness"] == "Current"
                && g["versions"][0]["resources"][0]["resource"] == "widgets"
        })
    })
    .await;
    assert!(ok, "the new CRD group is not in aggregated discovery");
    let (ok, out, err) = tc.kubectl(&["get", "widgets", "-A"]).await;
    assert!(ok, "{out}{err}");
}

/// The legacy `v1.` APIService made remote takes the whole `/api` tree, as
/// upstream's aggregator proxies it (here to a Service without endpoints:
/// 503), while named groups keep working; deleting it brings the local one
/// back through auto-registration.
#[tokio::test]
async fn a_remote_legacy_v1_apiservice_takes_the_api_tree() {
    let tc = TestCluster::start().await;
    let admin = tc.http(Auth::AdminCert);
    let url = tc.url("/apis/apiregistration.k8s.io/v1/apiservices/v1.");
    let mut obj: serde_json::Value = admin.get(&url).fetch_json().await;
    obj["metadata"]["labels"] = serde_json::json!({});
    obj["spec"]["service"] =
        serde_json::json!({"namespace": "default", "name": "no-such-service", "port": 443});
    obj["spec"]["insecureSkipTLSVerify"] = serde_json::json!(true);
    let r = admin.put(&url).json(&obj).sent().await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap_or_default());

    let status = |path: &'static str| {
        let admin = admin.clone();
        let url = tc.url(path);
        async move {
            admin
                .get(url)
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }
    };
    let proxied = eventually(Duration::from_secs(10), || async {
        status("/api/v1/namespaces").await == 503
    })
    .await;
    assert!(proxied, "/api/v1 not routed to the remote v1. APIService");
    assert_eq!(status("/api").await, 503);
    assert_eq!(status("/apis/apps/v1/deployments").await, 200);
    let line = tc
        .kubectl_ok(&["get", "apiservice", "v1.", "--no-headers"])
        .await;
    assert!(line.contains("default/no-such-service"), "{line}");

    let r = admin.delete(&url).sent().await;
    assert_eq!(r.status(), 200);
    let restored = eventually(Duration::from_secs(20), || async {
        status("/api/v1/namespaces").await == 200
    })
    .await;
    assert!(restored, "the local v1. APIService did not come back");
}
