//! The core group (`/api/v1`).

use serde_json::{json, Value};
use shared::registry::resource::{ResourceDef, Subresource};
use shared::registry::strategy::Strategy;
use shared::registry::table::{lookup, Column};
use shared::registry::validation::{FieldError, NameRule};

/// Core v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "ConfigMap", "configmaps")
            .short_names(&["cm"])
            .columns(vec![
                Column::func("Data", "integer", data_count),
                Column::age(),
            ]),
        ResourceDef::new("", "v1", "Endpoints", "endpoints")
            .singular("endpoints")
            .short_names(&["ep"])
            .storage_path("services/endpoints")
            .columns(vec![
                Column::func("Endpoints", "string", endpoints_summary),
                Column::age(),
            ]),
        ResourceDef::new("", "v1", "Event", "events")
            .short_names(&["ev"])
            .selectable_fields(&[
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ]),
        ResourceDef::new("", "v1", "Namespace", "namespaces")
            .cluster_scoped()
            .short_names(&["ns"])
            .name_rule(NameRule::Dns1123Label)
            .with_status()
            .with_subresource(Subresource::Finalize)
            .selectable_fields(&["status.phase"])
            .columns(vec![Column::path("Status", "status.phase"), Column::age()])
            .strategy(NamespaceStrategy),
        ResourceDef::new("", "v1", "Node", "nodes")
            .cluster_scoped()
            .short_names(&["no"])
            .storage_path("minions")
            .with_status()
            .selectable_fields(&["spec.unschedulable"])
            .columns(vec![
                Column::func("Status", "string", node_status),
                Column::func("Roles", "string", |_| json!("<none>")),
                Column::age(),
                Column::path("Version", "status.nodeInfo.kubeletVersion"),
            ])
            .strategy(shared::registry::strategy::SpecStrategy),
        ResourceDef::new("", "v1", "Pod", "pods")
            .short_names(&["po"])
            .categories(&["all"])
            .with_status()
            .returns_deleted_object()
            .selectable_fields(&[
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ])
            .columns(vec![
                Column::func("Ready", "string", pod_ready),
                Column::func("Status", "string", pod_status),
                Column::func("Restarts", "string", pod_restarts),
                Column::age(),
                Column::path("IP", "status.podIP").wide(),
                Column::path("Node", "spec.nodeName").wide(),
            ])
            .strategy(PodStrategy),
        ResourceDef::new("", "v1", "Secret", "secrets")
            .selectable_fields(&["type"])
            .columns(vec![
                Column::path("Type", "type"),
                Column::func("Data", "integer", data_count),
                Column::age(),
            ])
            .strategy(SecretStrategy),
        ResourceDef::new("", "v1", "ServiceAccount", "serviceaccounts")
            .short_names(&["sa"])
            .columns(vec![Column::age()]),
        ResourceDef::new("", "v1", "Service", "services")
            .short_names(&["svc"])
            .categories(&["all"])
            .storage_path("services/specs")
            .name_rule(NameRule::Dns1123Label)
            .with_status()
            .columns(vec![
                Column::path("Type", "spec.type"),
                Column::func("Cluster-IP", "string", |o| {
                    json!(str_or(o, "spec.clusterIP", "<none>"))
                }),
                Column::func("External-IP", "string", |_| json!("<none>")),
                Column::func("Port(s)", "string", service_ports),
                Column::age(),
            ])
            .strategy(shared::registry::strategy::SpecStrategy),
    ]
}

fn str_or(obj: &Value, path: &str, default: &str) -> String {
    match lookup(obj, path).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => default.to_string(),
    }
}

fn data_count(obj: &Value) -> Value {
    let n = |k: &str| {
        obj.get(k)
            .and_then(Value::as_object)
            .map(|m| m.len())
            .unwrap_or(0)
    };
    json!(n("data") + n("binaryData"))
}

fn endpoints_summary(obj: &Value) -> Value {
    let mut out = Vec::new();
    for subset in obj
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let ports: Vec<i64> = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("port").and_then(Value::as_i64))
            .collect();
        for addr in subset
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let ip = addr.get("ip").and_then(Value::as_str).unwrap_or("");
            if ports.is_empty() {
                out.push(ip.to_string());
            }
            for p in &ports {
                out.push(format!("{ip}:{p}"));
            }
        }
    }
    if out.is_empty() {
        return json!("<none>");
    }
    let more = out.len().saturating_sub(3);
    let mut s = out.into_iter().take(3).collect::<Vec<_>>().join(",");
    if more > 0 {
        s.push_str(&format!(" + {more} more..."));
    }
    json!(s)
}

