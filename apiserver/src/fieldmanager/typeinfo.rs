//! What server-side apply needs to know about a kind's schema: which maps
//! are merged field by field and which are atomic, and how each list is
//! merged (`x-kubernetes-list-type` `atomic`, `set`, or `map` keyed by
//! `x-kubernetes-list-map-keys`).
//!
//! Built-in kinds read it from their OpenAPI components: `x-kubernetes-*`
//! extensions when present, else `x-kubernetes-patch-strategy: merge` (a
//! list-map on `x-kubernetes-patch-merge-key`, or a set of scalars), else
//! atomic, as upstream's conversion of the OpenAPI models. Custom resources
//! read it from their CRD's structural schema. Anything without a schema is
//! "deduced" as upstream: maps are granular, lists atomic. `metadata` is
//! always typed as `ObjectMeta` (labels and annotations granular,
//! `finalizers` a set, `ownerReferences` a list-map on `uid`).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::schema::Schema;

use crate::schema::openapi::resolve;

/// How a list is merged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole.
    Atomic,
    /// A set of scalars, items identified by value.
    Set,
    /// Items identified by the values of these fields.
    Map(Vec<String>),
}

/// The type of one node of an object.
#[derive(Clone, Copy)]
pub enum Ty<'a> {
    /// No schema: maps granular (every key an element), lists atomic.
    Deduced,
    /// An (unresolved) OpenAPI v3 schema and the components it refers to.
    OpenApi(&'a Value, &'a Map<String, Value>),
    /// A node of a structural schema.
    Structural(&'a Schema),
    /// `ObjectMeta`.
    Meta,
    /// `metadata.finalizers`.
    MetaFinalizers,
    /// `metadata.ownerReferences`.
    MetaOwnerRefs,
}

/// Gives the root type of a kind's objects; declared on a
/// [`crate::registry::resource::ResourceDef`] with `with_field_types`.
pub trait TypeResolver: Send + Sync {
    /// The type of the whole object.
    fn root(&self) -> Ty<'_>;
    /// Fields of an applied configuration the kind does not keep (schema
    /// pruning for custom resources); removed before merging.
    fn prune(&self, _config: &mut Value) {}
}

/// Built-in kinds: a root schema (`{"$ref": ...}`) over OpenAPI components.
pub struct OpenApiTypes {
    pub root: Value,
    /// The OpenAPI components the root refers into.
    pub components: Arc<Map<String, Value>>,
}

impl TypeResolver for OpenApiTypes {
    fn root(&self) -> Ty<'_> {
        Ty::OpenApi(&self.root, &self.components)
    }
}

/// Custom resources: the structural schema of the served version.
pub struct StructuralTypes(pub Arc<Schema>);

impl TypeResolver for StructuralTypes {
    fn root(&self) -> Ty<'_> {
        Ty::Structural(&self.0)
    }

    fn prune(&self, config: &mut Value) {
        let meta = config.get("metadata").cloned();
        self.0.prune(config);
        if let (Some(m), Value::Object(c)) = (meta, config) {
            c.insert("metadata".into(), m);
        }
    }
}

/// Kinds without a schema.
pub struct DeducedTypes;

impl TypeResolver for DeducedTypes {
    fn root(&self) -> Ty<'_> {
        Ty::Deduced
    }
}

fn ext<'a>(schema: &'a Value, resolved: &'a Value, name: &str) -> Option<&'a Value> {
    schema.get(name).or_else(|| resolved.get(name))
}

impl<'a> Ty<'a> {
    /// The type of field `name` of a map, and whether the schema declares
    /// it as a struct field (rather than an element of a free-form map).
    pub fn field(&self, name: &str, root: bool) -> (Ty<'a>, bool) {
        if root && name == "metadata" {
            return (Ty::Meta, true);
        }
        match *self {
            Ty::Deduced => (Ty::Deduced, false),
            Ty::Meta => match name {
                "finalizers" => (Ty::MetaFinalizers, true),
                "ownerReferences" => (Ty::MetaOwnerRefs, true),
                _ => (Ty::Deduced, true),
            },
            Ty::MetaFinalizers | Ty::MetaOwnerRefs => (Ty::Deduced, false),
            Ty::OpenApi(s, c) => {
                let r = resolve(s, c);
                if let Some(p) = r.get("properties").and_then(|p| p.get(name)) {
                    return (Ty::OpenApi(p, c), true);
                }
                match r.get("additionalProperties") {
                    Some(a @ Value::Object(_)) => (Ty::OpenApi(a, c), false),
                    _ => (Ty::Deduced, false),
                }
            }
            Ty::Structural(s) => {
                if let Some(p) = s.properties.get(name) {
                    return (Ty::Structural(p), true);
                }
                match s.field(name) {
                    Some(a) => (Ty::Structural(a), false),
                    None => (Ty::Deduced, false),
                }
            }
        }
    }

