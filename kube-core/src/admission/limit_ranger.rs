//! LimitRanger: the LimitRanges of a namespace default the requests and
//! limits of a new pod's containers (recording what they set in the
//! `kubernetes.io/limit-ranger` annotation) and bound containers, pods and
//! PersistentVolumeClaims by `min`, `max` and `maxLimitRequestRatio`, with
//! upstream's messages (`plugin/pkg/admission/limitranger`).

use std::collections::BTreeMap;
use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::quantity::Quantity;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use super::forbidden;

const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The plugin.
pub struct LimitRanger {
    pub objects: Arc<ObjectReader>,
}

/// Pods on create; PVCs on create and update.
fn applies(attrs: &Attributes<'_>) -> bool {
    if !attrs.subresource.is_empty() || attrs.resource.group != "" {
        return false;
    }
    match attrs.resource.resource.as_str() {
        "pods" => attrs.operation == Operation::Create,
        "persistentvolumeclaims" => {
            matches!(attrs.operation, Operation::Create | Operation::Update)
        }
        _ => false,
    }
}

fn items(limit_range: &Value) -> impl Iterator<Item = &Value> {
    limit_range
        .pointer("/spec/limits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn resource_list(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.clone(), q.as_str()?.to_string())))
        .collect()
}

/// The default requests and limits the Container items of a LimitRange give.
fn container_defaults(limit_range: &Value) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let (mut requests, mut limits) = (BTreeMap::new(), BTreeMap::new());
    for item in items(limit_range) {
        if item.get("type").and_then(Value::as_str) == Some("Container") {
            requests.extend(resource_list(item.get("defaultRequest")));
            limits.extend(resource_list(item.get("default")));
        }
    }
    (requests, limits)
}

/// Sets what a container lacks; returns the annotation fragments.
fn merge_container(
    c: &mut Map<String, Value>,
    requests: &BTreeMap<String, String>,
    limits: &BTreeMap<String, String>,
    label: &str,
    notes: &mut Vec<String>,
) {
    let name = c
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let resources = c.entry("resources").or_insert_with(|| json!({}));
    let Some(resources) = resources.as_object_mut() else {
        return;
    };
    let mut set_limits = Vec::new();
    let mut set_requests = Vec::new();
    for (field, defaults, set) in [
        ("limits", limits, &mut set_limits),
        ("requests", requests, &mut set_requests),
    ] {
        if defaults.is_empty() {
            continue;
        }
        let list = resources.entry(field).or_insert_with(|| json!({}));
        if let Some(list) = list.as_object_mut() {
            for (k, v) in defaults {
                if !list.contains_key(k) {
                    list.insert(k.clone(), json!(v));
                    set.push(k.clone());
                }
            }
        }
    }
    for (set, what) in [(set_requests, "request"), (set_limits, "limit")] {
        if !set.is_empty() {
            let mut set = set;
            set.sort();
            notes.push(format!("{} {what} for {label} {name}", set.join(", ")));
        }
    }
}

/// Applies a LimitRange's container defaults to a pod; whether it changed.
fn default_pod(pod: &mut Value, limit_range: &Value) -> bool {
    let (requests, limits) = container_defaults(limit_range);
    if requests.is_empty() && limits.is_empty() {
        return false;
    }
    let mut notes = Vec::new();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        for (key, label) in [
            ("containers", "container"),
            ("initContainers", "init container"),
        ] {
            for c in spec
                .get_mut(key)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object_mut)
            {
                merge_container(c, &requests, &limits, label, &mut notes);
            }
        }
    }
    if notes.is_empty() {
        return false;
    }
    if let Some(m) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
        let ann = m.entry("annotations").or_insert_with(|| json!({}));
        if let Some(ann) = ann.as_object_mut() {
            ann.insert(
                ANNOTATION.into(),
                json!(format!("LimitRanger plugin set: {}", notes.join("; "))),
            );
        }
    }
    true
}

fn quantity(s: &str) -> Option<Quantity> {
    Quantity::parse(s).ok()
}

