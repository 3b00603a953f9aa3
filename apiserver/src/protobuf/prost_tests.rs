//! Cross-checks of the schema tables with an independent implementation:
//! prost with the `k8s-pb` 0.9 bindings, generated from upstream's
//! `generated.proto` files of a release before our 1.36 source, decodes
//! what we encode.

use super::encode_tests::{decode, encode, rich_object, unknown};
use super::schema;
use super::*;
use prost::Message as _;
use serde_json::Map;

/// Our encoding decoded by prost with the `k8s-pb` type, written again
/// by prost, and decoded by us: what prost's types do not hold is lost.
pub(super) fn through_prost(bytes: &[u8], api_version: &str, kind: &str) -> Value {
    let Some(body) = bytes.strip_prefix(&MAGIC[..]) else {
        panic!("no magic")
    };
    let unknown = match k8s_pb::apimachinery::pkg::runtime::Unknown::decode(body) {
        Ok(unknown) => unknown,
        Err(e) => panic!("k8s-pb cannot decode the envelope: {e}"),
    };
    let type_meta = unknown.type_meta.unwrap_or_default();
    assert_eq!(type_meta.api_version.as_deref(), Some(api_version));
    assert_eq!(type_meta.kind.as_deref(), Some(kind));
    assert_eq!(unknown.content_type.as_deref(), Some(""));
    let raw = unknown.raw.unwrap_or_default();
    let again = match with_prost(&api_version, kind, &raw) {
        Ok((again, _)) => again,
        Err(e) => panic!("k8s-pb cannot decode {api_version} {kind}: {e}"),
    };
    let envelope = k8s_pb::apimachinery::pkg::runtime::Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
        }),
        raw: Some(again),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&envelope.encode_to_vec());
    decode(&out)
}

/// An object built with the k8s-pb types, written by prost in the
/// `runtime.Unknown` envelope, as decoded by us: bytes that owe nothing to
/// our tables.
pub(super) fn from_prost(api_version: &str, kind: &str, object: &impl prost::Message) -> Value {
    let envelope = k8s_pb::apimachinery::pkg::runtime::Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
        }),
        raw: Some(object.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&envelope.encode_to_vec());
    decode(&out)
}

/// `Some(s.to_owned())`, for the optional strings of k8s-pb types.
pub(super) fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

/// What prost reads of `raw`: written again, and its `Debug` form.
type Prosted = (Vec<u8>, String);

fn reencode<T: prost::Message + Default + std::fmt::Debug>(
    raw: &[u8],
) -> Result<Prosted, prost::DecodeError> {
    T::decode(raw).map(|message| (message.encode_to_vec(), format!("{message:?}")))
}

