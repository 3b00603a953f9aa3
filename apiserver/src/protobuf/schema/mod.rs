//! Declarative schema tables for the Kubernetes protobuf messages the
//! decoder knows.
//!
//! Each message is a list of [`Field`]s in Go struct order (which is also
//! the order upstream's JSON encoder writes them), each with its protobuf
//! field number, its JSON name, a [`Kind`] and a [`Card`]inality. Message
//! types are named `<group>.<version>.<GoType>` (`core.v1.PodSpec`,
//! `meta.v1.ObjectMeta`, ...). The tables were written from upstream's
//! `generated.proto` files (Kubernetes 1.33; the resource, certificates,
//! admissionregistration, node, flowcontrol and storagemigration groups
//! and networking's IPAddress and ServiceCIDR from 1.36, see each file);
//! they hold only what the decoder needs: numbers, JSON names and types.
//!
//! Scalar fields carry a [`Zero`] rule that says what to do with a zero
//! value (`""`, `0`, `false`) that is present on the wire. Go's protobuf
//! marshaller writes every non-pointer field, so kubectl sends
//! `hostNetwork: false` and `restartPolicy: ""` on every pod; upstream
//! drops them again when it writes JSON (`omitempty`), while pointer
//! fields (`replicas: 0`, `immutable: false`) survive. The helper
//! functions below encode that: `s`, `b`, `int32`, `int64` omit zero
//! values; `sp`, `bp`, `int32p`, `int64p` keep them.

mod admissionregistration_v1;
mod apiextensions_v1;
mod apps_v1;
mod authentication_v1;
mod authorization_v1;
mod autoscaling;
mod batch_v1;
mod certificates_v1;
mod coordination_v1;
mod core_v1;
mod core_v1_pod;
mod core_v1_volume;
mod discovery_v1;
mod events_v1;
mod flowcontrol_v1;
mod meta_v1;
mod networking_v1;
mod node_v1;
mod policy_v1;
mod rbac_v1;
mod resource_v1;
mod scheduling_v1;
mod storage_v1;
mod storagemigration_v1;

use std::collections::HashMap;
use std::sync::OnceLock;

pub(crate) use apiextensions_v1::JSON_SCHEMA_PROPS;

/// What to do with a scalar that is present on the wire but holds its zero
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Zero {
    /// A Go value field with `omitempty`: the zero value is not written.
    Omit,
    /// A Go pointer field (or one without `omitempty`): written whenever
    /// the field is on the wire.
    Keep,
}

/// The type of a field (for maps: of the map's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string (invalid UTF-8 is replaced, as Go's JSON encoder does).
    String(Zero),
    /// Bytes, base64 in JSON. Empty bytes are omitted.
    Bytes,
    /// A varint read as a 32-bit signed integer.
    Int32(Zero),
    /// A varint read as a 64-bit signed integer.
    Int64(Zero),
    /// A varint boolean.
    Bool(Zero),
    /// A nested message, a JSON object.
    Message(&'static str),
    /// A nested message that Go embeds inline: its fields are written into
    /// the enclosing JSON object (`Volume.volumeSource`, `Probe.handler`).
    Inline(&'static str),
    /// `meta.v1.Time` {seconds=1, nanos=2}: RFC 3339 seconds, or null.
    Time,
    /// `meta.v1.MicroTime`: RFC 3339 with six fractional digits, or null.
    MicroTime,
    /// `meta.v1.Duration` {duration=1 nanoseconds}: a Go duration string.
    Duration,
    /// `intstr.IntOrString` {type=1, intVal=2, strVal=3}: number or string.
    IntOrString,
    /// `resource.Quantity` {string=1}: a string.
    Quantity,
    /// `meta.v1.FieldsV1` {Raw=1}: the raw bytes parsed as JSON.
    FieldsV1,
    /// `runtime.RawExtension` {raw=1}: the raw bytes parsed as JSON.
    RawExtension,
    /// A message whose only field is `repeated string items = 1`, written
    /// by Go as a bare JSON array (authentication/authorization
    /// `ExtraValue`).
    StringList,
    /// A `double` (fixed64), a JSON number; only pointer fields exist, so
    /// it is written whenever present.
    Double,
    /// apiextensions `JSON` {raw=1}: the bytes are JSON text (`null` when
    /// empty).
    Json,
    /// `JSONSchemaPropsOrArray` {schema=1, jSONSchemas=2 repeated}: a
    /// schema object, or an array of schemas.
    SchemaOrArray,
    /// `JSONSchemaPropsOrBool` {allows=1, schema=2}: `true`/`false`, or a
    /// schema object (which allows).
    SchemaOrBool,
    /// `JSONSchemaPropsOrStringArray` {schema=1, property=2 repeated
    /// string}: a schema object, or an array of strings.
    SchemaOrStringArray,
}

/// How often a field occurs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Card {
    /// At most once (`optional`); the last occurrence wins.
    Single,
    /// `repeated`: a JSON array, omitted when empty.
    Repeated,
    /// `map<string, V>` (entries with key=1 and value=2): a JSON object
    /// with sorted keys, omitted when empty. `kind` is the value type.
    Map,
}

