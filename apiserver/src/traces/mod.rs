//! Distributed tracing of requests (upstream's `--tracing-config-file`,
//! `k8s.io/component-base/tracing`): one server span per request per tier,
//! linked across the tiers by the W3C `traceparent` header, exported over
//! OTLP.
//!
//! - [`context`]: trace and span IDs, `traceparent` parsing and writing;
//! - [`config`]: the `TracingConfiguration` file (endpoint, sampling rate);
//! - [`otlp`]: the exporter (OTLP/HTTP with JSON bodies, batched);
//! - the filter that opens and ends spans is [`crate::filters::tracing`].
//!
//! Sampling is upstream's: a request whose `traceparent` says sampled is
//! traced (so one trace spans every tier), others with probability
//! `samplingRatePerMillion / 10⁶`.

pub mod config;
pub mod context;
pub mod otlp;

use std::sync::Arc;
use std::time::SystemTime;

pub use context::SpanContext;

/// A finished span, as exported.
#[derive(Clone, Debug)]
pub struct Span {
    pub context: SpanContext,
    pub parent_span_id: Option<[u8; 8]>,
    pub name: &'static str,
    pub start: SystemTime,
    pub end: SystemTime,
    /// String attributes (`url.path`, `user_agent.original`, ...).
    pub attributes: Vec<(&'static str, String)>,
    /// `http.response.status_code`.
    pub status_code: u16,
}

/// Where finished spans go.
pub trait SpanSink: Send + Sync {
    /// Takes one span (never blocks; may drop it when overloaded).
    fn export(&self, span: Span);
}

/// A tier's tracing: whether and how it samples, and its exporter.
pub struct Tracer {
    pub sampling_rate_per_million: u32,
    pub sink: Arc<dyn SpanSink>,
}

impl Tracer {
    /// Whether to trace a request whose parent (if any) is `parent`.
    pub fn sample(&self, parent: Option<&SpanContext>) -> bool {
        match parent {
            Some(p) => p.sampled,
            None => {
                self.sampling_rate_per_million >= 1_000_000
                    || (self.sampling_rate_per_million > 0
                        && rand::random::<u32>() % 1_000_000 < self.sampling_rate_per_million)
            }
        }
    }
}
