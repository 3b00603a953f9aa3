//! `node.k8s.io/v1`: RuntimeClasses.

use shared::registry::resource::ResourceDef;
use shared::registry::table::Column;

/// node.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses")
            .cluster_scoped()
            .name_rule(shared::apimachinery::validation::NameRule::Dns1123Subdomain)
            .columns(vec![Column::path("Handler", "handler"), Column::age()]),
    ]
}
