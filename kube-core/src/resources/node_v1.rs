//! `node.k8s.io/v1`: RuntimeClasses.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::table::Column;

/// node.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses")
            .cluster_scoped()
            .name_rule(apiserver::apimachinery::validation::NameRule::Dns1123Subdomain)
            .columns(vec![Column::path("Handler", "handler"), Column::age()]),
    ]
}
