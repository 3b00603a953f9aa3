//! `autoscaling/v1`: HorizontalPodAutoscalers, served from the autoscaling/v2
//! storage (upstream 1.33 stores HPAs as autoscaling/v2, its preferred
//! version) with upstream's conversion.
//!
//! v1 knows only a CPU utilization target. As upstream, the first v2
//! `Resource` metric on `cpu` with an `averageUtilization` target becomes
//! `spec.targetCPUUtilizationPercentage`; everything v1 cannot express
//! travels in annotations so a read-modify-write through v1 keeps it:
//! `autoscaling.alpha.kubernetes.io/metrics` (the other metrics, in the
//! v1-era `MetricSpec` shape), `.../current-metrics` (`status.currentMetrics`),
//! `.../behavior` (`spec.behavior`, with the Go field names upstream writes)
//! and `.../conditions` (`status.conditions`). Writing a v1 object lifts them
//! back out and drops the annotations; a v1 object without any metric gets
//! upstream's default target of 80% CPU.

use std::sync::Arc;

use apiserver::registry::resource::ResourceDef;
use serde_json::{json, Map, Value};

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const ROUND_TRIP: [&str; 4] = [METRICS, CURRENT_METRICS, BEHAVIOR, CONDITIONS];
/// Upstream's `DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// autoscaling/v1 HorizontalPodAutoscaler, served from `v2` (the storage
/// version's declaration).
pub fn definition(v2: &ResourceDef) -> ResourceDef {
    super::served_as::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>(
        v2,
        // Never fails: malformed annotations are ignored, as upstream does.
        Arc::new(|o: &Value| Ok(v1_to_v2(o))),
        Arc::new(|o: &Value| Ok(v2_to_v1(o))),
    )
}

fn obj(v: Option<&Value>) -> Map<String, Value> {
    match v {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    }
}

/// Copies `from[src]` to `to[dst]` when present.
fn copy(from: &Map<String, Value>, src: &str, to: &mut Map<String, Value>, dst: &str) {
    if let Some(v) = from.get(src) {
        if !v.is_null() {
            to.insert(dst.into(), v.clone());
        }
    }
}

/// `metadata` without the round-trip annotations.
fn metadata_without_round_trip(o: &Value) -> Map<String, Value> {
    let mut meta = obj(o.get("metadata"));
    if let Some(Value::Object(ann)) = meta.get_mut("annotations") {
        for k in ROUND_TRIP {
            ann.remove(k);
        }
        if ann.is_empty() {
            meta.remove("annotations");
        }
    }
    meta
}

fn is_cpu_utilization_target(m: &Value) -> bool {
    m.get("type").and_then(Value::as_str) == Some("Resource")
        && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
        && m.pointer("/resource/target/averageUtilization")
            .is_some_and(|v| !v.is_null())
}

