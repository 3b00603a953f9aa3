//! Service defaulting and validation, after upstream's
//! `pkg/apis/core/v1/defaults.go` (`SetDefaults_Service`) and
//! `ValidateService` / `ValidateServiceUpdate`.

use apiserver::apimachinery::validation::names::is_dns1123_label;
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::strategy::Strategy;
use serde_json::{json, Value};

use super::pod_spec::iana_svc_name;

const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// Services: type, session affinity, IP family, traffic policies and port
/// protocol/targetPort defaults; port, type and IP validation; allocated
/// values (cluster IPs, node ports) carry over an update that omits them and
/// may not change once set.
pub struct ServiceStrategy;

/// Applies upstream's Service defaults.
pub fn default_service(obj: &mut Value) {
    let Some(Value::Object(spec)) = obj.get_mut("spec") else {
        return;
    };
    spec.entry("type").or_insert(json!("ClusterIP"));
    spec.entry("sessionAffinity").or_insert(json!("None"));
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if ty != "ExternalName" {
        spec.entry("internalTrafficPolicy")
            .or_insert(json!("Cluster"));
        let v6 = spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .is_some_and(|ip| ip.contains(':'));
        spec.entry("ipFamilies")
            .or_insert(json!([if v6 { "IPv6" } else { "IPv4" }]));
        spec.entry("ipFamilyPolicy").or_insert(json!("SingleStack"));
    }
    if ty == "NodePort" || ty == "LoadBalancer" {
        spec.entry("externalTrafficPolicy")
            .or_insert(json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        spec.entry("allocateLoadBalancerNodePorts")
            .or_insert(json!(true));
    }
    if let Some(ip) = spec.get("clusterIP").and_then(Value::as_str) {
        if !ip.is_empty() && !spec.contains_key("clusterIPs") {
            let ip = ip.to_string();
            spec.insert("clusterIPs".into(), json!([ip]));
        }
    }
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for p in ports.iter_mut() {
            if let Value::Object(p) = p {
                p.entry("protocol").or_insert(json!("TCP"));
                // Unset, or the zero value a protobuf body carries for it
                // (upstream: `TargetPort == intstr.FromInt(0)` or `""`).
                let unset = match p.get("targetPort") {
                    None | Some(Value::Null) => true,
                    Some(Value::Number(n)) => n.as_i64() == Some(0),
                    Some(Value::String(s)) => s.is_empty(),
                    _ => false,
                };
                if unset {
                    if let Some(port) = p.get("port").cloned() {
                        p.insert("targetPort".into(), port);
                    }
                }
            }
        }
    }
}

fn needs_node_ports(ty: &str) -> bool {
    ty == "NodePort" || ty == "LoadBalancer"
}

/// upstream's `dropTypeDependentFields`: fields the old type needed and the
/// new one forbids go away when the client left them as they were.
fn drop_type_dependent_fields(new: &mut Value, old: &Value) {
    let old_ty = old
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    let old_spec = old.get("spec").cloned().unwrap_or(Value::Null);
    let Some(Value::Object(spec)) = new.get_mut("spec") else {
        return;
    };
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
        .to_string();
    if ty == old_ty {
        return;
    }
    if needs_node_ports(&old_ty) && !needs_node_ports(&ty) {
        let old_ports = old_spec
            .get("ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(Value::Array(ports)) = spec.get_mut("ports") {
            for p in ports.iter_mut() {
                let Value::Object(p) = p else { continue };
                let same = old_ports
                    .iter()
                    .any(|o| o.get("nodePort").is_some() && o.get("nodePort") == p.get("nodePort"));
                if same {
                    p.remove("nodePort");
                }
            }
        }
        if spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy") {
            spec.remove("externalTrafficPolicy");
        }
        if spec.get("allocateLoadBalancerNodePorts")
            == old_spec.get("allocateLoadBalancerNodePorts")
        {
            spec.remove("allocateLoadBalancerNodePorts");
        }
    }
    if ty == "ExternalName" {
        for k in [
            "clusterIP",
            "clusterIPs",
            "ipFamilies",
            "ipFamilyPolicy",
            "internalTrafficPolicy",
        ] {
            if spec.get(k) == old_spec.get(k) {
                spec.remove(k);
            }
        }
    }
}

fn valid_ip(s: &str) -> bool {
    s.parse::<std::net::IpAddr>().is_ok()
}

