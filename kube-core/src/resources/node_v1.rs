//! `node.k8s.io/v1`: RuntimeClasses.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::table::Column;
use k8s_openapi::api::node::v1;

use super::kind;

/// node.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![kind::<v1::RuntimeClass>()
        .name_rule(apiserver::apimachinery::validation::NameRule::Dns1123Subdomain)
        .columns(vec![Column::path("Handler", "handler"), Column::age()])]
}