/// One field of a message.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    /// The protobuf field number.
    pub tag: u32,
    /// The JSON name.
    pub json: &'static str,
    /// The type (of the values, for maps).
    pub kind: Kind,
    /// Single, repeated or map.
    pub card: Card,
}

/// One message type.
#[derive(Debug)]
pub(crate) struct Message {
    /// `<group>.<version>.<GoType>`.
    pub name: &'static str,
    /// Fields in Go struct order.
    pub fields: &'static [Field],
}

impl Message {
    /// The field with protobuf number `tag`, with its position.
    pub(crate) fn field(&self, tag: u32) -> Option<(usize, &'static Field)> {
        self.fields.iter().enumerate().find(|(_, f)| f.tag == tag)
    }
}

const fn field(tag: u32, json: &'static str, kind: Kind, card: Card) -> Field {
    Field {
        tag,
        json,
        kind,
        card,
    }
}

/// A message table entry.
const fn msg(name: &'static str, fields: &'static [Field]) -> Message {
    Message { name, fields }
}

/// A string; `""` is omitted.
const fn s(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::String(Zero::Omit), Card::Single)
}
/// A pointer string; `""` is kept.
const fn sp(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::String(Zero::Keep), Card::Single)
}
/// A bool; `false` is omitted.
const fn b(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Bool(Zero::Omit), Card::Single)
}
/// A pointer bool; `false` is kept.
const fn bp(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Bool(Zero::Keep), Card::Single)
}
/// An int32; `0` is omitted.
const fn int32(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Int32(Zero::Omit), Card::Single)
}
/// A pointer (or required) int32; `0` is kept.
const fn int32p(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Int32(Zero::Keep), Card::Single)
}
/// An int64; `0` is omitted.
const fn int64(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Int64(Zero::Omit), Card::Single)
}
/// A pointer (or required) int64; `0` is kept.
const fn int64p(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Int64(Zero::Keep), Card::Single)
}
/// Bytes, base64 in JSON.
const fn by(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Bytes, Card::Single)
}
/// A nested message.
const fn m(tag: u32, json: &'static str, ty: &'static str) -> Field {
    field(tag, json, Kind::Message(ty), Card::Single)
}
/// A nested message embedded inline in JSON.
const fn inl(tag: u32, json: &'static str, ty: &'static str) -> Field {
    field(tag, json, Kind::Inline(ty), Card::Single)
}
/// A `meta.v1.Time`.
const fn time(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Time, Card::Single)
}
/// A `meta.v1.MicroTime`.
const fn mtime(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::MicroTime, Card::Single)
}
/// A `meta.v1.Duration`.
#[allow(dead_code)] // no covered message has a duration
const fn dur(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Duration, Card::Single)
}
/// An `intstr.IntOrString`.
const fn ios(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::IntOrString, Card::Single)
}
/// A `resource.Quantity`.
const fn qty(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Quantity, Card::Single)
}
/// A `meta.v1.FieldsV1`.
const fn fields_v1(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::FieldsV1, Card::Single)
}
/// A `runtime.RawExtension`.
const fn raw_ext(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::RawExtension, Card::Single)
}
/// `repeated string`.
const fn rs(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::String(Zero::Keep), Card::Repeated)
}
/// `repeated int32`.
const fn rint32(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Int32(Zero::Keep), Card::Repeated)
}
/// `repeated int64`.
const fn rint64(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Int64(Zero::Keep), Card::Repeated)
}
/// `repeated bool`.
const fn rbool(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Bool(Zero::Keep), Card::Repeated)
}
/// `repeated Quantity`.
const fn rqty(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Quantity, Card::Repeated)
}
/// A repeated message.
const fn rm(tag: u32, json: &'static str, ty: &'static str) -> Field {
    field(tag, json, Kind::Message(ty), Card::Repeated)
}
/// `map<string, string>`.
const fn mss(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::String(Zero::Keep), Card::Map)
}
/// `map<string, bytes>`.
const fn msb(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Bytes, Card::Map)
}
/// `map<string, Quantity>` (a `ResourceList`).
const fn msq(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Quantity, Card::Map)
}
/// `map<string, Time>`.
const fn mst(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::Time, Card::Map)
}
/// `map<string, ExtraValue>` (string lists).
const fn msl(tag: u32, json: &'static str) -> Field {
    field(tag, json, Kind::StringList, Card::Map)
}
/// `map<string, Message>`.
const fn msm(tag: u32, json: &'static str, ty: &'static str) -> Field {
    field(tag, json, Kind::Message(ty), Card::Map)
}

