//! Defaulting and validation of the core/v1 kinds, after upstream's
//! `pkg/apis/core/v1/defaults.go`, `pkg/apis/core/validation` and the
//! per-kind registry strategies.

use apiserver::apimachinery::validation::names::regex_error;
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::lookup;
use base64::Engine;
use serde_json::{json, Value};

use super::pod_spec::{
    default_pod_requests, default_pod_spec, validate_pod_spec, validate_pod_spec_update,
};

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

/// Nodes, as upstream's node strategy: a create keeps the status the
/// kubelet registers its Node with, and nodes carry no
/// `metadata.generation`.
pub struct NodeStrategy;

impl Strategy for NodeStrategy {
    fn keeps_status_on_create(&self) -> bool {
        true
    }
}

/// Pods: spec defaults (restart, DNS and scheduler policies, container
/// termination-message fields, image pull policy), the default service
/// account, status `Pending` with the QoS class; a pod's spec is immutable
/// but for images, deadlines, tolerations and the grace period.
pub struct PodStrategy;

impl Strategy for PodStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            let spec = m.entry("spec").or_insert_with(|| json!({}));
            default_pod_spec(spec);
            default_pod_requests(spec);
            // The deprecated `serviceAccount` mirrors `serviceAccountName`
            // (the ServiceAccount admission plugin defaults the name,
            // Priority the priority, DefaultTolerationSeconds the
            // tolerations).
            if let Value::Object(s) = spec {
                if let Some(sa) = s
                    .get("serviceAccountName")
                    .filter(|n| n.as_str().is_some_and(|n| !n.is_empty()))
                    .cloned()
                {
                    s.insert("serviceAccount".into(), sa);
                }
            }
            m.insert(
                "status".into(),
                json!({"phase": "Pending", "qosClass": qos_class(obj_spec(m))}),
            );
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // Server-set defaults carry over when a client omits them (a PUT of
        // what the user wrote).
        if let (Some(Value::Object(n)), Some(Value::Object(o))) =
            (new.get_mut("spec"), old.get("spec"))
        {
            for k in [
                "serviceAccountName",
                "serviceAccount",
                "priority",
                "preemptionPolicy",
                "tolerations",
                "nodeName",
            ] {
                if !n.contains_key(k) {
                    if let Some(v) = o.get(k) {
                        n.insert(k.into(), v.clone());
                    }
                }
            }
        }
        if let Some(spec) = new.get_mut("spec") {
            default_pod_spec(spec);
            default_pod_requests(spec);
        }
    }

    fn on_read(&self, obj: &mut Value) -> Result<(), apiserver::apimachinery::errors::ApiError> {
        // Objects written by other servers (or older versions) are defaulted
        // on read, as upstream's decoder does, so updates compare like with like.
        if let Some(spec) = obj.get_mut("spec") {
            default_pod_spec(spec);
        }
        Ok(())
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_pod_spec(
            obj.get("spec").unwrap_or(&Value::Null),
            &FieldPath::new("spec"),
        )
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if errs.is_empty() {
            errs.extend(validate_pod_spec_update(
                new.get("spec").unwrap_or(&Value::Null),
                old.get("spec").unwrap_or(&Value::Null),
            ));
        }
        errs
    }

    fn graceful_delete(&self) -> bool {
        true
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

const CONFIG_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const MAX_DATA_BYTES: usize = 1024 * 1024;
const IMMUTABLE_SET: &str = "field is immutable when `immutable` is set";

/// `IsConfigMapKey`: the messages for an invalid data key.
pub fn config_key_errors(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    if key.len() > 253 {
        out.push(apiserver::apimachinery::validation::names::max_len_error(
            253,
        ));
    }
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        out.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            CONFIG_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." {
        out.push("must not be '.'".into());
    } else if key == ".." {
        out.push("must not be '..'".into());
    } else if key.starts_with("..") {
        out.push("must not start with '..'".into());
    }
    out
}

fn validate_keys(obj: &Value, field: &str, errs: &mut Vec<FieldError>) -> usize {
    let mut size = 0;
    for (k, v) in obj
        .get(field)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for msg in config_key_errors(k) {
            errs.push(FieldError::invalid(
                FieldPath::new(field).key(k),
                json!(k),
                msg,
            ));
        }
        size += k.len() + v.as_str().map(str::len).unwrap_or(0);
    }
    size
}

fn immutable_data(new: &Value, old: &Value, fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return errs;
    }
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_SET));
    }
    for f in fields {
        if new.get(*f) != old.get(*f) {
            errs.push(FieldError::forbidden(*f, IMMUTABLE_SET));
        }
    }
    errs
}

/// ConfigMaps: valid, unique keys across `data` and `binaryData`, at most
/// 1 MiB, and no changes once `immutable`.
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let mut size = validate_keys(obj, "data", &mut errs);
        size += validate_keys(obj, "binaryData", &mut errs);
        if let (Some(d), Some(b)) = (
            obj.get("data").and_then(Value::as_object),
            obj.get("binaryData").and_then(Value::as_object),
        ) {
            for k in d.keys().filter(|k| b.contains_key(*k)) {
                errs.push(FieldError::invalid(
                    FieldPath::new("data").key(k),
                    json!(k),
                    "duplicate of key present in binaryData",
                ));
            }
        }
        if size > MAX_DATA_BYTES {
            errs.push(FieldError::too_long("", json!(""), MAX_DATA_BYTES as i64));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        errs.extend(immutable_data(new, old, &["data", "binaryData"]));
        errs
    }
}

/// Secrets: `type` defaults to `Opaque` and cannot change; `stringData` is
/// merged into `data`; keys as ConfigMaps; each well-known type requires
/// its keys.
pub struct SecretStrategy;