/// The storage form (v2) seen through v1.
pub fn v2_to_v1(v2: &Value) -> Value {
    let mut meta = metadata_without_round_trip(v2);
    let spec2 = obj(v2.get("spec"));
    let status2 = obj(v2.get("status"));
    let metrics: Vec<Value> = spec2
        .get("metrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();

    let mut spec = Map::new();
    copy(&spec2, "scaleTargetRef", &mut spec, "scaleTargetRef");
    copy(&spec2, "minReplicas", &mut spec, "minReplicas");
    copy(&spec2, "maxReplicas", &mut spec, "maxReplicas");
    if let Some(m) = metrics.iter().find(|m| is_cpu_utilization_target(m)) {
        if let Some(u) = m.pointer("/resource/target/averageUtilization") {
            spec.insert("targetCPUUtilizationPercentage".into(), u.clone());
        }
    }

    let mut status = Map::new();
    copy(
        &status2,
        "observedGeneration",
        &mut status,
        "observedGeneration",
    );
    copy(&status2, "lastScaleTime", &mut status, "lastScaleTime");
    status.insert(
        "currentReplicas".into(),
        status2.get("currentReplicas").cloned().unwrap_or(json!(0)),
    );
    status.insert(
        "desiredReplicas".into(),
        status2.get("desiredReplicas").cloned().unwrap_or(json!(0)),
    );
    let current: Vec<Value> = status2
        .get("currentMetrics")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for m in &current {
        if m.get("type").and_then(Value::as_str) == Some("Resource")
            && m.pointer("/resource/name").and_then(Value::as_str) == Some("cpu")
        {
            if let Some(u) = m.pointer("/resource/current/averageUtilization") {
                if !u.is_null() {
                    status.insert("currentCPUUtilizationPercentage".into(), u.clone());
                }
            }
        }
    }

    let mut extra = Map::new();
    let others: Vec<Value> = metrics
        .iter()
        .filter(|m| !is_cpu_utilization_target(m))
        .map(metric_spec_to_v1)
        .collect();
    if !others.is_empty() {
        extra.insert(METRICS.into(), json!(Value::Array(others).to_string()));
    }
    if !current.is_empty() {
        let v1: Vec<Value> = current.iter().map(metric_status_to_v1).collect();
        extra.insert(CURRENT_METRICS.into(), json!(Value::Array(v1).to_string()));
    }
    if let Some(b) = spec2.get("behavior").filter(|b| !b.is_null()) {
        extra.insert(BEHAVIOR.into(), json!(go_field_names(b).to_string()));
    }
    if let Some(c) = status2
        .get("conditions")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
    {
        extra.insert(
            CONDITIONS.into(),
            json!(Value::Array(c.clone()).to_string()),
        );
    }
    if !extra.is_empty() {
        let ann = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(ann) = ann {
            ann.extend(extra);
        }
    }

    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": spec,
        "status": status,
    })
}

/// A v1 object in the storage form (v2).
pub fn v1_to_v2(v1: &Value) -> Value {
    let annotations = obj(v1.pointer("/metadata/annotations"));
    let annotation = |k: &str| -> Option<Value> {
        annotations
            .get(k)
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
    };
    let meta = metadata_without_round_trip(v1);
    let spec1 = obj(v1.get("spec"));
    let status1 = obj(v1.get("status"));

    let mut spec = Map::new();
    copy(&spec1, "scaleTargetRef", &mut spec, "scaleTargetRef");
    copy(&spec1, "minReplicas", &mut spec, "minReplicas");
    copy(&spec1, "maxReplicas", &mut spec, "maxReplicas");
    let mut metrics: Vec<Value> = match annotation(METRICS) {
        Some(Value::Array(others)) => others.iter().map(metric_spec_from_v1).collect(),
        _ => Vec::new(),
    };
    match spec1.get("targetCPUUtilizationPercentage") {
        Some(u) if !u.is_null() => metrics.push(cpu_target(u.clone())),
        _ => {}
    }
    if metrics.is_empty() {
        metrics.push(cpu_target(json!(DEFAULT_CPU_UTILIZATION)));
    }
    spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(b) = annotation(BEHAVIOR).filter(|b| b.as_object().is_some_and(|m| !m.is_empty())) {
        spec.insert("behavior".into(), with_default_rules(json_field_names(&b)));
    }

    let mut status = Map::new();
    copy(
        &status1,
        "observedGeneration",
        &mut status,
        "observedGeneration",
    );
    copy(&status1, "lastScaleTime", &mut status, "lastScaleTime");
    copy(&status1, "currentReplicas", &mut status, "currentReplicas");
    copy(&status1, "desiredReplicas", &mut status, "desiredReplicas");
    if let Some(u) = status1
        .get("currentCPUUtilizationPercentage")
        .filter(|u| !u.is_null())
    {
        status.insert(
            "currentMetrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": u}}}]),
        );
    }
    if let Some(Value::Array(current)) = annotation(CURRENT_METRICS) {
        let v2: Vec<Value> = current.iter().map(metric_status_from_v1).collect();
        status.insert("currentMetrics".into(), Value::Array(v2));
    }
    if let Some(Value::Array(conditions)) = annotation(CONDITIONS) {
        status.insert("conditions".into(), Value::Array(conditions));
    }

    let mut out = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": spec,
    });
    if v1.get("status").is_some() {
        out["status"] = Value::Object(status);
    }
    out
}

