//! `rbac.authorization.k8s.io/v1`: Roles, ClusterRoles and their bindings.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::table::Column;
use k8s_openapi::api::rbac::v1;
use serde_json::{json, Value};

use super::columns::{array_at, str_or};
use super::kind;
use super::rbac::{BindingStrategy, RoleStrategy};

/// RBAC declarations. Roles print upstream's default `Name`, `Created At`.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        kind::<v1::ClusterRoleBinding>()
            .name_rule(apiserver::apimachinery::validation::NameRule::PathSegment)
            .columns(binding_columns())
            .strategy(BindingStrategy { cluster: true }),
        kind::<v1::ClusterRole>()
            .name_rule(apiserver::apimachinery::validation::NameRule::PathSegment)
            .strategy(RoleStrategy { cluster: true }),
        kind::<v1::RoleBinding>()
            .name_rule(apiserver::apimachinery::validation::NameRule::PathSegment)
            .columns(binding_columns())
            .strategy(BindingStrategy { cluster: false }),
        kind::<v1::Role>()
            .name_rule(apiserver::apimachinery::validation::NameRule::PathSegment)
            .strategy(RoleStrategy { cluster: false }),
    ]
}

fn binding_columns() -> Vec<Column> {
    vec![
        Column::func("Role", "string", |o| {
            json!(format!(
                "{}/{}",
                str_or(o, "roleRef.kind", ""),
                str_or(o, "roleRef.name", "")
            ))
        }),
        Column::age(),
        Column::func("Users", "string", |o| json!(subjects(o, "User"))).wide(),
        Column::func("Groups", "string", |o| json!(subjects(o, "Group"))).wide(),
        Column::func("ServiceAccounts", "string", |o| {
            json!(subjects(o, "ServiceAccount"))
        })
        .wide(),
    ]
}

/// upstream's `SubjectsStrings`: names of one kind, service accounts as
/// `namespace/name`, joined by `, `.
fn subjects(o: &Value, kind: &str) -> String {
    array_at(o, "subjects")
        .iter()
        .filter(|s| s.get("kind").and_then(Value::as_str) == Some(kind))
        .map(|s| {
            let name = str_or(s, "name", "");
            let ns = str_or(s, "namespace", "");
            if kind == "ServiceAccount" && !ns.is_empty() {
                format!("{ns}/{name}")
            } else {
                name
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
