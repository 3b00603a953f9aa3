//! Kubernetes protobuf (`application/vnd.kubernetes.protobuf`): decoding
//! of request bodies into the JSON upstream would produce for the same
//! object, and encoding of JSON objects into upstream's protobuf
//! ([`encode_object`], the inverse, with the same schema tables).
//!
//! Go clients (kubectl's `create` subcommands, controllers, the scheduler)
//! send typed objects as protobuf: the magic `k8s\0` followed by a
//! `runtime.Unknown` envelope whose `raw` field holds the object's
//! message. This server works on JSON, so [`decode_object`] turns such a
//! body into the `serde_json::Value` upstream's JSON serializer would have
//! written after decoding it: `kind` and `apiVersion` first, then the
//! fields in Go struct order.
//!
//! The decoder is generic and schema-driven: `wire` reads the wire
//! format, `schema` holds a declarative table per API group (field
//! numbers, JSON names, types; written from upstream's `generated.proto`
//! for Kubernetes 1.33), and `decode` walks a message with its table.
//! Fields not in a table are skipped like any unknown protobuf field.
//!
//! # Zero values and omitted fields
//!
//! Go's protobuf marshaller writes every non-pointer field, even when it
//! is empty, and upstream's JSON encoder then drops the empty ones again
//! (`omitempty`). To give the same JSON:
//!
//! - absent fields are absent;
//! - strings: `""` is omitted, except for the pointer strings the tables
//!   mark (`storageClassName`, `propagationPolicy`, ...), where `""` is
//!   kept. Non-pointer strings without `omitempty` (a condition's
//!   `message`) are omitted when empty too, a deliberate simplification:
//!   such empty strings carry no meaning;
//! - bools and integers: pointer fields (and required ones such as
//!   `containerPort`) keep `false`/`0` when sent (`immutable: false`,
//!   `replicas: 0`, `runAsUser: 0`); non-pointer `omitempty` ones
//!   (`hostNetwork`, `stdin`, `readOnly`, probe thresholds, status
//!   counters) drop them;
//! - empty bytes, empty lists and empty maps are omitted; map values,
//!   list items and nested messages are kept even when empty (a message
//!   sent empty is `{}`, as upstream writes its non-pointer structs);
//! - map keys are sorted, as Go's encoder sorts them;
//! - `Time` sent empty (Go's zero time) is `null`, so kubectl's
//!   `creationTimestamp` comes out as `"creationTimestamp": null`;
//! - `Quantity` strings are passed through unchanged (upstream would
//!   canonicalise them; the JSON path sees them as sent as well); an
//!   empty quantity is `"0"`;
//! - invalid UTF-8 in strings is replaced by U+FFFD, as Go's JSON encoder
//!   does.

mod decode;
mod encode;
mod schema;
mod special;
mod storage;
mod wire;

pub use storage::{decode_from_storage, encode_for_storage};

use serde_json::Value;

/// The media type of Kubernetes protobuf bodies.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
pub const MAGIC: [u8; 4] = *b"k8s\0";