fn cpu_target(utilization: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

/// Fills in the scale-up or scale-down rules a behavior lacks, with
/// upstream's defaults (`GenerateHPAScaleUpRules`/`...ScaleDownRules`).
fn with_default_rules(mut b: Value) -> Value {
    if let Value::Object(m) = &mut b {
        if m.get("scaleUp").is_none_or(Value::is_null) {
            m.insert(
                "scaleUp".into(),
                json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15}]}),
            );
        }
        if m.get("scaleDown").is_none_or(Value::is_null) {
            m.insert(
                "scaleDown".into(),
                json!({"stabilizationWindowSeconds": 300, "selectPolicy": "Max", "policies": [
                    {"type": "Percent", "value": 100, "periodSeconds": 15}]}),
            );
        }
    }
    b
}

/// Renames keys to Go's exported field names (`scaleUp` → `ScaleUp`), as
/// upstream marshals its internal behavior type into the annotation.
fn go_field_names(v: &Value) -> Value {
    rename_keys(v, |k| {
        let mut c = k.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect())
            .unwrap_or_default()
    })
}

/// The reverse of [`go_field_names`]; drops Go's `null`s.
fn json_field_names(v: &Value) -> Value {
    rename_keys(v, |k| {
        let mut c = k.chars();
        c.next()
            .map(|f| f.to_lowercase().chain(c).collect())
            .unwrap_or_default()
    })
}

fn rename_keys(v: &Value, f: fn(&str) -> String) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (f(k), rename_keys(v, f)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| rename_keys(v, f)).collect()),
        other => other.clone(),
    }
}

/// A Go `resource.Quantity` that is not a pointer: `"0"` when unset.
fn quantity(v: Option<&Value>) -> Value {
    v.filter(|v| !v.is_null()).cloned().unwrap_or(json!("0"))
}

fn put(m: &mut Map<String, Value>, k: &str, v: Option<&Value>) {
    if let Some(v) = v.filter(|v| !v.is_null()) {
        m.insert(k.into(), v.clone());
    }
}

/// A v2 `MetricSpec` in the v1-era shape the annotation holds.
fn metric_spec_to_v1(m: &Value) -> Value {
    let ty = m.get("type").cloned().unwrap_or(Value::Null);
    let mut out = json!({"type": ty});
    let src = |k: &str| m.get(k).filter(|v| !v.is_null());
    let mut s = Map::new();
    let key = if let Some(o) = src("object") {
        s.insert("target".into(), quantity_ref(o.get("describedObject")));
        put(&mut s, "metricName", o.pointer("/metric/name"));
        s.insert("targetValue".into(), quantity(o.pointer("/target/value")));
        put(&mut s, "selector", o.pointer("/metric/selector"));
        put(&mut s, "averageValue", o.pointer("/target/averageValue"));
        "object"
    } else if let Some(p) = src("pods") {
        put(&mut s, "metricName", p.pointer("/metric/name"));
        s.insert(
            "targetAverageValue".into(),
            quantity(p.pointer("/target/averageValue")),
        );
        put(&mut s, "selector", p.pointer("/metric/selector"));
        "pods"
    } else if let Some(r) = src("resource") {
        put(&mut s, "name", r.get("name"));
        put(
            &mut s,
            "targetAverageUtilization",
            r.pointer("/target/averageUtilization"),
        );
        put(
            &mut s,
            "targetAverageValue",
            r.pointer("/target/averageValue"),
        );
        "resource"
    } else if let Some(r) = src("containerResource") {
        put(&mut s, "name", r.get("name"));
        put(
            &mut s,
            "targetAverageUtilization",
            r.pointer("/target/averageUtilization"),
        );
        put(
            &mut s,
            "targetAverageValue",
            r.pointer("/target/averageValue"),
        );
        put(&mut s, "container", r.get("container"));
        "containerResource"
    } else if let Some(e) = src("external") {
        put(&mut s, "metricName", e.pointer("/metric/name"));
        put(&mut s, "metricSelector", e.pointer("/metric/selector"));
        put(&mut s, "targetValue", e.pointer("/target/value"));
        put(
            &mut s,
            "targetAverageValue",
            e.pointer("/target/averageValue"),
        );
        "external"
    } else {
        return out;
    };
    out[key] = Value::Object(s);
    out
}

