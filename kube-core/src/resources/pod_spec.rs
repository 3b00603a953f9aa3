//! Pod spec defaulting and validation, shared by pods and every pod template
//! (deployments, replica sets, stateful sets, daemon sets, jobs, cron jobs,
//! replication controllers), after upstream's `pkg/apis/core/v1/defaults.go`
//! and `pkg/apis/core/validation/validation.go`.

use apiserver::apimachinery::validation::names::is_dns1123_label;
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use serde_json::{json, Map, Value};

/// Upstream's `SetDefaults_PodSpec` and container defaults, on the object at
/// `spec` (a pod's `spec` or a template's `spec.template.spec`).
pub fn default_pod_spec(spec: &mut Value) {
    let Value::Object(s) = spec else { return };
    s.entry("restartPolicy").or_insert(json!("Always"));
    s.entry("dnsPolicy").or_insert(json!("ClusterFirst"));
    s.entry("schedulerName")
        .or_insert(json!("default-scheduler"));
    s.entry("terminationGracePeriodSeconds")
        .or_insert(json!(30));
    s.entry("securityContext").or_insert(json!({}));
    s.entry("enableServiceLinks").or_insert(json!(true));
    for key in ["containers", "initContainers"] {
        if let Some(Value::Array(cs)) = s.get_mut(key) {
            for c in cs.iter_mut() {
                default_container(c);
            }
        }
    }
    if let Some(Value::Array(vols)) = s.get_mut("volumes") {
        for v in vols.iter_mut() {
            default_volume(v);
        }
    }
}

/// Upstream's `SetDefaults_Pod` (pods only, not templates): a container
/// (or init container) that sets a limit but no request for a resource
/// requests its limit; so does the pod-level `spec.resources`.
pub fn default_pod_requests(spec: &mut Value) {
    let default_one = |r: &mut Value| {
        let Some(limits) = r.get("limits").and_then(Value::as_object).cloned() else {
            return;
        };
        let Value::Object(r) = r else { return };
        let requests = r.entry("requests").or_insert_with(|| json!({}));
        if let Value::Object(req) = requests {
            for (k, v) in limits {
                req.entry(k).or_insert(v);
            }
        }
    };
    let Value::Object(s) = spec else { return };
    for key in ["containers", "initContainers"] {
        if let Some(Value::Array(cs)) = s.get_mut(key) {
            for c in cs.iter_mut() {
                if let Some(r) = c.get_mut("resources") {
                    default_one(r);
                }
            }
        }
    }
    if let Some(r) = s.get_mut("resources") {
        default_one(r);
    }
}

