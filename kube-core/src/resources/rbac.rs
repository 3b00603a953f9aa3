//! RBAC validation, after upstream's `pkg/apis/rbac/validation`.

use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::strategy::Strategy;
use serde_json::{json, Value};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Roles and ClusterRoles: `ValidatePolicyRule` on each rule.
pub struct RoleStrategy {
    /// ClusterRoles may hold non-resource URLs and an aggregation rule.
    pub cluster: bool,
}

impl Strategy for RoleStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for (i, rule) in obj
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let p = FieldPath::new("rules").index(i);
            let verbs = strings(rule.get("verbs"));
            let urls = strings(rule.get("nonResourceURLs"));
            let resources = strings(rule.get("resources"));
            if verbs.is_empty() {
                errs.push(FieldError::required(
                    p.child("verbs"),
                    "verbs must contain at least one value",
                ));
            }
            if !urls.is_empty() {
                if !self.cluster {
                    errs.push(FieldError::invalid(
                        p.child("nonResourceURLs"),
                        json!(urls),
                        "namespaced rules cannot apply to non-resource URLs",
                    ));
                }
                if !resources.is_empty()
                    || rule
                        .get("apiGroups")
                        .is_some_and(|g| g.as_array().is_some_and(|a| !a.is_empty()))
                {
                    errs.push(FieldError::invalid(
                        p.child("nonResourceURLs"),
                        json!(urls),
                        "rules cannot apply to both regular resources and non-resource URLs",
                    ));
                }
                continue;
            }
            if rule
                .get("apiGroups")
                .and_then(Value::as_array)
                .is_none_or(|a| a.is_empty())
            {
                errs.push(FieldError::required(
                    p.child("apiGroups"),
                    "resource rules must supply at least one api group",
                ));
            }
            if resources.is_empty() {
                errs.push(FieldError::required(
                    p.child("resources"),
                    "resource rules must supply at least one resource",
                ));
            }
        }
        errs
    }
}

/// RoleBindings and ClusterRoleBindings: `roleRef` and subjects; `roleRef`
/// cannot change.
pub struct BindingStrategy {
    /// ClusterRoleBindings may only refer to ClusterRoles, and their
    /// service-account subjects need a namespace.
    pub cluster: bool,
}

impl Strategy for BindingStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let rr = obj.get("roleRef").cloned().unwrap_or(json!({}));
        let rp = FieldPath::new("roleRef");
        let group = rr.get("apiGroup").and_then(Value::as_str).unwrap_or("");
        if group != RBAC_GROUP {
            errs.push(FieldError::not_supported(
                rp.child("apiGroup"),
                json!(group),
                &[RBAC_GROUP],
            ));
        }
        let kind = rr.get("kind").and_then(Value::as_str).unwrap_or("");
        let kinds: &[&str] = if self.cluster {
            &["ClusterRole"]
        } else {
            &["Role", "ClusterRole"]
        };
        if !kinds.contains(&kind) {
            errs.push(FieldError::not_supported(
                rp.child("kind"),
                json!(kind),
                kinds,
            ));
        }
        let name = rr.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(rp.child("name"), ""));
        } else {
            for msg in
                apiserver::apimachinery::validation::names::validate_path_segment_name(name, false)
            {
                errs.push(FieldError::invalid(rp.child("name"), json!(name), msg));
            }
        }
        for (i, s) in obj
            .get("subjects")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let p = FieldPath::new("subjects").index(i);
            let sname = s.get("name").and_then(Value::as_str).unwrap_or("");
            if sname.is_empty() {
                errs.push(FieldError::required(p.child("name"), ""));
            }
            let skind = s.get("kind").and_then(Value::as_str).unwrap_or("");
            let sgroup = s.get("apiGroup").and_then(Value::as_str).unwrap_or("");
            match skind {
                "ServiceAccount" => {
                    if !sgroup.is_empty() {
                        errs.push(FieldError::not_supported(
                            p.child("apiGroup"),
                            json!(sgroup),
                            &[""],
                        ));
                    }
                    if !sname.is_empty() {
                        for msg in apiserver::apimachinery::validation::names::name_is_dns_subdomain(
                            sname, false,
                        ) {
                            errs.push(FieldError::invalid(p.child("name"), json!(sname), msg));
                        }
                    }
                    if self.cluster
                        && s.get("namespace")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .is_empty()
                    {
                        errs.push(FieldError::required(p.child("namespace"), ""));
                    }
                }
                "User" | "Group" => {
                    if sgroup != RBAC_GROUP {
                        errs.push(FieldError::not_supported(
                            p.child("apiGroup"),
                            json!(sgroup),
                            &[RBAC_GROUP],
                        ));
                    }
                }
                other => errs.push(FieldError::not_supported(
                    p.child("kind"),
                    json!(other),
                    &["ServiceAccount", "User", "Group"],
                )),
            }
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        if new.get("roleRef") != old.get("roleRef") {
            errs.push(FieldError::invalid(
                "roleRef",
                new.get("roleRef").cloned().unwrap_or(Value::Null),
                "cannot change roleRef",
            ));
        }
        errs
    }
}
