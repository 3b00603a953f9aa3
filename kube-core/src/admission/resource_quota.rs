//! ResourceQuota: a write that would take a namespace past one of its
//! quotas is refused with upstream's `exceeded quota` message; one that
//! fits is charged to each matching quota's `status.used` with a
//! compare-and-swap on the quota, so that two racing creates can never
//! both take the last unit (`plugin/pkg/admission/resourcequota`). Usage
//! is released by the quota controller's recalculation, as upstream's.
//!
//! Counted: `pods`, `services`, `configmaps`, `secrets`,
//! `replicationcontrollers`, `resourcequotas`, `persistentvolumeclaims`,
//! `services.loadbalancers`, `services.nodeports`, `count/<resource>[.<group>]`
//! for any resource, the compute resources of pods (`cpu`, `memory`,
//! `requests.*`, `limits.*`, extended resources) and the storage of claims
//! (also per storage class). Quota scopes: `Terminating`, `NotTerminating`,
//! `BestEffort`, `NotBestEffort` and `PriorityClass` selectors.

use std::collections::BTreeMap;
use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::quantity::{is_binary_si, Quantity};
use apiserver::registry::resource::Subresource;
use apiserver::registry::store::{UpdateKind, WriteContext};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::forbidden;

/// The plugin.
pub struct ResourceQuota {
    pub objects: Arc<ObjectReader>,
}

/// Usage by resource name.
pub type Usage = BTreeMap<String, Quantity>;

fn add(usage: &mut Usage, name: &str, q: Quantity) {
    let cur = usage.remove(name).unwrap_or_else(Quantity::zero);
    usage.insert(name.to_string(), cur.checked_add(&q).unwrap_or(q));
}

fn parse(v: &Value) -> Option<Quantity> {
    Quantity::parse(v.as_str()?).ok()
}

fn one() -> Quantity {
    Quantity::new(1, 0)
}

/// Whether a pod still counts (terminal pods do not).
fn pod_counts(pod: &Value) -> bool {
    !matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    )
}

/// A pod's requests or limits: the larger of its containers' sum and its
/// largest init container, plus the overhead.
fn pod_resources(spec: &Value, field: &str) -> Usage {
    let mut sum = Usage::new();
    for c in spec
        .get("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (k, v) in c
            .pointer(&format!("/resources/{field}"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(q) = parse(v) {
                add(&mut sum, k, q);
            }
        }
    }
    for c in spec
        .get("initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (k, v) in c
            .pointer(&format!("/resources/{field}"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(q) = parse(v) {
                if sum.get(k).is_none_or(|cur| q.cmp(cur).is_gt()) {
                    sum.insert(k.clone(), q);
                }
            }
        }
    }
    for (k, v) in spec
        .get("overhead")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let (Some(q), true) = (parse(v), sum.contains_key(k)) {
            add(&mut sum, k, q);
        }
    }
    sum
}

/// What an object of `resource` uses.
pub fn usage(group: &str, resource: &str, obj: &Value) -> Usage {
    let mut u = Usage::new();
    let count = if group.is_empty() {
        format!("count/{resource}")
    } else {
        format!("count/{resource}.{group}")
    };
    u.insert(count, one());
    if !group.is_empty() {
        return u;
    }
    match resource {
        "pods" => {
            if !pod_counts(obj) {
                return Usage::new();
            }
            u.insert("pods".into(), one());
            let spec = obj.get("spec").unwrap_or(&Value::Null);
            for (k, q) in pod_resources(spec, "requests") {
                if matches!(k.as_str(), "cpu" | "memory" | "ephemeral-storage") {
                    add(&mut u, &k, q.clone());
                }
                add(&mut u, &format!("requests.{k}"), q);
            }
            for (k, q) in pod_resources(spec, "limits") {
                add(&mut u, &format!("limits.{k}"), q);
            }
        }
        "services" => {
            u.insert("services".into(), one());
            match obj.pointer("/spec/type").and_then(Value::as_str) {
                Some("LoadBalancer") => {
                    u.insert("services.loadbalancers".into(), one());
                    let ports = obj
                        .pointer("/spec/ports")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    u.insert("services.nodeports".into(), Quantity::new(ports as i128, 0));
                }
                Some("NodePort") => {
                    let ports = obj
                        .pointer("/spec/ports")
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len);
                    u.insert("services.nodeports".into(), Quantity::new(ports as i128, 0));
                }
                _ => {}
            }
        }
        "persistentvolumeclaims" => {
            u.insert("persistentvolumeclaims".into(), one());
            let class = obj
                .pointer("/spec/storageClassName")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !class.is_empty() {
                u.insert(
                    format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims"),
                    one(),
                );
            }
            if let Some(q) = obj
                .pointer("/spec/resources/requests/storage")
                .and_then(parse)
            {
                if !class.is_empty() {
                    u.insert(
                        format!("{class}.storageclass.storage.k8s.io/requests.storage"),
                        q.clone(),
                    );
                }
                u.insert("requests.storage".into(), q);
            }
        }
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => {
            u.insert(resource.into(), one());
        }
        _ => {}
    }
    u
}