/// Every table, by API group.
const TABLES: &[&[Message]] = &[
    meta_v1::MESSAGES,
    core_v1::MESSAGES,
    core_v1_pod::MESSAGES,
    core_v1_volume::MESSAGES,
    apps_v1::MESSAGES,
    batch_v1::MESSAGES,
    rbac_v1::MESSAGES,
    networking_v1::MESSAGES,
    autoscaling::MESSAGES,
    authentication_v1::MESSAGES,
    authorization_v1::MESSAGES,
    policy_v1::MESSAGES,
    scheduling_v1::MESSAGES,
    coordination_v1::MESSAGES,
    discovery_v1::MESSAGES,
    events_v1::MESSAGES,
    storage_v1::MESSAGES,
    resource_v1::MESSAGES,
    certificates_v1::MESSAGES,
    admissionregistration_v1::MESSAGES,
    node_v1::MESSAGES,
    flowcontrol_v1::MESSAGES,
    storagemigration_v1::MESSAGES,
    apiextensions_v1::MESSAGES,
];

/// Top-level kinds: (apiVersion, message package, kinds). The message of
/// kind `K` is `<package>.K`.
const KINDS: &[(&str, &str, &[&str])] = &[
    (
        "v1",
        "core.v1",
        &[
            "Binding",
            "ConfigMap",
            "RangeAllocation",
            "Endpoints",
            "Event",
            "LimitRange",
            "Namespace",
            "Node",
            "PersistentVolume",
            "PersistentVolumeClaim",
            "Pod",
            "PodTemplate",
            "ReplicationController",
            "ResourceQuota",
            "Secret",
            "Service",
            "ServiceAccount",
        ],
    ),
    (
        "apps/v1",
        "apps.v1",
        &[
            "ControllerRevision",
            "DaemonSet",
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
        ],
    ),
    ("batch/v1", "batch.v1", &["CronJob", "Job"]),
    (
        "rbac.authorization.k8s.io/v1",
        "rbac.v1",
        &["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
    ),
    (
        "networking.k8s.io/v1",
        "networking.v1",
        &[
            "IPAddress",
            "Ingress",
            "IngressClass",
            "NetworkPolicy",
            "ServiceCIDR",
        ],
    ),
    (
        "policy/v1",
        "policy.v1",
        &["Eviction", "PodDisruptionBudget"],
    ),
    ("scheduling.k8s.io/v1", "scheduling.v1", &["PriorityClass"]),
    ("coordination.k8s.io/v1", "coordination.v1", &["Lease"]),
    (
        "autoscaling/v1",
        "autoscaling.v1",
        &["HorizontalPodAutoscaler", "Scale"],
    ),
    (
        "autoscaling/v2",
        "autoscaling.v2",
        &["HorizontalPodAutoscaler"],
    ),
    (
        "authentication.k8s.io/v1",
        "authentication.v1",
        &["SelfSubjectReview", "TokenRequest", "TokenReview"],
    ),
    (
        "authorization.k8s.io/v1",
        "authorization.v1",
        &[
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
            "SubjectAccessReview",
        ],
    ),
    ("discovery.k8s.io/v1", "discovery.v1", &["EndpointSlice"]),
    ("events.k8s.io/v1", "events.v1", &["Event"]),
    (
        "storage.k8s.io/v1",
        "storage.v1",
        &[
            "CSIDriver",
            "CSINode",
            "CSIStorageCapacity",
            "StorageClass",
            "VolumeAttachment",
            "VolumeAttributesClass",
        ],
    ),
    (
        "resource.k8s.io/v1",
        "resource.v1",
        &[
            "DeviceClass",
            "DeviceTaintRule",
            "ResourceClaim",
            "ResourceClaimTemplate",
            "ResourceSlice",
        ],
    ),
    (
        "certificates.k8s.io/v1",
        "certificates.v1",
        &[
            "CertificateSigningRequest",
            "ClusterTrustBundle",
            "PodCertificateRequest",
        ],
    ),
    (
        "admissionregistration.k8s.io/v1",
        "admissionregistration.v1",
        &[
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingWebhookConfiguration",
        ],
    ),
    ("node.k8s.io/v1", "node.v1", &["RuntimeClass"]),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "flowcontrol.v1",
        &["FlowSchema", "PriorityLevelConfiguration"],
    ),
    (
        "storagemigration.k8s.io/v1",
        "storagemigration.v1",
        &["StorageVersionMigration"],
    ),
    (
        "apiextensions.k8s.io/v1",
        "apiextensions.v1",
        &["CustomResourceDefinition"],
    ),
    (
        "meta.k8s.io/v1",
        "meta.v1",
        &["PartialObjectMetadata", "PartialObjectMetadataList"],
    ),
];

