//! Upstream's audit metrics: `apiserver_audit_event_total`,
//! `apiserver_audit_error_total{plugin}`, `apiserver_audit_level_total{level}`
//! and `apiserver_audit_requests_rejected_total`.

use std::sync::OnceLock;

use prometheus::{IntCounter, IntCounterVec, Opts};

use crate::metrics::register;

struct AuditMetrics {
    events: IntCounter,
    errors: IntCounterVec,
    levels: IntCounterVec,
    rejected: IntCounter,
}

fn metrics() -> &'static AuditMetrics {
    static M: OnceLock<AuditMetrics> = OnceLock::new();
    M.get_or_init(|| AuditMetrics {
        events: register(
            IntCounter::new(
                "apiserver_audit_event_total",
                "Counter of audit events generated and sent to the audit backend.",
            )
            .expect("static metric definition"),
        ),
        errors: register(
            IntCounterVec::new(
                Opts::new(
                    "apiserver_audit_error_total",
                    "Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
                ),
                &["plugin"],
            )
            .expect("static metric definition"),
        ),
        levels: register(
            IntCounterVec::new(
                Opts::new(
                    "apiserver_audit_level_total",
                    "Counter of policy levels for audit events (1 per request).",
                ),
                &["level"],
            )
            .expect("static metric definition"),
        ),
        rejected: register(
            IntCounter::new(
                "apiserver_audit_requests_rejected_total",
                "Counter of apiserver requests rejected due to an error in audit logging backend.",
            )
            .expect("static metric definition"),
        ),
    })
}

/// One record handed to the backends.
pub fn event() {
    metrics().events.inc();
}

/// `n` records a backend (`log`, `webhook`) lost.
pub fn errors(plugin: &str, n: usize) {
    metrics()
        .errors
        .with_label_values(&[plugin])
        .inc_by(n as u64);
}

/// The level the policy chose for one request.
pub fn level(level: super::Level) {
    metrics().levels.with_label_values(&[level.as_str()]).inc();
}

/// A request failed because its record could not be stored.
pub fn rejected() {
    metrics().rejected.inc();
}
