//! Prometheus metrics of a tier, served at `/metrics` in the text format
//! with upstream's names, labels and buckets so that existing dashboards
//! and alerts read them unchanged. As upstream's `legacyregistry`, there is
//! one registry per process; each concern defines its metrics next to its
//! code and registers them here once.
//!
//! `/metrics` is a non-resource path: RBAC lets `system:monitoring` (and
//! cluster admins) read it, as upstream's bootstrap policy does.

pub mod process;

/// The metrics crate, for tiers and external API servers defining their own.
pub use prometheus;

use std::sync::OnceLock;

use prometheus::core::Collector;
use prometheus::{Encoder, Registry, TextEncoder};

/// The process's registry.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let registry = Registry::new();
        if let Err(e) = registry.register(Box::new(process::ProcessCollector::new())) {
            tracing::warn!(error = %e, "registering the process metrics");
        }
        registry
    })
}

/// Registers `collector` (a metric or metric vector) and returns it; a
/// second registration of the same metric is ignored.
pub fn register<C: Collector + Clone + 'static>(collector: C) -> C {
    if let Err(e) = registry().register(Box::new(collector.clone())) {
        tracing::debug!(error = %e, "metric already registered");
    }
    collector
}

/// The buckets of upstream's request and etcd request latency histograms
/// (seconds), chosen for the API call latency SLOs.
pub const LATENCY_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// `count` buckets from `start`, each `factor` times the one before
/// (upstream's `ExponentialBuckets`).
pub fn exponential_buckets(start: f64, factor: f64, count: usize) -> Vec<f64> {
    std::iter::successors(Some(start), |b| Some(b * factor))
        .take(count)
        .collect()
}

/// The content type of [`render`]'s output.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Every registered metric in the Prometheus text format.
pub fn render() -> Vec<u8> {
    let mut out = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&registry().gather(), &mut out) {
        tracing::warn!(error = %e, "encoding metrics");
    }
    out
}

/// The `/metrics` response.
pub fn response() -> crate::body::Response {
    let mut resp = http::Response::new(crate::body::full(render()));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(CONTENT_TYPE),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_registered_metrics_once() {
        let c = prometheus::IntCounterVec::new(
            prometheus::Opts::new("test_metrics_render_total", "A test counter."),
            &["kind"],
        )
        .expect("counter");
        let c = register(c);
        let _ = register(c.clone());
        c.with_label_values(&["a"]).inc();
        let text = String::from_utf8(render()).expect("utf-8");
        assert!(
            text.contains("# TYPE test_metrics_render_total counter"),
            "{text}"
        );
        assert!(
            text.contains("test_metrics_render_total{kind=\"a\"} 1"),
            "{text}"
        );
    }
}
