//! DefaultTolerationSeconds: a pod that does not tolerate the
//! `not-ready` and `unreachable` NoExecute taints tolerates them for five
//! minutes, so its node controller evicts it only after that
//! (upstream's `plugin/pkg/admission/defaulttolerationseconds`).

use apiserver::admission::{AdmissionPlugin, Attributes};
use apiserver::apimachinery::errors::ApiError;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Upstream's `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds`.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// The plugin.
pub struct DefaultTolerationSeconds;

/// Adds the missing tolerations; returns whether it added any.
fn add_tolerations(pod: &mut Value) -> bool {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return false;
    };
    let tolerates = |list: &[Value], key: &str| {
        list.iter().any(|t| {
            let k = t.get("key").and_then(Value::as_str).unwrap_or("");
            let e = t.get("effect").and_then(Value::as_str).unwrap_or("");
            (k == key || k.is_empty()) && (e == "NoExecute" || e.is_empty())
        })
    };
    let list = spec.entry("tolerations").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return false;
    };
    let mut added = false;
    for key in [NOT_READY, UNREACHABLE] {
        if !tolerates(list, key) {
            list.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}),
            );
            added = true;
        }
    }
    added
}

impl AdmissionPlugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
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
            Some(pod) if attrs.is("", "pods") && attrs.subresource.is_empty() => {
                add_tolerations(pod)
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
    fn adds_only_what_is_missing() {
        let mut pod = json!({"spec": {}});
        assert!(add_tolerations(&mut pod));
        assert_eq!(pod["spec"]["tolerations"].as_array().unwrap().len(), 2);
        assert!(!add_tolerations(&mut pod));
        let mut pod = json!({"spec": {"tolerations": [{"key": NOT_READY, "operator": "Exists"}]}});
        assert!(add_tolerations(&mut pod));
        let t = pod["spec"]["tolerations"].as_array().unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[1]["key"], json!(UNREACHABLE));
        // An empty key with an empty effect tolerates everything.
        let mut pod = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        assert!(!add_tolerations(&mut pod));
    }
}
