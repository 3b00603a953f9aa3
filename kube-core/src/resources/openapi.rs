//! The OpenAPI documents of the built-in kinds, generated from the
//! k8s-openapi types (their JSON schemas carry upstream's field docs), plus
//! the list types, map keys and patch strategies upstream's spec adds.

use std::sync::Arc;

use apiserver::openapi::{KindSchema, OpenApi};
use apiserver::registry::resource::ResourceDef;
use schemars::generate::SchemaSettings;
use serde_json::{json, Map, Value};

use super::patch_keys::LIST_KEYS;

/// Structs upstream marks `+structType=atomic` (`x-kubernetes-map-type:
/// atomic`): server-side apply replaces them as a whole.
const ATOMIC_STRUCTS: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    "io.k8s.api.core.v1.SecretReference",
    "io.k8s.api.core.v1.NodeSelector",
    "io.k8s.api.core.v1.NodeSelectorTerm",
    "io.k8s.api.core.v1.TopologySelectorTerm",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.api.core.v1.SecretKeySelector",
    "io.k8s.api.core.v1.ObjectFieldSelector",
    "io.k8s.api.core.v1.ResourceFieldSelector",
];

/// Adds the list/map and patch metadata upstream's spec carries.
fn annotate(components: &mut Map<String, Value>) {
    for name in ATOMIC_STRUCTS {
        if let Some(Value::Object(s)) = components.get_mut(*name) {
            s.insert("x-kubernetes-map-type".into(), json!("atomic"));
        }
    }
    for (schema, prop, key, strategy, map_keys) in LIST_KEYS {
        if prop.is_empty() {
            continue;
        }
        let Some(p) = components
            .get_mut(*schema)
            .and_then(|s| s.get_mut("properties"))
            .and_then(|p| p.get_mut(*prop))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        p.insert("x-kubernetes-patch-merge-key".into(), json!(key));
        p.insert("x-kubernetes-patch-strategy".into(), json!(strategy));
        if !map_keys.is_empty() {
            p.insert("x-kubernetes-list-type".into(), json!("map"));
            p.insert("x-kubernetes-list-map-keys".into(), json!(map_keys));
        }
    }
    if let Some(p) = components
        .get_mut("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        .and_then(|s| s.get_mut("properties"))
        .and_then(|p| p.get_mut("finalizers"))
        .and_then(Value::as_object_mut)
    {
        p.insert("x-kubernetes-patch-strategy".into(), json!("merge"));
        p.insert("x-kubernetes-list-type".into(), json!("set"));
    }
    if let Some(p) = components
        .get_mut("io.k8s.api.apps.v1.DeploymentSpec")
        .and_then(|s| s.get_mut("properties"))
        .and_then(|p| p.get_mut("strategy"))
        .and_then(Value::as_object_mut)
    {
        p.insert("x-kubernetes-patch-strategy".into(), json!("retainKeys"));
    }
}

/// Builds the OpenAPI documents of `defs` from the schema each declares
/// (kinds without one are left out).
pub fn build(defs: &[ResourceDef]) -> Arc<OpenApi> {
    let mut gen = SchemaSettings::openapi3().into_generator();
    let mut kinds = Vec::new();
    for def in defs {
        if let Some(schema_of) = def.schema {
            kinds.push(KindSchema {
                def: def.clone(),
                schema: schema_of(&mut gen),
            });
        }
    }
    gen.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>();
    gen.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta>();
    gen.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Patch>();
    gen.subschema_for::<k8s_openapi::api::autoscaling::v1::Scale>();
    // Bodies of subresources with their own handlers.
    gen.subschema_for::<k8s_openapi::api::policy::v1::Eviction>();
    gen.subschema_for::<k8s_openapi::api::authentication::v1::TokenRequest>();
    gen.subschema_for::<k8s_openapi::api::core::v1::Binding>();
    let mut components = gen.take_definitions(true);
    annotate(&mut components);
    Arc::new(OpenApi::build(&kinds, components))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_kind_has_a_schema() {
        let defs = super::super::definitions();
        for d in &defs {
            assert!(
                d.schema.is_some(),
                "no schema for {}/{} {}",
                d.group,
                d.version,
                d.kind
            );
        }
        let api = build(&defs);
        let spec = &api.components()["io.k8s.api.apps.v1.RollingUpdateDeployment"];
        assert!(spec["properties"]["maxSurge"]["description"]
            .as_str()
            .unwrap_or("")
            .contains("maximum number of pods"));
        let c = &api.components()["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(c["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(
            api.unknown_fields("apps", "v1", "Deployment", &json!({"spec": {"replicas": 1, "bogus": 1, "template": {"spec": {"containers": [{"name": "a", "imagee": "x"}]}}}})),
            ["spec.bogus", "spec.template.spec.containers[0].imagee"]
        );
    }
}
