//! The OTLP exporter: finished spans are queued (up to 2048; beyond that
//! they are dropped and counted in the log) and a background task POSTs
//! them in batches of up to 512, at the latest a second after the first, as
//! OTLP/HTTP JSON (`POST <endpoint>/v1/traces`, the `ExportTraceServiceRequest`
//! in the protobuf JSON mapping) to the collector of the configuration.
//!
//! Upstream speaks OTLP over gRPC to `endpoint` (default port 4317); this
//! exporter speaks OTLP over HTTP, which collectors serve on port 4318, so
//! `endpoint` names the collector's HTTP receiver (`host:port` or
//! `http://host:port`).

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::context::span_id_hex;
use super::{Span, SpanSink};
use crate::body::{self, Body};

const QUEUE: usize = 2048;
const BATCH: usize = 512;
const BATCH_WAIT: Duration = Duration::from_secs(1);

/// The exporter of one tier (`service.name` = the tier's name).
pub struct OtlpExporter {
    tx: mpsc::Sender<Span>,
}

impl OtlpExporter {
    /// Starts the exporter's task on the current runtime.
    pub fn start(endpoint: &str, service_name: &str) -> anyhow::Result<Self> {
        let base = if endpoint.starts_with("http://") {
            endpoint.trim_end_matches('/').to_string()
        } else if endpoint.starts_with("https://") {
            anyhow::bail!(
                "tracing endpoint {endpoint}: only plain OTLP/HTTP (http://) collectors are served"
            );
        } else {
            format!("http://{}", endpoint.trim_end_matches('/'))
        };
        let uri: http::Uri = format!("{base}/v1/traces")
            .parse()
            .map_err(|e| anyhow::anyhow!("tracing endpoint {endpoint}: {e}"))?;
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(uri, service_name.to_string(), rx));
        Ok(OtlpExporter { tx })
    }
}

impl SpanSink for OtlpExporter {
    fn export(&self, span: Span) {
        if self.tx.try_send(span).is_err() {
            tracing::debug!("trace export queue full; span dropped");
        }
    }
}

fn nanos(t: SystemTime) -> String {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        .to_string()
}

/// One span in OTLP's JSON mapping.
fn span_json(s: &Span) -> Value {
    let mut attributes: Vec<Value> = s
        .attributes
        .iter()
        .map(|(k, v)| json!({"key": k, "value": {"stringValue": v}}))
        .collect();
    attributes.push(json!({"key": "http.response.status_code", "value": {"intValue": s.status_code.to_string()}}));
    let mut span = json!({
        "traceId": s.context.trace_id_hex(),
        "spanId": s.context.span_id_hex(),
        "name": s.name,
        // SPAN_KIND_SERVER
        "kind": 2,
        "startTimeUnixNano": nanos(s.start),
        "endTimeUnixNano": nanos(s.end),
        "attributes": attributes,
        // STATUS_CODE_ERROR for 5xx, else UNSET.
        "status": {"code": if s.status_code >= 500 { 2 } else { 0 }},
    });
    if let Some(p) = &s.parent_span_id {
        span["parentSpanId"] = json!(span_id_hex(p));
    }
    span
}

/// An `ExportTraceServiceRequest` of `spans` from `service`.
pub fn export_request(service: &str, spans: &[Span]) -> Value {
    json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{
            "scope": {"name": "k8s.io/apiserver"},
            "spans": spans.iter().map(span_json).collect::<Vec<_>>(),
        }],
    }]})
}

async fn run(uri: http::Uri, service: String, mut rx: mpsc::Receiver<Span>) {
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + BATCH_WAIT;
        while batch.len() < BATCH {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(s)) => batch.push(s),
                _ => break,
            }
        }
        let body = Bytes::from(export_request(&service, &batch).to_string());
        let req = http::Request::post(uri.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body::full(body));
        let Ok(req) = req else { continue };
        match tokio::time::timeout(Duration::from_secs(10), client.request(req)).await {
            Ok(Ok(resp)) if resp.status().is_success() => {}
            Ok(Ok(resp)) => {
                tracing::warn!(status = %resp.status(), spans = batch.len(), "the trace collector refused spans")
            }
            Ok(Err(e)) => tracing::warn!(error = %e, spans = batch.len(), "exporting spans failed"),
            Err(_) => tracing::warn!(spans = batch.len(), "exporting spans timed out"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::SpanContext;

    #[test]
    fn spans_are_written_in_otlp_json() {
        let parent = SpanContext::from_traceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        .unwrap();
        let ctx = SpanContext::child_of(Some(&parent), true);
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(2);
        let span = Span {
            context: ctx,
            parent_span_id: Some(parent.span_id),
            name: "KubernetesAPI",
            start: t,
            end: t + Duration::from_millis(3),
            attributes: vec![("http.request.method", "GET".into())],
            status_code: 503,
        };
        let v = export_request("kube-core-apiserver", &[span]);
        let s = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(
            v["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"],
            "kube-core-apiserver"
        );
        assert_eq!(s["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(s["parentSpanId"], "00f067aa0ba902b7");
        assert_eq!(s["startTimeUnixNano"], "2000000000");
        assert_eq!(s["endTimeUnixNano"], "2003000000");
        assert_eq!(s["status"]["code"], 2);
        assert_eq!(s["kind"], 2);
    }
}
