//! Validation of HorizontalPodAutoscalers, after upstream 1.33's
//! `pkg/apis/autoscaling/validation` (messages and field paths).
//!
//! Upstream validates the internal form, which has the autoscaling/v2
//! shape, whatever version the request used; so do we (the autoscaling/v1
//! endpoint validates the converted object), and errors carry the v2 paths
//! upstream reports for both versions: a v1 `targetCPUUtilizationPercentage`
//! of `-1` is `spec.metrics[N].resource.target.averageUtilization`, `N`
//! being the number of other metrics kept in the v1 annotation.

use apiserver::apimachinery::validation::names::{is_dns1123_label, is_valid_path_segment_name};
use apiserver::apimachinery::validation::object_meta::validate_nonnegative_field;
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use serde_json::Value;

use super::pod_spec::parse_quantity;

/// Largest scaling policy period (`MaxPeriodSeconds`).
const MAX_PERIOD_SECONDS: i64 = 1800;
/// Largest stabilization window (`MaxStabilizationWindowSeconds`).
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

const METRIC_SOURCE_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

fn present<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|v| !v.is_null())
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn int_of(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

/// The sign of a quantity given as a string or a number (`None` when it
/// does not parse; decoding rejects those before validation upstream).
fn quantity_sign(v: &Value) -> Option<i8> {
    let n = match v {
        Value::String(s) => parse_quantity(s)?,
        Value::Number(n) => n.as_f64()?,
        _ => return None,
    };
    Some(if n > 0.0 {
        1
    } else if n < 0.0 {
        -1
    } else {
        0
    })
}

/// `validateHorizontalPodAutoscalerSpec` with the lower bound of
/// `minReplicas` (1, or 0 on updates of an object already at 0).
pub fn validate_hpa_spec(spec: &Value, path: &FieldPath, min_lower_bound: i64) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let min = int_of(spec, "minReplicas");
    let max = int_of(spec, "maxReplicas").unwrap_or(0);
    if let Some(min) = min.filter(|m| *m < min_lower_bound) {
        errs.push(FieldError::invalid(
            path.child("minReplicas"),
            min,
            format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        errs.push(FieldError::invalid(
            path.child("maxReplicas"),
            max,
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|m| max < m) {
        errs.push(FieldError::invalid(
            path.child("maxReplicas"),
            max,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    errs.extend(validate_cross_version_object_reference(
        spec.get("scaleTargetRef").unwrap_or(&Value::Null),
        &path.child("scaleTargetRef"),
    ));
    errs.extend(validate_metrics(
        spec.get("metrics").unwrap_or(&Value::Null),
        &path.child("metrics"),
        min,
    ));
    if let Some(b) = present(spec, "behavior") {
        let p = path.child("behavior");
        for rules in ["scaleUp", "scaleDown"] {
            if let Some(r) = present(b, rules) {
                errs.extend(validate_scaling_rules(r, &p.child(rules)));
            }
        }
    }
    errs
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate` (status part).
pub fn validate_hpa_status(status: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("status");
    let mut errs = Vec::new();
    for f in ["currentReplicas", "desiredReplicas"] {
        errs.extend(validate_nonnegative_field(
            int_of(status, f).unwrap_or(0),
            &path.child(f),
        ));
    }
    errs
}

/// `ValidateCrossVersionObjectReference`.
fn validate_cross_version_object_reference(r: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for f in ["kind", "name"] {
        let v = str_of(r, f);
        if v.is_empty() {
            errs.push(FieldError::required(path.child(f), ""));
        } else {
            for msg in is_valid_path_segment_name(v) {
                errs.push(FieldError::invalid(path.child(f), v, msg));
            }
        }
    }
    errs
}

fn validate_metrics(
    metrics: &Value,
    path: &FieldPath,
    min_replicas: Option<i64>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = metrics.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut scales_to_zero = false;
    for (i, m) in list.iter().enumerate() {
        errs.extend(validate_metric_spec(m, &path.index(i)));
        if matches!(str_of(m, "type"), "Object" | "External") {
            scales_to_zero = true;
        }
    }
    if min_replicas == Some(0) && !scales_to_zero {
        errs.push(FieldError::forbidden(
            path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errs
}

fn validate_scaling_rules(rules: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(w) = int_of(rules, "stabilizationWindowSeconds") {
        let p = path.child("stabilizationWindowSeconds");
        if w < 0 {
            errs.push(FieldError::invalid(
                &p,
                w,
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid(
                &p,
                w,
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(sp) = present(rules, "selectPolicy") {
        if !matches!(sp.as_str(), Some("Disabled" | "Max" | "Min")) {
            errs.push(FieldError::not_supported(
                path.child("selectPolicy"),
                sp.clone(),
                &["Disabled", "Max", "Min"],
            ));
        }
    }
    let pp = path.child("policies");
    let policies = rules
        .get("policies")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if policies.is_empty() {
        errs.push(FieldError::required(
            &pp,
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        let p = pp.index(i);
        let ty = str_of(policy, "type");
        if ty != "Pods" && ty != "Percent" {
            errs.push(FieldError::not_supported(
                p.child("type"),
                ty,
                &["Percent", "Pods"],
            ));
        }
        let value = int_of(policy, "value").unwrap_or(0);
        if value <= 0 {
            errs.push(FieldError::invalid(
                p.child("value"),
                value,
                "must be greater than zero",
            ));
        }
        let period = int_of(policy, "periodSeconds").unwrap_or(0);
        if period <= 0 {
            errs.push(FieldError::invalid(
                p.child("periodSeconds"),
                period,
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid(
                p.child("periodSeconds"),
                period,
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
    errs
}

/// `validateMetricSpec`: the source named by `type` must be the only one
/// given; only the first source present is validated, as upstream.
fn validate_metric_spec(m: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = str_of(m, "type");
    if ty.is_empty() {
        errs.push(FieldError::required(
            path.child("type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_SOURCE_TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            path.child("type"),
            ty,
            &METRIC_SOURCE_TYPES,
        ));
    }
    // Upstream's order of checks: object, external, pods, resource,
    // containerResource.
    let sources = [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ];
    let given: Vec<&str> = sources
        .iter()
        .copied()
        .filter(|s| present(m, s).is_some())
        .collect();
    if let Some(first) = given.first() {
        let src = present(m, first).unwrap_or(&Value::Null);
        let p = path.child(first);
        errs.extend(match *first {
            "object" => validate_object_source(src, &p),
            "external" => validate_external_source(src, &p),
            "pods" => validate_pods_source(src, &p),
            "resource" => validate_resource_source(src, &p, false),
            _ => validate_resource_source(src, &p, true),
        });
    }
    let expected = match ty {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => {
            errs.push(FieldError::not_supported(
                path.child("type"),
                ty,
                &METRIC_SOURCE_TYPES,
            ));
            ""
        }
    };
    if !expected.is_empty() && present(m, expected).is_none() {
        errs.push(FieldError::required(
            path.child(expected),
            "must populate information for the given metric source",
        ));
    }
    if given.len() != 1 {
        for other in given.iter().filter(|s| **s != expected) {
            errs.push(FieldError::forbidden(
                path.child(other),
                "must populate the given metric source only",
            ));
        }
    }
    errs
}

fn target_of(src: &Value) -> &Value {
    src.get("target").unwrap_or(&Value::Null)
}

fn validate_object_source(src: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_cross_version_object_reference(
        src.get("describedObject").unwrap_or(&Value::Null),
        &path.child("describedObject"),
    );
    errs.extend(validate_metric_identifier(src, &path.child("metric")));
    let target = target_of(src);
    errs.extend(validate_metric_target(target, &path.child("target")));
    if present(target, "value").is_none() && present(target, "averageValue").is_none() {
        errs.push(FieldError::required(
            path.child("target").child("averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errs
}

fn validate_external_source(src: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(src, &path.child("metric"));
    let target = target_of(src);
    let tp = path.child("target");
    errs.extend(validate_metric_target(target, &tp));
    let value = present(target, "value").is_some();
    let average = present(target, "averageValue").is_some();
    if !value && !average {
        errs.push(FieldError::required(
            tp.child("averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        errs.push(FieldError::forbidden(
            tp.child("value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    errs
}

fn validate_pods_source(src: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_metric_identifier(src, &path.child("metric"));
    let target = target_of(src);
    errs.extend(validate_metric_target(target, &path.child("target")));
    if present(target, "averageValue").is_none() {
        errs.push(FieldError::required(
            path.child("target").child("averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errs
}

/// `validateResourceSource` and (with `container`) `validateContainerResourceSource`.
fn validate_resource_source(src: &Value, path: &FieldPath, container: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(src, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            path.child("name"),
            "must specify a resource name",
        ));
    } else if container {
        errs.extend(validate_container_resource_name(name, &path.child("name")));
    }
    if container {
        let c = str_of(src, "container");
        if c.is_empty() {
            errs.push(FieldError::required(
                path.child("container"),
                "must specify a container",
            ));
        } else {
            for msg in is_dns1123_label(c) {
                errs.push(FieldError::invalid(path.child("container"), c, msg));
            }
        }
    }
    let target = target_of(src);
    let tp = path.child("target");
    errs.extend(validate_metric_target(target, &tp));
    let utilization = present(target, "averageUtilization").is_some();
    let average = present(target, "averageValue").is_some();
    if !utilization && !average {
        errs.push(FieldError::required(
            tp.child("averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        errs.push(FieldError::forbidden(
            tp.child("averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errs
}

/// A simplified `ValidateContainerResourceName`: names without a domain
/// must be standard container resources.
fn validate_container_resource_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    let standard =
        matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-");
    if !name.contains('/') && !standard {
        return vec![FieldError::invalid(
            path,
            name,
            "must be a standard resource for containers",
        )];
    }
    Vec::new()
}

/// `validateMetricTarget`.
fn validate_metric_target(t: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = str_of(t, "type");
    if ty.is_empty() {
        errs.push(FieldError::required(
            path.child("type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(ty, "Utilization" | "Value" | "AverageValue") {
        errs.push(FieldError::invalid(
            path.child("type"),
            ty,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for q in ["value", "averageValue"] {
        if let Some(v) = present(t, q) {
            if quantity_sign(v).is_some_and(|s| s != 1) {
                errs.push(FieldError::invalid(
                    path.child(q),
                    v.clone(),
                    "must be positive",
                ));
            }
        }
    }
    if let Some(u) = int_of(t, "averageUtilization").filter(|u| *u < 1) {
        errs.push(FieldError::invalid(
            path.child("averageUtilization"),
            u,
            "must be greater than 0",
        ));
    }
    errs
}

/// `validateMetricIdentifier` of `src.metric`.
fn validate_metric_identifier(src: &Value, path: &FieldPath) -> Vec<FieldError> {
    let name = src
        .get("metric")
        .map(|m| str_of(m, "name"))
        .unwrap_or_default();
    if name.is_empty() {
        return vec![FieldError::required(
            path.child("name"),
            "must specify a metric name",
        )];
    }
    is_valid_path_segment_name(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path.child("name"), name, msg))
        .collect()
}
