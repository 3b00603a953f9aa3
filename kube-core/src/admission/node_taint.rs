//! TaintNodesByCondition: a new Node gets the `node.kubernetes.io/not-ready`
//! NoSchedule taint, so nothing is scheduled to it before its kubelet
//! reports Ready and the node lifecycle controller lifts the taint
//! (upstream's `plugin/pkg/admission/nodetaint`).

use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// The plugin.
pub struct TaintNodesByCondition;

/// Adds the taint unless one with its key and effect is there.
fn add_not_ready_taint(node: &mut Value) -> bool {
    let Some(obj) = node.as_object_mut() else {
        return false;
    };
    let spec = obj.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else {
        return false;
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    let Some(taints) = taints.as_array_mut() else {
        return false;
    };
    let present = taints.iter().any(|t| {
        t.get("key").and_then(Value::as_str) == Some(NOT_READY)
            && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    });
    if present {
        return false;
    }
    taints.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
    true
}

impl AdmissionPlugin for TaintNodesByCondition {
    fn name(&self) -> &'static str {
        "TaintNodesByCondition"
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        let changed = match obj {
            Some(node)
                if attrs.is("", "nodes")
                    && attrs.subresource.is_empty()
                    && attrs.operation == Operation::Create =>
            {
                add_not_ready_taint(node)
            }
            _ => false,
        };
        Box::pin(std::future::ready(Ok(changed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_once() {
        let mut node = json!({"metadata": {"name": "n"}});
        assert!(add_not_ready_taint(&mut node));
        assert!(!add_not_ready_taint(&mut node));
        assert_eq!(
            node["spec"]["taints"],
            json!([{"key": NOT_READY, "effect": "NoSchedule"}])
        );
        let mut other = json!({"spec": {"taints": [{"key": NOT_READY, "effect": "NoExecute"}]}});
        assert!(add_not_ready_taint(&mut other));
    }
}