fn quantity_ref(v: Option<&Value>) -> Value {
    v.filter(|v| !v.is_null())
        .cloned()
        .unwrap_or_else(|| json!({"kind": "", "name": ""}))
}

/// A v1-era `MetricSpec` from the annotation, as v2.
fn metric_spec_from_v1(m: &Value) -> Value {
    let ty = m.get("type").cloned().unwrap_or(Value::Null);
    let mut out = json!({"type": ty});
    let src = |k: &str| m.get(k).filter(|v| !v.is_null());
    let metric = |name: Option<&Value>, selector: Option<&Value>| {
        let mut id = Map::new();
        put(&mut id, "name", name);
        put(&mut id, "selector", selector);
        Value::Object(id)
    };
    if let Some(o) = src("object") {
        let mut target = Map::new();
        let ty = if o.get("averageValue").is_none_or(Value::is_null) {
            "Value"
        } else {
            "AverageValue"
        };
        target.insert("type".into(), json!(ty));
        target.insert("value".into(), quantity(o.get("targetValue")));
        put(&mut target, "averageValue", o.get("averageValue"));
        out["object"] = json!({
            "describedObject": quantity_ref(o.get("target")),
            "metric": metric(o.get("metricName"), o.get("selector")),
            "target": target,
        });
    } else if let Some(p) = src("pods") {
        out["pods"] = json!({
            "metric": metric(p.get("metricName"), p.get("selector")),
            "target": {"type": "AverageValue", "averageValue": quantity(p.get("targetAverageValue"))},
        });
    } else if let Some(r) = src("resource").or_else(|| src("containerResource")) {
        let mut target = Map::new();
        let utilization = r.get("targetAverageUtilization").filter(|v| !v.is_null());
        target.insert(
            "type".into(),
            json!(if utilization.is_some() {
                "Utilization"
            } else {
                "AverageValue"
            }),
        );
        put(&mut target, "averageUtilization", utilization);
        put(&mut target, "averageValue", r.get("targetAverageValue"));
        let mut res = Map::new();
        put(&mut res, "name", r.get("name"));
        put(&mut res, "container", r.get("container"));
        res.insert("target".into(), Value::Object(target));
        let key = if src("resource").is_some() {
            "resource"
        } else {
            "containerResource"
        };
        out[key] = Value::Object(res);
    } else if let Some(e) = src("external") {
        let mut target = Map::new();
        let ty = if e.get("targetValue").is_none_or(Value::is_null) {
            "AverageValue"
        } else {
            "Value"
        };
        target.insert("type".into(), json!(ty));
        put(&mut target, "value", e.get("targetValue"));
        put(&mut target, "averageValue", e.get("targetAverageValue"));
        out["external"] = json!({
            "metric": metric(e.get("metricName"), e.get("metricSelector")),
            "target": target,
        });
    }
    out
}