    /// The type of a list's items.
    pub fn item(&self) -> Ty<'a> {
        match *self {
            Ty::OpenApi(s, c) => match resolve(s, c).get("items") {
                Some(i) => Ty::OpenApi(i, c),
                None => Ty::Deduced,
            },
            Ty::Structural(s) => match &s.items {
                Some(i) => Ty::Structural(i),
                None => Ty::Deduced,
            },
            _ => Ty::Deduced,
        }
    }

    /// How a list of this type is merged.
    pub fn list_type(&self) -> ListType {
        match *self {
            Ty::MetaFinalizers => ListType::Set,
            Ty::MetaOwnerRefs => ListType::Map(vec!["uid".into()]),
            Ty::OpenApi(s, c) => {
                let r = resolve(s, c);
                let keys = |v: Option<&Value>| -> Vec<String> {
                    v.and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default()
                };
                match ext(s, r, "x-kubernetes-list-type").and_then(Value::as_str) {
                    Some("map") => {
                        return ListType::Map(keys(ext(s, r, "x-kubernetes-list-map-keys")))
                    }
                    Some("set") => return ListType::Set,
                    Some(_) => return ListType::Atomic,
                    None => {}
                }
                let merge = ext(s, r, "x-kubernetes-patch-strategy")
                    .and_then(Value::as_str)
                    .is_some_and(|st| st.split(',').any(|p| p == "merge"));
                if !merge {
                    return ListType::Atomic;
                }
                match ext(s, r, "x-kubernetes-patch-merge-key").and_then(Value::as_str) {
                    Some(k) if !k.is_empty() => ListType::Map(vec![k.to_string()]),
                    _ => ListType::Set,
                }
            }
            Ty::Structural(s) => match s.list_type.as_deref() {
                Some("map") => ListType::Map(s.list_map_keys.clone()),
                Some("set") => ListType::Set,
                _ => ListType::Atomic,
            },
            _ => ListType::Atomic,
        }
    }

    /// Whether a map of this type is replaced as a whole
    /// (`x-kubernetes-map-type: atomic`).
    pub fn map_atomic(&self) -> bool {
        match *self {
            Ty::OpenApi(s, c) => {
                let r = resolve(s, c);
                ext(s, r, "x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
            }
            Ty::Structural(s) => s.map_type.as_deref() == Some("atomic"),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openapi_list_types() {
        let comps = json!({
            "Spec": {"properties": {
                "containers": {"type": "array", "items": {"$ref": "#/components/schemas/C"},
                    "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"]},
                "fins": {"type": "array", "x-kubernetes-patch-strategy": "merge"},
                "args": {"type": "array"},
                "sel": {"$ref": "#/components/schemas/Sel"}
            }},
            "C": {"properties": {"name": {"type": "string"}}},
            "Sel": {"x-kubernetes-map-type": "atomic", "properties": {}}
        });
        let c = comps.as_object().expect("object");
        let root = json!({"$ref": "#/components/schemas/Spec"});
        let t = Ty::OpenApi(&root, c);
        assert_eq!(
            t.field("containers", false).0.list_type(),
            ListType::Map(vec!["name".into()])
        );
        assert_eq!(
            t.field("ports", false).0.list_type(),
            ListType::Map(vec!["port".into(), "protocol".into()])
        );
        assert_eq!(t.field("fins", false).0.list_type(), ListType::Set);
        assert_eq!(t.field("args", false).0.list_type(), ListType::Atomic);
        assert!(t.field("sel", false).0.map_atomic());
        assert!(t.field("args", false).1);
        assert!(!t.field("bogus", false).1);
        assert!(matches!(t.field("metadata", true).0, Ty::Meta));
    }

    #[test]
    fn structural_list_types() {
        let s = Schema::compile(&json!({"type": "object", "properties": {
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object"}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "m": {"type": "object", "x-kubernetes-map-type": "atomic"}
        }}));
        let t = Ty::Structural(&s);
        assert_eq!(
            t.field("items", false).0.list_type(),
            ListType::Map(vec!["name".into()])
        );
        assert_eq!(t.field("tags", false).0.list_type(), ListType::Set);
        assert!(t.field("m", false).0.map_atomic());
    }
}
