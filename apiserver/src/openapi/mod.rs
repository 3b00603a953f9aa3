//! OpenAPI v2 (`/openapi/v2`) and v3 (`/openapi/v3`, one document per
//! group/version at `/openapi/v3/apis/<g>/<v>?hash=`) generated from the
//! served resources and their JSON schemas, as `kubectl explain` and
//! kubectl's `--validate=strict` use them.
//!
//! The schemas come from the caller (kube-core generates them from the
//! k8s-openapi types); this module adds what upstream's spec builder adds:
//! `x-kubernetes-group-version-kind` on kinds and operations, the paths and
//! operations of every resource with their query parameters (notably
//! `fieldValidation`), and content hashes for caching.

mod lists;
pub mod v2;
pub mod v2_proto;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};

use crate::body::{self, Response};
use crate::registry::resource::ResourceDef;

/// One served kind and the name of its schema in the components
/// (`io.k8s.api.apps.v1.Deployment`).
pub struct KindSchema {
    pub def: ResourceDef,
    pub schema: String,
}

struct Doc {
    bytes: Bytes,
    hash: String,
}

/// The built documents, served from memory.
pub struct OpenApi {
    v3: BTreeMap<String, Doc>,
    v2: Doc,
    components: Arc<Map<String, Value>>,
    /// (group, version, kind) → schema name.
    kinds: BTreeMap<(String, String, String), String>,
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn gvk(def: &ResourceDef) -> Value {
    json!({"group": def.group, "version": def.version, "kind": def.kind})
}

fn sha512_hex(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA512, bytes);
    d.as_ref().iter().map(|b| format!("{b:02X}")).collect()
}

fn query_param(name: &str, description: &str, ty: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": ty, "uniqueItems": true}})
}