fn default_container(c: &mut Value) {
    let Value::Object(c) = c else { return };
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    let policy = image_pull_policy(image);
    c.entry("imagePullPolicy").or_insert(json!(policy));
    c.entry("terminationMessagePath")
        .or_insert(json!("/dev/termination-log"));
    c.entry("terminationMessagePolicy").or_insert(json!("File"));
    c.entry("resources").or_insert(json!({}));
    if let Some(Value::Array(ports)) = c.get_mut("ports") {
        for p in ports.iter_mut() {
            if let Value::Object(p) = p {
                p.entry("protocol").or_insert(json!("TCP"));
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(p)) = c.get_mut(probe) {
            p.entry("timeoutSeconds").or_insert(json!(1));
            p.entry("periodSeconds").or_insert(json!(10));
            p.entry("successThreshold").or_insert(json!(1));
            p.entry("failureThreshold").or_insert(json!(3));
            if let Some(Value::Object(h)) = p.get_mut("httpGet") {
                h.entry("path").or_insert(json!("/"));
                h.entry("scheme").or_insert(json!("HTTP"));
            }
        }
    }
    if let Some(Value::Array(env)) = c.get_mut("env") {
        for e in env.iter_mut() {
            if let Some(Value::Object(f)) = e.pointer_mut("/valueFrom/fieldRef") {
                f.entry("apiVersion").or_insert(json!("v1"));
            }
        }
    }
}

fn default_volume(v: &mut Value) {
    let Value::Object(v) = v else { return };
    for (key, mode_key) in [
        ("secret", "defaultMode"),
        ("configMap", "defaultMode"),
        ("downwardAPI", "defaultMode"),
        ("projected", "defaultMode"),
    ] {
        if let Some(Value::Object(src)) = v.get_mut(key) {
            src.entry(mode_key).or_insert(json!(420));
        }
    }
    if let Some(Value::Object(h)) = v.get_mut("hostPath") {
        h.entry("type").or_insert(json!(""));
    }
    let known = [
        "secret",
        "configMap",
        "downwardAPI",
        "projected",
        "hostPath",
        "persistentVolumeClaim",
        "nfs",
        "csi",
        "ephemeral",
        "iscsi",
        "image",
        "emptyDir",
    ];
    if !known.iter().any(|k| v.contains_key(*k)) && v.len() == 1 {
        // Only a name: upstream defaults to an emptyDir.
        v.insert("emptyDir".into(), json!({}));
    }
}

/// `Always` for `:latest` or untagged images, else `IfNotPresent`.
pub fn image_pull_policy(image: &str) -> &'static str {
    let without_digest = image.split('@').next().unwrap_or("");
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = without_digest.rsplit('/').next().unwrap_or("");
    match last.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn not_supported(errs: &mut Vec<FieldError>, path: FieldPath, v: &Value, valid: &[&str]) {
    if let Some(s) = v.as_str() {
        if !valid.contains(&s) {
            errs.push(FieldError::not_supported(path, json!(s), valid));
        }
    }
}

/// Upstream's `ValidatePodSpec` (the commonly hit rules), for a pod
/// (`template` false) or a pod template.
/// Upstream's sysctl name rule: dot- or slash-separated segments of
/// `[a-z0-9]([-_a-z0-9]*[a-z0-9])?`, at most 253 characters.
const SYSCTL_PATTERN: &str =
    r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";

fn valid_sysctl_name(name: &str) -> bool {
    name.len() <= 253
        && name.split(['.', '/']).all(|seg| {
            let b = seg.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_lowercase() | b[0].is_ascii_digit()
                && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
                && b.iter().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-' || *c == b'_'
                })
        })
}

/// Upstream's `validateSysctls`: names required, valid and unique; a
/// network sysctl with `hostNetwork` or an IPC one with `hostIPC` is
/// refused.
fn validate_sysctls(spec: &Map<String, Value>, path: &FieldPath, errs: &mut Vec<FieldError>) {
    let Some(list) = spec
        .get("securityContext")
        .and_then(|c| c.get("sysctls"))
        .and_then(Value::as_array)
    else {
        return;
    };
    let host = |k: &str| spec.get(k).and_then(Value::as_bool) == Some(true);
    let mut seen = std::collections::HashSet::new();
    for (i, s) in list.iter().enumerate() {
        let at = path.index(i).child("name");
        let name = str_field(s, "name");
        if name.is_empty() {
            errs.push(FieldError::required(&at, ""));
        } else if !valid_sysctl_name(name) {
            errs.push(FieldError::invalid(
                &at,
                name,
                format!("must have at most 253 characters and match regex {SYSCTL_PATTERN}"),
            ));
        } else if !seen.insert(name.to_string()) {
            errs.push(FieldError::duplicate(&at, name));
        }
        let net = name.starts_with("net.") || name.starts_with("net/");
        let ipc = name.starts_with("kernel.shm")
            || name.starts_with("kernel.msg")
            || name.starts_with("kernel.sem")
            || name.starts_with("fs.mqueue.");
        if net && host("hostNetwork") {
            errs.push(FieldError::invalid(
                &at,
                name,
                "may not be specified when 'hostNetwork' is true",
            ));
        } else if ipc && host("hostIPC") {
            errs.push(FieldError::invalid(
                &at,
                name,
                "may not be specified when 'hostIPC' is true",
            ));
        }
    }
}

