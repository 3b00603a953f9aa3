//! What upstream checks when a namespace update makes its enforce level
//! stricter: the existing pods are evaluated against the new level (at most
//! 3000, within one second) and each distinct violation becomes a warning,
//! naming the first pod (lexically) that has it and how many others do.
//! One pod per controller is checked before the other replicas.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use apiserver::admission::objects::ObjectReader;
use apiserver::apimachinery::validation::go_quote;
use serde_json::Value;

use super::config::Configuration;
use super::evaluator::evaluate;
use super::policy::LevelVersion;
use super::spec::{str_field, PodView};

/// Upstream's `defaultNamespaceMaxPodsToCheck`.
pub const MAX_PODS_TO_CHECK: usize = 3000;
/// Upstream's `defaultNamespacePodCheckTimeout`.
pub const POD_CHECK_TIMEOUT: Duration = Duration::from_secs(1);
/// The warning when the pods cannot be listed.
pub const LIST_FAILED: &str = "failed to list pods while checking new PodSecurity enforce level";

/// The warnings for the pods of `namespace` under the new `enforce` level.
pub async fn existing_pod_warnings(
    objects: &ObjectReader,
    config: &Configuration,
    namespace: &str,
    enforce: LevelVersion,
) -> Vec<String> {
    let deadline = Instant::now() + POD_CHECK_TIMEOUT;
    let listed = tokio::time::timeout(POD_CHECK_TIMEOUT, objects.list("", "pods", namespace)).await;
    let pods = match listed {
        Ok(Ok(pods)) => pods,
        Ok(Err(e)) => {
            tracing::warn!(namespace, error = %e, "PodSecurity: failed to list pods");
            return vec![LIST_FAILED.to_string()];
        }
        Err(_) => return vec![LIST_FAILED.to_string()],
    };
    warnings_for_pods(config, namespace, enforce, &pods, MAX_PODS_TO_CHECK, || {
        Instant::now() >= deadline
    })
}

/// The UID of the pod's controlling owner, if any.
fn controller_uid(pod: &Value) -> Option<&str> {
    pod.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| str_field(r, "uid"))
}

/// Upstream's `prioritizePods`: pods of exempt RuntimeClasses are dropped;
/// the first pod of each controller (and every pod without one) comes
/// first, the other replicas after.
fn prioritize<'a>(config: &Configuration, pods: &'a [Value]) -> Vec<&'a Value> {
    let mut first = Vec::with_capacity(pods.len());
    let mut replicas = Vec::new();
    let mut controllers = HashSet::new();
    for pod in pods {
        let class = pod
            .pointer("/spec/runtimeClassName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if config.exempt_runtime_class(class) {
            continue;
        }
        match controller_uid(pod) {
            Some(uid) if !controllers.insert(uid) => replicas.push(pod),
            _ => first.push(pod),
        }
    }
    first.extend(replicas);
    first
}

/// The warnings for `pods`, checking at most `max` of them and stopping
/// after the pod during which `expired` turns true.
pub fn warnings_for_pods(
    config: &Configuration,
    namespace: &str,
    enforce: LevelVersion,
    pods: &[Value],
    max: usize,
    expired: impl Fn() -> bool,
) -> Vec<String> {
    let prioritized = prioritize(config, pods);
    let total = prioritized.len();
    let mut checked = total.min(max);
    // Distinct warnings in the order first seen, with the lexically first
    // pod name and the number of pods for each.
    let mut order: Vec<String> = Vec::new();
    let mut counts: HashMap<String, (String, usize)> = HashMap::new();
    for (i, pod) in prioritized.iter().take(max).enumerate() {
        let result = evaluate(enforce, &PodView::of_pod(pod));
        if !result.allowed() {
            let warning = result.forbidden_reason();
            let pod_name = pod
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            match counts.get_mut(&warning) {
                Some((first, n)) => {
                    if pod_name < first.as_str() {
                        *first = pod_name.to_string();
                    }
                    *n += 1;
                }
                None => {
                    counts.insert(warning.clone(), (pod_name.to_string(), 1));
                    order.push(warning);
                }
            }
        }
        if expired() {
            checked = i + 1;
            break;
        }
    }
    let mut warnings = Vec::new();
    if checked < total {
        warnings.push(format!(
            "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
        ));
    }
    if !order.is_empty() {
        warnings.push(format!(
            "existing pods in namespace {} violate the new PodSecurity enforce level {}",
            go_quote(namespace),
            go_quote(&enforce.to_string())
        ));
    }
    let mut pod_warnings: Vec<String> = order
        .into_iter()
        .map(|w| match counts.get(&w) {
            Some((name, 1)) => format!("{name}: {w}"),
            Some((name, 2)) => format!("{name} (and 1 other pod): {w}"),
            Some((name, n)) => format!("{name} (and {} other pods): {w}", n - 1),
            None => w,
        })
        .collect();
    pod_warnings.sort();
    warnings.extend(pod_warnings);
    warnings
}

