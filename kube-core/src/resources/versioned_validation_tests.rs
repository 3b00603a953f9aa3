//! Table-driven validation tests of kinds served at several versions
//! (HorizontalPodAutoscalers at autoscaling/v1 and v2, Events at core/v1
//! and events.k8s.io/v1): each case names the version it is sent to and the
//! field path and message upstream reports.

use apiserver::registry::resource::ResourceDef;
use serde_json::{json, Value};

fn def(group: &str, version: &str, resource: &str) -> ResourceDef {
    super::definitions()
        .into_iter()
        .find(|d| d.group == group && d.version == version && d.resource == resource)
        .unwrap_or_else(|| panic!("{group}/{version}/{resource} is declared"))
}

/// Create-time defaulting and kind validation; the rendered errors.
fn create_errors(def: &ResourceDef, mut obj: Value) -> Vec<String> {
    def.strategy.prepare_for_create(&mut obj);
    def.strategy
        .validate(&obj)
        .into_iter()
        .map(|e| e.to_string())
        .collect()
}

fn update_errors(def: &ResourceDef, old: &Value, mut new: Value) -> Vec<String> {
    def.strategy.prepare_for_update(&mut new, old);
    def.strategy
        .validate_update(&new, old)
        .into_iter()
        .map(|e| e.to_string())
        .collect()
}

/// Merges `patch` into `base` (objects merged key by key, `null` removes).
fn merged(base: &Value, patch: &Value) -> Value {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            let mut out = b.clone();
            for (k, v) in p {
                if v.is_null() {
                    out.remove(k);
                } else {
                    let cur = out.get(k).cloned().unwrap_or(Value::Null);
                    out.insert(k.clone(), merged(&cur, v));
                }
            }
            Value::Object(out)
        }
        _ => patch.clone(),
    }
}

fn hpa_v1() -> Value {
    json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "namespace": "d"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}})
}

fn hpa_v2() -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "namespace": "d"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "maxReplicas": 3,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50}}}]}})
}