/// `raw` (the bytes of an object of the given kind) decoded by prost with
/// the k8s-pb type of that kind, or of the same kind in the older version
/// k8s-pb 0.9 has (v1beta1 of a kind GA in 1.37).
fn with_prost(api_version: &str, kind: &str, raw: &[u8]) -> Result<Prosted, prost::DecodeError> {
    use k8s_pb::api;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    macro_rules! kinds {
        ($($v:literal $k:literal => $t:ty,)*) => {
            match (api_version, kind) {
                $(($v, $k) => reencode::<$t>(raw),)*
                _ => panic!("no k8s-pb type for {api_version} {kind}"),
            }
        };
    }
    kinds! {
        "v1" "Binding" => api::core::v1::Binding,
        "v1" "ConfigMap" => api::core::v1::ConfigMap,
        "v1" "RangeAllocation" => api::core::v1::RangeAllocation,
        "v1" "Endpoints" => api::core::v1::Endpoints,
        "v1" "Event" => api::core::v1::Event,
        "v1" "LimitRange" => api::core::v1::LimitRange,
        "v1" "Namespace" => api::core::v1::Namespace,
        "v1" "Node" => api::core::v1::Node,
        "v1" "PersistentVolume" => api::core::v1::PersistentVolume,
        "v1" "PersistentVolumeClaim" => api::core::v1::PersistentVolumeClaim,
        "v1" "Pod" => api::core::v1::Pod,
        "v1" "PodTemplate" => api::core::v1::PodTemplate,
        "v1" "ReplicationController" => api::core::v1::ReplicationController,
        "v1" "ResourceQuota" => api::core::v1::ResourceQuota,
        "v1" "Secret" => api::core::v1::Secret,
        "v1" "Service" => api::core::v1::Service,
        "v1" "ServiceAccount" => api::core::v1::ServiceAccount,
        "apps/v1" "ControllerRevision" => api::apps::v1::ControllerRevision,
        "apps/v1" "DaemonSet" => api::apps::v1::DaemonSet,
        "apps/v1" "Deployment" => api::apps::v1::Deployment,
        "apps/v1" "ReplicaSet" => api::apps::v1::ReplicaSet,
        "apps/v1" "StatefulSet" => api::apps::v1::StatefulSet,
        "batch/v1" "CronJob" => api::batch::v1::CronJob,
        "batch/v1" "Job" => api::batch::v1::Job,
        "rbac.authorization.k8s.io/v1" "ClusterRole" => api::rbac::v1::ClusterRole,
        "rbac.authorization.k8s.io/v1" "ClusterRoleBinding" => api::rbac::v1::ClusterRoleBinding,
        "rbac.authorization.k8s.io/v1" "Role" => api::rbac::v1::Role,
        "rbac.authorization.k8s.io/v1" "RoleBinding" => api::rbac::v1::RoleBinding,
        "networking.k8s.io/v1" "Ingress" => api::networking::v1::Ingress,
        "networking.k8s.io/v1" "IngressClass" => api::networking::v1::IngressClass,
        "networking.k8s.io/v1" "NetworkPolicy" => api::networking::v1::NetworkPolicy,
        "networking.k8s.io/v1" "IPAddress" => api::networking::v1::IPAddress,
        "networking.k8s.io/v1" "ServiceCIDR" => api::networking::v1::ServiceCIDR,
        "policy/v1" "Eviction" => api::policy::v1::Eviction,
        "policy/v1" "PodDisruptionBudget" => api::policy::v1::PodDisruptionBudget,
        "scheduling.k8s.io/v1" "PriorityClass" => api::scheduling::v1::PriorityClass,
        "coordination.k8s.io/v1" "Lease" => api::coordination::v1::Lease,
        "autoscaling/v1" "HorizontalPodAutoscaler" => api::autoscaling::v1::HorizontalPodAutoscaler,
        "autoscaling/v1" "Scale" => api::autoscaling::v1::Scale,
        "autoscaling/v2" "HorizontalPodAutoscaler" => api::autoscaling::v2::HorizontalPodAutoscaler,
        "authentication.k8s.io/v1" "SelfSubjectReview" => api::authentication::v1::SelfSubjectReview,
        "authentication.k8s.io/v1" "TokenRequest" => api::authentication::v1::TokenRequest,
        "authentication.k8s.io/v1" "TokenReview" => api::authentication::v1::TokenReview,
        "authorization.k8s.io/v1" "LocalSubjectAccessReview" => api::authorization::v1::LocalSubjectAccessReview,
        "authorization.k8s.io/v1" "SelfSubjectAccessReview" => api::authorization::v1::SelfSubjectAccessReview,
        "authorization.k8s.io/v1" "SelfSubjectRulesReview" => api::authorization::v1::SelfSubjectRulesReview,
        "authorization.k8s.io/v1" "SubjectAccessReview" => api::authorization::v1::SubjectAccessReview,
        "discovery.k8s.io/v1" "EndpointSlice" => api::discovery::v1::EndpointSlice,
        "events.k8s.io/v1" "Event" => api::events::v1::Event,
        "storage.k8s.io/v1" "CSIDriver" => api::storage::v1::CSIDriver,
        "storage.k8s.io/v1" "CSINode" => api::storage::v1::CSINode,
        "storage.k8s.io/v1" "CSIStorageCapacity" => api::storage::v1::CSIStorageCapacity,
        "storage.k8s.io/v1" "StorageClass" => api::storage::v1::StorageClass,
        "storage.k8s.io/v1" "VolumeAttachment" => api::storage::v1::VolumeAttachment,
        "storage.k8s.io/v1" "VolumeAttributesClass" => api::storage::v1::VolumeAttributesClass,
        "resource.k8s.io/v1" "DeviceClass" => api::resource::v1::DeviceClass,
        // GA in v1 only in 1.37; k8s-pb 0.9 has v1alpha3's, of the same shape.
        "resource.k8s.io/v1" "DeviceTaintRule" => api::resource::v1alpha3::DeviceTaintRule,
        "resource.k8s.io/v1" "ResourceClaim" => api::resource::v1::ResourceClaim,
        "resource.k8s.io/v1" "ResourceClaimTemplate" => api::resource::v1::ResourceClaimTemplate,
        "resource.k8s.io/v1" "ResourceSlice" => api::resource::v1::ResourceSlice,
        "certificates.k8s.io/v1" "CertificateSigningRequest" => api::certificates::v1::CertificateSigningRequest,
        // GA in v1 only in 1.37; k8s-pb 0.9 has v1beta1's.
        "certificates.k8s.io/v1" "ClusterTrustBundle" => api::certificates::v1beta1::ClusterTrustBundle,
        "certificates.k8s.io/v1" "PodCertificateRequest" => api::certificates::v1beta1::PodCertificateRequest,
        "admissionregistration.k8s.io/v1" "MutatingWebhookConfiguration" => api::admissionregistration::v1::MutatingWebhookConfiguration,
        "admissionregistration.k8s.io/v1" "ValidatingWebhookConfiguration" => api::admissionregistration::v1::ValidatingWebhookConfiguration,
        "admissionregistration.k8s.io/v1" "ValidatingAdmissionPolicy" => api::admissionregistration::v1::ValidatingAdmissionPolicy,
        "admissionregistration.k8s.io/v1" "ValidatingAdmissionPolicyBinding" => api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
        // v1 in 1.36; k8s-pb 0.9 has v1beta1's, of the same shape.
        "admissionregistration.k8s.io/v1" "MutatingAdmissionPolicy" => api::admissionregistration::v1beta1::MutatingAdmissionPolicy,
        "admissionregistration.k8s.io/v1" "MutatingAdmissionPolicyBinding" => api::admissionregistration::v1beta1::MutatingAdmissionPolicyBinding,
        "node.k8s.io/v1" "RuntimeClass" => api::node::v1::RuntimeClass,
        "flowcontrol.apiserver.k8s.io/v1" "FlowSchema" => api::flowcontrol::v1::FlowSchema,
        "flowcontrol.apiserver.k8s.io/v1" "PriorityLevelConfiguration" => api::flowcontrol::v1::PriorityLevelConfiguration,
        // GA in v1 only in 1.37; k8s-pb 0.9 has v1beta1's.
        "storagemigration.k8s.io/v1" "StorageVersionMigration" => api::storagemigration::v1beta1::StorageVersionMigration,
        "apiextensions.k8s.io/v1" "CustomResourceDefinition" =>
            k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        "meta.k8s.io/v1" "PartialObjectMetadata" => meta::PartialObjectMetadata,
        "meta.k8s.io/v1" "PartialObjectMetadataList" => meta::PartialObjectMetadataList,
        "v1" "Status" => meta::Status,
        "v1" "PodList" => api::core::v1::PodList,
    }
}

