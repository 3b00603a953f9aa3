//! The OpenAPI documents of the built-in kinds, generated from the
//! k8s-openapi types (their JSON schemas carry upstream's field docs), plus
//! the list types, map keys and patch strategies upstream's spec adds.

use std::sync::Arc;

use apiserver::openapi::{KindSchema, OpenApi};
use apiserver::registry::resource::ResourceDef;
use schemars::generate::SchemaSettings;
use schemars::SchemaGenerator;
use serde_json::{json, Map, Value};

/// Adds the schema of `T` to the generator; returns its component name.
fn add<T: schemars::JsonSchema>(gen: &mut SchemaGenerator) -> String {
    gen.subschema_for::<T>();
    T::schema_name().into_owned()
}

macro_rules! kinds {
    ($gen:ident, $g:expr, $v:expr, $k:expr; $( ($group:literal, $version:literal, $kind:literal, $ty:ty) ),* $(,)?) => {
        match ($g, $v, $k) {
            $( ($group, $version, $kind) => Some(add::<$ty>($gen)), )*
            _ => None,
        }
    };
}

/// The component name of a kind's schema, after adding it (and everything
/// it references) to `gen`.
fn schema_of(gen: &mut SchemaGenerator, def: &ResourceDef) -> Option<String> {
    use k8s_openapi::api::*;
    kinds!(gen, def.group.as_str(), def.version.as_str(), def.kind.as_str();
        ("", "v1", "Binding", core::v1::Binding),
        ("", "v1", "ComponentStatus", core::v1::ComponentStatus),
        ("", "v1", "ConfigMap", core::v1::ConfigMap),
        ("", "v1", "Endpoints", core::v1::Endpoints),
        ("", "v1", "Event", core::v1::Event),
        ("", "v1", "LimitRange", core::v1::LimitRange),
        ("", "v1", "Namespace", core::v1::Namespace),
        ("", "v1", "Node", core::v1::Node),
        ("", "v1", "PersistentVolumeClaim", core::v1::PersistentVolumeClaim),
        ("", "v1", "PersistentVolume", core::v1::PersistentVolume),
        ("", "v1", "Pod", core::v1::Pod),
        ("", "v1", "PodTemplate", core::v1::PodTemplate),
        ("", "v1", "ReplicationController", core::v1::ReplicationController),
        ("", "v1", "ResourceQuota", core::v1::ResourceQuota),
        ("", "v1", "Secret", core::v1::Secret),
        ("", "v1", "ServiceAccount", core::v1::ServiceAccount),
        ("", "v1", "Service", core::v1::Service),
        ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", admissionregistration::v1::MutatingWebhookConfiguration),
        ("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicy", admissionregistration::v1::MutatingAdmissionPolicy),
        ("admissionregistration.k8s.io", "v1", "MutatingAdmissionPolicyBinding", admissionregistration::v1::MutatingAdmissionPolicyBinding),
        ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", admissionregistration::v1::ValidatingAdmissionPolicy),
        ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", admissionregistration::v1::ValidatingAdmissionPolicyBinding),
        ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", admissionregistration::v1::ValidatingWebhookConfiguration),
        ("apps", "v1", "ControllerRevision", apps::v1::ControllerRevision),
        ("apps", "v1", "DaemonSet", apps::v1::DaemonSet),
        ("apps", "v1", "Deployment", apps::v1::Deployment),
        ("apps", "v1", "ReplicaSet", apps::v1::ReplicaSet),
        ("apps", "v1", "StatefulSet", apps::v1::StatefulSet),
        ("authentication.k8s.io", "v1", "SelfSubjectReview", authentication::v1::SelfSubjectReview),
        ("authentication.k8s.io", "v1", "TokenReview", authentication::v1::TokenReview),
        ("authorization.k8s.io", "v1", "LocalSubjectAccessReview", authorization::v1::LocalSubjectAccessReview),
        ("authorization.k8s.io", "v1", "SelfSubjectAccessReview", authorization::v1::SelfSubjectAccessReview),
        ("authorization.k8s.io", "v1", "SelfSubjectRulesReview", authorization::v1::SelfSubjectRulesReview),
        ("authorization.k8s.io", "v1", "SubjectAccessReview", authorization::v1::SubjectAccessReview),
        ("autoscaling", "v1", "HorizontalPodAutoscaler", autoscaling::v1::HorizontalPodAutoscaler),
        ("autoscaling", "v2", "HorizontalPodAutoscaler", autoscaling::v2::HorizontalPodAutoscaler),
        ("batch", "v1", "CronJob", batch::v1::CronJob),
        ("batch", "v1", "Job", batch::v1::Job),
        ("certificates.k8s.io", "v1", "CertificateSigningRequest", certificates::v1::CertificateSigningRequest),
        ("certificates.k8s.io", "v1", "ClusterTrustBundle", certificates::v1::ClusterTrustBundle),
        ("certificates.k8s.io", "v1", "PodCertificateRequest", certificates::v1::PodCertificateRequest),
        ("coordination.k8s.io", "v1", "Lease", coordination::v1::Lease),
        ("discovery.k8s.io", "v1", "EndpointSlice", discovery::v1::EndpointSlice),
        ("events.k8s.io", "v1", "Event", events::v1::Event),
        ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", flowcontrol::v1::FlowSchema),
        ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration", flowcontrol::v1::PriorityLevelConfiguration),
        ("networking.k8s.io", "v1", "IngressClass", networking::v1::IngressClass),
        ("networking.k8s.io", "v1", "Ingress", networking::v1::Ingress),
        ("networking.k8s.io", "v1", "IPAddress", networking::v1::IPAddress),
        ("networking.k8s.io", "v1", "NetworkPolicy", networking::v1::NetworkPolicy),
        ("networking.k8s.io", "v1", "ServiceCIDR", networking::v1::ServiceCIDR),
        ("node.k8s.io", "v1", "RuntimeClass", node::v1::RuntimeClass),
        ("policy", "v1", "PodDisruptionBudget", policy::v1::PodDisruptionBudget),
        ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", rbac::v1::ClusterRoleBinding),
        ("rbac.authorization.k8s.io", "v1", "ClusterRole", rbac::v1::ClusterRole),
        ("rbac.authorization.k8s.io", "v1", "RoleBinding", rbac::v1::RoleBinding),
        ("rbac.authorization.k8s.io", "v1", "Role", rbac::v1::Role),
        ("scheduling.k8s.io", "v1", "PriorityClass", scheduling::v1::PriorityClass),
        ("storage.k8s.io", "v1", "CSIDriver", storage::v1::CSIDriver),
        ("storage.k8s.io", "v1", "CSINode", storage::v1::CSINode),
        ("storage.k8s.io", "v1", "CSIStorageCapacity", storage::v1::CSIStorageCapacity),
        ("storage.k8s.io", "v1", "StorageClass", storage::v1::StorageClass),
        ("storage.k8s.io", "v1", "VolumeAttachment", storage::v1::VolumeAttachment),
        ("storage.k8s.io", "v1", "VolumeAttributesClass", storage::v1::VolumeAttributesClass),
        ("resource.k8s.io", "v1", "DeviceClass", resource::v1::DeviceClass),
        ("resource.k8s.io", "v1", "DeviceTaintRule", resource::v1::DeviceTaintRule),
        ("resource.k8s.io", "v1", "ResourceClaim", resource::v1::ResourceClaim),
        ("resource.k8s.io", "v1", "ResourceClaimTemplate", resource::v1::ResourceClaimTemplate),
        ("resource.k8s.io", "v1", "ResourceSlice", resource::v1::ResourceSlice),
        ("storagemigration.k8s.io", "v1", "StorageVersionMigration", storagemigration::v1::StorageVersionMigration),
    )
}

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

/// Builds the OpenAPI documents of `defs` (kinds without a known type are
/// left out).
pub fn build(defs: &[ResourceDef]) -> Arc<OpenApi> {
    let mut gen = SchemaSettings::openapi3().into_generator();
    let mut kinds = Vec::new();
    for def in defs {
        if let Some(schema) = schema_of(&mut gen, def) {
            kinds.push(KindSchema {
                def: def.clone(),
                schema,
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
        let mut gen = SchemaSettings::openapi3().into_generator();
        for d in &defs {
            assert!(
                schema_of(&mut gen, d).is_some(),
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
