//! Validation of a CustomResourceDefinition itself, with upstream's messages
//! (apiextensions `ValidateCustomResourceDefinition`).

use std::collections::HashSet;

use apiserver::apimachinery::validation::names::{is_dns1035_label, is_dns1123_subdomain};
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::schema::structural;
use serde_json::Value;

const PRINTER_COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn dns1035(value: &str, path: &FieldPath, errs: &mut Vec<FieldError>) {
    for m in is_dns1035_label(value) {
        errs.push(FieldError::invalid(path.clone(), value, m));
    }
}

/// Validates a CRD on create.
pub fn validate(crd: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec_path = FieldPath::new("spec");
    let Some(spec) = crd.get("spec").filter(|s| s.is_object()) else {
        errs.push(FieldError::required(spec_path, ""));
        return errs;
    };
    let group = str_at(spec, "group");
    let names = spec.get("names").cloned().unwrap_or(Value::Null);
    let plural = str_at(&names, "plural");
    let name = crd
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    // group
    let gp = spec_path.child("group");
    if group.is_empty() {
        errs.push(FieldError::required(gp, ""));
    } else {
        for m in is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid(gp.clone(), group, m));
        }
        if group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                gp,
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    // scope
    let scope = str_at(spec, "scope");
    let sp = spec_path.child("scope");
    if scope.is_empty() {
        errs.push(FieldError::required(sp, ""));
    } else if scope != "Namespaced" && scope != "Cluster" {
        errs.push(FieldError::not_supported(
            sp,
            scope,
            &["Cluster", "Namespaced"],
        ));
    }
    validate_names(&names, &spec_path.child("names"), &mut errs);
    validate_versions(spec, &spec_path, &mut errs);
    if spec.get("preserveUnknownFields").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::invalid(
            spec_path.child("preserveUnknownFields"),
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    validate_conversion(
        spec.get("conversion"),
        &spec_path.child("conversion"),
        &mut errs,
    );
    errs
}

fn validate_names(names: &Value, path: &FieldPath, errs: &mut Vec<FieldError>) {
    let plural = str_at(names, "plural");
    if plural.is_empty() {
        errs.push(FieldError::required(path.child("plural"), ""));
    } else {
        dns1035(plural, &path.child("plural"), errs);
    }
    let singular = str_at(names, "singular");
    if !singular.is_empty() {
        dns1035(singular, &path.child("singular"), errs);
    }
    let kind = str_at(names, "kind");
    if kind.is_empty() {
        errs.push(FieldError::required(path.child("kind"), ""));
    } else {
        for m in is_dns1035_label(&kind.to_lowercase()) {
            errs.push(FieldError::invalid(path.child("kind"), kind, m));
        }
    }
    let list_kind = str_at(names, "listKind");
    if !list_kind.is_empty() {
        for m in is_dns1035_label(&list_kind.to_lowercase()) {
            errs.push(FieldError::invalid(path.child("listKind"), list_kind, m));
        }
        if list_kind == kind {
            errs.push(FieldError::invalid(
                path.child("listKind"),
                list_kind,
                "kind and listKind may not be the same",
            ));
        }
    }
    if let Some(shorts) = names.get("shortNames").and_then(Value::as_array) {
        for (i, s) in shorts.iter().enumerate() {
            let s = s.as_str().unwrap_or("");
            dns1035(s, &path.child("shortNames").index(i), errs);
        }
    }
    if let Some(cats) = names.get("categories").and_then(Value::as_array) {
        for (i, c) in cats.iter().enumerate() {
            let c = c.as_str().unwrap_or("");
            dns1035(c, &path.child("categories").index(i), errs);
        }
    }
}

fn validate_versions(spec: &Value, spec_path: &FieldPath, errs: &mut Vec<FieldError>) {
    let vp = spec_path.child("versions");
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if versions.is_empty() {
        errs.push(FieldError::invalid(
            vp,
            Value::Array(vec![]),
            "must have exactly one version marked as storage version",
        ));
        return;
    }
    let storage = versions
        .iter()
        .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .count();
    if storage != 1 {
        let names: Vec<Value> = versions
            .iter()
            .map(|v| Value::String(str_at(v, "name").to_string()))
            .collect();
        errs.push(FieldError::invalid(
            vp.clone(),
            Value::Array(names),
            "must have exactly one version marked as storage version",
        ));
    }
    if !versions
        .iter()
        .any(|v| v.get("served").and_then(Value::as_bool) == Some(true))
    {
        errs.push(FieldError::invalid(
            vp.clone(),
            Value::Array(vec![]),
            "must have at least one version marked as served",
        ));
    }
    let mut seen = HashSet::new();
    for (i, v) in versions.iter().enumerate() {
        let p = vp.index(i);
        let name = str_at(v, "name");
        if name.is_empty() {
            errs.push(FieldError::required(p.child("name"), ""));
        } else {
            dns1035(name, &p.child("name"), errs);
            if !seen.insert(name.to_string()) {
                errs.push(FieldError::duplicate(p.child("name"), name));
            }
        }
        match v.get("schema").and_then(|s| s.get("openAPIV3Schema")) {
            None => errs.push(FieldError::required(
                p.child("schema").child("openAPIV3Schema"),
                "schemas are required",
            )),
            Some(s) => {
                let sp = p.child("schema").child("openAPIV3Schema");
                errs.extend(structural::check(s, &sp));
                errs.extend(apiserver::schema::cel::compile_errors(s, &sp));
                errs.extend(structural::check_defaults(s, &sp));
            }
        }
        if let Some(cols) = v.get("additionalPrinterColumns").and_then(Value::as_array) {
            for (j, c) in cols.iter().enumerate() {
                let cp = p.child("additionalPrinterColumns").index(j);
                if str_at(c, "name").is_empty() {
                    errs.push(FieldError::required(cp.child("name"), ""));
                }
                let t = str_at(c, "type");
                if t.is_empty() {
                    errs.push(FieldError::required(cp.child("type"), ""));
                } else if !PRINTER_COLUMN_TYPES.contains(&t) {
                    errs.push(FieldError::not_supported(
                        cp.child("type"),
                        t,
                        PRINTER_COLUMN_TYPES,
                    ));
                }
                if str_at(c, "jsonPath").is_empty() {
                    errs.push(FieldError::required(cp.child("jsonPath"), ""));
                }
            }
        }
        if let Some(scale) = v.get("subresources").and_then(|s| s.get("scale")) {
            let sp = p.child("subresources").child("scale");
            let spec_path = str_at(scale, "specReplicasPath");
            if spec_path.is_empty() {
                errs.push(FieldError::required(sp.child("specReplicasPath"), ""));
            } else if !spec_path.starts_with(".spec.") {
                errs.push(FieldError::invalid(
                    sp.child("specReplicasPath"),
                    spec_path,
                    "should be a json path under .spec",
                ));
            }
            let status_path = str_at(scale, "statusReplicasPath");
            if status_path.is_empty() {
                errs.push(FieldError::required(sp.child("statusReplicasPath"), ""));
            } else if !status_path.starts_with(".status.") {
                errs.push(FieldError::invalid(
                    sp.child("statusReplicasPath"),
                    status_path,
                    "should be a json path under .status",
                ));
            }
        }
    }
}