fn canonical(s: &str) -> String {
    quantity(s)
        .map(|q| q.to_canonical(apiserver::apimachinery::quantity::is_binary_si(s)))
        .unwrap_or_else(|| s.to_string())
}

fn min_constraint(
    kind: &str,
    resource: &str,
    enforced: &str,
    requests: &BTreeMap<String, String>,
    limits: &BTreeMap<String, String>,
) -> Option<String> {
    let e = quantity(enforced)?;
    let Some(req) = requests.get(resource) else {
        return Some(format!(
            "minimum {resource} usage per {kind} is {}.  No request is specified",
            canonical(enforced)
        ));
    };
    if quantity(req).is_some_and(|r| r.cmp(&e).is_lt()) {
        return Some(format!(
            "minimum {resource} usage per {kind} is {}, but request is {}",
            canonical(enforced),
            canonical(req)
        ));
    }
    if let Some(lim) = limits.get(resource) {
        if quantity(lim).is_some_and(|l| l.cmp(&e).is_lt()) {
            return Some(format!(
                "minimum {resource} usage per {kind} is {}, but limit is {}",
                canonical(enforced),
                canonical(lim)
            ));
        }
    }
    None
}

fn max_constraint(
    kind: &str,
    resource: &str,
    enforced: &str,
    requests: &BTreeMap<String, String>,
    limits: &BTreeMap<String, String>,
) -> Option<String> {
    let e = quantity(enforced)?;
    let Some(lim) = limits.get(resource) else {
        return Some(format!(
            "maximum {resource} usage per {kind} is {}.  No limit is specified",
            canonical(enforced)
        ));
    };
    if quantity(lim).is_some_and(|l| l.cmp(&e).is_gt()) {
        return Some(format!(
            "maximum {resource} usage per {kind} is {}, but limit is {}",
            canonical(enforced),
            canonical(lim)
        ));
    }
    if let Some(req) = requests.get(resource) {
        if quantity(req).is_some_and(|r| r.cmp(&e).is_gt()) {
            return Some(format!(
                "maximum {resource} usage per {kind} is {}, but request is {}",
                canonical(enforced),
                canonical(req)
            ));
        }
    }
    None
}

fn ratio_constraint(
    kind: &str,
    resource: &str,
    enforced: &str,
    requests: &BTreeMap<String, String>,
    limits: &BTreeMap<String, String>,
) -> Option<String> {
    let e = quantity(enforced)?.as_f64();
    let req = requests
        .get(resource)
        .and_then(|r| quantity(r))
        .map(|q| q.as_f64());
    let lim = limits
        .get(resource)
        .and_then(|l| quantity(l))
        .map(|q| q.as_f64());
    let shown = canonical(enforced);
    let Some(req) = req.filter(|r| *r != 0.0) else {
        return Some(format!(
            "{resource} max limit to request ratio per {kind} is {shown}, but no request is specified or request is 0"
        ));
    };
    let Some(lim) = lim.filter(|l| *l != 0.0) else {
        return Some(format!(
            "{resource} max limit to request ratio per {kind} is {shown}, but no limit is specified or limit is 0"
        ));
    };
    let ratio = lim / req;
    (ratio > e).then(|| {
        format!("{resource} max limit to request ratio per {kind} is {shown}, but provided ratio is {ratio:.6}")
    })
}

/// Checks one requests/limits pair against an item's bounds.
fn check_bounds(
    item: &Value,
    kind: &str,
    requests: &BTreeMap<String, String>,
    limits: &BTreeMap<String, String>,
    errs: &mut Vec<String>,
) {
    for (field, check) in [
        (
            "min",
            min_constraint as fn(&str, &str, &str, &_, &_) -> Option<String>,
        ),
        ("max", max_constraint),
        ("maxLimitRequestRatio", ratio_constraint),
    ] {
        for (resource, enforced) in resource_list(item.get(field)) {
            if let Some(e) = check(kind, &resource, &enforced, requests, limits) {
                errs.push(e);
            }
        }
    }
}

fn container_resources(c: &Value) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    (
        resource_list(c.pointer("/resources/requests")),
        resource_list(c.pointer("/resources/limits")),
    )
}

