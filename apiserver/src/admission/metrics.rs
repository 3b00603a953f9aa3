//! Upstream's admission metrics (`k8s.io/apiserver/pkg/admission/metrics`):
//! `apiserver_admission_controller_admission_duration_seconds` per plugin and
//! `apiserver_admission_step_admission_duration_seconds` per phase, both by
//! operation, phase (`admit`, `validate`) and whether the request was
//! rejected. (The webhook metrics are in [`super::webhook::metrics`].)

use std::sync::OnceLock;
use std::time::Duration;

use prometheus::{Histogram, HistogramOpts, HistogramVec};

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
    Admit = 0,
    Validate = 1,
}

impl Phase {
    fn as_str(self) -> &'static str {
        match self {
            Phase::Admit => "admit",
            Phase::Validate => "validate",
        }
    }
}

/// The latency histograms of one plugin (or of the whole phase), each label
/// combination looked up in the vector once and kept: recording a run is
/// then an index and an observation, not a hash of four labels under the
/// vector's lock, which every write paid once per plugin and phase. A
/// combination appears in `/metrics` only once observed, as upstream's.
pub struct Timers {
    /// The plugin's name; `None` for the phase totals.
    name: Option<&'static str>,
    slots: [OnceLock<Histogram>; SLOTS],
}

impl Default for Timers {
    fn default() -> Self {
        Timers::step()
    }
}

/// Operations (4) × phases (2) × rejected or not (2).
const SLOTS: usize = 16;

impl Timers {
    /// The histograms of the plugin called `name`.
    pub fn plugin(name: &'static str) -> Self {
        Timers {
            name: Some(name),
            slots: Default::default(),
        }
    }

    /// The histograms of whole phases.
    pub fn step() -> Self {
        Timers {
            name: None,
            slots: Default::default(),
        }
    }

    /// Records one run.
    pub fn observe(&self, op: Operation, phase: Phase, rejected: bool, elapsed: Duration) {
        let op_index = match op {
            Operation::Create => 0,
            Operation::Update => 1,
            Operation::Delete => 2,
            Operation::Connect => 3,
        };
        let slot = op_index * 4 + (phase as usize) * 2 + usize::from(rejected);
        self.slots[slot]
            .get_or_init(|| {
                let (op, rejected, phase) = (op.as_str(), bool_label(rejected), phase.as_str());
                match self.name {
                    Some(name) => metrics()
                        .controller
                        .with_label_values(&[name, op, rejected, phase]),
                    None => metrics().step.with_label_values(&[op, rejected, phase]),
                }
            })
            .observe(elapsed.as_secs_f64());
    }
}

fn bool_label(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The series a text exposition holds for `name="<plugin>"`.
    fn series_of(plugin: &str) -> Vec<String> {
        let text = String::from_utf8(crate::metrics::render()).expect("utf-8");
        text.lines()
            .filter(|l| l.contains(&format!("name=\"{plugin}\"")) && l.contains("_count"))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn each_label_combination_lands_in_its_own_series() {
        let t = Timers::plugin("TimersTestPlugin");
        assert!(
            series_of("TimersTestPlugin").is_empty(),
            "nothing before a run"
        );
        t.observe(
            Operation::Create,
            Phase::Validate,
            true,
            Duration::from_millis(1),
        );
        t.observe(
            Operation::Create,
            Phase::Validate,
            true,
            Duration::from_millis(1),
        );
        t.observe(
            Operation::Delete,
            Phase::Admit,
            false,
            Duration::from_millis(1),
        );
        let mut series = series_of("TimersTestPlugin");
        series.sort();
        assert_eq!(series.len(), 2, "{series:?}");
        assert!(
            series[0].contains("operation=\"CREATE\"")
                && series[0].contains("rejected=\"true\"")
                && series[0].contains("type=\"validate\"")
                && series[0].ends_with(" 2"),
            "{series:?}"
        );
        assert!(
            series[1].contains("operation=\"DELETE\"")
                && series[1].contains("rejected=\"false\"")
                && series[1].contains("type=\"admit\"")
                && series[1].ends_with(" 1"),
            "{series:?}"
        );
    }
}
