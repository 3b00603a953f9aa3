//! Every built-in resource kube-core serves, declared on the generic store.
//!
//! One file per group/version holds the declarations (names, scope, short
//! names, categories, storage paths, Table columns); defaulting and
//! validation shared by several kinds live in their own modules.

mod admissionregistration_v1;
mod apps_v1;
mod authentication_v1;
mod authorization_v1;
mod autoscaling_v1;
mod autoscaling_v2;
mod autoscaling_validation;
mod batch_v1;
mod certificates_v1;
mod columns;
mod coordination_v1;
pub(crate) mod core_strategies;
mod core_v1;
mod discovery_v1;
mod event_validation;
mod events_v1;
mod flowcontrol_v1;
mod kubelet_subresources;
mod networking;
mod networking_v1;
mod node_v1;
pub mod openapi;
mod part_subresources;
mod patch_keys;
mod pod_spec;
mod policy_v1;
pub(crate) mod rbac;
mod rbac_v1;
mod resource_v1;
mod scheduling_v1;
mod services;
mod storage_v1;
mod storagemigration_v1;
mod subresources;
mod webhook_configuration;
mod workloads;

pub use authentication_v1::register_token_review;
pub use authorization_v1::register as register_access_reviews;
use std::sync::Arc;

use apiserver::admission::AdmissionChain;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::store::Store;
use apiserver::storage::EtcdStorage;

pub use services::ServiceStrategy;

/// All resource declarations, in upstream's discovery order (core first,
/// then the groups by upstream's group priority).
pub fn definitions() -> Vec<ResourceDef> {
    let mut defs = core_v1::definitions();
    let core_event = defs
        .iter()
        .find(|d| d.resource == "events")
        .map(events_v1::definition);
    defs.extend(apps_v1::definitions());
    defs.extend(core_event);
    // v2 first: the preferred version, as upstream.
    let hpa_v2 = autoscaling_v2::definitions();
    let hpa_v1: Vec<ResourceDef> = hpa_v2.iter().map(autoscaling_v1::definition).collect();
    defs.extend(hpa_v2);
    defs.extend(hpa_v1);
    defs.extend(batch_v1::definitions());
    defs.extend(certificates_v1::definitions());
    defs.extend(networking_v1::definitions());
    defs.extend(policy_v1::definitions());
    defs.extend(rbac_v1::definitions());
    defs.extend(storage_v1::definitions());
    defs.extend(admissionregistration_v1::definitions());
    defs.extend(scheduling_v1::definitions());
    defs.extend(coordination_v1::definitions());
    defs.extend(node_v1::definitions());
    defs.extend(discovery_v1::definitions());
    defs.extend(resource_v1::definitions());
    defs.extend(flowcontrol_v1::definitions());
    defs.extend(storagemigration_v1::definitions());
    defs
}

/// A built-in kind, declared from the k8s-openapi type `T` that models it:
/// its group, version, kind, resource name (the URL segment), scope and
/// OpenAPI schema all come from the type, so a declaration cannot disagree
/// with the schema it is published, validated and applied with. Refine it
/// with `ResourceDef`'s builder methods.
pub(crate) fn kind<T>() -> ResourceDef
where
    T: k8s_openapi::Resource + schemars::JsonSchema,
    T::Scope: 'static,
{
    let def = ResourceDef::new(T::GROUP, T::VERSION, T::KIND, T::URL_PATH_SEGMENT).schema::<T>();
    if namespaced::<T::Scope>() {
        def
    } else {
        def.cluster_scoped()
    }
}

/// Another version `T` of a kind stored as `storage`, converted by
/// `to_storage` and `from_storage` (see `ResourceDef::served_as`).
pub(crate) fn served_as<T>(
    storage: &ResourceDef,
    to_storage: apiserver::registry::conversion::ConvertFn,
    from_storage: apiserver::registry::conversion::ConvertFn,
) -> ResourceDef
where
    T: k8s_openapi::Resource + schemars::JsonSchema,
{
    ResourceDef::served_as(
        storage,
        T::GROUP,
        T::VERSION,
        T::KIND,
        to_storage,
        from_storage,
    )
    .schema::<T>()
}

