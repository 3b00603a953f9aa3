//! The APIService kind (`apiregistration.k8s.io/v1`), declared on the generic
//! store: upstream's defaults and validation, and the table kubectl prints
//! (`NAME SERVICE AVAILABLE AGE`).

use std::cmp::Ordering;

use apiserver::apimachinery::validation::{FieldError, NameRule};
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::{lookup, Column};
use serde_json::{json, Value};

/// The aggregator's own group.
pub const GROUP: &str = "apiregistration.k8s.io";

/// Label upstream's auto-registration puts on the APIServices it manages.
pub const AUTOMANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";

/// The APIService declaration.
/// The OpenAPI document of the APIService kind, from the k8s-openapi type's
/// schema (upstream's field docs), so `kubectl explain apiservice` works and
/// `kubectl apply` of an APIService manifest finds server-side field
/// validation.
pub fn openapi_document() -> std::sync::Arc<apiserver::openapi::OpenApi> {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta_v1;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    use schemars::JsonSchema;
    let mut gen = schemars::generate::SchemaSettings::openapi3().into_generator();
    gen.subschema_for::<APIService>();
    gen.subschema_for::<meta_v1::Status>();
    gen.subschema_for::<meta_v1::ListMeta>();
    gen.subschema_for::<meta_v1::Patch>();
    let components = gen.take_definitions(true);
    let kinds = [apiserver::openapi::KindSchema {
        def: definition(),
        schema: APIService::schema_name().into_owned(),
    }];
    std::sync::Arc::new(apiserver::openapi::OpenApi::build(&kinds, components))
}

pub fn definition() -> ResourceDef {
    ResourceDef::new(GROUP, "v1", "APIService", "apiservices")
        .cluster_scoped()
        .name_rule(NameRule::PathSegment)
        .categories(&["api-extensions"])
        .with_status()
        .columns(vec![
            Column::func("Service", "string", service_column),
            Column::func("Available", "string", available_column),
            Column::age(),
        ])
        .strategy(ApiServiceStrategy)
}

fn service_column(obj: &Value) -> Value {
    match obj.pointer("/spec/service") {
        Some(s) if s.is_object() => json!(format!(
            "{}/{}",
            s.get("namespace").and_then(Value::as_str).unwrap_or(""),
            s.get("name").and_then(Value::as_str).unwrap_or("")
        )),
        _ => json!("Local"),
    }
}

fn available_column(obj: &Value) -> Value {
    match available_condition(obj) {
        Some(c) => {
            let status = c.get("status").and_then(Value::as_str).unwrap_or("Unknown");
            let reason = c.get("reason").and_then(Value::as_str).unwrap_or("");
            if status == "True" || reason.is_empty() {
                json!(status)
            } else {
                json!(format!("{status} ({reason})"))
            }
        }
        None => json!("Unknown"),
    }
}

/// The `Available` condition, if set.
pub fn available_condition(obj: &Value) -> Option<&Value> {
    lookup(obj, "status.conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"))
}

/// Defaults (service port 443) and upstream's `ValidateAPIService`.
pub struct ApiServiceStrategy;

impl Strategy for ApiServiceStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        default_port(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        default_port(new);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }
}

fn default_port(obj: &mut Value) {
    if let Some(svc) = obj.pointer_mut("/spec/service") {
        if let Some(m) = svc.as_object_mut() {
            m.entry("port").or_insert(json!(443));
        }
    }
}

fn str_at<'a>(obj: &'a Value, path: &str) -> &'a str {
    lookup(obj, path).and_then(Value::as_str).unwrap_or("")
}

