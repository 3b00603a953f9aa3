//! `apiserver_flowcontrol_*`: upstream's names, labels and buckets.

use std::sync::OnceLock;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts};

use crate::metrics::register;

/// The metrics of priority and fairness.
pub struct Metrics {
    pub rejected: IntCounterVec,
    pub dispatched: IntCounterVec,
    pub inqueue: IntGaugeVec,
    pub executing_requests: IntGaugeVec,
    pub executing_seats: IntGaugeVec,
    pub wait_duration: HistogramVec,
    pub execution_seconds: HistogramVec,
    pub nominal_limit: IntGaugeVec,
    pub current_limit: IntGaugeVec,
    pub lower_limit: IntGaugeVec,
    pub upper_limit: IntGaugeVec,
    pub concurrency_limit: IntGaugeVec,
    pub seat_demand_high_watermark: IntGaugeVec,
    pub estimated_seats: HistogramVec,
}

const FS_PL: &[&str] = &["flow_schema", "priority_level"];
const PL: &[&str] = &["priority_level"];

fn gauge(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    register(IntGaugeVec::new(Opts::new(name, help), labels).expect("static metric definition"))
}

fn counter(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    register(IntCounterVec::new(Opts::new(name, help), labels).expect("static metric definition"))
}

fn histogram(name: &str, help: &str, labels: &[&str], buckets: Vec<f64>) -> HistogramVec {
    register(
        HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
            .expect("static metric definition"),
    )
}

/// The process's flow control metrics, registered on first use.
pub fn metrics() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(|| Metrics {
        rejected: counter(
            "apiserver_flowcontrol_rejected_requests_total",
            "Number of requests rejected by API Priority and Fairness subsystem",
            &["flow_schema", "priority_level", "reason"],
        ),
        dispatched: counter(
            "apiserver_flowcontrol_dispatched_requests_total",
            "Number of requests executed by API Priority and Fairness subsystem",
            FS_PL,
        ),
        inqueue: gauge(
            "apiserver_flowcontrol_current_inqueue_requests",
            "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
            FS_PL,
        ),
        executing_requests: gauge(
            "apiserver_flowcontrol_current_executing_requests",
            "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
            FS_PL,
        ),
        executing_seats: gauge(
            "apiserver_flowcontrol_current_executing_seats",
            "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
            FS_PL,
        ),
        wait_duration: histogram(
            "apiserver_flowcontrol_request_wait_duration_seconds",
            "Length of time a request spent waiting in its queue",
            &["execute", "flow_schema", "priority_level"],
            vec![0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0],
        ),
        execution_seconds: histogram(
            "apiserver_flowcontrol_request_execution_seconds",
            "Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem",
            &["flow_schema", "priority_level", "type"],
            vec![0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0],
        ),
        nominal_limit: gauge(
            "apiserver_flowcontrol_nominal_limit_seats",
            "Nominal number of execution seats configured for each priority level",
            PL,
        ),
        current_limit: gauge(
            "apiserver_flowcontrol_current_limit_seats",
            "current derived number of execution seats available to each priority level",
            PL,
        ),
        lower_limit: gauge(
            "apiserver_flowcontrol_lower_limit_seats",
            "Configured lower bound on number of execution seats available to each priority level",
            PL,
        ),
        upper_limit: gauge(
            "apiserver_flowcontrol_upper_limit_seats",
            "Configured upper bound on number of execution seats available to each priority level",
            PL,
        ),
        concurrency_limit: gauge(
            "apiserver_flowcontrol_request_concurrency_limit",
            "Nominal number of execution seats configured for each priority level",
            PL,
        ),
        seat_demand_high_watermark: gauge(
            "apiserver_flowcontrol_demand_seats_high_watermark",
            "High watermark, over last adjustment period, of demand_seats",
            PL,
        ),
        estimated_seats: histogram(
            "apiserver_flowcontrol_work_estimated_seats",
            "Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
            FS_PL,
            vec![1.0, 2.0, 4.0, 10.0],
        ),
    })
}
