//! Benchmark (not a test): creates 500 CRDs through the aggregator and prints
//! the time until all are Established and the RSS of the extensions process.
//!
//! `cargo bench -p integration-tests --bench crds_500` (release binaries), or
//! `cargo test -p integration-tests --bench crds_500 --release`; `CRDS=<n>`
//! changes the count.

#[allow(dead_code)]
#[path = "../tests/e2e/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{json, Value};

fn crd(i: usize) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("things{i}.bench{i}.example.com")},
        "spec": {
            "group": format!("bench{i}.example.com"),
            "scope": "Namespaced",
            "names": {"plural": format!("things{i}"), "kind": format!("Thing{i}")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "minimum": 1, "default": 1},
                        "name": {"type": "string", "maxLength": 63},
                        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
                    }},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}}}]
        }
    })
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("CRDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let c = harness::TestCluster::start().await;
    let pid = c
        .cluster
        .tier_pid(deploy::Tier::Extensions)
        .expect("extensions pid");
    let rss_before = rss_kib(pid).unwrap_or(0);
    let http = c.http(harness::Auth::AdminCert);
    let url = c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    let start = Instant::now();
    futures_util::stream::iter(0..n)
        .map(|i| {
            let (http, url) = (http.clone(), url.clone());
            async move {
                let r = http.post(&url).json(&crd(i)).send().await.expect("post");
                assert_eq!(
                    r.status().as_u16(),
                    201,
                    "{}",
                    r.text().await.unwrap_or_default()
                );
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    let created = start.elapsed();
    loop {
        let list: Value = http
            .get(&url)
            .send()
            .await
            .expect("list")
            .json()
            .await
            .expect("json");
        let established = list["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter(|c| {
                        c["status"]["conditions"].as_array().is_some_and(|cs| {
                            cs.iter()
                                .any(|c| c["type"] == "Established" && c["status"] == "True")
                        })
                    })
                    .count()
            })
            .unwrap_or(0);
        if established >= n {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "only {established}/{n} Established"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let established = start.elapsed();
    // The last CRD serves its resources.
    let last = n - 1;
    let cr_url = c.url(&format!(
        "/apis/bench{last}.example.com/v1/namespaces/default/things{last}"
    ));
    let served = loop {
        let r = http
            .post(&cr_url)
            .json(&json!({"apiVersion": format!("bench{last}.example.com/v1"), "kind": format!("Thing{last}"), "metadata": {"name": "x"}, "spec": {}}))
            .send()
            .await
            .expect("post");
        if r.status().as_u16() == 201 {
            break start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let rss_after = rss_kib(pid).unwrap_or(0);
    println!("CRDs: {n}");
    println!("all created:       {:.2}s", created.as_secs_f64());
    println!("all Established:   {:.2}s", established.as_secs_f64());
    println!("last CRD serving:  {:.2}s", served.as_secs_f64());
    println!(
        "extensions RSS:    {} MiB before, {} MiB after",
        rss_before / 1024,
        rss_after / 1024
    );
}