/// Upstream's APIService validation (metadata is checked by the store).
pub fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_at(obj, "metadata.name");
    let group = str_at(obj, "spec.group");
    let version = str_at(obj, "spec.version");
    let required_name = format!("{version}.{group}");
    if name != required_name {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            format!("must be {required_name}"),
        ));
    }
    if group.is_empty() {
        if version != "v1" {
            errs.push(FieldError::required(
                "spec.group",
                "only v1 may have an empty group and it better be legacy kube",
            ));
        }
    } else {
        for msg in apiserver::apimachinery::validation::names::is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid("spec.group", group, msg));
        }
    }
    for msg in apiserver::apimachinery::validation::names::is_dns1035_label(version) {
        errs.push(FieldError::invalid("spec.version", version, msg));
    }
    let gpm = lookup(obj, "spec.groupPriorityMinimum")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if gpm <= 0 || gpm > 20000 {
        errs.push(FieldError::invalid(
            "spec.groupPriorityMinimum",
            gpm,
            "must be positive and less than 20000",
        ));
    }
    let vp = lookup(obj, "spec.versionPriority")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if vp <= 0 || vp > 1000 {
        errs.push(FieldError::invalid(
            "spec.versionPriority",
            vp,
            "must be positive and less than 1000",
        ));
    }
    let ca_len = lookup(obj, "spec.caBundle")
        .and_then(Value::as_str)
        .map(str::len)
        .unwrap_or(0);
    let insecure = lookup(obj, "spec.insecureSkipTLSVerify")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match lookup(obj, "spec.service").filter(|s| !s.is_null()) {
        None => {
            if ca_len > 0 {
                errs.push(FieldError::invalid(
                    "spec.caBundle",
                    format!("{ca_len} bytes"),
                    "local APIServices may not have a caBundle",
                ));
            }
            if insecure {
                errs.push(FieldError::invalid(
                    "spec.insecureSkipTLSVerify",
                    true,
                    "local APIServices may not have insecureSkipTLSVerify",
                ));
            }
        }
        Some(svc) => {
            if str_at(svc, "namespace").is_empty() {
                errs.push(FieldError::required("spec.service.namespace", ""));
            }
            if str_at(svc, "name").is_empty() {
                errs.push(FieldError::required("spec.service.name", ""));
            }
            let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
            if !(1..=65535).contains(&port) {
                errs.push(FieldError::invalid(
                    "spec.service.port",
                    port,
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
    if insecure && ca_len > 0 {
        errs.push(FieldError::invalid(
            "spec.insecureSkipTLSVerify",
            true,
            "may not be true if caBundle is present",
        ));
    }
    errs
}

/// Kubernetes-aware version order (upstream's `CompareKubeAwareVersionStrings`):
/// GA before beta before alpha, higher numbers first, then anything else
/// alphabetically. Returns `Less` when `a` sorts first.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    match (parse_kube_version(a), parse_kube_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)` of `v<major>[(alpha|beta)<minor>]`, stability
/// 2 for GA, 1 beta, 0 alpha; larger sorts first.
fn parse_kube_version(v: &str) -> Option<(u8, u32, u32)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return None;
    }
    let major: u32 = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, num) = if let Some(n) = tail.strip_prefix("beta") {
        (1, n)
    } else if let Some(n) = tail.strip_prefix("alpha") {
        (0, n)
    } else {
        return None;
    };
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit()) || num.starts_with('0') {
        return None;
    }
    Some((stability, major, num.parse().ok()?))
}

