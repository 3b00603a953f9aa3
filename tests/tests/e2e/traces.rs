//! Tracing across the tiers (`--tracing-config-file`): a request that
//! arrives with a sampled W3C `traceparent` is one trace through the
//! aggregator, kube-core and the extensions tier, each tier's span the child
//! of the one in front, exported as OTLP/HTTP JSON to the configured
//! collector; an unsampled request (sampling rate 0) exports nothing.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A collector accepting OTLP/HTTP JSON on 127.0.0.1; returns its port and
/// the bodies received.
async fn collector() -> (u16, Arc<Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = got.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let sink = sink.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let (head_end, len) = loop {
                    let Ok(n) = tcp.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (end + 4, len);
                    }
                };
                while buf.len() < head_end + len {
                    let Ok(n) = tcp.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                if let Ok(v) = serde_json::from_slice(&buf[head_end..head_end + len]) {
                    sink.lock().unwrap().push(v);
                }
                let _ = tcp
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
                    .await;
            });
        }
    });
    (port, got)
}

/// `(service, span)` of every span received.
fn spans(got: &Mutex<Vec<Value>>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for req in got.lock().unwrap().iter() {
        for rs in req["resourceSpans"].as_array().into_iter().flatten() {
            let service = rs["resource"]["attributes"][0]["value"]["stringValue"]
                .as_str()
                .unwrap_or("")
                .to_string();
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for s in ss["spans"].as_array().into_iter().flatten() {
                    out.push((service.clone(), s.clone()));
                }
            }
        }
    }
    out
}

fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

#[tokio::test]
async fn one_request_is_one_trace_across_the_tiers() {
    let (port, got) = collector().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("tracing.yaml");
    std::fs::write(
        &config,
        format!("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:{port}\nsamplingRatePerMillion: 0\n"),
    )
    .expect("config");
    let flag = vec![format!("--tracing-config-file={}", config.display())];
    let c = TestCluster::start_with(deploy::ExtraArgs {
        aggregator: flag.clone(),
        kube_core: flag.clone(),
        extensions: flag,
    })
    .await;
    let http = c.http(Auth::AdminCert);
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let resp = http
        .get(c.url("/apis/nothere.example.com/v1/things"))
        .header("traceparent", format!("00-{trace}-{parent}-01"))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 404);
    let unsampled = http
        .get(c.url("/api/v1/namespaces"))
        .header("Audit-Id", "not-traced")
        .sent()
        .await;
    assert_eq!(unsampled.status().as_u16(), 200);

    let of_trace = || -> Vec<(String, Value)> {
        spans(&got)
            .into_iter()
            .filter(|(_, s)| s["traceId"] == trace)
            .collect()
    };
    assert!(
        eventually(Duration::from_secs(15), || async { of_trace().len() >= 3 }).await,
        "spans of the trace: {:#?}",
        of_trace()
    );
    let trace_spans = of_trace();
    let by = |service: &str| {
        trace_spans
            .iter()
            .find(|(s, _)| s == service)
            .map(|(_, span)| span.clone())
            .unwrap_or_else(|| panic!("no span from {service}: {trace_spans:#?}"))
    };
    let (agg, core, ext) = (
        by("kube-aggregator"),
        by("kube-core-apiserver"),
        by("kube-extensions-apiserver"),
    );
    assert_eq!(agg["parentSpanId"], parent, "{agg:#}");
    assert_eq!(core["parentSpanId"], agg["spanId"], "{core:#}");
    assert_eq!(ext["parentSpanId"], core["spanId"], "{ext:#}");
    for s in [&agg, &core, &ext] {
        assert_eq!(s["name"], "KubernetesAPI");
        assert_eq!(s["kind"], 2);
        assert_eq!(
            attr(s, "http.response.status_code").and_then(|v| v["intValue"].as_str()),
            Some("404")
        );
        assert_eq!(
            attr(s, "url.path").and_then(|v| v["stringValue"].as_str()),
            Some("/apis/nothere.example.com/v1/things")
        );
    }
    // Sampling rate 0: the request without a traceparent left no span.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !spans(&got).iter().any(|(_, s)| attr(s, "audit-id")
            .and_then(|v| v["stringValue"].as_str())
            == Some("not-traced")),
        "an unsampled request was traced"
    );
}
