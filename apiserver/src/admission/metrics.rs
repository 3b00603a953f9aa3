//! Upstream's admission metrics (`k8s.io/apiserver/pkg/admission/metrics`):
//! `apiserver_admission_controller_admission_duration_seconds` per plugin and
//! `apiserver_admission_step_admission_duration_seconds` per phase, both by
//! operation, phase (`admit`, `validate`) and whether the request was
//! rejected. (The webhook metrics are in [`super::webhook::metrics`].)

use std::sync::OnceLock;
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec};

use crate::metrics::register;
use crate::registry::admit::Operation;

/// Upstream's buckets for admission latencies.
const BUCKETS: [f64; 6] = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5];

struct AdmissionMetrics {
    controller: HistogramVec,
    step: HistogramVec,
}

fn metrics() -> &'static AdmissionMetrics {
    static M: OnceLock<AdmissionMetrics> = OnceLock::new();
    M.get_or_init(|| AdmissionMetrics {
        controller: register(
            HistogramVec::new(
                HistogramOpts::new(
                    "apiserver_admission_controller_admission_duration_seconds",
                    "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
                )
                .buckets(BUCKETS.to_vec()),
                &["name", "operation", "rejected", "type"],
            )
            .expect("static metric definition"),
        ),
        step: register(
            HistogramVec::new(
                HistogramOpts::new(
                    "apiserver_admission_step_admission_duration_seconds",
                    "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
                )
                .buckets(BUCKETS.to_vec()),
                &["operation", "rejected", "type"],
            )
            .expect("static metric definition"),
        ),
    })
}

/// The phase of admission a latency belongs to.
#[derive(Clone, Copy, Debug)]
pub enum Phase {
    Admit,
    Validate,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Phase::Admit => "admit",
            Phase::Validate => "validate",
        }
    }
}

/// Records one plugin's run.
pub fn plugin(name: &str, op: Operation, phase: Phase, rejected: bool, elapsed: Duration) {
    metrics()
        .controller
        .with_label_values(&[name, op.as_str(), bool_label(rejected), phase.as_str()])
        .observe(elapsed.as_secs_f64());
}

/// Records one whole phase.
pub fn step(op: Operation, phase: Phase, rejected: bool, elapsed: Duration) {
    metrics()
        .step
        .with_label_values(&[op.as_str(), bool_label(rejected), phase.as_str()])
        .observe(elapsed.as_secs_f64());
}

fn bool_label(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}
