//! OpenAPI v2 (`/openapi/v2`) for custom resources, as upstream's
//! apiextensions server publishes it: one definition per served version of
//! every Established CRD, named by the reversed group
//! (`com.example.stable.v1.CronTab`, plus its `...List`) and carrying
//! `x-kubernetes-group-version-kind`, and the resource's paths. kube-core
//! merges this document into its own `/openapi/v2`, and the aggregator
//! into the one it serves, so v2-only clients (and `kubectl explain` over
//! v2) see custom resources.
//!
//! Schemas are turned into what v2 can say as upstream does: `allOf`,
//! `anyOf`, `oneOf`, `not` and `x-kubernetes-validations` are dropped; a
//! nullable node loses its type, properties and items (and is no longer
//! required by its parent); a node preserving unknown fields loses its
//! properties and items, and an array left without items loses its type.

use serde_json::{json, Map, Value};

use crate::crd;

const OBJECT_META: &str = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const STATUS: &str = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const PATCH: &str = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const SCALE: &str = "#/definitions/io.k8s.api.autoscaling.v1.Scale";

/// The v2 form of a structural schema (see the module documentation).
pub fn to_v2(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    for key in ["allOf", "anyOf", "oneOf", "not", "x-kubernetes-validations"] {
        m.remove(key);
    }
    if m.get("nullable").and_then(Value::as_bool) == Some(true) {
        for key in ["type", "items", "properties"] {
            m.remove(key);
        }
    }
    m.remove("nullable");
    if m.get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
    {
        m.remove("items");
        m.remove("properties");
    }
    if m.get("type").and_then(Value::as_str) == Some("array") && !m.contains_key("items") {
        m.remove("type");
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        let nullable: Vec<String> = props
            .iter()
            .filter(|(_, p)| p.get("nullable").and_then(Value::as_bool) == Some(true))
            .map(|(k, _)| k.clone())
            .collect();
        if !nullable.is_empty() {
            if let Some(Value::Array(required)) = m.get_mut("required") {
                required.retain(|r| r.as_str().is_none_or(|r| !nullable.iter().any(|n| n == r)));
                if required.is_empty() {
                    m.remove("required");
                }
            }
        }
    }
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        props.values_mut().for_each(to_v2);
    }
    if let Some(items) = m.get_mut("items") {
        match items {
            Value::Array(a) => a.iter_mut().for_each(to_v2),
            other => to_v2(other),
        }
    }
    if let Some(ap) = m.get_mut("additionalProperties") {
        if ap.is_object() {
            to_v2(ap);
        }
    }
}

/// `stable.example.com` → `StableExampleCom` (operation ids).
fn camel(s: &str) -> String {
    s.split(['.', '-'])
        .map(|part| {
            let mut c = part.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// What the operations of one kind share.
struct Kind<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    namespaced: bool,
    item_ref: String,
    list_ref: String,
}

impl Kind<'_> {
    fn gvk(&self) -> Value {
        json!({"group": self.group, "kind": self.kind, "version": self.version})
    }

    /// One operation: `verb` names its id (`list`, `read`, ...), `suffix`
    /// the subresource (`Status`), `scoped` whether it is per namespace.
    #[allow(clippy::too_many_arguments)]
    fn op(
        &self,
        action: &str,
        verb: &str,
        suffix: &str,
        scoped: bool,
        schema_ref: &str,
        body: Option<&str>,
        query: &[&str],
        codes: &[&str],
    ) -> Value {
        let ns = if scoped && self.namespaced {
            "Namespaced"
        } else {
            ""
        };
        let all = if self.namespaced && !scoped {
            "ForAllNamespaces"
        } else {
            ""
        };
        let mut parameters: Vec<Value> = Vec::new();
        if let Some(b) = body {
            parameters.push(
                json!({"name": "body", "in": "body", "required": true, "schema": {"$ref": b}}),
            );
        }
        for name in query {
            let ty = if *name == "force" {
                "boolean"
            } else {
                "string"
            };
            parameters.push(json!({"name": name, "in": "query", "type": ty, "uniqueItems": true}));
        }
        let consumes: Vec<&str> = if action == "patch" {
            vec![
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/apply-patch+yaml",
            ]
        } else {
            vec!["*/*"]
        };
        let mut responses = Map::new();
        for code in codes {
            responses.insert(
                code.to_string(),
                json!({"description": "OK", "schema": {"$ref": schema_ref}}),
            );
        }
        responses.insert("401".into(), json!({"description": "Unauthorized"}));
        let mut o = json!({
            "description": format!("{action} {}{suffix}", self.kind),
            "operationId": format!("{verb}{}{}{ns}{}{suffix}{all}", camel(self.group), camel(self.version), self.kind),
            "consumes": consumes,
            "produces": ["application/json", "application/yaml"],
            "schemes": ["https"],
            "tags": [format!("{}_{}", camel(self.group), self.version)],
            "responses": responses,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": self.gvk(),
        });
        if !parameters.is_empty() {
            o["parameters"] = Value::Array(parameters);
        }
        o
    }
}

fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "type": "string", "uniqueItems": true, "description": description})
}

