//! `autoscaling/v2`: HorizontalPodAutoscalers.
//!
//! autoscaling/v1 is served from the same storage (`autoscaling_v1.rs`).

use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::autoscaling::v2;
use serde_json::{json, Value};

use super::autoscaling_validation::{validate_hpa_spec, validate_hpa_status};
use super::columns::{array_at, int_at, str_or};
use super::kind;

/// autoscaling/v2 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![kind::<v2::HorizontalPodAutoscaler>()
        .short_names(&["hpa"])
        .categories(&["all"])
        .with_status()
        .columns(vec![
            Column::func("Reference", "string", |o| {
                json!(format!(
                    "{}/{}",
                    str_or(o, "spec.scaleTargetRef.kind", ""),
                    str_or(o, "spec.scaleTargetRef.name", "")
                ))
            }),
            Column::func("Targets", "string", hpa_targets),
            Column::func("MinPods", "string", |o| {
                json!(lookup(o, "spec.minReplicas")
                    .and_then(Value::as_i64)
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "<unset>".into()))
            }),
            Column::func("MaxPods", "integer", |o| {
                json!(int_at(o, "spec.maxReplicas"))
            }),
            Column::func("Replicas", "integer", |o| {
                json!(int_at(o, "status.currentReplicas"))
            }),
            Column::age(),
        ])
        .strategy(HpaStrategy)]
}

/// A short form of the metrics (`cpu: <unknown>/80%`), as upstream's
/// `formatHPAMetrics` for resource metrics; other metric kinds print their
/// target only.
fn hpa_targets(o: &Value) -> Value {
    let metrics = array_at(o, "spec.metrics");
    if metrics.is_empty() {
        return json!("<none>");
    }
    let parts: Vec<String> = metrics
        .iter()
        .take(2)
        .map(|m| {
            let res = lookup(m, "resource");
            let name = res.map(|r| str_or(r, "name", "")).unwrap_or_default();
            let target = res
                .and_then(|r| lookup(r, "target.averageUtilization"))
                .and_then(Value::as_i64)
                .map(|u| format!("{u}%"))
                .unwrap_or_else(|| "<unknown>".into());
            if name.is_empty() {
                format!("<unknown>/{target}")
            } else {
                format!("{name}: <unknown>/{target}")
            }
        })
        .collect();
    let mut s = parts.join(", ");
    if metrics.len() > 2 {
        s.push_str(&format!(" + {} more...", metrics.len() - 2));
    }
    json!(s)
}

/// HPAs: `minReplicas` defaults to 1; validation is upstream's (see
/// [`super::autoscaling_validation`]).
pub struct HpaStrategy;

impl Strategy for HpaStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(Value::Object(spec)) = obj.get_mut("spec") {
            spec.entry("minReplicas").or_insert(json!(1));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_hpa_spec(spec_of(obj), &FieldPath::new("spec"), 1)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        // An object already at `minReplicas: 0` (HPAScaleToZero) may keep it.
        let lower = if lookup(old, "spec.minReplicas").and_then(Value::as_i64) == Some(0) {
            0
        } else {
            1
        };
        validate_hpa_spec(spec_of(new), &FieldPath::new("spec"), lower)
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        validate_hpa_status(new.get("status").unwrap_or(&Value::Null))
    }
}

fn spec_of(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}
