//! Pruning unknown fields and applying defaults, after upstream's
//! `schema/pruning` and `schema/defaulting` algorithms.
//!
//! Pruning keeps what the schema declares; under
//! `x-kubernetes-preserve-unknown-fields` unknown fields stay (declared ones
//! are still pruned inside). At the root and in embedded resources
//! `apiVersion`, `kind` and `metadata` are always kept. Pruned paths are
//! returned so `fieldValidation` can warn about or reject them.

use serde_json::{Map, Value};

use super::compile::{Additional, Schema};

/// The fields of `metav1.ObjectMeta`.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

impl Schema {
    /// Prunes `value` (a whole object: root rules apply) and returns the
    /// dotted paths of the fields dropped (`spec.foo`, `spec.list[0].x`).
    pub fn prune(&self, value: &mut Value) -> Vec<String> {
        let mut dropped = Vec::new();
        self.prune_at(value, "", true, &mut dropped);
        dropped
    }

    /// The fields of `metadata` (at the root and in every embedded
    /// resource) that ObjectMeta does not declare, as dotted paths
    /// (`metadata.foo`, `spec.template.metadata.bar`): ObjectMeta drops them
    /// when decoding, and `fieldValidation` reports them.
    pub fn unknown_metadata_fields(&self, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.metadata_at(value, "", true, &mut out);
        out
    }

    fn metadata_at(&self, value: &Value, path: &str, root: bool, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                let join = |k: &str| {
                    if path.is_empty() {
                        k.to_string()
                    } else {
                        format!("{path}.{k}")
                    }
                };
                if root || self.embedded_resource {
                    if let Some(Value::Object(meta)) = map.get("metadata") {
                        for k in meta.keys() {
                            if !OBJECT_META_FIELDS.contains(&k.as_str()) {
                                out.push(format!("{}.{k}", join("metadata")));
                            }
                        }
                    }
                }
                for (k, v) in map {
                    if (root || self.embedded_resource) && k == "metadata" {
                        continue;
                    }
                    let child = match self.properties.get(k) {
                        Some(s) => Some(s),
                        None => match &self.additional {
                            Some(Additional::Schema(s)) => Some(&**s),
                            _ => None,
                        },
                    };
                    if let Some(s) = child {
                        s.metadata_at(v, &join(k), false, out);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for (i, v) in items.iter().enumerate() {
                        item.metadata_at(v, &format!("{path}[{i}]"), false, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// Prunes a value that is not a whole object (no root rules): a
    /// `default`, a field value.
    pub fn prune_value(&self, value: &mut Value) -> Vec<String> {
        let mut dropped = Vec::new();
        self.prune_at(value, "", false, &mut dropped);
        dropped
    }

    fn prune_at(&self, value: &mut Value, path: &str, root: bool, dropped: &mut Vec<String>) {
        match value {
            Value::Object(map) => self.prune_object(map, path, root, dropped),
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for (i, v) in items.iter_mut().enumerate() {
                        item.prune_at(v, &format!("{path}[{i}]"), false, dropped);
                    }
                }
            }
            _ => {}
        }
    }

    fn prune_object(
        &self,
        map: &mut Map<String, Value>,
        path: &str,
        root: bool,
        dropped: &mut Vec<String>,
    ) {
        let keep_type_meta = root || self.embedded_resource;
        let mut remove = Vec::new();
        for (k, v) in map.iter_mut() {
            let child = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            if keep_type_meta && matches!(k.as_str(), "apiVersion" | "kind") {
                continue;
            }
            if keep_type_meta && k == "metadata" {
                // ObjectMeta is handled by metadata validation, not the schema.
                continue;
            }
            match self.properties.get(k) {
                Some(s) => s.prune_at(v, &child, false, dropped),
                None => match &self.additional {
                    Some(Additional::Schema(s)) => s.prune_at(v, &child, false, dropped),
                    Some(Additional::Any) => {}
                    _ if self.preserve_unknown_fields => {}
                    _ => remove.push((k.clone(), child)),
                },
            }
        }
        for (k, child) in remove {
            map.remove(&k);
            dropped.push(child);
        }
    }

    /// Applies `default:` values: a missing field (or a `null` one that is
    /// not nullable) with a default gets it; `null`s of non-nullable fields
    /// without a default are dropped, as upstream's `PruneNonNullableNulls`.
    pub fn apply_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (k, s) in &self.properties {
                    let is_null = map.get(k).is_some_and(Value::is_null);
                    match (&s.default, map.contains_key(k)) {
                        (Some(d), false) => {
                            map.insert(k.clone(), d.clone());
                        }
                        (Some(d), true) if is_null && !s.nullable => {
                            map.insert(k.clone(), d.clone());
                        }
                        (None, true) if is_null && !s.nullable => {
                            map.remove(k);
                        }
                        _ => {}
                    }
                }
                for (k, v) in map.iter_mut() {
                    if let Some(s) = self.field(k) {
                        s.apply_defaults(v);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for v in items {
                        item.apply_defaults(v);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn prunes_unknown_and_keeps_preserved() {
        let s = Schema::compile(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "a": {"type": "string"},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                }}
            }
        }));
        let mut obj = json!({
            "apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n"},
            "spec": {"a": "1", "b": 2, "free": {"any": 1}, "list": [{"x": 1, "y": 2}], "labels": {"k": "v"}},
            "extra": true
        });
        let mut dropped = s.prune(&mut obj);
        dropped.sort();
        assert_eq!(dropped, vec!["extra", "spec.b", "spec.list[0].y"]);
        assert_eq!(obj["spec"]["free"]["any"], 1);
        assert_eq!(obj["spec"]["labels"]["k"], "v");
        assert_eq!(obj["metadata"]["name"], "n");
    }

    #[test]
    fn defaults_fill_missing_and_nulls() {
        let s = Schema::compile(&json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "default": {}, "properties": {
                "replicas": {"type": "integer", "default": 1},
                "gone": {"type": "string"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "string", "default": "tcp"}}}}
            }}}
        }));
        let mut obj = json!({"spec": {"gone": null, "items": [{}]}});
        s.apply_defaults(&mut obj);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 1, "items": [{"p": "tcp"}]}})
        );
        let mut empty = json!({});
        s.apply_defaults(&mut empty);
        assert_eq!(empty, json!({"spec": {"replicas": 1}}));
    }
}
