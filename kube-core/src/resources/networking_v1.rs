//! `networking.k8s.io/v1`: Ingresses, IngressClasses, NetworkPolicies,
//! IPAddresses and ServiceCIDRs.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::SpecStrategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::networking::v1;
use serde_json::{json, Value};

use super::columns::{array_at, format_label_selector, str_or};
use super::kind;
use super::networking::IngressStrategy;

/// networking.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        kind::<v1::IngressClass>()
            .columns(vec![
                Column::path("Controller", "spec.controller"),
                Column::func("Parameters", "string", ingress_class_parameters),
                Column::age(),
            ])
            .strategy(SpecStrategy),
        kind::<v1::Ingress>()
            .short_names(&["ing"])
            .storage_path("ingress")
            .with_status()
            .columns(vec![
                Column::func("Class", "string", |o| {
                    let class = str_or(o, "spec.ingressClassName", "");
                    json!(if class.is_empty() {
                        lookup(o, "metadata.annotations")
                            .and_then(|a| a.get("kubernetes.io/ingress.class"))
                            .and_then(Value::as_str)
                            .unwrap_or("<none>")
                            .to_string()
                    } else {
                        class
                    })
                }),
                Column::func("Hosts", "string", ingress_hosts),
                Column::func("Address", "string", |o| {
                    json!(load_balancer_addresses(o, "status.loadBalancer.ingress"))
                }),
                Column::func("Ports", "string", |o| {
                    json!(if array_at(o, "spec.tls").is_empty() {
                        "80"
                    } else {
                        "80, 443"
                    })
                }),
                Column::age(),
            ])
            .strategy(IngressStrategy),
        kind::<v1::IPAddress>()
            .short_names(&["ip"])
            .columns(vec![Column::func("ParentRef", "string", ip_parent_ref)]),
        kind::<v1::NetworkPolicy>()
            .short_names(&["netpol"])
            .columns(vec![
                Column::func("Pod-Selector", "string", |o| {
                    let sel = format_label_selector(lookup(o, "spec.podSelector"));
                    json!(if sel == "<none>" { String::new() } else { sel })
                }),
                Column::age(),
            ])
            .strategy(SpecStrategy),
        kind::<v1::ServiceCIDR>()
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
            .columns(vec![
                Column::func("CIDRs", "string", |o| {
                    json!(array_at(o, "spec.cidrs")
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(","))
                }),
                Column::age(),
            ]),
    ]
}

fn ingress_class_parameters(o: &Value) -> Value {
    let Some(p) = lookup(o, "spec.parameters").filter(|p| p.is_object()) else {
        return json!("<none>");
    };
    let mut s = str_or(p, "kind", "");
    let group = str_or(p, "apiGroup", "");
    if !group.is_empty() {
        s = format!("{s}.{group}");
    }
    json!(format!("{s}/{}", str_or(p, "name", "")))
}

/// upstream's `formatHosts`: at most three hosts, `*` when none.
fn ingress_hosts(o: &Value) -> Value {
    let rules = array_at(o, "spec.rules");
    let hosts: Vec<&str> = rules
        .iter()
        .filter_map(|r| r.get("host").and_then(Value::as_str))
        .filter(|h| !h.is_empty())
        .take(3)
        .collect();
    if hosts.is_empty() {
        return json!("*");
    }
    let mut s = hosts.join(",");
    if rules.len() > 3 {
        s.push_str(&format!(" + {} more...", rules.len() - 3));
    }
    json!(s)
}

/// IPs and hostnames of a load balancer status, comma-joined.
pub fn load_balancer_addresses(o: &Value, path: &str) -> String {
    let mut out = Vec::new();
    for ing in array_at(o, path) {
        for k in ["ip", "hostname"] {
            if let Some(v) = ing.get(k).and_then(Value::as_str) {
                out.push(v.to_string());
            }
        }
    }
    out.join(",")
}

fn ip_parent_ref(o: &Value) -> Value {
    let Some(p) = lookup(o, "spec.parentRef").filter(|p| p.is_object()) else {
        return json!("<none>");
    };
    let group = str_or(p, "group", "");
    let resource = str_or(p, "resource", "");
    let mut s = if group.is_empty() {
        resource
    } else {
        format!("{resource}.{group}")
    }
    .to_lowercase();
    let ns = str_or(p, "namespace", "");
    if !ns.is_empty() {
        s = format!("{s}/{ns}");
    }
    json!(format!("{s}/{}", str_or(p, "name", "")))
}
