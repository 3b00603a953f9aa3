//! Prometheus metrics of a tier, served at `/metrics` in the text format
//! with upstream's names, labels and buckets so that existing dashboards
//! and alerts read them unchanged. As upstream's `legacyregistry`, there is
//! one registry per process; each concern defines its metrics next to its
//! code and registers them here once.
//!
//! `/metrics` is a non-resource path: RBAC lets `system:monitoring` (and
//! cluster admins) read it, as upstream's bootstrap policy does.

use std::sync::OnceLock;

use prometheus::core::Collector;
use prometheus::{Encoder, Registry, TextEncoder};

/// The process's registry.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::new)
}

/// Registers `collector` (a metric or metric vector) and returns it; a
/// second registration of the same metric is ignored.
pub fn register<C: Collector + Clone + 'static>(collector: C) -> C {
    if let Err(e) = registry().register(Box::new(collector.clone())) {
        tracing::debug!(error = %e, "metric already registered");
    }
    collector
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