/// (version, patch, one expected rendered error).
fn hpa_cases() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "v1",
            json!({"spec": {"targetCPUUtilizationPercentage": -1}}),
            "spec.metrics[0].resource.target.averageUtilization: Invalid value: -1: must be greater than 0",
        ),
        (
            "v1",
            json!({"spec": {"maxReplicas": 0}}),
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
        ),
        (
            "v1",
            json!({"spec": {"minReplicas": 5}}),
            "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`",
        ),
        (
            "v1",
            json!({"spec": {"minReplicas": 0}}),
            "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
        ),
        (
            "v1",
            json!({"spec": {"scaleTargetRef": {"kind": ""}}}),
            "spec.scaleTargetRef.kind: Required value",
        ),
        (
            "v1",
            json!({"spec": {"scaleTargetRef": {"name": "a/b"}}}),
            "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
        ),
        // Another metric kept in the v1 annotation comes first.
        (
            "v1",
            json!({"metadata": {"annotations": {"autoscaling.alpha.kubernetes.io/metrics":
                "[{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\",\"targetAverageValue\":\"10\"}}]"}},
                "spec": {"targetCPUUtilizationPercentage": 0}}),
            "spec.metrics[1].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
        ),
        (
            "v2",
            json!({"spec": {"maxReplicas": -2}}),
            "spec.maxReplicas: Invalid value: -2: must be greater than 0",
        ),
        (
            "v2",
            json!({"spec": {"metrics": [{"type": "Pods", "pods": {"metric": {"name": "qps"},
                "target": {"type": "Value"}}}]}}),
            "spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue",
        ),
        (
            "v2",
            json!({"spec": {"metrics": [{"type": "Resource", "pods": {"metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": "1"}}}]}}),
            "spec.metrics[0].resource: Required value: must populate information for the given metric source",
        ),
        (
            "v2",
            json!({"spec": {"metrics": [{"type": "Foo"}]}}),
            "spec.metrics[0].type: Unsupported value: \"Foo\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
        ),
        (
            "v2",
            json!({"spec": {"metrics": [{"type": "External", "external": {"metric": {"name": "q"},
                "target": {"type": "Value", "value": "-1"}}}]}}),
            "spec.metrics[0].external.target.value: Invalid value: \"-1\": must be positive",
        ),
        (
            "v2",
            json!({"spec": {"metrics": [{"type": "Object", "object": {"metric": {"name": "q"},
                "describedObject": {"kind": "Service", "name": "s"}, "target": {"type": "Bogus", "value": "1"}}}]}}),
            "spec.metrics[0].object.target.type: Invalid value: \"Bogus\": must be either Utilization, Value, or AverageValue",
        ),
        (
            "v2",
            json!({"spec": {"behavior": {"scaleUp": {"stabilizationWindowSeconds": 4000,
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 15}]}}}}),
            "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600",
        ),
        (
            "v2",
            json!({"spec": {"behavior": {"scaleDown": {"selectPolicy": "Any", "policies": []}}}}),
            "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy",
        ),
        (
            "v2",
            json!({"spec": {"behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 1801}]}}}}),
            "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
        ),
    ]
}

#[test]
fn hpa_errors_at_both_versions() {
    for (version, base) in [("v1", hpa_v1()), ("v2", hpa_v2())] {
        let errs = create_errors(
            &def("autoscaling", version, "horizontalpodautoscalers"),
            base,
        );
        assert!(errs.is_empty(), "{version}: valid object refused: {errs:?}");
    }
    let mut failures = Vec::new();
    for (version, patch, want) in hpa_cases() {
        let base = if version == "v1" { hpa_v1() } else { hpa_v2() };
        let d = def("autoscaling", version, "horizontalpodautoscalers");
        let errs = create_errors(&d, merged(&base, &patch));
        if !errs.iter().any(|e| e == want) {
            failures.push(format!("{version} {patch}: want {want}, got {errs:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hpa_update_and_status() {
    let d = def("autoscaling", "v2", "horizontalpodautoscalers");
    let old = hpa_v2();
    // An object at minReplicas 0 may stay there, with an External metric.
    let zero = merged(&old, &json!({"spec": {"minReplicas": 0}}));
    let errs = update_errors(&d, &zero, zero.clone());
    assert_eq!(
        errs,
        vec!["spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"]
    );
    let errs = update_errors(&d, &old, zero);
    assert!(errs
        .iter()
        .any(|e| e.starts_with("spec.minReplicas: Invalid value: 0")));
    let bad = merged(
        &old,
        &json!({"status": {"currentReplicas": -1, "desiredReplicas": 1}}),
    );
    let errs: Vec<String> = d
        .strategy
        .validate_status_update(&bad, &old)
        .into_iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        errs,
        vec!["status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"]
    );
}

fn event_v1() -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "d"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
        "action": "Sync", "reason": "Synced", "type": "Normal", "note": "done",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "d"}})
}

fn core_event() -> Value {
    json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "d"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "d"},
        "reason": "Started", "message": "started", "type": "Normal", "count": 1,
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
        "source": {"component": "kubelet"}})
}

