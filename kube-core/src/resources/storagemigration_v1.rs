//! `storagemigration.k8s.io/v1`: StorageVersionMigrations (GA in v1.37),
//! which ask the storage version migrator to rewrite every object of a
//! resource in its current storage version.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::SpecStrategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::storagemigration::v1;
use serde_json::{json, Value};

use super::columns::{array_at, str_or};
use super::kind;

/// storagemigration.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![kind::<v1::StorageVersionMigration>()
        .with_status()
        .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
        .columns(vec![
            Column::func("Resource", "string", |o| {
                json!(match lookup(o, "spec.resource") {
                    Some(r) => {
                        let (res, group) = (str_or(r, "resource", ""), str_or(r, "group", ""));
                        if group.is_empty() {
                            res
                        } else {
                            format!("{res}.{group}")
                        }
                    }
                    None => String::new(),
                })
            }),
            Column::func("Status", "string", |o| json!(migration_status(o))),
        ])
        .strategy(SpecStrategy)]
}

/// The type of the first true `Running`, `Failed` or `Succeeded`
/// condition, else `Unknown` (upstream's printer).
fn migration_status(o: &Value) -> String {
    array_at(o, "status.conditions")
        .iter()
        .filter(|c| str_or(c, "status", "") == "True")
        .map(|c| str_or(c, "type", ""))
        .filter(|t| matches!(t.as_str(), "Running" | "Failed" | "Succeeded"))
        .last()
        .unwrap_or_else(|| "Unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_column() {
        assert_eq!(migration_status(&json!({})), "Unknown");
        let o = json!({"status": {"conditions": [
            {"type": "Running", "status": "False"},
            {"type": "Succeeded", "status": "True"}]}});
        assert_eq!(migration_status(&o), "Succeeded");
    }
}