pub fn validate_pod_spec(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let empty = Map::new();
    let s = spec.as_object().unwrap_or(&empty);
    let volumes = validate_volumes(s.get("volumes"), &path.child("volumes"), &mut errs);
    match s.get("containers").and_then(Value::as_array) {
        Some(cs) if !cs.is_empty() => validate_containers(
            cs,
            &volumes,
            &path.child("containers"),
            &mut errs,
            &mut Vec::new(),
        ),
        _ => errs.push(FieldError::required(path.child("containers"), "")),
    }
    if let Some(cs) = s.get("initContainers").and_then(Value::as_array) {
        let mut names: Vec<String> = s
            .get("containers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| str_field(c, "name").to_string())
            .collect();
        validate_containers(
            cs,
            &volumes,
            &path.child("initContainers"),
            &mut errs,
            &mut names,
        );
    }
    validate_sysctls(
        s,
        &path.child("securityContext").child("sysctls"),
        &mut errs,
    );
    if let Some(v) = s.get("restartPolicy") {
        not_supported(
            &mut errs,
            path.child("restartPolicy"),
            v,
            &["Always", "Never", "OnFailure"],
        );
    }
    if let Some(v) = s.get("dnsPolicy") {
        not_supported(
            &mut errs,
            path.child("dnsPolicy"),
            v,
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        );
    }
    for key in ["terminationGracePeriodSeconds", "activeDeadlineSeconds"] {
        if let Some(n) = s.get(key).and_then(Value::as_i64) {
            if key == "activeDeadlineSeconds" && n <= 0 {
                errs.push(FieldError::invalid(
                    path.child(key),
                    json!(n),
                    "must be between 1 and 2147483647, inclusive",
                ));
            }
        }
    }
    if let Some(node_selector) = s.get("nodeSelector") {
        errs.extend(
            apiserver::apimachinery::validation::object_meta::validate_labels(
                node_selector,
                &path.child("nodeSelector"),
            ),
        );
    }
    let sa = str_field(spec, "serviceAccountName");
    if !sa.is_empty() {
        for msg in apiserver::apimachinery::validation::names::name_is_dns_subdomain(sa, false) {
            errs.push(FieldError::invalid(
                path.child("serviceAccountName"),
                json!(sa),
                msg,
            ));
        }
    }
    let host = str_field(spec, "hostname");
    if !host.is_empty() {
        for msg in is_dns1123_label(host) {
            errs.push(FieldError::invalid(
                path.child("hostname"),
                json!(host),
                msg,
            ));
        }
    }
    errs
}

fn validate_volumes(
    vols: Option<&Value>,
    path: &FieldPath,
    errs: &mut Vec<FieldError>,
) -> Vec<String> {
    let mut names = Vec::new();
    for (i, v) in vols
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = str_field(v, "name");
        let p = path.index(i).child("name");
        if name.is_empty() {
            errs.push(FieldError::required(p, ""));
        } else if names.iter().any(|n| n == name) {
            errs.push(FieldError::duplicate(p, json!(name)));
        } else {
            for msg in is_dns1123_label(name) {
                errs.push(FieldError::invalid(p.clone(), json!(name), msg));
            }
            names.push(name.to_string());
        }
    }
    names
}

fn validate_containers(
    cs: &[Value],
    volumes: &[String],
    path: &FieldPath,
    errs: &mut Vec<FieldError>,
    seen: &mut Vec<String>,
) {
    for (i, c) in cs.iter().enumerate() {
        let p = path.index(i);
        let name = str_field(c, "name");
        if name.is_empty() {
            errs.push(FieldError::required(p.child("name"), ""));
        } else {
            let msgs = is_dns1123_label(name);
            for msg in &msgs {
                errs.push(FieldError::invalid(
                    p.child("name"),
                    json!(name),
                    msg.clone(),
                ));
            }
            if msgs.is_empty() && seen.iter().any(|n| n == name) {
                errs.push(FieldError::duplicate(p.child("name"), json!(name)));
            }
            seen.push(name.to_string());
        }
        if str_field(c, "image").trim().is_empty() {
            errs.push(FieldError::required(p.child("image"), ""));
        }
        if let Some(v) = c.get("imagePullPolicy") {
            not_supported(
                errs,
                p.child("imagePullPolicy"),
                v,
                &["Always", "IfNotPresent", "Never"],
            );
        }
        if let Some(v) = c.get("terminationMessagePolicy") {
            not_supported(
                errs,
                p.child("terminationMessagePolicy"),
                v,
                &["File", "FallbackToLogsOnError"],
            );
        }
        validate_ports(c.get("ports"), &p.child("ports"), errs);
        validate_env(c.get("env"), &p.child("env"), errs);
        validate_resources(c.get("resources"), &p.child("resources"), errs);
        for (j, m) in c
            .get("volumeMounts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let mp = p.child("volumeMounts").index(j);
            let vname = str_field(m, "name");
            if vname.is_empty() {
                errs.push(FieldError::required(mp.child("name"), ""));
            } else if !volumes.iter().any(|v| v == vname) {
                errs.push(FieldError::not_found(mp.child("name"), json!(vname)));
            }
            if str_field(m, "mountPath").is_empty() {
                errs.push(FieldError::required(mp.child("mountPath"), ""));
            }
        }
    }
}