/// Kinds that every group version registers (upstream adds them with
/// `metav1.AddToGroupVersion`), so they are accepted under any apiVersion.
const META_KINDS: &[&str] = &["DeleteOptions", "Status"];

fn index() -> &'static HashMap<&'static str, &'static Message> {
    static INDEX: OnceLock<HashMap<&'static str, &'static Message>> = OnceLock::new();
    INDEX.get_or_init(|| {
        TABLES
            .iter()
            .flat_map(|table| table.iter())
            .map(|message| (message.name, message))
            .collect()
    })
}

/// Every message of every table.
pub(crate) fn all_messages() -> impl Iterator<Item = &'static Message> {
    TABLES.iter().flat_map(|table| table.iter())
}

/// Every top-level (apiVersion, kind) the tables cover.
#[cfg(test)]
pub(crate) fn all_kinds() -> impl Iterator<Item = (&'static str, &'static str)> {
    KINDS
        .iter()
        .flat_map(|(api_version, _, kinds)| kinds.iter().map(move |kind| (*api_version, *kind)))
}

/// The message named `name`.
pub(crate) fn message(name: &str) -> Option<&'static Message> {
    index().get(name).copied()
}

/// The item message of a `<Kind>List` of the given apiVersion (built-in
/// lists are all `{metadata=1 ListMeta, items=2 repeated Kind}`).
pub(crate) fn list_item_message(api_version: &str, list_kind: &str) -> Option<&'static Message> {
    let kind = list_kind.strip_suffix("List")?;
    if kind.is_empty() || META_KINDS.contains(&kind) || api_version == "meta.k8s.io/v1" {
        return None;
    }
    message_for_kind(api_version, kind)
}

/// The message of a top-level object of the given apiVersion and kind.
pub(crate) fn message_for_kind(api_version: &str, kind: &str) -> Option<&'static Message> {
    if META_KINDS.contains(&kind) {
        return message(&format!("meta.v1.{kind}"));
    }
    let (_, package, kinds) = KINDS.iter().find(|(v, _, _)| *v == api_version)?;
    if !kinds.contains(&kind) {
        return None;
    }
    message(&format!("{package}.{kind}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn all() -> impl Iterator<Item = &'static Message> {
        TABLES.iter().flat_map(|table| table.iter())
    }

    #[test]
    fn message_names_are_unique() {
        let mut seen = HashSet::new();
        for message in all() {
            assert!(seen.insert(message.name), "duplicate {}", message.name);
        }
    }

    #[test]
    fn fields_are_unique_and_references_resolve() {
        for message in all() {
            let mut tags = HashSet::new();
            let mut names = HashSet::new();
            for f in message.fields {
                assert!(
                    tags.insert(f.tag),
                    "{}: duplicate tag {}",
                    message.name,
                    f.tag
                );
                assert!(
                    names.insert(f.json),
                    "{}: duplicate name {}",
                    message.name,
                    f.json
                );
                assert!(f.tag > 0);
                if let Kind::Message(ty) | Kind::Inline(ty) = f.kind {
                    assert!(
                        super::message(ty).is_some(),
                        "{}.{}: no {ty}",
                        message.name,
                        f.json
                    );
                }
                if let Kind::Inline(_) = f.kind {
                    assert_eq!(f.card, Card::Single, "{}.{}", message.name, f.json);
                }
            }
        }
    }

    #[test]
    fn every_kind_has_a_message() {
        for (api_version, _, kinds) in KINDS {
            for kind in *kinds {
                assert!(
                    message_for_kind(api_version, kind).is_some(),
                    "{api_version} {kind}"
                );
            }
        }
        assert!(message_for_kind("v1", "DeleteOptions").is_some());
        assert!(message_for_kind("apps/v1", "DeleteOptions").is_some());
        assert!(message_for_kind("v1", "Deployment").is_none());
        assert!(message_for_kind("v2", "Pod").is_none());
    }
}