/// (group, patch, one expected rendered error).
fn event_cases() -> Vec<(&'static str, Value, String)> {
    let long = "x".repeat(129);
    vec![
        ("events.k8s.io", json!({"reportingController": null}), "reportingController: Required value".into()),
        ("events.k8s.io", json!({"reportingInstance": null}), "reportingInstance: Required value".into()),
        ("events.k8s.io", json!({"action": null}), "action: Required value".into()),
        ("events.k8s.io", json!({"action": long}), "action: Invalid value: \"\": can have at most 128 characters".into()),
        ("events.k8s.io", json!({"reason": long}), "reason: Invalid value: \"\": can have at most 128 characters".into()),
        ("events.k8s.io", json!({"note": "n".repeat(1025)}), "message: Invalid value: \"\": can have at most 1024 characters".into()),
        ("events.k8s.io", json!({"type": "Info"}), "type: Invalid value: \"\": has invalid value: Info".into()),
        ("events.k8s.io", json!({"eventTime": null, "regarding": {"namespace": "other"}}), "eventTime: Required value".into()),
        ("events.k8s.io", json!({"deprecatedCount": 2}), "count: Invalid value: \"\": needs to be unset".into()),
        ("events.k8s.io", json!({"deprecatedSource": {"component": "c"}}), "source: Invalid value: \"\": needs to be unset".into()),
        ("events.k8s.io", json!({"deprecatedFirstTimestamp": "2026-01-01T00:00:00Z"}), "firstTimestamp: Invalid value: \"\": needs to be unset".into()),
        ("events.k8s.io", json!({"series": {"count": 1}}), "series.count: Invalid value: \"\": should be at least 2".into()),
        ("events.k8s.io", json!({"series": {"count": 3}}), "series.lastObservedTime: Required value".into()),
        ("events.k8s.io", json!({"regarding": {"namespace": ""}}), "involvedObject.namespace: Invalid value: \"\": does not match event.namespace".into()),
        ("events.k8s.io", json!({"reportingController": "bad controller"}), "reportingController: Invalid value: \"bad controller\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".into()),
        // core/v1: legacy rules only, the controller under its core name.
        ("", json!({"involvedObject": {"namespace": "other"}}), "involvedObject.namespace: Invalid value: \"other\": does not match event.namespace".into()),
        ("", json!({"eventTime": "2026-01-01T00:00:00.000000Z", "reportingInstance": "i", "action": "A"}), "reportingComponent: Required value".into()),
    ]
}

#[test]
fn event_errors_at_both_versions() {
    let strict = def("events.k8s.io", "v1", "events");
    let core = def("", "v1", "events");
    assert!(
        create_errors(&strict, event_v1()).is_empty(),
        "{:?}",
        create_errors(&strict, event_v1())
    );
    assert!(
        create_errors(&core, core_event()).is_empty(),
        "{:?}",
        create_errors(&core, core_event())
    );
    // core/v1 keeps its lenient rules: no eventTime, deprecated fields set.
    let mut failures = Vec::new();
    for (group, patch, want) in event_cases() {
        let (d, base) = if group.is_empty() {
            (&core, core_event())
        } else {
            (&strict, event_v1())
        };
        let errs = create_errors(d, merged(&base, &patch));
        if !errs.iter().any(|e| *e == want) {
            failures.push(format!("{group} {patch}: want {want}, got {errs:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn event_updates() {
    let strict = def("events.k8s.io", "v1", "events");
    let old = event_v1();
    let same_micro = merged(
        &old,
        &json!({"eventTime": "2026-01-01T00:00:00.000000400Z"}),
    );
    assert!(update_errors(&strict, &old, same_micro).is_empty());
    let new = merged(
        &old,
        &json!({"note": "changed", "action": "Other", "reportingController": "x",
        "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}}),
    );
    let errs = update_errors(&strict, &old, new);
    assert_eq!(
        errs,
        vec![
            "message: Invalid value: \"changed\": field is immutable",
            "action: Invalid value: \"Other\": field is immutable",
            "reportingController: Invalid value: \"x\": field is immutable",
        ]
    );
    let later = merged(&old, &json!({"eventTime": "2026-01-01T00:00:01.000000Z"}));
    assert_eq!(
        update_errors(&strict, &old, later),
        vec!["eventTime: Invalid value: \"2026-01-01T00:00:01.000000Z\": field is immutable"]
    );
    // core/v1 updates may change anything the legacy rules accept.
    let core = def("", "v1", "events");
    let old = core_event();
    let new = merged(&old, &json!({"message": "again", "count": 2}));
    assert!(update_errors(&core, &old, new).is_empty());
}
