//! The admission webhook metrics, under upstream's names, labels and
//! buckets (`k8s.io/apiserver/pkg/admission/metrics`): each webhook's calls,
//! latency, rejections and fail-open events, so a slow or failing webhook
//! shows up on the dashboards operators already have.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts};

/// Upstream's latency buckets for webhook admission.
const BUCKETS: &[f64] = &[0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 25.0];

struct Metrics {
    duration: HistogramVec,
    requests: IntCounterVec,
    rejections: IntCounterVec,
    fail_open: IntCounterVec,
}

fn metrics() -> Option<&'static Metrics> {
    static METRICS: OnceLock<Option<Metrics>> = OnceLock::new();
    METRICS
        .get_or_init(|| {
            let duration = HistogramVec::new(
                HistogramOpts::new(
                    "apiserver_admission_webhook_admission_duration_seconds",
                    "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
                )
                .buckets(BUCKETS.to_vec()),
                &["name", "type", "operation", "rejected"],
            )
            .ok()?;
            let requests = IntCounterVec::new(
                Opts::new(
                    "apiserver_admission_webhook_request_total",
                    "Admission webhook request total, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
                ),
                &["name", "type", "operation", "code", "rejected"],
            )
            .ok()?;
            let rejections = IntCounterVec::new(
                Opts::new(
                    "apiserver_admission_webhook_rejection_count",
                    "Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
                ),
                &["name", "type", "operation", "error_type", "rejection_code"],
            )
            .ok()?;
            let fail_open = IntCounterVec::new(
                Opts::new(
                    "apiserver_admission_webhook_fail_open_count",
                    "Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).",
                ),
                &["name", "type"],
            )
            .ok()?;
            Some(Metrics {
                duration: crate::metrics::register(duration),
                requests: crate::metrics::register(requests),
                rejections: crate::metrics::register(rejections),
                fail_open: crate::metrics::register(fail_open),
            })
        })
        .as_ref()
}

/// Upstream's `type` label: `admit` for mutating, `validating`.
fn kind(mutating: bool) -> &'static str {
    if mutating {
        "admit"
    } else {
        "validating"
    }
}

/// How a call ended, for the metrics.
pub enum Outcome {
    /// The webhook answered; `allowed` and the code of a denial.
    Answered { allowed: bool, code: u16 },
    /// It could not be called or answered wrongly (`code` of the error).
    CallingError { code: u16, rejected: bool },
}

/// Records one webhook call.
pub fn observe(name: &str, mutating: bool, operation: &str, took: Duration, outcome: &Outcome) {
    let Some(m) = metrics() else { return };
    let t = kind(mutating);
    let (code, rejected) = match outcome {
        Outcome::Answered { allowed, code } => (*code, !allowed),
        Outcome::CallingError { code, rejected } => (*code, *rejected),
    };
    let rejected_label = if rejected { "true" } else { "false" };
    m.duration
        .with_label_values(&[name, t, operation, rejected_label])
        .observe(took.as_secs_f64());
    let code_label = code.min(600).to_string();
    m.requests
        .with_label_values(&[name, t, operation, &code_label, rejected_label])
        .inc();
    if rejected {
        let (error_type, rejection_code) = match outcome {
            Outcome::Answered { code, .. } => ("no_error", (*code).min(600).to_string()),
            Outcome::CallingError { .. } => ("calling_webhook_error", "0".to_string()),
        };
        m.rejections
            .with_label_values(&[name, t, operation, error_type, &rejection_code])
            .inc();
    }
}

/// Records a call that failed open (`failurePolicy: Ignore`).
pub fn fail_open(name: &str, mutating: bool) {
    if let Some(m) = metrics() {
        m.fail_open.with_label_values(&[name, kind(mutating)]).inc();
    }
}