#[cfg(test)]
mod tests {
    use super::super::config::Exemptions;
    use super::super::policy::{Level, Version};
    use super::*;
    use serde_json::json;
    use std::cell::Cell;

    const RESTRICTED: LevelVersion = LevelVersion {
        level: Level::Restricted,
        version: Version::Latest,
    };
    const BASELINE: LevelVersion = LevelVersion {
        level: Level::Baseline,
        version: Version::Latest,
    };

    fn pod(name: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name}, "spec": spec})
    }

    fn owned(name: &str, uid: &str, spec: Value) -> Value {
        json!({"metadata": {"name": name, "ownerReferences": [
            {"uid": "other", "controller": false}, {"uid": uid, "controller": true}]},
            "spec": spec})
    }

    fn host_network() -> Value {
        json!({"hostNetwork": true, "containers": [{"name": "c"}]})
    }

    fn privileged() -> Value {
        json!({"containers": [{"name": "c", "securityContext": {"privileged": true}}]})
    }

    #[test]
    fn one_warning_per_distinct_violation_with_counts() {
        let pods = vec![
            pod("b", host_network()),
            pod("a", host_network()),
            pod("z", privileged()),
            pod("c", host_network()),
            pod("ok", json!({"containers": [{"name": "c"}]})),
            pod("y", privileged()),
            pod(
                "solo",
                json!({"hostPID": true, "containers": [{"name": "c", "securityContext": {"privileged": true}}]}),
            ),
        ];
        let w = warnings_for_pods(
            &Configuration::default(),
            "ns",
            BASELINE,
            &pods,
            3000,
            || false,
        );
        assert_eq!(
            w,
            [
                "existing pods in namespace \"ns\" violate the new PodSecurity enforce level \"baseline:latest\"",
                "a (and 2 other pods): host namespaces",
                "solo: host namespaces, privileged",
                "y (and 1 other pod): privileged",
            ]
        );
    }

    #[test]
    fn compliant_pods_give_no_warning() {
        let pods = vec![pod("a", json!({"containers": [{"name": "c"}]}))];
        assert!(warnings_for_pods(
            &Configuration::default(),
            "ns",
            BASELINE,
            &pods,
            3000,
            || false
        )
        .is_empty());
    }

    #[test]
    fn the_limit_and_the_deadline_are_reported() {
        let pods: Vec<Value> = (0..5)
            .map(|i| pod(&format!("p{i}"), privileged()))
            .collect();
        let w = warnings_for_pods(
            &Configuration::default(),
            "ns",
            RESTRICTED,
            &pods,
            2,
            || false,
        );
        assert_eq!(
            w[0],
            "new PodSecurity enforce level only checked against the first 2 of 5 existing pods"
        );
        assert!(
            w[2].starts_with("p0 (and 1 other pod): privileged, "),
            "{w:?}"
        );

        let calls = Cell::new(0);
        let w = warnings_for_pods(
            &Configuration::default(),
            "ns",
            BASELINE,
            &pods,
            3000,
            || {
                calls.set(calls.get() + 1);
                calls.get() >= 3
            },
        );
        assert_eq!(
            w[0],
            "new PodSecurity enforce level only checked against the first 3 of 5 existing pods"
        );
        assert_eq!(w[2], "p0 (and 2 other pods): privileged");
    }

    #[test]
    fn replicas_of_a_controller_come_last_and_exempt_classes_are_skipped() {
        let pods = vec![
            owned("r1", "rs", privileged()),
            owned("r2", "rs", host_network()),
            pod("lone", host_network()),
        ];
        let order: Vec<&str> = prioritize(&Configuration::default(), &pods)
            .iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(order, ["r1", "lone", "r2"]);
        // Only two are checked: the replica's violation is not seen.
        let w = warnings_for_pods(&Configuration::default(), "ns", BASELINE, &pods, 2, || {
            false
        });
        assert!(w.contains(&"r1: privileged".to_string()), "{w:?}");
        assert!(w.contains(&"lone: host namespaces".to_string()), "{w:?}");

        let config = Configuration {
            exemptions: Exemptions {
                runtime_classes: vec!["kata".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        let mut spec = privileged();
        spec["runtimeClassName"] = json!("kata");
        let pods = vec![pod("k", spec)];
        assert!(warnings_for_pods(&config, "ns", BASELINE, &pods, 3000, || false).is_empty());
    }
}