/// Whether a quota's scopes select the object (scopes apply to pods only).
fn matches_scopes(quota: &Value, resource: &str, obj: &Value) -> bool {
    let spec = quota.get("spec").unwrap_or(&Value::Null);
    let mut scopes: Vec<(String, &str, Vec<String>)> = spec
        .get("scopes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|s| (s.to_string(), "Exists", Vec::new()))
        .collect();
    for req in spec
        .pointer("/scopeSelector/matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let scope = req
            .get("scopeName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let op = req
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or("Exists");
        let values = req
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        scopes.push((scope, op, values));
    }
    if scopes.is_empty() {
        return true;
    }
    if resource != "pods" {
        return false;
    }
    let pod_spec = obj.get("spec").unwrap_or(&Value::Null);
    let terminating = pod_spec
        .get("activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null());
    let best_effort = ["requests", "limits"].iter().all(|f| {
        let r = pod_resources(pod_spec, f);
        !r.contains_key("cpu") && !r.contains_key("memory")
    });
    let class = pod_spec
        .get("priorityClassName")
        .and_then(Value::as_str)
        .unwrap_or("");
    scopes
        .iter()
        .all(|(scope, op, values)| match scope.as_str() {
            "Terminating" => terminating,
            "NotTerminating" => !terminating,
            "BestEffort" => best_effort,
            "NotBestEffort" => !best_effort,
            "PriorityClass" => match *op {
                "In" => values.iter().any(|v| v == class),
                "NotIn" => !values.iter().any(|v| v == class),
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                _ => false,
            },
            "CrossNamespacePodAffinity" => false,
            _ => false,
        })
}

fn pretty(usage: &Usage, binary: &BTreeMap<String, bool>) -> String {
    usage
        .iter()
        .map(|(k, q)| {
            format!(
                "{k}={}",
                q.to_canonical(binary.get(k).copied().unwrap_or(false))
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The resources of a pod a compute quota makes mandatory, and the
/// containers that lack them.
fn missing_compute(obj: &Value, hard: &BTreeMap<String, String>) -> Option<String> {
    let spec = obj.get("spec")?;
    let mut missing = Vec::new();
    for (resource, field, name) in [
        ("cpu", "requests", "requests.cpu"),
        ("memory", "requests", "requests.memory"),
        ("requests.cpu", "requests", "requests.cpu"),
        ("requests.memory", "requests", "requests.memory"),
        ("limits.cpu", "limits", "limits.cpu"),
        ("limits.memory", "limits", "limits.memory"),
    ] {
        if !hard.contains_key(resource) {
            continue;
        }
        let key = name.split('.').nth(1).unwrap_or("");
        let lacking: Vec<&str> = ["initContainers", "containers"]
            .iter()
            .filter_map(|k| spec.get(*k).and_then(Value::as_array))
            .flatten()
            .filter(|c| c.pointer(&format!("/resources/{field}/{key}")).is_none())
            .filter_map(|c| c.get("name").and_then(Value::as_str))
            .collect();
        if !lacking.is_empty() && !missing.iter().any(|(n, _): &(&str, String)| *n == name) {
            missing.push((name, lacking.join(",")));
        }
    }
    if missing.is_empty() {
        return None;
    }
    Some(
        missing
            .iter()
            .map(|(n, c)| format!("must specify {n} for: {c}"))
            .collect::<Vec<_>>()
            .join("; "),
    )
}

impl ResourceQuota {
    async fn admit(&self, attrs: &Attributes<'_>, obj: &Value) -> Result<(), ApiError> {
        let group = attrs.resource.group.as_str();
        let resource = attrs.resource.resource.as_str();
        let mut delta = usage(group, resource, obj);
        if attrs.operation == Operation::Update {
            let old = attrs
                .old_object
                .map(|o| usage(group, resource, o))
                .unwrap_or_default();
            // An update is charged for what grows only.
            delta.retain(|k, q| match old.get(k) {
                Some(o) => q.cmp(o).is_gt(),
                None => true,
            });
            for (k, q) in delta.iter_mut() {
                if let Some(o) = old.get(k) {
                    *q = q.checked_add(&o.negated()).unwrap_or_else(Quantity::zero);
                }
            }
        }
        if delta.is_empty() {
            return Ok(());
        }
        let quotas = self
            .objects
            .list("", "resourcequotas", attrs.namespace)
            .await?;
        for quota in quotas {
            if !matches_scopes(&quota, resource, obj) {
                continue;
            }
            let name = quota
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            self.charge(attrs, &name, resource, obj, &delta).await?;
        }
        Ok(())
    }

    /// Checks one quota and charges it; retried on a racing charge.
    async fn charge(
        &self,
        attrs: &Attributes<'_>,
        name: &str,
        resource: &str,
        obj: &Value,
        delta: &Usage,
    ) -> Result<(), ApiError> {
        let store = self.objects.writer("", "resourcequotas")?;
        // What charging `delta` makes of the quota: `None` when it is not
        // concerned, an error when it would exceed it.
        let charge = |quota: &Value| -> Result<Option<Value>, ApiError> {
            let strings = |p: &str| -> BTreeMap<String, String> {
                quota
                    .pointer(p)
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            };
            let hard = strings("/status/hard");
            let used_raw = strings("/status/used");
            // Hard is empty until the quota controller has seen the quota.
            let relevant: Vec<&String> = hard.keys().filter(|k| delta.contains_key(*k)).collect();
            if resource == "pods" {
                if let Some(msg) = missing_compute(obj, &hard) {
                    return Err(forbidden(attrs, &format!("failed quota: {name}: {msg}")));
                }
            }
            if relevant.is_empty() {
                return Ok(None);
            }
            let unknown: Vec<&str> = relevant
                .iter()
                .filter(|k| !used_raw.contains_key(**k))
                .map(|k| k.as_str())
                .collect();
            if !unknown.is_empty() {
                return Err(forbidden(
                    attrs,
                    &format!(
                        "status unknown for quota: {name}, resources: {}",
                        unknown.join(",")
                    ),
                ));
            }
            let binary: BTreeMap<String, bool> = hard
                .iter()
                .map(|(k, v)| (k.clone(), is_binary_si(v)))
                .collect();
            let mut requested = Usage::new();
            let mut used = Usage::new();
            let mut limited = Usage::new();
            let mut new_used = used_raw.clone();
            for k in &relevant {
                let want = delta[k.as_str()].clone();
                let have =
                    Quantity::parse(&used_raw[k.as_str()]).unwrap_or_else(|_| Quantity::zero());
                let max = Quantity::parse(&hard[k.as_str()]).unwrap_or_else(|_| Quantity::zero());
                let total = have.checked_add(&want).unwrap_or_else(|| want.clone());
                if total.cmp(&max).is_gt() {
                    requested.insert(k.to_string(), want);
                    used.insert(k.to_string(), have);
                    limited.insert(k.to_string(), max);
                } else {
                    new_used.insert(
                        k.to_string(),
                        total.to_canonical(
                            is_binary_si(&used_raw[k.as_str()]) || binary[k.as_str()],
                        ),
                    );
                }
            }
            if !requested.is_empty() {
                return Err(forbidden(
                    attrs,
                    &format!(
                        "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
                        pretty(&requested, &binary),
                        pretty(&used, &binary),
                        pretty(&limited, &binary)
                    ),
                ));
            }
            let mut updated = quota.clone();
            updated["status"]["used"] = json!(new_used);
            Ok(Some(updated))
        };
        if attrs.dry_run {
            // Checked, not charged.
            return match store.get(attrs.namespace, name).await {
                Ok(quota) => charge(&quota).map(|_| ()),
                Err(e) if e.code == 404 => Ok(()),
                Err(e) => Err(e),
            };
        }
        // The store applies the charge to the quota as stored and, when a
        // racing charge wins, again to the newer quota.
        let patch = |quota: &Value| Ok(charge(quota)?.unwrap_or_else(|| quota.clone()));
        let ctx = WriteContext::default();
        match store
            .update(
                attrs.namespace,
                name,
                Some(Subresource::Status),
                UpdateKind::Patch(&patch),
                &ctx,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.code == 404 => Ok(()),
            Err(e) if e.code == 409 => Err(forbidden(
                attrs,
                &format!(
                    "unable to charge quota {name}: too many concurrent updates, please retry"
                ),
            )),
            Err(e) => Err(e),
        }
    }
}

impl AdmissionPlugin for ResourceQuota {
    fn name(&self) -> &'static str {
        "ResourceQuota"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let Some(obj) = attrs.object else {
                return Ok(());
            };
            if !attrs.subresource.is_empty()
                || !attrs.resource.namespaced
                || attrs.namespace.is_empty()
                || !matches!(attrs.operation, Operation::Create | Operation::Update)
                || attrs.is("", "resourcequotas") && attrs.operation == Operation::Update
                || attrs.is("", "events")
            {
                return Ok(());
            }
            self.admit(attrs, obj).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_usage() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "1"}}},
            {"name": "b", "resources": {"requests": {"cpu": "400m"}}}]}});
        let u = usage("", "pods", &pod);
        let s = |k: &str| u[k].to_canonical(false);
        assert_eq!(s("pods"), "1");
        assert_eq!(s("count/pods"), "1");
        assert_eq!(s("requests.cpu"), "500m");
        assert_eq!(s("cpu"), "500m");
        assert_eq!(u["requests.memory"].to_canonical(true), "1Gi");
        assert_eq!(s("limits.cpu"), "1");
        let done = json!({"spec": {}, "status": {"phase": "Succeeded"}});
        assert!(usage("", "pods", &done).is_empty());
        assert_eq!(
            usage("apps", "deployments", &json!({}))
                .keys()
                .collect::<Vec<_>>(),
            vec!["count/deployments.apps"]
        );
    }

    #[test]
    fn scopes() {
        let q = |scopes: Value| json!({"spec": {"scopes": scopes}});
        let best = json!({"spec": {"containers": [{"name": "a"}]}});
        let burst = json!({"spec": {"activeDeadlineSeconds": 5,
            "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}});
        assert!(matches_scopes(&q(json!(["BestEffort"])), "pods", &best));
        assert!(!matches_scopes(&q(json!(["BestEffort"])), "pods", &burst));
        assert!(matches_scopes(
            &q(json!(["Terminating", "NotBestEffort"])),
            "pods",
            &burst
        ));
        assert!(!matches_scopes(
            &q(json!(["Terminating"])),
            "services",
            &best
        ));
        let pc = json!({"spec": {"scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}});
        assert!(!matches_scopes(&pc, "pods", &best));
        let high = json!({"spec": {"priorityClassName": "high", "containers": []}});
        assert!(matches_scopes(&pc, "pods", &high));
    }

    #[test]
    fn compute_quota_requires_resources() {
        let hard: BTreeMap<String, String> = [("limits.cpu".to_string(), "2".to_string())].into();
        let pod = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {"limits": {"cpu": "1"}}}]}});
        assert_eq!(
            missing_compute(&pod, &hard).unwrap(),
            "must specify limits.cpu for: a"
        );
    }
}