/// A name the CRD's status accepted, else the spec's.
fn accepted<'a>(c: &'a Value, field: &str) -> &'a str {
    c.pointer(&format!("/status/acceptedNames/{field}"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| crd::spec_str(c, &["names", field]))
}

/// The paths and definitions of `version` of one CRD, added to `paths`
/// and `definitions`.
fn add_version(
    c: &Value,
    v: &Value,
    paths: &mut Map<String, Value>,
    definitions: &mut Map<String, Value>,
) {
    let group = crd::spec_str(c, &["group"]);
    let Some(version) = v.get("name").and_then(Value::as_str) else {
        return;
    };
    let (kind, plural) = (accepted(c, "kind"), accepted(c, "plural"));
    if kind.is_empty() || plural.is_empty() {
        return;
    }
    let prefix = format!("{}.{version}", crate::openapi::reversed_group(group));
    let k = Kind {
        group,
        version,
        kind,
        namespaced: crd::spec_str(c, &["scope"]) != "Cluster",
        item_ref: format!("#/definitions/{prefix}.{kind}"),
        list_ref: format!("#/definitions/{prefix}.{kind}List"),
    };

    let declared = v.pointer("/schema/openAPIV3Schema").cloned();
    // As upstream's v2 builder: no schema, or a root that preserves unknown
    // fields, is published as a bare `type: object` (kubectl's v2
    // validation would otherwise refuse every field it does not list).
    let bare = declared.as_ref().is_none_or(|s| {
        s.get("x-kubernetes-preserve-unknown-fields")
            .and_then(Value::as_bool)
            == Some(true)
    });
    let mut schema = match declared {
        Some(s) if !bare => s,
        _ => json!({"type": "object"}),
    };
    to_v2(&mut schema);
    if let Value::Object(m) = &mut schema {
        if !bare {
            let props = m.entry("properties").or_insert_with(|| json!({}));
            if let Value::Object(p) = props {
                p.insert("apiVersion".into(), json!({"type": "string"}));
                p.insert("kind".into(), json!({"type": "string"}));
                p.insert("metadata".into(), json!({"$ref": OBJECT_META}));
            }
        }
        m.insert("x-kubernetes-group-version-kind".into(), json!([k.gvk()]));
    }
    definitions.insert(format!("{prefix}.{kind}"), schema);
    definitions.insert(
        format!("{prefix}.{kind}List"),
        json!({
            "description": format!("{kind}List is a list of {kind}"),
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "items": {"type": "array", "items": {"$ref": k.item_ref}},
                "metadata": {"$ref": LIST_META},
            },
            "x-kubernetes-group-version-kind": [{"group": group, "kind": format!("{kind}List"), "version": version}],
        }),
    );

    let base = format!("/apis/{group}/{version}");
    let ns_param = path_param(
        "namespace",
        "object name and auth scope, such as for teams and projects",
    );
    let name_param = path_param("name", &format!("name of the {kind}"));
    let scope_params = |with_name: bool| {
        let mut p = Vec::new();
        if with_name {
            p.push(name_param.clone());
        }
        if k.namespaced {
            p.push(ns_param.clone());
        }
        Value::Array(p)
    };
    let collection = if k.namespaced {
        format!("{base}/namespaces/{{namespace}}/{plural}")
    } else {
        format!("{base}/{plural}")
    };
    let write = ["dryRun", "fieldManager", "fieldValidation"];
    let patch = ["dryRun", "fieldManager", "fieldValidation", "force"];
    let (item, list) = (k.item_ref.as_str(), k.list_ref.as_str());
    paths.insert(
        collection.clone(),
        json!({
            "get": k.op("list", "list", "", true, list, None, &[], &["200"]),
            "post": k.op("post", "create", "", true, item, Some(item), &write, &["200", "201", "202"]),
            "delete": k.op("deletecollection", "deleteCollection", "", true, STATUS, None, &[], &["200"]),
            "parameters": scope_params(false),
        }),
    );
    let item_path = format!("{collection}/{{name}}");
    paths.insert(
        item_path.clone(),
        json!({
            "get": k.op("get", "read", "", true, item, None, &[], &["200"]),
            "put": k.op("put", "replace", "", true, item, Some(item), &write, &["200", "201"]),
            "patch": k.op("patch", "patch", "", true, item, Some(PATCH), &patch, &["200"]),
            "delete": k.op("delete", "delete", "", true, STATUS, None, &["dryRun"], &["200", "202"]),
            "parameters": scope_params(true),
        }),
    );
    if k.namespaced {
        paths.insert(
            format!("{base}/{plural}"),
            json!({"get": k.op("list", "list", "", false, list, None, &[], &["200"])}),
        );
    }
    for (sub, suffix, schema_ref) in [("status", "Status", item), ("scale", "Scale", SCALE)] {
        if v.pointer(&format!("/subresources/{sub}")).is_none() {
            continue;
        }
        let mut ops = json!({
            "get": k.op("get", "read", suffix, true, schema_ref, None, &[], &["200"]),
            "put": k.op("put", "replace", suffix, true, schema_ref, Some(schema_ref), &write, &["200", "201"]),
            "patch": k.op("patch", "patch", suffix, true, schema_ref, Some(PATCH), &patch, &["200"]),
            "parameters": scope_params(true),
        });
        if sub == "scale" {
            let scale = json!({"group": "autoscaling", "kind": "Scale", "version": "v1"});
            for verb in ["get", "put", "patch"] {
                ops[verb]["x-kubernetes-group-version-kind"] = scale.clone();
            }
        }
        paths.insert(format!("{item_path}/{sub}"), ops);
    }
}