/// Why a protobuf body could not be decoded. The message is meant for the
/// client (it becomes a 400 BadRequest).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The body does not start with `k8s\0`.
    #[error("protobuf body does not start with the Kubernetes magic prefix \"k8s\\x00\"")]
    BadMagic,
    /// The envelope's typeMeta lacks apiVersion or kind.
    #[error("protobuf envelope has no {0}")]
    MissingTypeMeta(&'static str),
    /// The envelope's `contentEncoding` is set (upstream never sets it).
    #[error("unsupported contentEncoding {0:?} in protobuf envelope")]
    UnsupportedEncoding(String),
    /// The envelope's `contentType` is neither empty nor protobuf.
    #[error("unsupported contentType {0:?} in protobuf envelope")]
    UnsupportedContentType(String),
    /// The decoder has no schema for this apiVersion and kind.
    #[error("protobuf is not supported for {kind} in {api_version}; send JSON instead")]
    UnknownKind {
        /// The envelope's apiVersion.
        api_version: String,
        /// The envelope's kind.
        kind: String,
    },
    /// The bytes violate the wire format or the schema.
    #[error("invalid protobuf at {path}: {reason}")]
    Malformed {
        /// Where: `Pod.spec.containers[0].ports`.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

impl DecodeError {
    fn malformed(reason: impl Into<String>) -> Self {
        Self::Malformed {
            path: String::new(),
            reason: reason.into(),
        }
    }

    /// Prefixes the path of a [`DecodeError::Malformed`] with a field name.
    fn at(self, segment: &str) -> Self {
        match self {
            Self::Malformed { path, reason } => {
                let path = if path.is_empty() {
                    segment.to_owned()
                } else if path.starts_with('[') {
                    format!("{segment}{path}")
                } else {
                    format!("{segment}.{path}")
                };
                Self::Malformed { path, reason }
            }
            other => other,
        }
    }

    /// Prefixes the path of a [`DecodeError::Malformed`] with a list index.
    fn at_index(self, index: usize) -> Self {
        match self {
            Self::Malformed { path, reason } => {
                let path = if path.is_empty() || path.starts_with('[') {
                    format!("[{index}]{path}")
                } else {
                    format!("[{index}].{path}")
                };
                Self::Malformed { path, reason }
            }
            other => other,
        }
    }
}

/// Why a JSON object could not be encoded as protobuf.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The object lacks apiVersion or kind.
    #[error("object has no {0}")]
    MissingTypeMeta(&'static str),
    /// No schema for this apiVersion and kind (custom resources, kinds the
    /// tables do not cover): upstream serves such objects as JSON only.
    #[error("protobuf is not supported for {kind} in {api_version}")]
    UnknownKind {
        /// The object's apiVersion.
        api_version: String,
        /// The object's kind.
        kind: String,
    },
    /// A field holds a JSON value its protobuf type cannot carry.
    #[error("cannot encode {path} as protobuf: {reason}")]
    Invalid {
        /// Where: `Pod.spec.containers[0].ports`.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

impl EncodeError {
    fn invalid(reason: impl Into<String>) -> Self {
        Self::Invalid {
            path: String::new(),
            reason: reason.into(),
        }
    }

    /// Prefixes the path of an [`EncodeError::Invalid`] with a field name.
    fn at(self, segment: &str) -> Self {
        match self {
            Self::Invalid { path, reason } => Self::Invalid {
                path: join_path(segment, &path),
                reason,
            },
            other => other,
        }
    }

    /// Prefixes the path of an [`EncodeError::Invalid`] with a list index.
    fn at_index(self, index: usize) -> Self {
        self.at(&format!("[{index}]"))
    }
}

/// `segment` + `path`, with a dot unless `path` is empty or an index.
fn join_path(segment: &str, path: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else if path.starts_with('[') {
        format!("{segment}{path}")
    } else {
        format!("{segment}.{path}")
    }
}

/// Encodes a JSON object as upstream serves it (with `apiVersion` and
/// `kind`) into a Kubernetes protobuf body: the magic `k8s\0` followed by
/// `runtime.Unknown{typeMeta{apiVersion, kind}, raw, contentEncoding="",
/// contentType=""}`, `raw` holding the kind's message with fields in
/// ascending field-number order, as upstream writes it.
///
/// [`decode_object`] turns the result back into the same JSON (for JSON
/// in upstream's canonical form). Fails with [`EncodeError::UnknownKind`]
/// for kinds without a schema (custom resources stay JSON, as upstream)
/// and with [`EncodeError::Invalid`] for values of the wrong JSON type.
/// Never panics.
pub fn encode_object(object: &Value) -> Result<Vec<u8>, EncodeError> {
    encode::object(object, 0)
}

/// Whether objects of this apiVersion and kind can be encoded as protobuf
/// (and so served to clients that ask for it): the built-in kinds of
/// [`is_known`], their `<Kind>List`s, `Status` and
/// `PartialObjectMetadata(List)`. Custom resources cannot, as upstream.
pub fn can_encode(api_version: &str, kind: &str) -> bool {
    schema::message_for_kind(api_version, kind).is_some()
        || schema::list_item_message(api_version, kind).is_some()
}

/// A `<Kind>List` (or `PartialObjectMetadataList`) in protobuf, built
/// from items already encoded by [`encode_object`] (each a whole
/// envelope, as the watch cache keeps them) without copying their bytes:
/// the returned chunks, concatenated, are the body. `metadata` is the
/// list's JSON `metadata` (ListMeta).
pub fn encode_list(
    api_version: &str,
    list_kind: &str,
    metadata: &Value,
    items: &[bytes::Bytes],
) -> Result<Vec<bytes::Bytes>, EncodeError> {
    let meta_kind = api_version == "meta.k8s.io/v1" && list_kind == "PartialObjectMetadataList";
    if !meta_kind && schema::list_item_message(api_version, list_kind).is_none() {
        return Err(EncodeError::UnknownKind {
            api_version: api_version.to_owned(),
            kind: list_kind.to_owned(),
        });
    }
    let mut meta = Vec::new();
    encode::list_meta_into(Some(metadata), &mut meta).map_err(|e| e.at(list_kind))?;
    let mut raws = Vec::with_capacity(items.len());
    let mut raw_len = meta.len();
    for (index, item) in items.iter().enumerate() {
        let raw = encode::envelope_raw(item).ok_or_else(|| {
            EncodeError::invalid("not an encoded object")
                .at_index(index)
                .at("items")
                .at(list_kind)
        })?;
        let mut prefix = Vec::with_capacity(6);
        encode::put_varint(&mut prefix, 0x12);
        encode::put_varint(&mut prefix, raw.len() as u64);
        raw_len += prefix.len() + raw.len();
        raws.push((bytes::Bytes::from(prefix), item.slice_ref(raw)));
    }
    let mut head = MAGIC.to_vec();
    encode::nested(&mut head, 1, |out| {
        encode::put_string(out, 1, api_version);
        encode::put_string(out, 2, list_kind);
        Ok(())
    })?;
    encode::put_varint(&mut head, 0x12);
    encode::put_varint(&mut head, raw_len as u64);
    head.extend_from_slice(&meta);
    let mut chunks = Vec::with_capacity(2 + 2 * raws.len());
    chunks.push(bytes::Bytes::from(head));
    for (prefix, raw) in raws {
        chunks.push(prefix);
        chunks.push(raw);
    }
    chunks.push(bytes::Bytes::from_static(b"\x1a\x00\x22\x00"));
    Ok(chunks)
}

/// The media type of protobuf watch streams.
pub const WATCH_CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The start of one protobuf watch frame, as upstream's
/// `LengthDelimitedFramer` writes it: the 4-byte big-endian length, then
/// a `meta.v1.WatchEvent{type=1, object=2 RawExtension{raw=1}}` without
/// envelope (upstream's raw serializer) whose `raw` is `object`, an
/// envelope from [`encode_object`]. The frame is this head followed by
/// `object` itself, so one encoding of an object serves every watcher.
pub fn watch_frame_head(event_type: &str, object_len: usize) -> Vec<u8> {
    let varint_len = |mut n: u64| {
        let mut len = 1;
        while n >= 0x80 {
            n >>= 7;
            len += 1;
        }
        len
    };
    let type_len = event_type.len();
    let raw_ext_len = 1 + varint_len(object_len as u64) + object_len;
    let event_len = 1
        + varint_len(type_len as u64)
        + type_len
        + 1
        + varint_len(raw_ext_len as u64)
        + raw_ext_len;
    let mut head = Vec::with_capacity(24 + type_len);
    // Frames above 4 GiB cannot exist: objects are limited to a few MiB.
    head.extend_from_slice(&u32::try_from(event_len).unwrap_or(u32::MAX).to_be_bytes());
    encode::put_string(&mut head, 1, event_type);
    encode::put_varint(&mut head, 0x12);
    encode::put_varint(&mut head, raw_ext_len as u64);
    encode::put_varint(&mut head, 0x0a);
    encode::put_varint(&mut head, object_len as u64);
    head
}

/// Decodes a Kubernetes protobuf body (the `k8s\0` magic + runtime.Unknown
/// envelope: typeMeta{apiVersion=1,kind=2}=1, raw=2, contentEncoding=3,
/// contentType=4) into the JSON object upstream's JSON serializer would
/// produce, including "apiVersion" and "kind" from the envelope.
///
/// Fails with [`DecodeError::UnknownKind`] for kinds without a schema
/// (see [`is_known`]) and with [`DecodeError::Malformed`] for bytes that
/// are not valid protobuf for the kind's schema. Never panics.
pub fn decode_object(bytes: &[u8]) -> Result<Value, DecodeError> {
    decode::object(bytes, 0)
}

/// Whether a (apiVersion, kind) is known to the decoder.
///
/// Known: core/v1 Binding, ConfigMap, Endpoints, Event, LimitRange,
/// Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
/// PodTemplate, ReplicationController, ResourceQuota, Secret, Service,
/// ServiceAccount; apps/v1 ControllerRevision, DaemonSet, Deployment,
/// ReplicaSet, StatefulSet; batch/v1 CronJob, Job; rbac/v1 ClusterRole,
/// ClusterRoleBinding, Role, RoleBinding; networking/v1 Ingress,
/// IngressClass, NetworkPolicy; policy/v1 Eviction, PodDisruptionBudget;
/// scheduling/v1 PriorityClass; coordination/v1 Lease; autoscaling/v1
/// HorizontalPodAutoscaler, Scale; autoscaling/v2
/// HorizontalPodAutoscaler; authentication/v1 SelfSubjectReview,
/// TokenRequest, TokenReview; authorization/v1 LocalSubjectAccessReview,
/// SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview;
/// discovery/v1 EndpointSlice; events/v1 Event; and DeleteOptions under
/// any apiVersion.
pub fn is_known(api_version: &str, kind: &str) -> bool {
    schema::message_for_kind(api_version, kind).is_some()
}

#[cfg(test)]
mod admissionregistration_tests;
#[cfg(test)]
mod certificates_tests;
#[cfg(test)]
mod crd_tests;
#[cfg(test)]
mod encode_tests;
#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod malformed_tests;
#[cfg(test)]
mod misc_kinds_tests;
#[cfg(test)]
mod pod_v1_36_tests;
#[cfg(test)]
mod prost_tests;
#[cfg(test)]
mod resource_tests;
#[cfg(test)]
mod tests;