/// Upstream's built-in priorities `(groupPriorityMinimum, versionPriority)`
/// of the group/versions served by kube-core and the CRD tier; CRD groups and
/// anything not in the table get 1000/100.
pub fn builtin_priority(group: &str, version: &str) -> (i64, i64) {
    let p = match (group, version) {
        ("", "v1") => (18000, 1),
        ("apiregistration.k8s.io", "v1") => (18000, 15),
        ("apps", "v1") => (17800, 15),
        ("events.k8s.io", "v1") => (17750, 15),
        ("authentication.k8s.io", "v1") => (17700, 15),
        ("authorization.k8s.io", "v1") => (17600, 15),
        ("autoscaling", "v2") => (17500, 30),
        ("autoscaling", "v1") => (17500, 15),
        ("batch", "v1") => (17400, 15),
        ("certificates.k8s.io", "v1") => (17300, 15),
        ("networking.k8s.io", "v1") => (17200, 15),
        ("policy", "v1") => (17100, 15),
        ("rbac.authorization.k8s.io", "v1") => (17000, 15),
        ("storage.k8s.io", "v1") => (16800, 15),
        ("apiextensions.k8s.io", "v1") => (16700, 15),
        ("admissionregistration.k8s.io", "v1") => (16700, 15),
        ("scheduling.k8s.io", "v1") => (16600, 15),
        ("coordination.k8s.io", "v1") => (16500, 15),
        ("node.k8s.io", "v1") => (16300, 15),
        ("discovery.k8s.io", "v1") => (16200, 15),
        ("flowcontrol.apiserver.k8s.io", "v1") => (16100, 21),
        _ => (1000, 100),
    };
    (p.0, p.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(spec: Value) -> Value {
        let name = format!(
            "{}.{}",
            spec["version"].as_str().unwrap_or(""),
            spec["group"].as_str().unwrap_or("")
        );
        json!({"metadata": {"name": name}, "spec": spec})
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(|e| e.message_body()).collect()
    }

    #[test]
    fn a_valid_remote_apiservice_passes() {
        let obj = svc(json!({"group": "metrics.k8s.io", "version": "v1beta1",
            "groupPriorityMinimum": 100, "versionPriority": 100, "insecureSkipTLSVerify": true,
            "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}}));
        assert!(validate(&obj).is_empty(), "{:?}", messages(&validate(&obj)));
    }

    #[test]
    fn name_must_be_version_dot_group() {
        let mut obj = svc(json!({"group": "metrics.k8s.io", "version": "v1beta1",
            "groupPriorityMinimum": 100, "versionPriority": 100}));
        obj["metadata"]["name"] = json!("metrics");
        let errs = validate(&obj);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "metadata.name");
        assert!(errs[0]
            .message_body()
            .contains("must be v1beta1.metrics.k8s.io"));
    }

    #[test]
    fn priorities_out_of_range_are_invalid() {
        let obj = svc(json!({"group": "g.io", "version": "v1",
            "groupPriorityMinimum": 20001, "versionPriority": 0}));
        let fields: Vec<_> = validate(&obj).into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            vec!["spec.groupPriorityMinimum", "spec.versionPriority"]
        );
    }

    #[test]
    fn tls_fields_are_exclusive_and_not_for_local_services() {
        let local = svc(
            json!({"group": "g.io", "version": "v1", "groupPriorityMinimum": 1,
            "versionPriority": 1, "insecureSkipTLSVerify": true, "caBundle": "QUJD"}),
        );
        let fields: Vec<_> = validate(&local).into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            vec![
                "spec.caBundle",
                "spec.insecureSkipTLSVerify",
                "spec.insecureSkipTLSVerify"
            ]
        );
        let remote = svc(
            json!({"group": "g.io", "version": "v1", "groupPriorityMinimum": 1,
            "versionPriority": 1, "insecureSkipTLSVerify": true, "caBundle": "QUJD",
            "service": {"namespace": "ns", "name": "s"}}),
        );
        let errs = validate(&remote);
        assert_eq!(errs.len(), 1);
        assert!(errs[0]
            .message_body()
            .contains("may not be true if caBundle is present"));
    }

    #[test]
    fn empty_group_only_for_v1() {
        let obj = svc(
            json!({"group": "", "version": "v2", "groupPriorityMinimum": 1, "versionPriority": 1}),
        );
        assert_eq!(validate(&obj)[0].field, "spec.group");
        let core = svc(
            json!({"group": "", "version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1}),
        );
        assert!(validate(&core).is_empty());
    }

    #[test]
    fn versions_sort_as_upstream() {
        let mut v = vec![
            "foo10",
            "v11alpha2",
            "v1",
            "v2",
            "v10",
            "v12alpha1",
            "v10beta3",
            "v3beta1",
            "foo1",
        ];
        v.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            v,
            vec![
                "v10",
                "v2",
                "v1",
                "v10beta3",
                "v3beta1",
                "v12alpha1",
                "v11alpha2",
                "foo1",
                "foo10"
            ]
        );
    }

    #[test]
    fn columns_show_service_and_availability() {
        let obj = json!({"spec": {"service": {"namespace": "kube-system", "name": "m"}},
            "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}});
        assert_eq!(service_column(&obj), json!("kube-system/m"));
        assert_eq!(available_column(&obj), json!("False (MissingEndpoints)"));
        assert_eq!(service_column(&json!({"spec": {}})), json!("Local"));
    }
}
