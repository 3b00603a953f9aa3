//! The strategy of `MutatingWebhookConfiguration` and
//! `ValidatingWebhookConfiguration`: upstream's defaults (what `kubectl get
//! -o yaml` shows after a create) and the validation that keeps a webhook
//! callable (names, client configuration, sideEffects, review versions,
//! timeouts, match conditions).

use std::collections::HashSet;

use apiserver::apimachinery::validation::names::{is_dns1123_subdomain, is_qualified_name};
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::cel::expression::Expression;
use apiserver::registry::strategy::Strategy;
use serde_json::{json, Value};

/// The strategy; `mutating` adds the mutating-only fields.
pub struct WebhookConfigurationStrategy {
    pub mutating: bool,
}

fn default_str(obj: &mut serde_json::Map<String, Value>, key: &str, value: &str) {
    if obj
        .get(key)
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        obj.insert(key.into(), json!(value));
    }
}

impl WebhookConfigurationStrategy {
    fn default(&self, obj: &mut Value) {
        let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
            return;
        };
        for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
            default_str(hook, "failurePolicy", "Fail");
            default_str(hook, "matchPolicy", "Equivalent");
            for sel in ["namespaceSelector", "objectSelector"] {
                if hook.get(sel).is_none_or(Value::is_null) {
                    hook.insert(sel.into(), json!({}));
                }
            }
            if hook.get("timeoutSeconds").is_none_or(Value::is_null) {
                hook.insert("timeoutSeconds".into(), json!(10));
            }
            if self.mutating {
                default_str(hook, "reinvocationPolicy", "Never");
            }
            if let Some(svc) = hook
                .get_mut("clientConfig")
                .and_then(|c| c.get_mut("service"))
                .and_then(Value::as_object_mut)
            {
                if svc.get("port").is_none_or(Value::is_null) {
                    svc.insert("port".into(), json!(443));
                }
            }
            if let Some(rules) = hook.get_mut("rules").and_then(Value::as_array_mut) {
                for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                    default_str(rule, "scope", "*");
                }
            }
        }
    }

    fn validate_hook(&self, hook: &Value, at: &FieldPath, errs: &mut Vec<FieldError>) {
        let s = |k: &str| hook.get(k).and_then(Value::as_str).unwrap_or("");
        let name = s("name");
        let name_at = at.child("name");
        if name.is_empty() {
            errs.push(FieldError::required(&name_at, ""));
        } else {
            for e in is_dns1123_subdomain(name) {
                errs.push(FieldError::invalid(&name_at, name, e));
            }
            if name.split('.').count() < 3 {
                errs.push(FieldError::invalid(
                    &name_at,
                    name,
                    "should be a domain with at least three segments separated by dots",
                ));
            }
        }
        let cc = hook.get("clientConfig").cloned().unwrap_or(Value::Null);
        let cc_at = at.child("clientConfig");
        let has_url = cc
            .get("url")
            .and_then(Value::as_str)
            .is_some_and(|u| !u.is_empty());
        let has_svc = cc.get("service").is_some_and(Value::is_object);
        match (has_url, has_svc) {
            (true, true) => errs.push(FieldError::required(
                &cc_at,
                "exactly one of url or service is required",
            )),
            (false, false) => errs.push(FieldError::required(
                &cc_at,
                "exactly one of url or service is required",
            )),
            (true, false) => {
                let url = cc.get("url").and_then(Value::as_str).unwrap_or("");
                let url_at = cc_at.child("url");
                match url.parse::<http::Uri>() {
                    Ok(u) if u.scheme_str() != Some("https") => errs.push(FieldError::invalid(
                        &url_at,
                        url,
                        "'https' is the only allowed URL scheme",
                    )),
                    Ok(u) if u.host().is_none_or(str::is_empty) => {
                        errs.push(FieldError::invalid(&url_at, url, "host must be specified"))
                    }
                    Ok(_) => {}
                    Err(e) => errs.push(FieldError::invalid(
                        &url_at,
                        url,
                        format!("url must be a valid URL: {e}"),
                    )),
                }
            }
            (false, true) => {
                let svc = &cc["service"];
                let svc_at = cc_at.child("service");
                for k in ["name", "namespace"] {
                    if svc.get(k).and_then(Value::as_str).is_none_or(str::is_empty) {
                        errs.push(FieldError::required(
                            svc_at.child(k),
                            "service ".to_string() + k + " is required",
                        ));
                    }
                }
                if let Some(p) = svc.get("port").and_then(Value::as_i64) {
                    if !(1..=65535).contains(&p) {
                        errs.push(FieldError::invalid(
                            svc_at.child("port"),
                            p,
                            "port is not valid: must be between 1 and 65535, inclusive",
                        ));
                    }
                }
                if let Some(path) = svc.get("path").and_then(Value::as_str) {
                    if !path.starts_with('/') {
                        errs.push(FieldError::invalid(
                            svc_at.child("path"),
                            path,
                            "must start with a '/'",
                        ));
                    }
                }
            }
        }
        let se_at = at.child("sideEffects");
        match s("sideEffects") {
            "" => errs.push(FieldError::required(&se_at, "")),
            "None" | "NoneOnDryRun" => {}
            other => errs.push(FieldError::not_supported(
                &se_at,
                other,
                &["None", "NoneOnDryRun"],
            )),
        }
        let versions: Vec<&str> = hook
            .get("admissionReviewVersions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let arv_at = at.child("admissionReviewVersions");
        if versions.is_empty() {
            errs.push(FieldError::required(
                &arv_at,
                "must specify one of v1, v1beta1",
            ));
        } else if !versions.iter().any(|v| matches!(*v, "v1" | "v1beta1")) {
            errs.push(FieldError::invalid(
                &arv_at,
                json!(versions),
                "must include at least one of v1, v1beta1",
            ));
        }
        if let Some(t) = hook.get("timeoutSeconds").and_then(Value::as_i64) {
            if !(1..=30).contains(&t) {
                errs.push(FieldError::invalid(
                    at.child("timeoutSeconds"),
                    t,
                    "the timeout value must be between 1 and 30 seconds",
                ));
            }
        }
        for (key, allowed) in [
            ("failurePolicy", &["Fail", "Ignore"][..]),
            ("matchPolicy", &["Equivalent", "Exact"][..]),
            ("reinvocationPolicy", &["IfNeeded", "Never"][..]),
        ] {
            if let Some(v) = hook.get(key).and_then(Value::as_str) {
                if !allowed.contains(&v) {
                    errs.push(FieldError::not_supported(at.child(key), v, allowed));
                }
            }
        }
        let mut seen = HashSet::new();
        for (i, c) in hook
            .get("matchConditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let c_at = at.child("matchConditions").index(i);
            let cname = c.get("name").and_then(Value::as_str).unwrap_or("");
            if cname.is_empty() {
                errs.push(FieldError::required(c_at.child("name"), ""));
            } else {
                for e in is_qualified_name(cname) {
                    errs.push(FieldError::invalid(c_at.child("name"), cname, e));
                }
                if !seen.insert(cname.to_string()) {
                    errs.push(FieldError::duplicate(c_at.child("name"), cname));
                }
            }
            let expr = c.get("expression").and_then(Value::as_str).unwrap_or("");
            if expr.is_empty() {
                errs.push(FieldError::required(c_at.child("expression"), ""));
            } else if let Some(e) = Expression::compile(expr).compile_error() {
                errs.push(FieldError::invalid(
                    c_at.child("expression"),
                    expr,
                    format!("compilation failed: {e}"),
                ));
            }
        }
    }
}

