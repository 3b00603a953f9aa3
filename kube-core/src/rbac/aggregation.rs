//! The ClusterRole aggregation controller (upstream's
//! `clusterrole-aggregation` in kube-controller-manager): a ClusterRole with
//! an `aggregationRule` gets as `rules` the rules of every other ClusterRole
//! its `clusterRoleSelectors` select, in name order and without duplicates.
//! Writes happen only when the rules differ, and chains (`view` feeding
//! `edit` feeding `admin`) settle as each write is seen again.

use std::time::Duration;

use apiserver::apimachinery::labels::LabelSelector;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::informer::Mirror;
use apiserver::registry::store::{UpdateKind, WriteContext};
use serde_json::{json, Value};
use tokio::sync::watch;

/// The rules `role` should have, if it is aggregated.
pub fn aggregated_rules(role: &Value, all: &Mirror) -> Option<Vec<Value>> {
    let selectors: Vec<LabelSelector> = role
        .pointer("/aggregationRule/clusterRoleSelectors")?
        .as_array()?
        .iter()
        .filter_map(|s| LabelSelector::from_json(s).ok())
        .collect();
    let own = role.pointer("/metadata/name").and_then(Value::as_str)?;
    let empty = serde_json::Map::new();
    let mut rules: Vec<Value> = Vec::new();
    // The mirror is keyed by name, so this walks roles in name order.
    for (name, other) in &all.objects {
        if name == own {
            continue;
        }
        let labels = other
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if !selectors.iter().any(|s| !s.is_empty() && s.matches(labels)) {
            continue;
        }
        for r in other
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !rules.contains(r) {
                rules.push(r.clone());
            }
        }
    }
    Some(rules)
}

/// Runs forever, reconciling aggregated ClusterRoles on every change.
pub async fn run(groups: std::sync::Arc<Catalog>, mut roles: watch::Receiver<Mirror>) {
    let Some(store) = groups
        .lookup("rbac.authorization.k8s.io", "v1", "clusterroles")
        .cloned()
    else {
        return;
    };
    let ctx = WriteContext::default();
    loop {
        let pending: Vec<(String, Vec<Value>)> = {
            let all = roles.borrow_and_update();
            all.objects
                .values()
                .filter_map(|role| {
                    let want = aggregated_rules(role, &all)?;
                    let have = role
                        .get("rules")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    (want != have).then(|| {
                        let name = role
                            .pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        (name.to_string(), want)
                    })
                })
                .collect()
        };
        for (name, rules) in pending {
            let set = move |cur: &Value| {
                let mut next = cur.clone();
                next["rules"] = json!(rules.clone());
                Ok(next)
            };
            if let Err(e) = store
                .update("", &name, None, UpdateKind::Patch(&set), &ctx)
                .await
            {
                tracing::warn!(clusterrole = %name, error = %e, "aggregating ClusterRole rules failed");
            }
        }
        if roles.changed().await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_gathers_edit_which_gathers_view() {
        let mut m = Mirror::default();
        for (k, v) in super::super::policy::objects() {
            if k == "clusterroles" {
                let name = v["metadata"]["name"].as_str().unwrap().to_string();
                m.objects.insert(name, v);
            }
        }
        let view = aggregated_rules(&m.objects["view"], &m).unwrap();
        assert!(view
            .iter()
            .any(|r| r["resources"].as_array().unwrap().contains(&json!("pods"))));
        assert!(aggregated_rules(&m.objects["cluster-admin"], &m).is_none());
        // Once view has its rules, edit includes them.
        m.objects.get_mut("view").unwrap()["rules"] = json!(view);
        let edit = aggregated_rules(&m.objects["edit"], &m).unwrap();
        assert!(edit.len() > view.len());
        assert!(view.iter().all(|r| edit.contains(r)));
    }
}
