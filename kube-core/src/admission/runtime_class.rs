//! RuntimeClass: a new pod that names a RuntimeClass gets the class's pod
//! overhead and scheduling constraints (node selector, tolerations); a
//! class that does not exist, or an overhead or node selector that
//! contradicts the class, is refused (upstream's
//! `plugin/pkg/admission/runtimeclass`).

use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::forbidden;

/// The plugin.
pub struct RuntimeClass {
    pub objects: Arc<ObjectReader>,
}

impl RuntimeClass {
    async fn class(&self, attrs: &Attributes<'_>, pod: &Value) -> Result<Option<Value>, ApiError> {
        let Some(name) = pod
            .pointer("/spec/runtimeClassName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        else {
            return Ok(None);
        };
        match self
            .objects
            .get("node.k8s.io", "runtimeclasses", "", name)
            .await?
        {
            Some(c) => Ok(Some(c)),
            None => Err(forbidden(
                attrs,
                &format!("pod rejected: RuntimeClass {name:?} not found"),
            )),
        }
    }
}

/// Quantities compare by value (`1000m` is `1`).
fn same_resources(a: Option<&Value>, b: Option<&Value>) -> bool {
    let norm = |v: Option<&Value>| -> Option<Vec<(String, Option<apiserver::apimachinery::quantity::Quantity>)>> {
        let m = v?.as_object()?;
        let mut out: Vec<_> = m
            .iter()
            .map(|(k, q)| {
                (
                    k.clone(),
                    q.as_str()
                        .and_then(|s| apiserver::apimachinery::quantity::Quantity::parse(s).ok()),
                )
            })
            .collect();
        out.sort_by(|x, y| x.0.cmp(&y.0));
        Some(out).filter(|o| !o.is_empty())
    };
    norm(a) == norm(b)
}

fn overhead_mismatch(attrs: &Attributes<'_>) -> ApiError {
    forbidden(
        attrs,
        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
    )
}

/// Sets overhead and scheduling from the class.
fn apply_class(attrs: &Attributes<'_>, pod: &mut Value, class: &Value) -> Result<(), ApiError> {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    if let Some(fixed) = class.pointer("/overhead/podFixed") {
        let has = spec
            .get("overhead")
            .and_then(Value::as_object)
            .is_some_and(|o| !o.is_empty());
        if has && !same_resources(spec.get("overhead"), Some(fixed)) {
            return Err(overhead_mismatch(attrs));
        }
        spec.insert("overhead".into(), fixed.clone());
    }
    let Some(scheduling) = class.get("scheduling") else {
        return Ok(());
    };
    if let Some(Value::Object(selector)) = scheduling.get("nodeSelector") {
        let pod_selector = spec.entry("nodeSelector").or_insert_with(|| json!({}));
        if let Value::Object(pod_selector) = pod_selector {
            for (k, v) in selector {
                if let Some(pv) = pod_selector.get(k) {
                    if pv != v {
                        return Err(forbidden(
                            attrs,
                            &format!(
                                "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {}; pod.spec.nodeSelector[{k}] = {}",
                                v.as_str().unwrap_or(""),
                                pv.as_str().unwrap_or("")
                            ),
                        ));
                    }
                }
                pod_selector.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(Value::Array(extra)) = scheduling.get("tolerations") {
        let list = spec.entry("tolerations").or_insert_with(|| json!([]));
        if let Value::Array(list) = list {
            for t in extra {
                if !list.contains(t) {
                    list.push(t.clone());
                }
            }
        }
    }
    Ok(())
}

/// After every mutation: the overhead is the class's, or absent.
fn check_overhead(
    attrs: &Attributes<'_>,
    pod: &Value,
    class: Option<&Value>,
) -> Result<(), ApiError> {
    let overhead = pod.pointer("/spec/overhead");
    match class.and_then(|c| c.pointer("/overhead/podFixed")) {
        Some(fixed) if !same_resources(overhead, Some(fixed)) => Err(overhead_mismatch(attrs)),
        None if overhead.is_some_and(|o| !o.is_null()) => Err(forbidden(
            attrs,
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
        )),
        _ => Ok(()),
    }
}

fn applies(attrs: &Attributes<'_>) -> bool {
    attrs.operation == Operation::Create && attrs.is("", "pods") && attrs.subresource.is_empty()
}

impl AdmissionPlugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(async move {
            let Some(pod) = obj.filter(|_| applies(attrs)) else {
                return Ok(false);
            };
            let Some(class) = self.class(attrs, pod).await? else {
                return Ok(false);
            };
            apply_class(attrs, pod, &class)?;
            Ok(true)
        })
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let Some(pod) = attrs.object.filter(|_| applies(attrs)) else {
                return Ok(());
            };
            let class = self.class(attrs, pod).await?;
            check_overhead(attrs, pod, class.as_ref())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overheads_compare_by_value() {
        assert!(same_resources(
            Some(&json!({"cpu": "1", "memory": "1Gi"})),
            Some(&json!({"memory": "1024Mi", "cpu": "1000m"}))
        ));
        assert!(!same_resources(
            Some(&json!({"cpu": "1"})),
            Some(&json!({"cpu": "2"}))
        ));
        assert!(same_resources(None, Some(&json!({}))));
    }
}