/// The `/openapi/v2` document: `own` (this tier's own kinds, a v2
/// document) with every served version of `crds` added.
pub fn build(crds: &[std::sync::Arc<Value>], own: Option<&[u8]>) -> Value {
    let mut doc = own
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| {
            json!({"swagger": "2.0", "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}})
        });
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for c in crds {
        for v in crd::versions(c) {
            if v.get("served").and_then(Value::as_bool) == Some(true) {
                add_version(c, v, &mut paths, &mut definitions);
            }
        }
    }
    let theirs = json!({"paths": paths, "definitions": definitions});
    apiserver::openapi::v2::merge(&mut doc, &theirs);
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_lose_what_v2_cannot_say() {
        let mut s = json!({"type": "object", "required": ["a", "b"],
            "x-kubernetes-validations": [{"rule": "true"}],
            "properties": {
                "a": {"type": "string", "nullable": true},
                "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                      "properties": {"c": {"type": "string"}}},
                "d": {"type": "array", "items": {"type": "object", "anyOf": [{"required": ["x"]}],
                      "x-kubernetes-preserve-unknown-fields": true}},
                "e": {"type": "array", "x-kubernetes-preserve-unknown-fields": true,
                      "items": {"type": "string"}}}});
        to_v2(&mut s);
        assert_eq!(s["required"], json!(["b"]));
        assert!(s.get("x-kubernetes-validations").is_none());
        assert_eq!(s["properties"]["a"], json!({}));
        assert!(s["properties"]["b"].get("properties").is_none());
        assert!(s["properties"]["d"]["items"].get("anyOf").is_none());
        assert!(s["properties"]["e"].get("type").is_none());
    }

    #[test]
    fn custom_resources_get_definitions_and_paths() {
        let crd = json!({"metadata": {"uid": "u1", "generation": 1},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                "names": {"kind": "CronTab", "plural": "crontabs"},
                "versions": [{"name": "v1", "served": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "properties": {"spec": {"type": "object"}}}}},
                    {"name": "v2", "served": false}]}});
        let own = serde_json::to_vec(&json!({"swagger": "2.0", "paths": {"/apis/apiextensions.k8s.io/v1/customresourcedefinitions": {}}})).unwrap();
        let doc = build(&[std::sync::Arc::new(crd)], Some(&own));
        let def = &doc["definitions"]["com.example.stable.v1.CronTab"];
        assert_eq!(
            def["x-kubernetes-group-version-kind"],
            json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
        );
        assert!(def["properties"]["spec"].is_object());
        assert_eq!(def["properties"]["metadata"]["$ref"], OBJECT_META);
        assert!(doc["definitions"]["com.example.stable.v1.CronTabList"].is_object());
        assert!(doc["definitions"]
            .get("com.example.stable.v2.CronTab")
            .is_none());
        let coll = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"];
        assert_eq!(
            coll["get"]["operationId"],
            "listStableExampleComV1NamespacedCronTab"
        );
        assert_eq!(
            doc["paths"]["/apis/stable.example.com/v1/crontabs"]["get"]["operationId"],
            "listStableExampleComV1CronTabForAllNamespaces"
        );
        assert!(doc["paths"]
            ["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status"]
            .is_object());
        assert!(
            doc["paths"]["/apis/apiextensions.k8s.io/v1/customresourcedefinitions"].is_object()
        );
    }
}
