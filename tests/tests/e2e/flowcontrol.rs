//! API Priority and Fairness at the front door: the bootstrap FlowSchemas
//! and PriorityLevelConfigurations exist, requests are classified (the
//! `X-Kubernetes-PF-*` headers name the schema's and level's UIDs), a flood
//! from one user is queued and rejected with 429 + `Retry-After` while
//! `system:masters`, another user and a new watch are still served, and
//! with priority and fairness off the max-in-flight limits apply.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const FS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const PL: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";

async fn get_json(c: &TestCluster, path: &str) -> Value {
    c.http(Auth::AdminCert).get(c.url(path)).fetch_json().await
}

async fn uid_of(c: &TestCluster, path: &str, name: &str) -> String {
    get_json(c, &format!("{path}/{name}")).await["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The schema and level UIDs a request as `user` (impersonated) gets.
async fn classified_as(c: &TestCluster, user: Option<&str>, path: &str) -> (String, String) {
    let mut req = c.http(Auth::AdminCert).get(c.url(path));
    if let Some(u) = user {
        req = req.header("Impersonate-User", u);
    }
    let resp = req.sent().await;
    let h = |n: &str| {
        resp.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    (
        h("X-Kubernetes-PF-FlowSchema-UID"),
        h("X-Kubernetes-PF-PriorityLevel-UID"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_configuration_exists_and_classifies_requests() {
    let c = TestCluster::start().await;
    let names = |list: Value| -> Vec<String> {
        list["items"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let complete = eventually(Duration::from_secs(30), || async {
        let fs = names(get_json(&c, FS).await);
        let pl = names(get_json(&c, PL).await);
        [
            "exempt",
            "probes",
            "system-nodes",
            "service-accounts",
            "global-default",
            "catch-all",
        ]
        .iter()
        .all(|n| fs.iter().any(|f| f == n))
            && [
                "exempt",
                "system",
                "workload-low",
                "global-default",
                "catch-all",
            ]
            .iter()
            .all(|n| pl.iter().any(|p| p == n))
    })
    .await;
    assert!(complete, "bootstrap objects were not created");
    let exempt = get_json(&c, &format!("{FS}/exempt")).await;
    assert_eq!(
        exempt["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );
    assert_eq!(exempt["spec"]["matchingPrecedence"], 1);

    let exempt_fs = uid_of(&c, FS, "exempt").await;
    let exempt_pl = uid_of(&c, PL, "exempt").await;
    let global_fs = uid_of(&c, FS, "global-default").await;
    let global_pl = uid_of(&c, PL, "global-default").await;
    // The aggregator follows the API: once it has read the objects, the
    // headers carry their UIDs.
    let admin_ok = eventually(Duration::from_secs(30), || async {
        classified_as(&c, None, "/api/v1/namespaces").await
            == (exempt_fs.clone(), exempt_pl.clone())
    })
    .await;
    assert!(admin_ok, "system:masters is not classified as exempt");
    assert_eq!(
        classified_as(&c, Some("alice"), "/api/v1/namespaces/default/configmaps").await,
        (global_fs.clone(), global_pl.clone())
    );

    // A schema of our own, matched before global-default, takes alice's
    // requests within a moment.
    let mine = json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "alice"},
        "spec": {
            "matchingPrecedence": 500,
            "priorityLevelConfiguration": {"name": "workload-low"},
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                          "namespaces": ["*"], "clusterScope": true}]}]
        }
    });
    let resp = c
        .http(Auth::AdminCert)
        .post(c.url(FS))
        .json(&mine)
        .sent()
        .await;
    assert_eq!(resp.status(), 201);
    let alice_fs = uid_of(&c, FS, "alice").await;
    let low_pl = uid_of(&c, PL, "workload-low").await;
    let moved = eventually(Duration::from_secs(10), || async {
        classified_as(&c, Some("alice"), "/api/v1/namespaces/default/configmaps").await
            == (alice_fs.clone(), low_pl.clone())
    })
    .await;
    assert!(moved, "a new FlowSchema was not followed");

    // kubectl shows the objects with upstream's columns.
    let out = c.kubectl_ok(&["get", "flowschemas"]).await;
    assert!(
        out.contains("PRIORITYLEVEL") && out.contains("global-default"),
        "{out}"
    );
    let out = c.kubectl_ok(&["get", "prioritylevelconfigurations"]).await;
    assert!(
        out.contains("NOMINALCONCURRENCYSHARES") && out.contains("workload-low"),
        "{out}"
    );

    let metrics = c
        .http(Auth::AdminCert)
        .get(c.url("/metrics"))
        .sent()
        .await
        .text()
        .await
        .expect("text");
    for name in [
        "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"exempt\",priority_level=\"exempt\"}",
        "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"global-default\"}",
        "apiserver_flowcontrol_current_limit_seats{priority_level=\"workload-low\"}",
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket",
    ] {
        assert!(metrics.contains(name), "no {name} in /metrics");
    }
}

async fn create_configmaps(c: &TestCluster, n: usize) {
    let client = c.http(Auth::AdminCert);
    let mut tasks = Vec::new();
    for chunk in 0..16 {
        let client = client.clone();
        let url = c.url("/api/v1/namespaces/default/configmaps");
        tasks.push(tokio::spawn(async move {
            for i in (chunk..n).step_by(16) {
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": format!("cm-{i}")},
                                "data": {"k": "x".repeat(200)}});
                let r = client.post(&url).json(&cm).sent().await;
                assert_eq!(r.status(), 201);
            }
        }));
    }
    for t in tasks {
        t.await.expect("creator");
    }
}

async fn bind_view(c: &TestCluster, user: &str) {
    let crb = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": format!("{user}-view")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
    });
    let r = c
        .http(Auth::AdminCert)
        .post(c.url("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"))
        .json(&crb)
        .sent()
        .await;
    assert_eq!(r.status(), 201);
    // Bindings reach the authorizer through a watch: wait for it.
    let client = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps?limit=1");
    let bound = eventually(Duration::from_secs(10), || async {
        list_as(&client, &url, user).await.0 == 200
    })
    .await;
    assert!(bound, "{user} cannot list ConfigMaps");
}

