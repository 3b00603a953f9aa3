//! `batch/v1`: CronJobs and Jobs.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::table::{human_duration, lookup, Column};
use k8s_openapi::api::batch::v1;
use serde_json::{json, Value};

use super::columns::{array_at, format_label_selector, int_at, int_col, names_of, since, str_or};
use super::kind;
use super::workloads::WorkloadStrategy;

/// batch/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        kind::<v1::CronJob>()
            .short_names(&["cj"])
            .categories(&["all"])
            .with_status()
            .columns(vec![
                Column::path("Schedule", "spec.schedule"),
                Column::func("Timezone", "string", |o| {
                    json!(str_or(o, "spec.timeZone", "<none>"))
                }),
                Column::func("Suspend", "boolean", |o| {
                    json!(match lookup(o, "spec.suspend").and_then(Value::as_bool) {
                        Some(true) => "True",
                        Some(false) => "False",
                        None => "<unset>",
                    })
                }),
                int_col("Active", |o| json!(array_at(o, "status.active").len())),
                Column::func("Last Schedule", "string", |o| {
                    json!(since(o, "status.lastScheduleTime"))
                }),
                Column::age(),
                Column::func("Containers", "string", |o| {
                    json!(names_of(
                        array_at(o, "spec.jobTemplate.spec.template.spec.containers"),
                        "name"
                    ))
                })
                .wide(),
                Column::func("Images", "string", |o| {
                    json!(names_of(
                        array_at(o, "spec.jobTemplate.spec.template.spec.containers"),
                        "image"
                    ))
                })
                .wide(),
                Column::func("Selector", "string", |o| {
                    json!(format_label_selector(lookup(
                        o,
                        "spec.jobTemplate.spec.selector"
                    )))
                })
                .wide(),
            ])
            .strategy(WorkloadStrategy::CRON_JOB),
        kind::<v1::Job>()
            .categories(&["all"])
            .with_status()
            .selectable_fields(&["status.successful"])
            .columns(vec![
                Column::func("Status", "string", job_status),
                Column::func("Completions", "string", job_completions),
                Column::func("Duration", "string", job_duration),
                Column::age(),
                Column::func("Containers", "string", |o| {
                    json!(names_of(
                        array_at(o, "spec.template.spec.containers"),
                        "name"
                    ))
                })
                .wide(),
                Column::func("Images", "string", |o| {
                    json!(names_of(
                        array_at(o, "spec.template.spec.containers"),
                        "image"
                    ))
                })
                .wide(),
                Column::func("Selector", "string", |o| {
                    json!(format_label_selector(lookup(o, "spec.selector")))
                })
                .wide(),
            ])
            .strategy(WorkloadStrategy::JOB),
    ]
}

fn has_condition(o: &Value, kind: &str) -> bool {
    array_at(o, "status.conditions").iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some(kind)
            && c.get("status").and_then(Value::as_str) == Some("True")
    })
}

fn job_status(o: &Value) -> Value {
    for c in [
        "Failed",
        "Complete",
        "Suspended",
        "FailureTarget",
        "SuccessCriteriaMet",
    ] {
        if has_condition(o, c) {
            return json!(c);
        }
    }
    if lookup(o, "metadata.deletionTimestamp").is_some() {
        return json!("Terminating");
    }
    json!("Running")
}

fn job_completions(o: &Value) -> Value {
    let succeeded = int_at(o, "status.succeeded");
    match lookup(o, "spec.completions").and_then(Value::as_i64) {
        Some(c) => json!(format!("{succeeded}/{c}")),
        None => {
            let parallelism = int_at(o, "spec.parallelism");
            if parallelism > 1 {
                json!(format!("{succeeded}/1 of {parallelism}"))
            } else {
                json!(format!("{succeeded}/1"))
            }
        }
    }
}

fn job_duration(o: &Value) -> Value {
    let ts = |p: &str| {
        lookup(o, p)
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<jiff::Timestamp>().ok())
    };
    match (ts("status.startTime"), ts("status.completionTime")) {
        (None, _) => json!(""),
        (Some(_), None) => json!(since(o, "status.startTime")),
        (Some(s), Some(c)) => json!(human_duration(c.as_second() - s.as_second())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_cells() {
        let j = json!({"spec": {"completions": 3}, "status": {"succeeded": 1}});
        assert_eq!(job_completions(&j), json!("1/3"));
        assert_eq!(job_status(&j), json!("Running"));
        let done = json!({"status": {"conditions": [{"type": "Complete", "status": "True"}],
            "startTime": "2024-01-01T00:00:00Z", "completionTime": "2024-01-01T00:00:05Z"}});
        assert_eq!(job_status(&done), json!("Complete"));
        assert_eq!(job_duration(&done), json!("5s"));
        assert_eq!(int_at(&done, "spec.parallelism"), 0);
    }
}