/// A v2 `MetricStatus` in the v1-era shape the annotation holds.
fn metric_status_to_v1(m: &Value) -> Value {
    let ty = m.get("type").cloned().unwrap_or(Value::Null);
    let mut out = json!({"type": ty});
    let src = |k: &str| m.get(k).filter(|v| !v.is_null());
    let mut s = Map::new();
    let key = if let Some(o) = src("object") {
        s.insert("target".into(), quantity_ref(o.get("describedObject")));
        put(&mut s, "metricName", o.pointer("/metric/name"));
        s.insert("currentValue".into(), quantity(o.pointer("/current/value")));
        put(&mut s, "selector", o.pointer("/metric/selector"));
        put(&mut s, "averageValue", o.pointer("/current/averageValue"));
        "object"
    } else if let Some(p) = src("pods") {
        put(&mut s, "metricName", p.pointer("/metric/name"));
        s.insert(
            "currentAverageValue".into(),
            quantity(p.pointer("/current/averageValue")),
        );
        put(&mut s, "selector", p.pointer("/metric/selector"));
        "pods"
    } else if let Some(r) = src("resource").or_else(|| src("containerResource")) {
        put(&mut s, "name", r.get("name"));
        put(
            &mut s,
            "currentAverageUtilization",
            r.pointer("/current/averageUtilization"),
        );
        s.insert(
            "currentAverageValue".into(),
            quantity(r.pointer("/current/averageValue")),
        );
        put(&mut s, "container", r.get("container"));
        if src("resource").is_some() {
            "resource"
        } else {
            "containerResource"
        }
    } else if let Some(e) = src("external") {
        put(&mut s, "metricName", e.pointer("/metric/name"));
        put(&mut s, "metricSelector", e.pointer("/metric/selector"));
        s.insert("currentValue".into(), quantity(e.pointer("/current/value")));
        put(
            &mut s,
            "currentAverageValue",
            e.pointer("/current/averageValue"),
        );
        "external"
    } else {
        return out;
    };
    out[key] = Value::Object(s);
    out
}