fn validate_conversion(conv: Option<&Value>, path: &FieldPath, errs: &mut Vec<FieldError>) {
    let Some(conv) = conv else {
        return;
    };
    match str_at(conv, "strategy") {
        "None" | "" => {}
        "Webhook" => match conv.get("webhook") {
            None => errs.push(FieldError::required(
                path.child("webhook"),
                "required when strategy is set to Webhook",
            )),
            Some(w) => {
                let cc = w.get("clientConfig").cloned().unwrap_or(Value::Null);
                let has_url = !str_at(&cc, "url").is_empty();
                let has_svc = cc.get("service").is_some_and(|s| s.is_object());
                if has_url == has_svc {
                    errs.push(FieldError::required(
                        path.child("webhook").child("clientConfig"),
                        "exactly one of url or service is required",
                    ));
                }
                if w.get("conversionReviewVersions")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
                {
                    errs.push(FieldError::required(
                        path.child("webhook").child("conversionReviewVersions"),
                        "must contain at least one version",
                    ));
                }
            }
        },
        other => errs.push(FieldError::not_supported(
            path.child("strategy"),
            other,
            &["None", "Webhook"],
        )),
    }
}

/// Validates a CRD update: everything of create, plus immutable fields and
/// `status.storedVersions`.
pub fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate(new);
    let scope_new = super::spec_str(new, &["scope"]);
    let scope_old = super::spec_str(old, &["scope"]);
    if scope_new != scope_old && !scope_old.is_empty() {
        errs.push(FieldError::invalid(
            "spec.scope",
            scope_new,
            "field is immutable",
        ));
    }
    let stored: Vec<&str> = old
        .get("status")
        .and_then(|s| s.get("storedVersions"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<&str> = super::versions(new)
        .iter()
        .map(|v| str_at(v, "name"))
        .collect();
    for (i, s) in stored.iter().enumerate() {
        if !names.contains(s) {
            errs.push(FieldError::invalid(
                FieldPath::new("status").child("storedVersions").index(i),
                *s,
                "must appear in spec.versions",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]
            }
        })
    }

    fn msgs(v: &Value) -> Vec<String> {
        validate(v).iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn valid_crd() {
        assert!(msgs(&crd()).is_empty());
    }

    #[test]
    fn rejects_bad_crds() {
        let mut c = crd();
        c["metadata"]["name"] = json!("other.example.com");
        assert_eq!(msgs(&c), vec!["metadata.name: Invalid value: \"other.example.com\": must be spec.names.plural+\".\"+spec.group"]);

        let mut c = crd();
        c["spec"]["versions"][0]["storage"] = json!(false);
        assert_eq!(msgs(&c), vec!["spec.versions: Invalid value: []string{\"v1\"}: must have exactly one version marked as storage version"]);

        let mut c = crd();
        c["spec"]["scope"] = json!("Global");
        assert_eq!(msgs(&c), vec!["spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\""]);

        let mut c = crd();
        c["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "object", "properties": {"a": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}});
        assert_eq!(msgs(&c).len(), 1);

        let mut c = crd();
        c["spec"]["versions"][0]
            .as_object_mut()
            .unwrap()
            .remove("schema");
        assert_eq!(
            msgs(&c),
            vec!["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]
        );
    }

    #[test]
    fn stored_versions_must_stay() {
        let mut old = crd();
        old["status"] = json!({"storedVersions": ["v1"]});
        let mut new = crd();
        new["spec"]["versions"][0]["name"] = json!("v2");
        let errs: Vec<String> = validate_update(&new, &old)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert!(
            errs.contains(
                &"status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions"
                    .to_string()
            ),
            "{errs:?}"
        );
    }
}