fn merge_string_data(obj: &mut Value) {
    let Value::Object(m) = obj else { return };
    let Some(Value::Object(sd)) = m.remove("stringData") else {
        return;
    };
    let data = m.entry("data").or_insert_with(|| json!({}));
    if data.is_null() {
        *data = json!({});
    }
    if let Value::Object(d) = data {
        for (k, v) in sd {
            let s = v.as_str().unwrap_or("");
            d.insert(
                k,
                json!(base64::engine::general_purpose::STANDARD.encode(s)),
            );
        }
    }
}

impl Strategy for SecretStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        merge_string_data(obj);
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

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        merge_string_data(new);
        if let Value::Object(m) = new {
            if m.get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                if let Some(t) = old.get("type") {
                    m.insert("type".into(), t.clone());
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let size = validate_keys(obj, "data", &mut errs);
        if size > MAX_DATA_BYTES {
            errs.push(FieldError::too_long(
                "data",
                json!(""),
                MAX_DATA_BYTES as i64,
            ));
        }
        let data = obj.get("data").and_then(Value::as_object);
        let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
        let mut require = |k: &str| {
            if !has(k) {
                errs.push(FieldError::required(FieldPath::new("data").key(k), ""));
            }
        };
        match obj.get("type").and_then(Value::as_str).unwrap_or("Opaque") {
            "kubernetes.io/dockerconfigjson" => require(".dockerconfigjson"),
            "kubernetes.io/dockercfg" => require(".dockercfg"),
            "kubernetes.io/ssh-auth" => require("ssh-privatekey"),
            "kubernetes.io/tls" => {
                require("tls.crt");
                require("tls.key");
            }
            "kubernetes.io/basic-auth" => {
                if !has("username") && !has("password") {
                    require("username");
                }
            }
            "kubernetes.io/service-account-token" => {
                let name = lookup(obj, "metadata.annotations")
                    .and_then(|a| a.get("kubernetes.io/service-account.name"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if name.is_empty() {
                    errs.push(FieldError::required(
                        FieldPath::new("metadata")
                            .child("annotations")
                            .key("kubernetes.io/service-account.name"),
                        "",
                    ));
                }
            }
            _ => {}
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if new.get("type") != old.get("type") {
            errs.push(FieldError::invalid(
                "type",
                new.get("type").cloned().unwrap_or(json!("")),
                "field is immutable",
            ));
        }
        errs.extend(immutable_data(new, old, &["data"]));
        errs
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

/// LimitRanges: upstream's defaults of their Container items.
pub struct LimitRangeStrategy;

impl Strategy for LimitRangeStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        default_limit_range(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        default_limit_range(new);
    }
}

/// Upstream's defaults of a LimitRange's Container items: a missing
/// default limit is the max, a missing default request the default limit,
/// else the min.
pub fn default_limit_range(obj: &mut Value) {
    let Some(limits) = obj
        .pointer_mut("/spec/limits")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for item in limits.iter_mut().filter_map(Value::as_object_mut) {
        if item.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        let max = item.get("max").cloned();
        let min = item.get("min").cloned();
        let mut default = item
            .get("default")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (k, v) in max
            .as_ref()
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            default.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let mut request = item
            .get("defaultRequest")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (k, v) in &default {
            request.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in min
            .as_ref()
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            request.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if !default.is_empty() {
            item.insert("default".into(), Value::Object(default));
        }
        if !request.is_empty() {
            item.insert("defaultRequest".into(), Value::Object(request));
        }
    }
}

/// PersistentVolumeClaims (upstream's `pkg/registry/core/persistentvolumeclaim`):
/// `spec.volumeMode` defaults to `Filesystem`; a new claim is `Pending`.
pub struct ClaimStrategy;

fn default_volume_mode(spec: Option<&mut Value>) {
    if let Some(Value::Object(s)) = spec {
        s.entry("volumeMode").or_insert(json!("Filesystem"));
    }
}

impl Strategy for ClaimStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        default_volume_mode(obj.get_mut("spec"));
        if let Value::Object(m) = obj {
            m.insert("status".into(), json!({"phase": "Pending"}));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        default_volume_mode(new.get_mut("spec"));
    }
}

/// PersistentVolumes (upstream's `pkg/registry/core/persistentvolume`):
/// `spec.persistentVolumeReclaimPolicy` defaults to `Retain` and
/// `spec.volumeMode` to `Filesystem`; a new volume is `Pending`, and
/// `status.lastPhaseTransitionTime` is set whenever the phase changes.
pub struct VolumeStrategy;

impl Strategy for VolumeStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(Value::Object(s)) = obj.get_mut("spec") {
            s.entry("persistentVolumeReclaimPolicy")
                .or_insert(json!("Retain"));
        }
        default_volume_mode(obj.get_mut("spec"));
        if let Value::Object(m) = obj {
            m.insert(
                "status".into(),
                json!({"phase": "Pending", "lastPhaseTransitionTime": apiserver::apimachinery::meta::now_rfc3339()}),
            );
        }
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        if let Some(Value::Object(s)) = new.get_mut("spec") {
            s.entry("persistentVolumeReclaimPolicy")
                .or_insert(json!("Retain"));
        }
        default_volume_mode(new.get_mut("spec"));
    }

    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        let phase = |o: &Value| o.pointer("/status/phase").cloned();
        if phase(new) != phase(old) {
            if let Some(Value::Object(st)) = new.get_mut("status") {
                st.insert(
                    "lastPhaseTransitionTime".into(),
                    json!(apiserver::apimachinery::meta::now_rfc3339()),
                );
            }
        }
    }
}
