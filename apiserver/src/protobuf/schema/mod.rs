//! Declarative schema tables for the Kubernetes protobuf messages the
//! decoder knows.
//!
//! Each message is a list of [`Field`]s in Go struct order (which is also
//! the order upstream's JSON encoder writes them), each with its protobuf
//! field number, its JSON name, a [`Kind`] and a [`Card`]inality. Message
//! types are named `<group>.<version>.<GoType>` (`core.v1.PodSpec`,
//! `meta.v1.ObjectMeta`, ...). The tables, one text file per API group
//! under `tables/` (their notation in [`table_text`]), were written from
//! upstream's `generated.proto` files (Kubernetes 1.33; the resource,
//! certificates, admissionregistration, node, flowcontrol and
//! storagemigration groups and networking's IPAddress and ServiceCIDR from
//! 1.36, see each file); they hold only what the decoder needs: numbers,
//! JSON names and types. A kind's own message is declared `kind`
//! (upstream's types registered with its scheme), nested types `message`;
//! the message of kind `K` at `<group>/<version>` is
//! `<package>.<version>.K`, the package named in [`GROUPS`].
//!
//! Scalar fields carry a [`Zero`] rule that says what to do with a zero
//! value (`""`, `0`, `false`) that is present on the wire. Go's protobuf
//! marshaller writes every non-pointer field, so kubectl sends
//! `hostNetwork: false` and `restartPolicy: ""` on every pod; upstream
//! drops them again when it writes JSON (`omitempty`), while pointer
//! fields (`replicas: 0`, `immutable: false`) survive. The tables say it as
//! Go does: `string`, `bool`, `int32`, `int64` omit zero values; `*string`,
//! `*bool`, `*int32`, `*int64` keep them.

mod table_text;

use std::collections::HashMap;
use std::sync::OnceLock;

/// The recursive schema message the polymorphic kinds carry.
pub(crate) const JSON_SCHEMA_PROPS: &str = "apiextensions.v1.JSONSchemaProps";

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
    /// Whether this is a kind's message, decoded as a top-level object
    /// (upstream registers these types with its scheme); the others are only
    /// ever nested.
    pub top_level: bool,
}

impl Message {
    /// The field with protobuf number `tag`, with its position.
    pub(crate) fn field(&self, tag: u32) -> Option<(usize, &'static Field)> {
        self.fields.iter().enumerate().find(|(_, f)| f.tag == tag)
    }
}

/// `(name, text)` of each table file `tables/<name>.txt`, named once.
macro_rules! tables {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), include_str!(concat!("tables/", stringify!($name), ".txt")))),*]
    };
}

/// Every table, by API group: its file under `tables/` and its text.
const TABLES: &[(&str, &str)] = tables![
    meta_v1,
    core_v1,
    core_v1_pod,
    core_v1_volume,
    apps_v1,
    batch_v1,
    rbac_v1,
    networking_v1,
    autoscaling,
    authentication_v1,
    authorization_v1,
    policy_v1,
    scheduling_v1,
    coordination_v1,
    discovery_v1,
    events_v1,
    storage_v1,
    resource_v1,
    certificates_v1,
    admissionregistration_v1,
    node_v1,
    flowcontrol_v1,
    storagemigration_v1,
    apiextensions_v1,
];

/// The API groups whose messages the tables hold, with the Go package
/// that names them: the message of kind `K` at `<group>/<version>` is
/// `<package>.<version>.K`, if the tables declare it a `kind`.
const GROUPS: &[(&str, &str)] = &[
    ("", "core"),
    ("apps", "apps"),
    ("batch", "batch"),
    ("rbac.authorization.k8s.io", "rbac"),
    ("networking.k8s.io", "networking"),
    ("policy", "policy"),
    ("scheduling.k8s.io", "scheduling"),
    ("coordination.k8s.io", "coordination"),
    ("autoscaling", "autoscaling"),
    ("authentication.k8s.io", "authentication"),
    ("authorization.k8s.io", "authorization"),
    ("discovery.k8s.io", "discovery"),
    ("events.k8s.io", "events"),
    ("storage.k8s.io", "storage"),
    ("resource.k8s.io", "resource"),
    ("certificates.k8s.io", "certificates"),
    ("admissionregistration.k8s.io", "admissionregistration"),
    ("node.k8s.io", "node"),
    ("flowcontrol.apiserver.k8s.io", "flowcontrol"),
    ("storagemigration.k8s.io", "storagemigration"),
    ("apiextensions.k8s.io", "apiextensions"),
    ("meta.k8s.io", "meta"),
];