/// The pod's effective requests or limits: the sum over its containers or
/// the largest init container, whichever is more, plus its overhead.
fn pod_totals(spec: &Value, field: &str) -> BTreeMap<String, String> {
    let mut sum: BTreeMap<String, Quantity> = BTreeMap::new();
    let mut binary: BTreeMap<String, bool> = BTreeMap::new();
    let list = |key: &str| -> Vec<BTreeMap<String, String>> {
        spec.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| resource_list(c.pointer(&format!("/resources/{field}"))))
            .collect()
    };
    for c in list("containers") {
        for (k, v) in c {
            if let Some(q) = quantity(&v) {
                binary
                    .entry(k.clone())
                    .or_insert(apiserver::apimachinery::quantity::is_binary_si(&v));
                let cur = sum.remove(&k).unwrap_or_else(Quantity::zero);
                sum.insert(k, cur.checked_add(&q).unwrap_or(q));
            }
        }
    }
    for c in list("initContainers") {
        for (k, v) in c {
            if let Some(q) = quantity(&v) {
                let bigger = sum.get(&k).is_none_or(|cur| q.cmp(cur).is_gt());
                if bigger {
                    binary.insert(
                        k.clone(),
                        apiserver::apimachinery::quantity::is_binary_si(&v),
                    );
                    sum.insert(k, q);
                }
            }
        }
    }
    for (k, v) in resource_list(spec.get("overhead")) {
        if let (Some(q), Some(cur)) = (quantity(&v), sum.get(&k)) {
            if let Some(total) = cur.checked_add(&q) {
                sum.insert(k, total);
            }
        }
    }
    sum.into_iter()
        .map(|(k, q)| {
            let b = binary.get(&k).copied().unwrap_or(false);
            (k, q.to_canonical(b))
        })
        .collect()
}

/// Every bound a LimitRange sets on a pod.
fn validate_pod(pod: &Value, limit_range: &Value) -> Vec<String> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut errs = Vec::new();
    for item in items(limit_range) {
        match item.get("type").and_then(Value::as_str) {
            Some("Container") => {
                for key in ["containers", "initContainers"] {
                    for c in spec
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let (req, lim) = container_resources(c);
                        check_bounds(item, "Container", &req, &lim, &mut errs);
                    }
                }
            }
            Some("Pod") => {
                let (req, lim) = (pod_totals(spec, "requests"), pod_totals(spec, "limits"));
                check_bounds(item, "Pod", &req, &lim, &mut errs);
            }
            _ => {}
        }
    }
    errs
}

/// The storage bounds a LimitRange sets on a claim.
fn validate_claim(pvc: &Value, limit_range: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let requests = resource_list(pvc.pointer("/spec/resources/requests"));
    let limits = resource_list(pvc.pointer("/spec/resources/limits"));
    for item in items(limit_range) {
        if item.get("type").and_then(Value::as_str) != Some("PersistentVolumeClaim") {
            continue;
        }
        for (resource, enforced) in resource_list(item.get("min")) {
            let e = quantity(&enforced);
            match requests.get(&resource) {
                None => errs.push(format!(
                    "minimum {resource} usage per PersistentVolumeClaim is {}.  No request is specified",
                    canonical(&enforced)
                )),
                Some(r) if quantity(r).zip(e.clone()).is_some_and(|(r, e)| r.cmp(&e).is_lt()) => {
                    errs.push(format!(
                        "minimum {resource} usage per PersistentVolumeClaim is {}, but request is {}",
                        canonical(&enforced),
                        canonical(r)
                    ))
                }
                _ => {}
            }
        }
        for (resource, enforced) in resource_list(item.get("max")) {
            let e = quantity(&enforced);
            match requests.get(&resource) {
                None => errs.push(format!(
                    "maximum {resource} usage per PersistentVolumeClaim is {}.  No request is specified",
                    canonical(&enforced)
                )),
                Some(r) if quantity(r).zip(e.clone()).is_some_and(|(r, e)| r.cmp(&e).is_gt()) => {
                    errs.push(format!(
                        "maximum {resource} usage per PersistentVolumeClaim is {}, but request is {}",
                        canonical(&enforced),
                        canonical(r)
                    ))
                }
                _ => {}
            }
            let _ = &limits;
        }
    }
    errs
}