fn namespaced<S: 'static>() -> bool {
    std::any::TypeId::of::<S>() == std::any::TypeId::of::<k8s_openapi::NamespaceResourceScope>()
}

/// How `serviceaccounts/<name>/token` signs tokens.
pub struct TokenIssuing {
    pub signer: Arc<apiserver::authentication::service_account::TokenSigner>,
    /// Audiences of tokens that ask for none (`--api-audiences`).
    pub audiences: Vec<String>,
}

/// Builds the stores of every declared resource; Services allocate with
/// `services` (cluster IPs and node ports).
pub fn build(
    storage: &EtcdStorage,
    prefix: &str,
    admission: &AdmissionChain,
    services: crate::allocators::AllocatingServiceStrategy,
    tokens: Option<TokenIssuing>,
) -> (Catalog, Arc<apiserver::openapi::OpenApi>) {
    let mut groups = Catalog::default();
    let mut services = Some(services);
    let budgets = subresources::DisruptionBudgets::default();
    let defs = definitions();
    let spec = openapi::build(&defs);
    for mut def in defs {
        let checker = spec.clone();
        let (g, v, k) = (def.group.clone(), def.version.clone(), def.kind.clone());
        def = def.with_unknown_fields(Arc::new(move |obj| checker.unknown_fields(&g, &v, &k, obj)));
        if let Some(root) = spec.schema_ref(&def.group, &def.version, &def.kind) {
            def = def.with_field_types(Arc::new(apiserver::fieldmanager::typeinfo::OpenApiTypes {
                root: root.clone(),
                components: spec.components().clone(),
            }));
            let smp = spec.clone();
            def = def.with_strategic_merge(Arc::new(move |old, patch| {
                apiserver::endpoints::handlers::strategic_merge::apply(
                    old,
                    patch,
                    &root,
                    smp.components(),
                )
            }));
        }
        if def.group.is_empty() && def.resource == "serviceaccounts" {
            if let Some(t) = &tokens {
                def = def.with_custom_subresource(subresources::token_subresource(
                    t.signer.clone(),
                    t.audiences.clone(),
                ));
            }
        }
        if def.group.is_empty() && def.resource == "pods" {
            def.custom_subresources = subresources::pod_subresources(budgets.clone());
        }
        if def.group.is_empty() && def.resource == "services" {
            if let Some(s) = services.take() {
                def = def.strategy(s);
            }
        }
        groups.add(Store::new(def, storage.clone(), prefix, admission.clone()));
    }
    authentication_v1::register(&mut groups);
    subresources::register_bindings(&mut groups);
    if let Some(pdbs) = groups.lookup("policy", "v1", "poddisruptionbudgets") {
        let _ = budgets.set(pdbs.clone());
    }
    (groups, spec)
}

#[cfg(test)]
mod validation_tests;
#[cfg(test)]
mod versioned_validation_tests;

#[cfg(test)]
mod kind_tests {
    use super::kind;
    use k8s_openapi::api::{core::v1 as core, rbac::v1 as rbac};

    #[test]
    fn a_declaration_takes_names_scope_and_schema_from_its_type() {
        let pods = kind::<core::Pod>();
        assert_eq!(
            (
                pods.group.as_str(),
                pods.version.as_str(),
                pods.kind.as_str()
            ),
            ("", "v1", "Pod")
        );
        assert_eq!(pods.resource, "pods");
        assert_eq!(pods.singular, "pod");
        assert!(pods.namespaced);
        let roles = kind::<rbac::ClusterRole>();
        assert_eq!(roles.group, "rbac.authorization.k8s.io");
        assert_eq!(roles.resource, "clusterroles");
        assert!(!roles.namespaced);
        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        let schema_of = roles.schema.expect("a schema");
        assert_eq!(schema_of(&mut generator), "io.k8s.api.rbac.v1.ClusterRole");
    }
}