fn write_params(patch: bool) -> Vec<Value> {
    let mut p = vec![
        query_param("dryRun", "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed", "string"),
        query_param("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.", "string"),
        query_param("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.", "string"),
    ];
    if patch {
        p.push(query_param("force", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.", "boolean"));
    }
    p
}

fn json_content(schema: Value) -> Value {
    json!({
        "application/json": {"schema": schema.clone()},
        "application/yaml": {"schema": schema.clone()},
        "application/vnd.kubernetes.protobuf": {"schema": schema},
    })
}

fn op(
    def: &ResourceDef,
    action: &str,
    verb_id: &str,
    schema: &Value,
    params: Vec<Value>,
    body: Option<Value>,
    code: &str,
) -> Value {
    let kind_id = def.kind.clone();
    let scope = if def.namespaced && verb_id != "listForAllNamespaces" {
        "Namespaced"
    } else {
        ""
    };
    let op_id = match verb_id {
        "listForAllNamespaces" => format!("list{kind_id}ForAllNamespaces"),
        v => format!("{v}{scope}{kind_id}"),
    };
    let mut o = json!({
        "operationId": op_id,
        "tags": [def.api_version().replace('/', "_")],
        "responses": {code: {"description": "OK", "content": json_content(schema.clone())},
                      "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(def),
    });
    if !params.is_empty() {
        o["parameters"] = Value::Array(params);
    }
    if let Some(b) = body {
        o["requestBody"] = b;
    }
    o
}

/// The component name k8s-openapi gives a built-in kind's schema
/// (`io.k8s.api.policy.v1.Eviction`).
fn builtin_schema_name(group: &str, version: &str, kind: &str) -> String {
    let package = if group.is_empty() {
        "core"
    } else {
        group.split('.').next().unwrap_or(group)
    };
    format!("io.k8s.api.{package}.{version}.{kind}")
}

/// The group, version, kind and schema name of a custom subresource's body.
fn custom_subresource_schema<'a>(
    def: &'a ResourceDef,
    sub: &'a crate::registry::resource::CustomSubresource,
) -> (&'a str, &'a str, &'a str, String) {
    let (g, v, k) = sub.kind;
    let (g, v) = if g.is_empty() && v.is_empty() {
        (def.group.as_str(), def.version.as_str())
    } else {
        (g, v)
    };
    (g, v, k, builtin_schema_name(g, v, k))
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn paths_of(
    def: &ResourceDef,
    schema_name: &str,
    components: &Map<String, Value>,
) -> Vec<(String, Value)> {
    let kind_ref = json!({"$ref": format!("#/components/schemas/{schema_name}")});
    let list_schema = if components.contains_key(&format!("{schema_name}List")) {
        json!({"$ref": format!("#/components/schemas/{schema_name}List")})
    } else {
        lists::list_component(def, schema_name)
    };
    let base = if def.group.is_empty() {
        format!("/api/{}", def.version)
    } else {
        format!("/apis/{}/{}", def.group, def.version)
    };
    let ns_param = json!({"name": "namespace", "in": "path", "description": "object name and auth scope, such as for teams and projects", "required": true, "schema": {"type": "string", "uniqueItems": true}});
    let name_param = json!({"name": "name", "in": "path", "description": format!("name of the {}", def.kind), "required": true, "schema": {"type": "string", "uniqueItems": true}});
    let collection = if def.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}", def.resource)
    } else {
        format!("{base}/{}", def.resource)
    };
    let verbs: Vec<&str> = def.verbs.iter().map(String::as_str).collect();
    let has = |v: &str| verbs.contains(&v);
    let body = |s: &Value| json!({"content": {"*/*": {"schema": s.clone()}}, "required": true});
    let patch_body = json!({"content": {
        "application/apply-patch+yaml": {"schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}},
        "application/json-patch+json": {"schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}},
        "application/merge-patch+json": {"schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}},
        "application/strategic-merge-patch+json": {"schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}},
        "required": true});
    let mut out = Vec::new();

    let mut coll = Map::new();
    if has("list") {
        coll.insert(
            "get".into(),
            op(def, "list", "list", &list_schema, vec![], None, "200"),
        );
    }
    if has("create") {
        coll.insert(
            "post".into(),
            op(
                def,
                "post",
                "create",
                &kind_ref,
                write_params(false),
                Some(body(&kind_ref)),
                "201",
            ),
        );
    }
    if has("deletecollection") {
        coll.insert("delete".into(), op(def, "deletecollection", "deleteCollection", &json!({"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status"}), vec![], None, "200"));
    }
    if !coll.is_empty() {
        if def.namespaced {
            coll.insert("parameters".into(), json!([ns_param.clone()]));
        }
        out.push((collection.clone(), Value::Object(coll)));
    }

    let item_path = format!("{collection}/{{name}}");
    let mut item = Map::new();
    if has("get") {
        item.insert(
            "get".into(),
            op(def, "get", "read", &kind_ref, vec![], None, "200"),
        );
    }
    if has("update") {
        item.insert(
            "put".into(),
            op(
                def,
                "put",
                "replace",
                &kind_ref,
                write_params(false),
                Some(body(&kind_ref)),
                "200",
            ),
        );
    }
    if has("patch") {
        item.insert(
            "patch".into(),
            op(
                def,
                "patch",
                "patch",
                &kind_ref,
                write_params(true),
                Some(patch_body.clone()),
                "200",
            ),
        );
    }
    if has("delete") {
        item.insert(
            "delete".into(),
            op(def, "delete", "delete", &kind_ref, vec![], None, "200"),
        );
    }
    if !item.is_empty() {
        let mut params = vec![name_param.clone()];
        if def.namespaced {
            params.push(ns_param.clone());
        }
        item.insert("parameters".into(), Value::Array(params));
        out.push((item_path.clone(), Value::Object(item)));
    }

    for sub in &def.subresources {
        let mut m = Map::new();
        let name = sub.name();
        let cap = |s: &str| {
            let mut c = s.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        };
        let suffix = cap(name);
        let mut d = def.clone();
        d.kind = format!("{}{}", def.kind, suffix);
        // The scale subresource speaks autoscaling/v1 Scale.
        let (sub_gvk, sub_ref) = if *sub == crate::registry::resource::Subresource::Scale {
            (
                json!({"group": "autoscaling", "version": "v1", "kind": "Scale"}),
                json!({"$ref": "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"}),
            )
        } else {
            (gvk(def), kind_ref.clone())
        };
        let mut g = op(&d, "get", "read", &sub_ref, vec![], None, "200");
        g["x-kubernetes-group-version-kind"] = sub_gvk.clone();
        m.insert("get".into(), g);
        let mut p = op(
            &d,
            "put",
            "replace",
            &sub_ref,
            write_params(false),
            Some(body(&sub_ref)),
            "200",
        );
        p["x-kubernetes-group-version-kind"] = sub_gvk.clone();
        m.insert("put".into(), p);
        let mut pa = op(
            &d,
            "patch",
            "patch",
            &sub_ref,
            write_params(true),
            Some(patch_body.clone()),
            "200",
        );
        pa["x-kubernetes-group-version-kind"] = sub_gvk;
        m.insert("patch".into(), pa);
        let mut params = vec![name_param.clone()];
        if def.namespaced {
            params.push(ns_param.clone());
        }
        m.insert("parameters".into(), Value::Array(params));
        out.push((format!("{item_path}/{name}"), Value::Object(m)));
    }

    // Subresources with their own handlers (pods/eviction,
    // serviceaccounts/token, pods/binding), when their body has a schema.
    for sub in &def.custom_subresources {
        let (g, v, k, name) = custom_subresource_schema(def, sub);
        if !components.contains_key(&name) {
            continue;
        }
        let sub_ref = json!({"$ref": format!("#/components/schemas/{name}")});
        let sub_gvk = json!({"group": g, "version": v, "kind": k});
        let mut d = def.clone();
        d.kind = format!("{}{}", def.kind, capitalize(sub.name));
        let mut m = Map::new();
        for verb in sub.verbs {
            let (method, id, params, body, code) = match *verb {
                "create" => (
                    "post",
                    "create",
                    write_params(false),
                    Some(body(&sub_ref)),
                    "201",
                ),
                "get" => ("get", "read", vec![], None, "200"),
                "update" => (
                    "put",
                    "replace",
                    write_params(false),
                    Some(body(&sub_ref)),
                    "200",
                ),
                "patch" => (
                    "patch",
                    "patch",
                    write_params(true),
                    Some(patch_body.clone()),
                    "200",
                ),
                _ => continue,
            };
            let mut o = op(&d, method, id, &sub_ref, params, body, code);
            o["x-kubernetes-group-version-kind"] = sub_gvk.clone();
            m.insert(method.into(), o);
        }
        if m.is_empty() {
            continue;
        }
        let mut params = vec![name_param.clone()];
        if def.namespaced {
            params.push(ns_param.clone());
        }
        m.insert("parameters".into(), Value::Array(params));
        out.push((format!("{item_path}/{}", sub.name), Value::Object(m)));
    }

    if def.namespaced && has("list") {
        let mut m = Map::new();
        m.insert(
            "get".into(),
            op(
                def,
                "list",
                "listForAllNamespaces",
                &list_schema,
                vec![],
                None,
                "200",
            ),
        );
        out.push((format!("{base}/{}", def.resource), Value::Object(m)));
    }
    out
}

/// Collects the names of the schemas reachable from `root`.
fn reachable(
    root: &str,
    components: &Map<String, Value>,
    seen: &mut std::collections::BTreeSet<String>,
) {
    let mut stack = vec![root.to_string()];
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(s) = components.get(&name) {
            collect_refs(s, &mut stack);
        }
    }
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                if let Some(n) = r.strip_prefix("#/components/schemas/") {
                    out.push(n.to_string());
                }
            }
            for x in m.values() {
                collect_refs(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

impl OpenApi {
    /// Builds the documents for `kinds` from `components` (every schema by
    /// name, references as `#/components/schemas/<name>`).
    pub fn build(kinds: &[KindSchema], mut components: Map<String, Value>) -> OpenApi {
        // Kinds carry their group/version/kind.
        let mut kind_index: BTreeMap<(String, String, String), String> = BTreeMap::new();
        for k in kinds {
            if let Some(Value::Object(s)) = components.get_mut(&k.schema) {
                let entry = s
                    .entry("x-kubernetes-group-version-kind")
                    .or_insert_with(|| json!([]));
                if let Value::Array(a) = entry {
                    let g = gvk(&k.def);
                    if !a.contains(&g) {
                        a.push(g);
                    }
                }
            }
            kind_index.insert(
                (
                    k.def.group.clone(),
                    k.def.version.clone(),
                    k.def.kind.clone(),
                ),
                k.schema.clone(),
            );
        }
        for extra in [
            "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        ] {
            if !components.contains_key(extra) {
                let schema = match extra {
                    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch" => {
                        json!({"description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.", "type": "object"})
                    }
                    _ => json!({"type": "object"}),
                };
                components.insert(extra.to_string(), schema);
            }
        }
        // Every kind's `<Kind>List`, which the list operations name.
        for k in kinds {
            let name = format!("{}List", k.schema);
            if !components.contains_key(&name) && components.contains_key(&k.schema) {
                components.insert(name, lists::list_component(&k.def, &k.schema));
            }
        }
        // Group kinds by group/version.
        let mut by_gv: BTreeMap<(String, String), Vec<&KindSchema>> = BTreeMap::new();
        for k in kinds {
            by_gv
                .entry((k.def.group.clone(), k.def.version.clone()))
                .or_default()
                .push(k);
        }
        let mut v3 = BTreeMap::new();
        let mut all_paths = Map::new();
        for ((group, version), ks) in &by_gv {
            let mut paths = Map::new();
            let mut names = std::collections::BTreeSet::new();
            for k in ks {
                for (p, item) in paths_of(&k.def, &k.schema, &components) {
                    paths.insert(p.clone(), item.clone());
                    all_paths.insert(p, item);
                }
                reachable(&k.schema, &components, &mut names);
                for sub in &k.def.custom_subresources {
                    let (_, _, _, name) = custom_subresource_schema(&k.def, sub);
                    if components.contains_key(&name) {
                        reachable(&name, &components, &mut names);
                    }
                }
                if k.def
                    .has_subresource(crate::registry::resource::Subresource::Scale)
                {
                    reachable("io.k8s.api.autoscaling.v1.Scale", &components, &mut names);
                }
            }
            for extra in [
                "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
                "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
                "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
            ] {
                reachable(extra, &components, &mut names);
            }
            // What the operations name too: the lists, DeleteOptions,
            // WatchEvent (upstream's documents hold every schema their
            // paths reference).
            let mut from_paths = Vec::new();
            collect_refs(&Value::Object(paths.clone()), &mut from_paths);
            for name in from_paths {
                reachable(&name, &components, &mut names);
            }
            let schemas: Map<String, Value> = names
                .iter()
                .filter_map(|n| components.get(n).map(|s| (n.clone(), s.clone())))
                .collect();
            let doc = json!({
                "openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": format!("v1.{}.0", crate::endpoints::version::KUBERNETES_MINOR)},
                "paths": paths,
                "components": {"schemas": schemas},
            });
            let bytes = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
            let hash = sha512_hex(&bytes);
            v3.insert(gv_path(group, version), Doc { bytes, hash });
        }
        // v2: one document, definitions under #/definitions/.
        let v2_doc = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": format!("v1.{}.0", crate::endpoints::version::KUBERNETES_MINOR)},
            "paths": all_paths,
            "definitions": components,
        });
        let v2 = Bytes::from(
            serde_json::to_string(&v2_doc)
                .unwrap_or_default()
                .replace("#/components/schemas/", "#/definitions/"),
        );
        let v2_hash = sha512_hex(&v2);
        OpenApi {
            v3,
            v2: Doc {
                bytes: v2,
                hash: v2_hash,
            },
            components: Arc::new(components),
            kinds: kind_index,
        }
    }

    /// The `/openapi/v3` discovery document (`paths` → `serverRelativeURL`).
    pub fn v3_root(&self) -> Value {
        let paths: Map<String, Value> = self
            .v3
            .iter()
            .map(|(p, d)| {
                (
                    p.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={}", d.hash)}),
                )
            })
            .collect();
        json!({"paths": paths})
    }

    /// The serialized `/openapi/v2` document.
    pub fn v2_bytes(&self) -> &Bytes {
        &self.v2.bytes
    }

    /// Whether `gv_path` (`apis/apps/v1`) has a v3 document here.
    pub fn has_v3(&self, gv_path: &str) -> bool {
        self.v3.contains_key(gv_path)
    }

    /// Serves `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<gv>`; `None`
    /// for a group/version this server has no document for.
    pub fn serve(
        &self,
        path: &str,
        query: Option<&str>,
        if_none_match: Option<&str>,
    ) -> Option<Response> {
        let path = path.trim_end_matches('/');
        if path == "/openapi/v2" {
            return Some(bytes_response(
                self.v2.bytes.clone(),
                &self.v2.hash,
                false,
                if_none_match,
            ));
        }
        if path == "/openapi/v3" {
            let bytes = Bytes::from(serde_json::to_vec(&self.v3_root()).unwrap_or_default());
            return Some(bytes_response(bytes, "", false, None));
        }
        let gv = path.strip_prefix("/openapi/v3/")?;
        let doc = self.v3.get(gv)?;
        let requested = crate::request::info::parse_query(query)
            .into_iter()
            .find(|(k, _)| k == "hash")
            .map(|(_, v)| v);
        match requested {
            Some(h) if h != doc.hash => {
                // Upstream redirects a stale hash to the current document.
                let location = format!("/openapi/v3/{gv}?hash={}", doc.hash);
                Some(
                    http::Response::builder()
                        .status(301)
                        .header(http::header::LOCATION, location)
                        .header(http::header::CACHE_CONTROL, "no-cache, private")
                        .body(body::full(Vec::new()))
                        .unwrap_or_else(|_| {
                            crate::apimachinery::errors::ApiError::internal("building response")
                                .into_response()
                        }),
                )
            }
            Some(_) => Some(bytes_response(
                doc.bytes.clone(),
                &doc.hash,
                true,
                if_none_match,
            )),
            None => Some(bytes_response(
                doc.bytes.clone(),
                &doc.hash,
                false,
                if_none_match,
            )),
        }
    }

    /// Paths of fields in `obj` the kind's schema does not declare.
    pub fn unknown_fields(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        obj: &Value,
    ) -> Vec<String> {
        let Some(name) =
            self.kinds
                .get(&(group.to_string(), version.to_string(), kind.to_string()))
        else {
            return Vec::new();
        };
        let root = json!({"$ref": format!("#/components/schemas/{name}")});
        crate::schema::openapi::unknown_fields(obj, &root, &self.components)
    }

    /// `{"$ref": ...}` to a served kind's schema.
    pub fn schema_ref(&self, group: &str, version: &str, kind: &str) -> Option<Value> {
        self.kinds
            .get(&(group.to_string(), version.to_string(), kind.to_string()))
            .map(|name| json!({"$ref": format!("#/components/schemas/{name}")}))
    }

    /// The component schemas, by name.
    pub fn components(&self) -> &Arc<Map<String, Value>> {
        &self.components
    }
}

fn bytes_response(
    bytes: Bytes,
    hash: &str,
    immutable: bool,
    if_none_match: Option<&str>,
) -> Response {
    let etag = format!("\"{hash}\"");
    let cache = if immutable {
        "public, immutable"
    } else {
        "no-cache, private"
    };
    let not_modified =
        !hash.is_empty() && if_none_match.is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut b = http::Response::builder()
        .status(if not_modified { 304 } else { 200 })
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CACHE_CONTROL, cache);
    if !hash.is_empty() {
        b = b.header(http::header::ETAG, etag);
    }
    if immutable {
        b = b.header(http::header::EXPIRES, "Thu, 01 Jan 2099 00:00:00 GMT");
    }
    b.body(body::full(if not_modified { Bytes::new() } else { bytes }))
        .unwrap_or_else(|_| {
            crate::apimachinery::errors::ApiError::internal("building response").into_response()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_have_gvk_paths_and_field_validation() {
        let def = ResourceDef::new("apps", "v1", "Deployment", "deployments").with_status();
        let components: Map<String, Value> = serde_json::from_value(json!({
            "io.k8s.api.apps.v1.Deployment": {"type": "object", "properties": {
                "spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]}}},
            "io.k8s.api.apps.v1.DeploymentSpec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        }))
        .unwrap();
        let api = OpenApi::build(
            &[KindSchema {
                def,
                schema: "io.k8s.api.apps.v1.Deployment".into(),
            }],
            components,
        );
        let root = api.v3_root();
        let url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="));
        let doc: Value = serde_json::from_slice(&api.v3["apis/apps/v1"].bytes).unwrap();
        let patch =
            &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"]["kind"],
            "Deployment"
        );
        assert!(patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation"));
        let schema = &doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            schema["x-kubernetes-group-version-kind"][0]["group"],
            "apps"
        );
        assert!(doc["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentSpec"].is_object());
        assert!(
            doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/status"]
                .is_object()
        );
        assert_eq!(
            api.unknown_fields(
                "apps",
                "v1",
                "Deployment",
                &json!({"spec": {"replicas": 1, "foo": 2}})
            ),
            ["spec.foo"]
        );
        // hash caching
        let hash = url.split("hash=").nth(1).unwrap();
        let r = api
            .serve(
                "/openapi/v3/apis/apps/v1",
                Some(&format!("hash={hash}")),
                None,
            )
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "public, immutable");
        let r = api
            .serve("/openapi/v3/apis/apps/v1", Some("hash=stale"), None)
            .unwrap();
        assert_eq!(r.status(), 301);
        let r = api
            .serve(
                "/openapi/v3/apis/apps/v1",
                None,
                Some(&format!("\"{hash}\"")),
            )
            .unwrap();
        assert_eq!(r.status(), 304);
        assert!(api.serve("/openapi/v3/apis/other/v1", None, None).is_none());
    }
}
