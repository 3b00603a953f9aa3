//! Ingress validation, after upstream's `pkg/apis/networking/validation`.

use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::strategy::Strategy;
use serde_json::{json, Value};

/// Ingresses: rules or a default backend; paths absolute with a `pathType`;
/// backends name a service with a port, or a resource.
pub struct IngressStrategy;

fn validate_backend(b: &Value, p: &FieldPath, errs: &mut Vec<FieldError>) {
    let svc = b.get("service").filter(|v| !v.is_null());
    let res = b.get("resource").filter(|v| !v.is_null());
    match (svc, res) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            p.clone(),
            b.clone(),
            "cannot set both resource and service backends",
        )),
        (None, None) => errs.push(FieldError::invalid(
            p.clone(),
            b.clone(),
            "resource or service backend is required",
        )),
        (Some(s), None) => {
            let sp = p.child("service");
            let name = s.get("name").and_then(Value::as_str).unwrap_or("");
            if name.is_empty() {
                errs.push(FieldError::required(sp.child("name"), ""));
            } else {
                for msg in apiserver::apimachinery::validation::names::is_dns1035_label(name) {
                    errs.push(FieldError::invalid(sp.child("name"), json!(name), msg));
                }
            }
            let port = s.get("port").cloned().unwrap_or(json!({}));
            let has_name = port
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            let number = port.get("number").and_then(Value::as_i64).unwrap_or(0);
            if has_name && number != 0 {
                errs.push(FieldError::invalid(
                    sp.child("port"),
                    port.clone(),
                    "cannot set both port name & port number",
                ));
            } else if !has_name && number == 0 {
                errs.push(FieldError::invalid(
                    sp.child("port"),
                    port.clone(),
                    "port name or number is required",
                ));
            } else if !(0..=65535).contains(&number) {
                errs.push(FieldError::invalid(
                    sp.child("port").child("number"),
                    json!(number),
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
        (None, Some(_)) => {}
    }
}

impl Strategy for IngressStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let spec = obj.get("spec").cloned().unwrap_or(json!({}));
        let sp = FieldPath::new("spec");
        let rules = spec
            .get("rules")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let default = spec.get("defaultBackend").filter(|v| !v.is_null());
        if rules.is_empty() && default.is_none() {
            errs.push(FieldError::invalid(
                sp.clone(),
                json!([]),
                "either `defaultBackend` or `rules` must be specified",
            ));
        }
        if let Some(d) = default {
            validate_backend(d, &sp.child("defaultBackend"), &mut errs);
        }
        for (i, rule) in rules.iter().enumerate() {
            let rp = sp.child("rules").index(i);
            let host = rule.get("host").and_then(Value::as_str).unwrap_or("");
            if !host.is_empty() {
                let check = host.strip_prefix("*.").unwrap_or(host);
                for msg in apiserver::apimachinery::validation::names::is_dns1123_subdomain(check) {
                    errs.push(FieldError::invalid(rp.child("host"), json!(host), msg));
                }
            }
            for (j, path) in rule
                .pointer("/http/paths")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let pp = rp.child("http").child("paths").index(j);
                match path.get("pathType").and_then(Value::as_str) {
                    None | Some("") => errs.push(FieldError::required(
                        pp.child("pathType"),
                        "pathType must be specified",
                    )),
                    Some("Exact") | Some("Prefix") | Some("ImplementationSpecific") => {}
                    Some(other) => errs.push(FieldError::not_supported(
                        pp.child("pathType"),
                        json!(other),
                        &["Exact", "ImplementationSpecific", "Prefix"],
                    )),
                }
                let p = path.get("path").and_then(Value::as_str).unwrap_or("");
                if !p.is_empty() && !p.starts_with('/') {
                    errs.push(FieldError::invalid(
                        pp.child("path"),
                        json!(p),
                        "must be an absolute path",
                    ));
                }
                validate_backend(
                    path.get("backend").unwrap_or(&json!({})),
                    &pp.child("backend"),
                    &mut errs,
                );
            }
        }
        errs
    }

    fn tracks_generation(&self) -> bool {
        true
    }
}