#[test]
fn every_kind_survives_k8s_pb() {
    for (api_version, kind) in schema::all_kinds() {
        let mut object = rich_object(&api_version, kind, 6);
        let back = through_prost(&encode(&object), &api_version, kind);
        strip_newer_than_k8s_pb(&api_version, kind, &mut object);
        assert_eq!(back, object, "{api_version} {kind}");
    }
}

/// Removes the fields newer than the k8s-pb 0.9 bindings, which prost
/// drops.
fn strip_newer_than_k8s_pb(api_version: &str, kind: &str, object: &mut Value) {
    let spec = object.get_mut("spec").and_then(Value::as_object_mut);
    match (api_version, kind, spec) {
        ("storage.k8s.io/v1", "CSIDriver", Some(spec)) => {
            spec.remove("preventPodSchedulingIfMissing");
        }
        ("certificates.k8s.io/v1", "PodCertificateRequest", Some(spec)) => {
            spec.remove("stubPKCS10Request");
        }
        ("resource.k8s.io/v1", "ResourceSlice", Some(spec)) => strip_resource_slice(spec),
        _ => {}
    }
    strip_v1_36_pod_fields(object);
}

/// The pod fields v1.36 added (a pod spec's `schedulingGroup`, a pod
/// status's `nodeAllocatableResourceClaimStatuses`, a volume mount status's
/// `volumeStatus`, a resource health's `message`), wherever a pod spec or
/// status is nested (templates of workloads too).
fn strip_v1_36_pod_fields(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.remove("schedulingGroup");
            fields.remove("nodeAllocatableResourceClaimStatuses");
            fields.remove("volumeStatus");
            if fields.contains_key("resourceID") {
                fields.remove("message");
            }
            fields.values_mut().for_each(strip_v1_36_pod_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_v1_36_pod_fields),
        _ => {}
    }
}