fn validate_port_number(
    errs: &mut Vec<FieldError>,
    path: FieldPath,
    v: Option<&Value>,
    required: bool,
) {
    match v.and_then(Value::as_i64) {
        None | Some(0) if required => errs.push(FieldError::required(path, "")),
        None => {}
        Some(n) if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
            path,
            json!(n),
            "must be between 1 and 65535, inclusive",
        )),
        Some(_) => {}
    }
}

fn validate_ports(ports: Option<&Value>, path: &FieldPath, errs: &mut Vec<FieldError>) {
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = path.index(i);
        let name = str_field(port, "name");
        if !name.is_empty() {
            for msg in iana_svc_name(name) {
                errs.push(FieldError::invalid(p.child("name"), json!(name), msg));
            }
            if names.contains(&name) {
                errs.push(FieldError::duplicate(p.child("name"), json!(name)));
            }
            names.push(name);
        }
        validate_port_number(
            errs,
            p.child("containerPort"),
            port.get("containerPort"),
            true,
        );
        if port
            .get("hostPort")
            .and_then(Value::as_i64)
            .is_some_and(|n| n != 0)
        {
            validate_port_number(errs, p.child("hostPort"), port.get("hostPort"), false);
        }
        if let Some(v) = port.get("protocol") {
            not_supported(errs, p.child("protocol"), v, &["SCTP", "TCP", "UDP"]);
        }
    }
}