/// A v1-era `MetricStatus` from the annotation, as v2.
fn metric_status_from_v1(m: &Value) -> Value {
    let ty = m.get("type").cloned().unwrap_or(Value::Null);
    let mut out = json!({"type": ty});
    let src = |k: &str| m.get(k).filter(|v| !v.is_null());
    let metric = |name: Option<&Value>, selector: Option<&Value>| {
        let mut id = Map::new();
        put(&mut id, "name", name);
        put(&mut id, "selector", selector);
        Value::Object(id)
    };
    if let Some(o) = src("object") {
        let mut current = Map::new();
        current.insert("value".into(), quantity(o.get("currentValue")));
        put(&mut current, "averageValue", o.get("averageValue"));
        out["object"] = json!({
            "describedObject": quantity_ref(o.get("target")),
            "metric": metric(o.get("metricName"), o.get("selector")),
            "current": current,
        });
    } else if let Some(p) = src("pods") {
        out["pods"] = json!({
            "metric": metric(p.get("metricName"), p.get("selector")),
            "current": {"averageValue": quantity(p.get("currentAverageValue"))},
        });
    } else if let Some(r) = src("resource").or_else(|| src("containerResource")) {
        let mut current = Map::new();
        current.insert(
            "averageValue".into(),
            quantity(r.get("currentAverageValue")),
        );
        put(
            &mut current,
            "averageUtilization",
            r.get("currentAverageUtilization"),
        );
        let mut res = Map::new();
        put(&mut res, "name", r.get("name"));
        put(&mut res, "container", r.get("container"));
        res.insert("current".into(), Value::Object(current));
        let key = if src("resource").is_some() {
            "resource"
        } else {
            "containerResource"
        };
        out[key] = Value::Object(res);
    } else if let Some(e) = src("external") {
        let mut current = Map::new();
        current.insert("value".into(), quantity(e.get("currentValue")));
        put(&mut current, "averageValue", e.get("currentAverageValue"));
        out["external"] = json!({
            "metric": metric(e.get("metricName"), e.get("metricSelector")),
            "current": current,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2_hpa() -> Value {
        json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "d", "annotations": {"keep": "me"}},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 5,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}},
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
                    {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
                    {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}}},
                    {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps"}, "target": {"type": "Value", "value": "5"}}}
                ],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Min", "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}]}}
            },
            "status": {
                "currentReplicas": 2, "desiredReplicas": 3,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40, "averageValue": "200m"}}}],
                "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]
            }
        })
    }

    #[test]
    fn v2_seen_through_v1() {
        let v1 = v2_to_v1(&v2_hpa());
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
        assert_eq!(v1["spec"]["maxReplicas"], 5);
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 40);
        assert_eq!(v1["status"]["desiredReplicas"], 3);
        let ann = &v1["metadata"]["annotations"];
        assert_eq!(ann["keep"], "me");
        let metrics: Value =
            serde_json::from_str(ann[METRICS].as_str().expect("metrics")).expect("json");
        assert_eq!(metrics.as_array().map(Vec::len), Some(4));
        assert_eq!(metrics[0]["resource"]["targetAverageValue"], "100Mi");
        assert_eq!(metrics[1]["pods"]["targetAverageValue"], "10");
        assert_eq!(metrics[2]["external"]["targetValue"], "30");
        assert_eq!(metrics[3]["object"]["target"]["name"], "s");
        let behavior: Value =
            serde_json::from_str(ann[BEHAVIOR].as_str().expect("behavior")).expect("json");
        assert_eq!(behavior["ScaleDown"]["SelectPolicy"], "Min");
        assert_eq!(behavior["ScaleDown"]["Policies"][0]["PeriodSeconds"], 30);
        assert!(ann[CONDITIONS].as_str().is_some());
        assert!(ann[CURRENT_METRICS].as_str().is_some());
    }

    #[test]
    fn round_trip_through_v1_keeps_v2_fields() {
        let v2 = v2_hpa();
        let back = v1_to_v2(&v2_to_v1(&v2));
        assert_eq!(back["metadata"]["annotations"], json!({"keep": "me"}));
        let metrics = back["spec"]["metrics"].as_array().expect("metrics");
        // The other metrics first, then the CPU target, as upstream.
        assert_eq!(metrics.len(), 5);
        assert_eq!(metrics[0], v2["spec"]["metrics"][0]);
        assert_eq!(metrics[1], v2["spec"]["metrics"][2]);
        assert_eq!(metrics[2], v2["spec"]["metrics"][3]);
        assert_eq!(metrics[3], v2["spec"]["metrics"][4]);
        assert_eq!(metrics[4], v2["spec"]["metrics"][1]);
        assert_eq!(
            back["spec"]["behavior"]["scaleDown"],
            v2["spec"]["behavior"]["scaleDown"]
        );
        // Missing rules get upstream's defaults.
        assert_eq!(back["spec"]["behavior"]["scaleUp"]["selectPolicy"], "Max");
        assert_eq!(back["status"]["conditions"], v2["status"]["conditions"]);
        assert_eq!(
            back["status"]["currentMetrics"],
            v2["status"]["currentMetrics"]
        );
    }

    #[test]
    fn plain_v1_objects() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3,
                     "targetCPUUtilizationPercentage": 70}});
        let v2 = v1_to_v2(&v1);
        assert_eq!(v2["apiVersion"], "autoscaling/v2");
        assert_eq!(v2["spec"]["metrics"], json!([cpu_target(json!(70))]));
        assert!(v2.get("status").is_none());
        assert!(v2["metadata"].get("annotations").is_none());
        assert_eq!(v2_to_v1(&v2)["spec"], v1["spec"]);

        // No target at all: upstream's 80% CPU default.
        let mut bare = v1.clone();
        bare["spec"]
            .as_object_mut()
            .map(|s| s.remove("targetCPUUtilizationPercentage"));
        assert_eq!(
            v1_to_v2(&bare)["spec"]["metrics"],
            json!([cpu_target(json!(80))])
        );

        // Malformed annotations are ignored and dropped.
        let mut junk = v1.clone();
        junk["metadata"]["annotations"] = json!({METRICS: "{not json", "x": "y"});
        let v2 = v1_to_v2(&junk);
        assert_eq!(v2["metadata"]["annotations"], json!({"x": "y"}));
        assert_eq!(v2["spec"]["metrics"].as_array().map(Vec::len), Some(1));
    }
}