fn node_status(obj: &Value) -> Value {
    let ready = lookup(obj, "status.conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c.get("type") == Some(&json!("Ready"))))
        .and_then(|c| c.get("status").and_then(Value::as_str));
    let mut s = match ready {
        Some("True") => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if lookup(obj, "spec.unschedulable").and_then(Value::as_bool) == Some(true) {
        s.push_str(",SchedulingDisabled");
    }
    json!(s)
}

fn container_statuses(obj: &Value) -> Vec<&Value> {
    lookup(obj, "status.containerStatuses")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn pod_ready(obj: &Value) -> Value {
    let total = lookup(obj, "spec.containers")
        .and_then(Value::as_array)
        .map(|a| a.len())
        .unwrap_or(0);
    let ready = container_statuses(obj)
        .iter()
        .filter(|c| c.get("ready") == Some(&json!(true)))
        .count();
    json!(format!("{ready}/{total}"))
}

fn pod_status(obj: &Value) -> Value {
    if obj
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some()
    {
        return json!("Terminating");
    }
    let reason = lookup(obj, "status.reason")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let waiting = container_statuses(obj).iter().find_map(|c| {
        lookup(c, "state.waiting.reason")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    json!(reason
        .map(str::to_string)
        .or(waiting)
        .unwrap_or_else(|| str_or(obj, "status.phase", "Pending")))
}

fn pod_restarts(obj: &Value) -> Value {
    let n: i64 = container_statuses(obj)
        .iter()
        .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
        .sum();
    json!(n.to_string())
}

fn service_ports(obj: &Value) -> Value {
    let ports: Vec<String> = lookup(obj, "spec.ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(np) => format!("{port}:{np}/{proto}"),
                None => format!("{port}/{proto}"),
            }
        })
        .collect();
    json!(if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    })
}

/// Namespaces: `spec.finalizers: [kubernetes]` and phase `Active` on create;
/// a delete marks the namespace `Terminating` until the namespace controller
/// has emptied it and cleared its finalizers.
pub struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            let spec = m.entry("spec").or_insert_with(|| json!({}));
            if let Value::Object(spec) = spec {
                let fins = spec.entry("finalizers").or_insert_with(|| json!([]));
                if let Value::Array(f) = fins {
                    if !f.iter().any(|v| v == "kubernetes") {
                        f.push(json!("kubernetes"));
                    }
                }
            }
            m.insert("status".into(), json!({"phase": "Active"}));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // spec.finalizers change only through the finalize subresource.
        if let (Value::Object(n), Some(spec)) = (new, old.get("spec")) {
            n.insert("spec".into(), spec.clone());
        }
    }

    fn retain_on_delete(&self, obj: &mut Value) -> bool {
        let pending = lookup(obj, "spec.finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
        if pending {
            if let Value::Object(m) = obj {
                m.insert("status".into(), json!({"phase": "Terminating"}));
            }
        }
        pending
    }
}

/// Pods: status `Pending` on create; graceful deletion once scheduled.
pub struct PodStrategy;

impl Strategy for PodStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            m.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos_class(obj_spec(m))}),
            );
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        match lookup(obj, "spec.containers").and_then(Value::as_array) {
            Some(c) if !c.is_empty() => {
                for (i, container) in c.iter().enumerate() {
                    let name = container.get("name").and_then(Value::as_str).unwrap_or("");
                    let path = format!("spec.containers[{i}].name");
                    if name.is_empty() {
                        errs.push(FieldError::required(&path, ""));
                    } else {
                        for msg in shared::registry::validation::names::is_dns1123_label(name) {
                            errs.push(FieldError::invalid(&path, json!(name), &msg));
                        }
                    }
                    if container
                        .get("image")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .is_empty()
                    {
                        errs.push(FieldError::required(
                            &format!("spec.containers[{i}].image"),
                            "",
                        ));
                    }
                }
            }
            _ => errs.push(FieldError::required("spec.containers", "")),
        }
        errs
    }

    fn default_grace_period(&self, obj: &Value) -> Option<i64> {
        let scheduled = lookup(obj, "spec.nodeName")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        let finished = matches!(
            lookup(obj, "status.phase").and_then(Value::as_str),
            Some("Succeeded") | Some("Failed")
        );
        if !scheduled || finished {
            return None;
        }
        Some(
            lookup(obj, "spec.terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(30),
        )
    }
}

fn obj_spec(m: &serde_json::Map<String, Value>) -> &Value {
    static NULL: Value = Value::Null;
    m.get("spec").unwrap_or(&NULL)
}

/// Upstream's QoS class from the containers' requests and limits.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in containers {
        let req = lookup(c, "resources.requests").and_then(Value::as_object);
        let lim = lookup(c, "resources.limits").and_then(Value::as_object);
        let has = |m: Option<&serde_json::Map<String, Value>>, k: &str| {
            m.is_some_and(|m| m.contains_key(k))
        };
        if has(req, "cpu") || has(req, "memory") || has(lim, "cpu") || has(lim, "memory") {
            any = true;
        }
        for k in ["cpu", "memory"] {
            let l = lim.and_then(|m| m.get(k));
            let r = req.and_then(|m| m.get(k)).or(l);
            if l.is_none() || r != l {
                guaranteed = false;
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Secrets: `type` defaults to `Opaque`.
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            if m.get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                m.insert("type".into(), json!("Opaque"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos() {
        assert_eq!(
            qos_class(&json!({"containers": [{"name": "a"}]})),
            "BestEffort"
        );
        let g = json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]});
        assert_eq!(qos_class(&g), "Guaranteed");
        let b = json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]});
        assert_eq!(qos_class(&b), "Burstable");
    }
}