/// `validation.IsValidPortName` (IANA_SVC_NAME).
pub fn iana_svc_name(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if name.len() > 15 {
        out.push("must be no more than 15 characters".to_string());
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if name.contains("--") {
        out.push("must not contain consecutive hyphens".into());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push("must not begin or end with a hyphen".into());
    }
    out
}

fn validate_env(env: Option<&Value>, path: &FieldPath, errs: &mut Vec<FieldError>) {
    for (i, e) in env
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = str_field(e, "name");
        let p = path.index(i).child("name");
        if name.is_empty() {
            errs.push(FieldError::required(p, ""));
        } else if name.contains('=') {
            errs.push(FieldError::invalid(
                p,
                json!(name),
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
        if e.get("value").is_some() && e.get("valueFrom").is_some() {
            errs.push(FieldError::invalid(
                path.index(i).child("valueFrom"),
                json!(""),
                "may not be specified when `value` is not empty",
            ));
        }
    }
}

fn validate_resources(res: Option<&Value>, path: &FieldPath, errs: &mut Vec<FieldError>) {
    let Some(res) = res else { return };
    let mut parsed: [Map<String, Value>; 2] = [Map::new(), Map::new()];
    for (slot, key) in ["limits", "requests"].iter().enumerate() {
        for (name, q) in res
            .get(*key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let p = path.child(key).key(name);
            let s = match q {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => String::new(),
            };
            match parse_quantity(&s) {
                Some(v) if v < 0.0 => errs.push(FieldError::invalid(
                    p,
                    json!(s),
                    "must be greater than or equal to 0",
                )),
                Some(v) => {
                    parsed[slot].insert(name.clone(), json!(v));
                }
                None => errs.push(FieldError::invalid(
                    p,
                    json!(s),
                    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                )),
            }
        }
    }
    let [limits, requests] = &parsed;
    for (name, r) in requests {
        if let (Some(l), Some(r)) = (limits.get(name).and_then(Value::as_f64), r.as_f64()) {
            if r > l {
                let raw = res
                    .get("requests")
                    .and_then(|m| m.get(name))
                    .cloned()
                    .unwrap_or(Value::Null);
                let lim = res
                    .get("limits")
                    .and_then(|m| m.get(name))
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .unwrap_or_default();
                errs.push(FieldError::invalid(
                    path.child("requests").key(name),
                    raw,
                    format!("must be less than or equal to {name} limit of {lim}"),
                ));
            }
        }
    }
}

/// Parses a Kubernetes quantity (`100m`, `1Gi`, `1e3`) to a float.
pub fn parse_quantity(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    if num.is_empty() || num == "+" || num == "-" || num.matches('.').count() > 1 {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse::<i32>().ok()?),
        _ => return None,
    };
    Some(n * mult)
}

/// Template metadata labels must be valid; used by every workload.
pub fn validate_template_metadata(template: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(labels) = template.pointer("/metadata/labels") {
        errs.extend(
            apiserver::apimachinery::validation::object_meta::validate_labels(
                labels,
                &path.child("metadata").child("labels"),
            ),
        );
    }
    if let Some(ann) = template.pointer("/metadata/annotations") {
        errs.extend(
            apiserver::apimachinery::validation::object_meta::validate_annotations(
                ann,
                &path.child("metadata").child("annotations"),
            ),
        );
    }
    errs
}

/// A pod update may change only images, `activeDeadlineSeconds`,
/// additions to tolerations and `terminationGracePeriodSeconds`
/// (upstream's `ValidatePodUpdate`); also `schedulingGates` removals.
pub fn validate_pod_spec_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut a = new.clone();
    let mut b = old.clone();
    for v in [&mut a, &mut b] {
        if let Value::Object(m) = v {
            for key in [
                "activeDeadlineSeconds",
                "tolerations",
                "terminationGracePeriodSeconds",
                "schedulingGates",
            ] {
                m.remove(key);
            }
            for ck in ["containers", "initContainers", "ephemeralContainers"] {
                if let Some(Value::Array(cs)) = m.get_mut(ck) {
                    for c in cs.iter_mut() {
                        if let Value::Object(c) = c {
                            c.remove("image");
                        }
                    }
                }
            }
        }
    }
    if a != b {
        return vec![FieldError::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        )];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy() {
        assert_eq!(image_pull_policy("nginx"), "Always");
        assert_eq!(image_pull_policy("nginx:latest"), "Always");
        assert_eq!(image_pull_policy("nginx:1.27"), "IfNotPresent");
        assert_eq!(image_pull_policy("localhost:5000/nginx"), "Always");
        assert_eq!(image_pull_policy("nginx@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn quantities() {
        assert_eq!(parse_quantity("100m"), Some(0.1));
        assert_eq!(parse_quantity("1Gi"), Some(1073741824.0));
        assert_eq!(parse_quantity("2"), Some(2.0));
        assert_eq!(parse_quantity("abc"), None);
        assert_eq!(parse_quantity("1Zi"), None);
    }
}

#[cfg(test)]
mod sysctl_tests {
    use super::*;

    #[test]
    fn sysctl_names_as_upstream() {
        for ok in [
            "kernel.shmmax",
            "net.ipv4.ip_forward",
            "safe-and-unsafe",
            "net/ipv4/conf/eth0.1/forwarding",
        ] {
            assert!(valid_sysctl_name(ok), "{ok}");
        }
        for bad in ["foo-", "bar..", "", "Kernel.x", ".a"] {
            assert!(!valid_sysctl_name(bad), "{bad}");
        }
        let spec = serde_json::json!({"hostNetwork": true, "securityContext": {"sysctls": [
            {"name": "foo-", "value": "1"}, {"name": "net.core.somaxconn", "value": "1"},
            {"name": "kernel.shmmax", "value": "1"}, {"name": "kernel.shmmax", "value": "2"}]}});
        let mut errs = Vec::new();
        validate_sysctls(
            spec.as_object().unwrap(),
            &FieldPath::new("spec.securityContext.sysctls"),
            &mut errs,
        );
        let text: Vec<String> = errs.iter().map(|e| e.message_body()).collect();
        assert_eq!(errs.len(), 3, "{text:?}");
    }
}