impl Strategy for WebhookConfigurationStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        self.default(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        self.default(new);
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let mut names = HashSet::new();
        for (i, hook) in obj
            .get("webhooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = FieldPath::new("webhooks").index(i);
            self.validate_hook(hook, &at, &mut errs);
            let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
            if !name.is_empty() && !names.insert(name.to_string()) {
                errs.push(FieldError::duplicate(at.child("name"), name));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        self.validate(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook() -> Value {
        json!({"name": "a.example.com", "clientConfig": {"service": {"namespace": "ns", "name": "s"}},
               "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
               "sideEffects": "None", "admissionReviewVersions": ["v1"]})
    }

    #[test]
    fn defaults_as_upstream() {
        let s = WebhookConfigurationStrategy { mutating: true };
        let mut obj = json!({"webhooks": [hook()]});
        s.prepare_for_create(&mut obj);
        let h = &obj["webhooks"][0];
        assert_eq!(h["failurePolicy"], "Fail");
        assert_eq!(h["matchPolicy"], "Equivalent");
        assert_eq!(h["timeoutSeconds"], 10);
        assert_eq!(h["reinvocationPolicy"], "Never");
        assert_eq!(h["namespaceSelector"], json!({}));
        assert_eq!(h["clientConfig"]["service"]["port"], 443);
        assert_eq!(h["rules"][0]["scope"], "*");
        assert!(s.validate(&obj).is_empty());
    }

    #[test]
    fn refuses_what_could_not_be_called() {
        let s = WebhookConfigurationStrategy { mutating: false };
        let mut bad = hook();
        bad["name"] = json!("short");
        bad.as_object_mut().unwrap().remove("sideEffects");
        bad["clientConfig"] = json!({"url": "http://x"});
        bad["timeoutSeconds"] = json!(31);
        bad["matchConditions"] = json!([{"name": "c", "expression": "object.("}]);
        let errs = s.validate(&json!({"webhooks": [bad, hook(), hook()]}));
        let fields: Vec<String> = errs.iter().map(|e| e.field.to_string()).collect();
        for f in [
            "webhooks[0].name",
            "webhooks[0].sideEffects",
            "webhooks[0].clientConfig.url",
            "webhooks[0].timeoutSeconds",
            "webhooks[0].matchConditions[0].expression",
            "webhooks[2].name",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} not in {fields:?}");
        }
    }
}