/// Upstream's aggregate error text: one message alone, several in brackets.
fn aggregate(errs: &[String]) -> String {
    match errs {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

impl AdmissionPlugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
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
            let Some(pod) = obj.filter(|_| applies(attrs) && attrs.is("", "pods")) else {
                return Ok(false);
            };
            let ranges = self
                .objects
                .list("", "limitranges", attrs.namespace)
                .await?;
            let mut changed = false;
            for lr in &ranges {
                changed |= default_pod(pod, lr);
            }
            Ok(changed)
        })
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let Some(obj) = attrs.object.filter(|_| applies(attrs)) else {
                return Ok(());
            };
            let ranges = self
                .objects
                .list("", "limitranges", attrs.namespace)
                .await?;
            let mut errs = Vec::new();
            for lr in &ranges {
                if attrs.is("", "pods") {
                    errs.extend(validate_pod(obj, lr));
                } else {
                    errs.extend(validate_claim(obj, lr));
                }
            }
            if errs.is_empty() {
                Ok(())
            } else {
                Err(forbidden(attrs, &aggregate(&errs)))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(items: Value) -> Value {
        let mut lr = json!({"spec": {"limits": items}});
        crate::resources::core_strategies::default_limit_range(&mut lr);
        lr
    }

    #[test]
    fn limit_range_defaults() {
        let lr =
            range(json!([{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}}]));
        let item = &lr["spec"]["limits"][0];
        assert_eq!(item["default"], json!({"cpu": "2"}));
        assert_eq!(item["defaultRequest"], json!({"cpu": "2", "memory": "1Mi"}));
    }

    #[test]
    fn defaults_containers_and_annotates() {
        let lr = range(json!([{"type": "Container",
            "default": {"cpu": "500m", "memory": "500Mi"}, "defaultRequest": {"cpu": "100m"}}]));
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "a"}, {"name": "b", "resources": {"limits": {"cpu": "1"}}}]}});
        assert!(default_pod(&mut pod, &lr));
        assert_eq!(
            pod["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "500m", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "500Mi"}})
        );
        assert_eq!(
            pod["spec"]["containers"][1]["resources"]["limits"]["cpu"],
            json!("1")
        );
        assert_eq!(pod["metadata"]["annotations"][ANNOTATION],
            json!("LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit for container a; cpu, memory request for container b; memory limit for container b"));
    }

    #[test]
    fn bounds_with_upstream_messages() {
        let lr = range(
            json!([{"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"},
            "maxLimitRequestRatio": {"cpu": "2"}}]),
        );
        let pod = json!({"spec": {"containers": [{"name": "a", "resources": {
            "requests": {"cpu": "50m"}, "limits": {"cpu": "200m", "memory": "2Gi"}}}]}});
        let errs = validate_pod(&pod, &lr);
        assert!(
            errs.contains(
                &"minimum cpu usage per Container is 100m, but request is 50m".to_string()
            ),
            "{errs:?}"
        );
        assert!(
            errs.contains(
                &"maximum memory usage per Container is 1Gi, but limit is 2Gi".to_string()
            ),
            "{errs:?}"
        );
        assert!(errs.contains(&"cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000".to_string()), "{errs:?}");
        let pod = json!({"spec": {"containers": [{"name": "a"}]}});
        let errs = validate_pod(&pod, &range(json!([{"type": "Pod", "max": {"cpu": "1"}}])));
        assert_eq!(
            errs,
            vec!["maximum cpu usage per Pod is 1.  No limit is specified"]
        );
    }

    #[test]
    fn pod_totals_take_the_larger_of_sum_and_init() {
        let spec = json!({"containers": [
            {"resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}},
            {"resources": {"requests": {"cpu": "200m", "memory": "512Mi"}}}],
            "initContainers": [{"resources": {"requests": {"cpu": "1"}}}]});
        let t = pod_totals(&spec, "requests");
        assert_eq!(t["cpu"], "1");
        assert_eq!(t["memory"], "1536Mi");
    }
}