/// A device's `nodeAllocatableResourceMappings` (13) and the list-valued
/// attributes (`ints`, `bools`, `strings`, `versions`, 6-9).
fn strip_resource_slice(spec: &mut Map<String, Value>) {
    let Some(devices) = spec.get_mut("devices").and_then(Value::as_array_mut) else {
        return;
    };
    for device in devices.iter_mut().filter_map(Value::as_object_mut) {
        device.remove("nodeAllocatableResourceMappings");
        let Some(attributes) = device.get_mut("attributes").and_then(Value::as_object_mut) else {
            continue;
        };
        for attribute in attributes.values_mut().filter_map(Value::as_object_mut) {
            for list in ["ints", "bools", "strings", "versions"] {
                attribute.remove(list);
            }
        }
    }
}

/// Every string of a rich object (`<jsonName>-<n>`, see `sample_value`)
/// is read by prost into the k8s-pb field of that name. A field number
/// that is wrong in our tables but of a compatible wire type survives
/// `every_kind_survives_k8s_pb` (prost writes it back under the same
/// number); here it shows as a value under another field's name.
#[test]
fn every_string_is_read_into_the_field_of_its_name() {
    let strings = regex::Regex::new(r#"(\w+): (?:Some\(|\[|\{"a-key": )"([A-Za-z0-9]+)-\d+""#)
        .expect("regex");
    let normal = |name: &str| name.replace('_', "").to_ascii_lowercase();
    for (api_version, kind) in schema::all_kinds() {
        let object = rich_object(&api_version, kind, 6);
        let raw = unknown(&encode(&object)).raw.unwrap_or_default();
        let debug = match with_prost(&api_version, kind, &raw) {
            Ok((_, debug)) => debug,
            Err(e) => panic!("k8s-pb cannot decode {api_version} {kind}: {e}"),
        };
        let mut checked = 0;
        for found in strings.captures_iter(&debug) {
            let (field, json_name) = (&found[1], &found[2]);
            assert_eq!(
                normal(field),
                normal(json_name),
                "{api_version} {kind}: k8s-pb's {field} holds our {json_name}"
            );
            checked += 1;
        }
        // Every kind has at least ObjectMeta's strings.
        assert!(checked >= 5, "{api_version} {kind}: {checked} strings");
    }
}