/// Kinds that every group version registers (upstream adds them with
/// `metav1.AddToGroupVersion`), so they are accepted under any apiVersion.
const META_KINDS: &[&str] = &["DeleteOptions", "Status"];

/// Every message of every table, read from the tables' text once.
fn messages() -> &'static [Message] {
    static MESSAGES: OnceLock<Vec<Message>> = OnceLock::new();
    MESSAGES.get_or_init(|| {
        let mut all = Vec::new();
        for (file, text) in TABLES {
            match table_text::parse(file, text) {
                Ok(messages) => all.extend(messages),
                // The tables are part of the binary: the unit tests read every one.
                Err(err) => panic!("protobuf schema table {err}"),
            }
        }
        all
    })
}

fn index() -> &'static HashMap<&'static str, &'static Message> {
    static INDEX: OnceLock<HashMap<&'static str, &'static Message>> = OnceLock::new();
    INDEX.get_or_init(|| {
        messages()
            .iter()
            .map(|message| (message.name, message))
            .collect()
    })
}

/// Every message of every table.
pub(crate) fn all_messages() -> impl Iterator<Item = &'static Message> {
    messages().iter()
}

/// Every top-level (apiVersion, kind) the tables cover.
#[cfg(test)]
pub(crate) fn all_kinds() -> impl Iterator<Item = (String, &'static str)> {
    all_messages().filter(|m| m.top_level).filter_map(|m| {
        let mut parts = m.name.splitn(3, '.');
        let (package, version, kind) = (parts.next()?, parts.next()?, parts.next()?);
        let (group, _) = GROUPS.iter().find(|(_, p)| *p == package)?;
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        Some((api_version, kind))
    })
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

/// The message of a top-level object of the given apiVersion and kind:
/// `<package>.<version>.<kind>` for a group of [`GROUPS`], if the tables
/// mark it as a kind.
pub(crate) fn message_for_kind(api_version: &str, kind: &str) -> Option<&'static Message> {
    if META_KINDS.contains(&kind) {
        return message(&format!("meta.v1.{kind}"));
    }
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (_, package) = GROUPS.iter().find(|(g, _)| *g == group)?;
    message(&format!("{package}.{version}.{kind}")).filter(|m| m.top_level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn all() -> impl Iterator<Item = &'static Message> {
        all_messages()
    }

    #[test]
    fn every_table_reads() {
        for (file, text) in TABLES {
            assert!(table_text::parse(file, text).is_ok(), "{file}");
        }
        assert!(all_messages().count() > 500);
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
    fn kinds_are_found_by_group_version_and_name() {
        let kinds: Vec<_> = all_kinds().collect();
        for (api_version, kind) in &kinds {
            assert!(
                message_for_kind(api_version, kind).is_some(),
                "{api_version} {kind}"
            );
        }
        for (api_version, kind) in [
            ("v1", "Pod"),
            ("v1", "Binding"),
            ("apps/v1", "Deployment"),
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema"),
            ("autoscaling/v1", "Scale"),
            ("autoscaling/v2", "HorizontalPodAutoscaler"),
            ("meta.k8s.io/v1", "PartialObjectMetadataList"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ] {
            assert!(
                kinds.contains(&(api_version.to_string(), kind)),
                "{api_version} {kind}"
            );
        }
        // Nested types are not kinds; other groups (custom resources) have
        // no messages, even where their first label is a built-in one's.
        assert!(message_for_kind("v1", "PodSpec").is_none());
        assert!(message_for_kind("v1", "PodTemplateSpec").is_none());
        assert!(message_for_kind("apps.example.com/v1", "Deployment").is_none());
        assert!(message_for_kind("v1", "DeleteOptions").is_some());
        assert!(message_for_kind("apps/v1", "DeleteOptions").is_some());
        assert!(message_for_kind("v1", "Deployment").is_none());
        assert!(message_for_kind("v2", "Pod").is_none());
    }
}