impl Strategy for ServiceStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        default_service(obj);
        if let Value::Object(m) = obj {
            m.insert("status".into(), json!({"loadBalancer": {}}));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // upstream's patchAllocatedValues: what the server allocated stays.
        let old_spec = old.get("spec").cloned().unwrap_or(Value::Null);
        if let Some(Value::Object(spec)) = new.get_mut("spec") {
            let same_type = spec.get("type").is_none() || spec.get("type") == old_spec.get("type");
            if same_type {
                for k in [
                    "clusterIP",
                    "clusterIPs",
                    "ipFamilies",
                    "ipFamilyPolicy",
                    "healthCheckNodePort",
                ] {
                    let empty = match spec.get(k) {
                        None | Some(Value::Null) => true,
                        Some(Value::String(s)) => s.is_empty(),
                        _ => false,
                    };
                    if empty {
                        if let Some(v) = old_spec.get(k) {
                            spec.insert(k.into(), v.clone());
                        }
                    }
                }
                if let (Some(Value::Array(ports)), Some(old_ports)) = (
                    spec.get_mut("ports"),
                    old_spec.get("ports").and_then(Value::as_array),
                ) {
                    for p in ports.iter_mut() {
                        let Value::Object(p) = p else { continue };
                        if p.contains_key("nodePort") {
                            continue;
                        }
                        if let Some(np) = old_ports
                            .iter()
                            .find(|o| {
                                o.get("port") == p.get("port")
                                    && o.get("protocol").or(Some(&json!("TCP")))
                                        == p.get("protocol").or(Some(&json!("TCP")))
                            })
                            .and_then(|o| o.get("nodePort"))
                        {
                            p.insert("nodePort".into(), np.clone());
                        }
                    }
                }
            }
        }
        drop_type_dependent_fields(new, old);
        default_service(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").cloned().unwrap_or(json!({}));
        let sp = FieldPath::new("spec");
        let ty = spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        if !TYPES.contains(&ty) {
            errs.push(FieldError::not_supported(
                sp.child("type"),
                json!(ty),
                TYPES,
            ));
        }
        if let Some(a) = spec.get("sessionAffinity").and_then(Value::as_str) {
            if a != "None" && a != "ClientIP" {
                errs.push(FieldError::not_supported(
                    sp.child("sessionAffinity"),
                    json!(a),
                    &["ClientIP", "None"],
                ));
            }
        }
        let cluster_ip = spec.get("clusterIP").and_then(Value::as_str).unwrap_or("");
        let headless = cluster_ip == "None";
        if ty == "ExternalName" {
            let name = spec
                .get("externalName")
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                errs.push(FieldError::required(sp.child("externalName"), ""));
            }
            // An ExternalName Service holds no address: one written by hand
            // would be released, another Service's, when it is deleted.
            let set = |k: &str| match spec.get(k) {
                Some(Value::Array(a)) => !a.is_empty(),
                Some(Value::Null) | None => false,
                Some(_) => true,
            };
            for k in ["clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
                if set(k) {
                    errs.push(FieldError::forbidden(
                        sp.child(k),
                        "may not be set for ExternalName services",
                    ));
                }
            }
        }
        for (i, ip) in spec
            .get("clusterIPs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let ip = ip.as_str().unwrap_or("");
            if ip != "None" && !valid_ip(ip) {
                errs.push(FieldError::invalid(
                    sp.child("clusterIPs").index(i),
                    json!(ip),
                    IP_MSG,
                ));
            }
        }
        if !cluster_ip.is_empty()
            && cluster_ip != "None"
            && !valid_ip(cluster_ip)
            && spec.get("clusterIPs").is_none()
        {
            errs.push(FieldError::invalid(
                sp.child("clusterIPs").index(0),
                json!(cluster_ip),
                IP_MSG,
            ));
        }
        let ports = spec
            .get("ports")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if ports.is_empty() && ty != "ExternalName" && !headless {
            errs.push(FieldError::required(sp.child("ports"), ""));
        }
        let mut names: Vec<String> = Vec::new();
        for (i, p) in ports.iter().enumerate() {
            let pp = sp.child("ports").index(i);
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            if ports.len() > 1 && name.is_empty() {
                errs.push(FieldError::required(pp.child("name"), ""));
            } else if !name.is_empty() {
                for msg in is_dns1123_label(name) {
                    errs.push(FieldError::invalid(pp.child("name"), json!(name), msg));
                }
                if names.iter().any(|n| n == name) {
                    errs.push(FieldError::duplicate(pp.child("name"), json!(name)));
                }
                names.push(name.to_string());
            }
            match p.get("port").and_then(Value::as_i64) {
                None | Some(0) => errs.push(FieldError::required(pp.child("port"), "")),
                Some(n) if !(1..=65535).contains(&n) => errs.push(FieldError::invalid(
                    pp.child("port"),
                    json!(n),
                    "must be between 1 and 65535, inclusive",
                )),
                _ => {}
            }
            if let Some(proto) = p.get("protocol").and_then(Value::as_str) {
                if !["SCTP", "TCP", "UDP"].contains(&proto) {
                    errs.push(FieldError::not_supported(
                        pp.child("protocol"),
                        json!(proto),
                        &["SCTP", "TCP", "UDP"],
                    ));
                }
            }
            match p.get("targetPort") {
                Some(Value::Number(n)) => {
                    let n = n.as_i64().unwrap_or(-1);
                    if !(1..=65535).contains(&n) {
                        errs.push(FieldError::invalid(
                            pp.child("targetPort"),
                            json!(n),
                            "must be between 1 and 65535, inclusive",
                        ));
                    }
                }
                Some(Value::String(s)) => {
                    for msg in iana_svc_name(s) {
                        errs.push(FieldError::invalid(pp.child("targetPort"), json!(s), msg));
                    }
                }
                _ => {}
            }
            if let Some(np) = p.get("nodePort").and_then(Value::as_i64) {
                if np != 0 && ty != "NodePort" && ty != "LoadBalancer" {
                    errs.push(FieldError::forbidden(
                        pp.child("nodePort"),
                        format!("may not be used when `type` is '{ty}'"),
                    ));
                }
            }
        }
        if let Some(sel) = spec.get("selector") {
            errs.extend(
                apiserver::apimachinery::validation::object_meta::validate_labels(
                    sel,
                    &sp.child("selector"),
                ),
            );
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let ips = |o: &Value| {
            o.pointer("/spec/clusterIPs")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .cloned()
        };
        let was_external =
            old.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName");
        let is_external = new.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName");
        if let (Some(o), false, false) = (ips(old), was_external, is_external) {
            let n = ips(new);
            if n.as_ref() != Some(&o) {
                errs.push(FieldError::invalid(
                    FieldPath::new("spec").child("clusterIPs").index(0),
                    n.unwrap_or(json!("")),
                    "may not change once set",
                ));
            }
        }
        errs
    }
}