/// One LIST as `user`: its status, whether it carried `Retry-After`, and
/// how long it took.
async fn list_as(client: &reqwest::Client, url: &str, user: &str) -> (u16, bool, Duration) {
    let start = Instant::now();
    match client
        .get(url)
        .header("Impersonate-User", user)
        .send()
        .await
    {
        Ok(r) => {
            let code = r.status().as_u16();
            let retry = r.headers().get("retry-after").is_some();
            let _ = r.bytes().await;
            (code, retry, start.elapsed())
        }
        Err(_) => (0, false, start.elapsed()),
    }
}

/// `process_resident_memory_bytes` of each tier, in MiB.
async fn resident_mib(c: &TestCluster) -> [f64; 3] {
    let ports = c.cluster.ports();
    let mut out = [0.0; 3];
    for (i, port) in [ports.aggregator, ports.kube_core, ports.extensions]
        .into_iter()
        .enumerate()
    {
        let text = c
            .http(Auth::AdminCert)
            .get(format!("https://127.0.0.1:{port}/metrics"))
            .sent()
            .await
            .text()
            .await
            .expect("text");
        out[i] = text
            .lines()
            .find_map(|l| l.strip_prefix("process_resident_memory_bytes "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or_default()
            / 1048576.0;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_from_one_user_is_limited_while_others_are_served() {
    let c = TestCluster::start_with(deploy::ExtraArgs {
        aggregator: vec![
            "--max-requests-inflight=20".into(),
            "--max-mutating-requests-inflight=10".into(),
        ],
        ..Default::default()
    })
    .await;
    create_configmaps(&c, 500).await;
    bind_view(&c, "flood").await;
    bind_view(&c, "bob").await;
    let url = c.url("/api/v1/namespaces/default/configmaps");
    // Each connection its own: 500 concurrent requests need no stream
    // limit to be hit first.
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(
            reqwest::Certificate::from_pem(&std::fs::read(&c.cluster.pki().ca_cert).expect("ca"))
                .expect("ca pem"),
        )
        .identity({
            let pki = c.cluster.pki();
            let mut pem = std::fs::read(&pki.admin_cert).expect("cert");
            pem.extend(std::fs::read(&pki.admin_key).expect("key"));
            reqwest::Identity::from_pem(&pem).expect("identity")
        })
        .http1_only()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client");
    // The front door learns how many ConfigMaps there are from a LIST.
    assert_eq!(list_as(&client, &url, "flood").await.0, 200);

    let before = resident_mib(&c).await;
    let flood_start = Instant::now();
    let flood: Vec<_> = (0..500)
        .map(|_| {
            let client = client.clone();
            let url = url.clone();
            tokio::spawn(async move { list_as(&client, &url, "flood").await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;

    // Meanwhile: system:masters through kubectl, another user of the same
    // priority level, and a new watch.
    let admin = Instant::now();
    let (ok, out, err) = c.kubectl(&["get", "ns", "default"]).await;
    let admin = admin.elapsed();
    assert!(ok, "kubectl get ns during the flood: {out} {err}");
    let (bob, _, bob_took) = list_as(&client, &url, "bob").await;
    assert_eq!(bob, 200, "another user of the same level");
    let watch = Instant::now();
    let w = c
        .http(Auth::AdminCert)
        .get(c.url(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=1",
        ))
        .sent()
        .await;
    assert_eq!(w.status(), 200);
    let watch = watch.elapsed();

    let mut ok = 0;
    let mut rejected = 0;
    let mut other = Vec::new();
    for t in flood {
        match t.await.expect("flood request") {
            (200, _, _) => ok += 1,
            (429, true, _) => rejected += 1,
            (code, retry, took) => other.push((code, retry, took)),
        }
    }
    let flood_took = flood_start.elapsed();
    println!(
        "flood of 500 LISTs (500 ConfigMaps each): {ok} served, {rejected} rejected with 429, \
         in {flood_took:?}; meanwhile kubectl get ns {admin:?}, bob's LIST {bob_took:?}, watch {watch:?}"
    );
    assert!(other.is_empty(), "unexpected answers: {other:?}");
    assert!(rejected > 0, "the flood was never told to back off");
    assert!(ok > 0, "nothing of the flood was served");
    // Fair queuing: bob did not wait behind the flood's queues.
    assert!(
        bob_took < flood_took / 2,
        "bob waited {bob_took:?} of the flood's {flood_took:?}"
    );
    let metrics = c
        .http(Auth::AdminCert)
        .get(c.url("/metrics"))
        .sent()
        .await
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("apiserver_flowcontrol_rejected_requests_total{flow_schema=\"global-default\",priority_level=\"global-default\""),
        "no rejections counted"
    );
    let after = resident_mib(&c).await;
    println!("resident memory (MiB) of aggregator, kube-core, extensions: before the flood {before:?}, after {after:?}");
    for (tier, mib) in ["aggregator", "kube-core", "extensions"].iter().zip(after) {
        assert!(mib < 1024.0, "{tier} grew to {mib} MiB");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_priority_and_fairness_the_in_flight_limits_apply() {
    let c = TestCluster::start_with(deploy::ExtraArgs {
        aggregator: vec![
            "--enable-priority-and-fairness=false".into(),
            "--max-requests-inflight=2".into(),
        ],
        ..Default::default()
    })
    .await;
    create_configmaps(&c, 300).await;
    bind_view(&c, "flood").await;
    let url = c.url("/api/v1/namespaces/default/configmaps");
    let client = c.http(Auth::AdminCert);
    let flood: Vec<_> = (0..60)
        .map(|_| {
            let client = client.clone();
            let url = url.clone();
            tokio::spawn(async move { list_as(&client, &url, "flood").await })
        })
        .collect();
    let mut codes = std::collections::BTreeMap::<u16, usize>::new();
    let mut retry_after = true;
    for t in flood {
        let (code, retry, _) = t.await.expect("request");
        *codes.entry(code).or_default() += 1;
        if code == 429 {
            retry_after &= retry;
        }
    }
    println!("60 concurrent LISTs with --max-requests-inflight=2: {codes:?}");
    assert!(codes.get(&429).copied().unwrap_or(0) > 0, "{codes:?}");
    assert!(retry_after, "a 429 without Retry-After");
    assert_eq!(
        codes.keys().filter(|c| **c != 200 && **c != 429).count(),
        0,
        "{codes:?}"
    );
    // system:masters is not counted; no PF headers without priority and fairness.
    let r = client.get(c.url("/api/v1/namespaces")).sent().await;
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("X-Kubernetes-PF-FlowSchema-UID").is_none());
}
