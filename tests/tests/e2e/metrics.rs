//! `/metrics` on every tier, read as Prometheus reads it: the text format
//! parses with the official Python client's parser (`prometheus-client` from
//! PyPI, which `.ci/run` installs), carries upstream's metric names and
//! labels, moves under load, and is readable by `system:monitoring` but not
//! by an ordinary user.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::collections::HashMap;
use std::time::Duration;

/// One sample: metric name, labels, value.
type Sample = (String, HashMap<String, String>, f64);

/// Parses `text` with `prometheus_client.parser` and returns its samples.
fn parse_with_prometheus_client(text: &str) -> Vec<Sample> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("metrics.txt");
    std::fs::write(&path, text).expect("writing metrics");
    let script = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in family.samples:
        out.append([s.name, s.labels, s.value])
print(json.dumps(out))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&path)
        .output()
        .expect("python3 must be on PATH (with prometheus-client from PyPI)");
    assert!(
        out.status.success(),
        "prometheus_client could not parse the metrics:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: Vec<(String, HashMap<String, String>, serde_json::Value)> =
        serde_json::from_slice(&out.stdout).expect("parser output");
    parsed
        .into_iter()
        .map(|(n, l, v)| (n, l, v.as_f64().unwrap_or(f64::NAN)))
        .collect()
}

/// The sum of the samples named `name` whose labels include `labels`.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, _, v)| v)
        .sum()
}

fn has(samples: &[Sample], name: &str) -> bool {
    samples.iter().any(|(n, _, _)| n == name)
}

async fn scrape_text(c: &TestCluster, port: u16, impersonate: &[(&str, &str)]) -> (u16, String) {
    let mut req = c
        .http(Auth::AdminCert)
        .get(format!("https://127.0.0.1:{port}/metrics"));
    for (h, v) in impersonate {
        req = req.header(*h, *v);
    }
    let resp = req.sent().await;
    let code = resp.status().as_u16();
    if code == 200 {
        let ct = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(ct.starts_with("text/plain; version=0.0.4"), "{ct}");
    }
    (code, resp.text().await.expect("metrics body"))
}

async fn scrape(c: &TestCluster, port: u16) -> Vec<Sample> {
    let (code, text) = scrape_text(c, port, &[]).await;
    assert_eq!(code, 200, "{text}");
    parse_with_prometheus_client(&text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tier_exports_upstreams_metrics_and_they_move_under_load() {
    let c = TestCluster::start().await;
    let ports = c.cluster.ports();
    let tiers = [
        ("aggregator", ports.aggregator),
        ("kube-core", ports.kube_core),
        ("extensions", ports.extensions),
    ];

    // Who may read them: system:monitoring yes, an ordinary user no.
    for (tier, port) in tiers {
        let monitoring = [
            ("Impersonate-User", "prometheus"),
            ("Impersonate-Group", "system:monitoring"),
        ];
        let (code, _) = scrape_text(&c, port, &monitoring).await;
        assert_eq!(code, 200, "system:monitoring reads {tier}'s metrics");
        let (code, body) = scrape_text(&c, port, &[("Impersonate-User", "nobody")]).await;
        assert_eq!(
            code, 403,
            "an ordinary user may not read {tier}'s metrics: {body}"
        );
    }

    let core_before = scrape(&c, ports.kube_core).await;
    let created = |s: &[Sample]| {
        value(
            s,
            "apiserver_request_total",
            &[
                ("resource", "configmaps"),
                ("verb", "POST"),
                ("code", "201"),
                ("component", "apiserver"),
            ],
        )
    };
    let etcd_creates = |s: &[Sample]| {
        value(
            s,
            "etcd_requests_total",
            &[("operation", "create"), ("resource", "configmaps")],
        )
    };
    let stored = |s: &[Sample]| {
        value(
            s,
            "apiserver_storage_objects",
            &[("resource", "configmaps")],
        )
    };
    let watch_events = |s: &[Sample]| {
        value(
            s,
            "apiserver_watch_events_total",
            &[("resource", "configmaps"), ("version", "v1")],
        )
    };

    // A watch open while five ConfigMaps are created.
    let watch = c
        .http(Auth::AdminCert)
        .get(c.url("/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=60"))
        .sent()
        .await;
    assert_eq!(watch.status().as_u16(), 200);
    let mut watch = watch;
    c.kubectl_ok(&["create", "configmap", "metrics-0", "--from-literal=a=b"])
        .await;
    for i in 1..5 {
        c.kubectl_ok(&[
            "create",
            "configmap",
            &format!("metrics-{i}"),
            "--from-literal=a=b",
        ])
        .await;
    }
    let mut got = 0;
    while got < 5 {
        let chunk = tokio::time::timeout(Duration::from_secs(10), watch.chunk())
            .await
            .expect("watch events arrive")
            .expect("watch body");
        let Some(chunk) = chunk else { break };
        got += chunk.iter().filter(|b| **b == b'\n').count();
    }
    assert!(got >= 5, "the watch saw the five creations ({got} events)");

    // While the watch is open it is a long-running request on kube-core.
    let during = scrape(&c, ports.kube_core).await;
    assert!(
        value(
            &during,
            "apiserver_longrunning_requests",
            &[("resource", "configmaps"), ("verb", "WATCH")]
        ) >= 1.0,
        "an open watch is counted as long-running"
    );
    drop(watch);

    let core_after = scrape(&c, ports.kube_core).await;
    assert!(
        created(&core_after) - created(&core_before) >= 5.0,
        "apiserver_request_total counts the creates: {} -> {}",
        created(&core_before),
        created(&core_after)
    );
    assert!(
        etcd_creates(&core_after) - etcd_creates(&core_before) >= 5.0,
        "etcd_requests_total moves"
    );
    assert!(
        watch_events(&core_after) - watch_events(&core_before) >= 5.0,
        "apiserver_watch_events_total moves"
    );
    assert!(
        eventually(Duration::from_secs(10), || async {
            let s = scrape(&c, ports.kube_core).await;
            stored(&s) >= stored(&core_before) + 5.0
        })
        .await,
        "apiserver_storage_objects counts the new ConfigMaps"
    );
    // The long-running gauge falls back once the watch is gone.
    assert!(
        eventually(Duration::from_secs(10), || async {
            let s = scrape(&c, ports.kube_core).await;
            value(
                &s,
                "apiserver_longrunning_requests",
                &[("resource", "configmaps"), ("verb", "WATCH")],
            ) == 0.0
        })
        .await,
        "a closed watch leaves apiserver_longrunning_requests"
    );

    for (tier, port) in tiers {
        let s = scrape(&c, port).await;
        for name in [
            "apiserver_request_total",
            "apiserver_request_duration_seconds_bucket",
            "apiserver_current_inflight_requests",
            "process_cpu_seconds_total",
            "process_resident_memory_bytes",
            "process_open_fds",
            "process_start_time_seconds",
        ] {
            assert!(has(&s, name), "{tier} exports {name}");
        }
        assert!(
            value(&s, "process_resident_memory_bytes", &[]) > 1e6,
            "{tier} RSS"
        );
    }

    // Requests are counted once, where they are served: the creates went
    // through the aggregator but are not counted there.
    let agg = scrape(&c, ports.aggregator).await;
    assert_eq!(
        created(&agg),
        0.0,
        "the aggregator does not count what kube-core served"
    );
    assert_eq!(
        value(
            &agg,
            "aggregator_unavailable_apiservice",
            &[("name", "v1.")]
        ),
        0.0
    );
    assert!(
        has(&agg, "aggregator_unavailable_apiservice"),
        "the aggregator reports APIService availability"
    );

    // The extensions tier serves CRDs and counts them.
    let ext_before = scrape(&c, ports.extensions).await;
    let crd = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
      "metadata":{"name":"gauges.metrics.example.com"},
      "spec":{"group":"metrics.example.com","scope":"Namespaced",
        "names":{"plural":"gauges","singular":"gauge","kind":"Gauge"},
        "versions":[{"name":"v1","served":true,"storage":true,
          "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;
    let (ok, _, err) = c.kubectl_stdin(&["create", "-f", "-"], Some(crd)).await;
    assert!(ok, "{err}");
    let ext_after = scrape(&c, ports.extensions).await;
    let crd_creates = |s: &[Sample]| {
        value(
            s,
            "apiserver_request_total",
            &[
                ("resource", "customresourcedefinitions"),
                ("verb", "POST"),
                ("group", "apiextensions.k8s.io"),
            ],
        )
    };
    assert_eq!(crd_creates(&ext_after) - crd_creates(&ext_before), 1.0);
    assert!(
        value(
            &ext_after,
            "apiserver_admission_step_admission_duration_seconds_count",
            &[("operation", "CREATE")]
        ) >= 1.0,
        "admission latencies are recorded"
    );
}
