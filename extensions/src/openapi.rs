//! OpenAPI v3 for custom resources: `/openapi/v3` lists one document per
//! served group/version, and `/openapi/v3/apis/<group>/<version>` is built
//! lazily from the CRDs of that group/version and cached until one of them
//! changes, so a CRD change rebuilds only its own group/versions
//! (`kubectl explain` reads these).

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, RwLock};

use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::meta;
use apiserver::body::{Request, Response};
use apiserver::endpoints::handlers::json_response;
use serde_json::{json, Map, Value};

use crate::crd;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The OpenAPI document of the CustomResourceDefinition kind itself, from
/// the k8s-openapi type's schema (its field docs are upstream's), so that
/// `kubectl explain crd` works and `kubectl apply -f crd.yaml` finds the
/// server-side `fieldValidation` it relies on.
pub fn own_document() -> Arc<apiserver::openapi::OpenApi> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta_v1;
    use schemars::JsonSchema;
    let mut gen = schemars::generate::SchemaSettings::openapi3().into_generator();
    gen.subschema_for::<CustomResourceDefinition>();
    gen.subschema_for::<meta_v1::Status>();
    gen.subschema_for::<meta_v1::ListMeta>();
    gen.subschema_for::<meta_v1::Patch>();
    let components = gen.take_definitions(true);
    let kinds = [apiserver::openapi::KindSchema {
        def: crd::definition(),
        schema: CustomResourceDefinition::schema_name().into_owned(),
    }];
    Arc::new(apiserver::openapi::OpenApi::build(&kinds, components))
}

/// The published documents of the Established CRDs.
#[derive(Default)]
pub struct OpenApi {
    /// The document of this tier's own kind (`apiextensions.k8s.io/v1`
    /// CustomResourceDefinition), built once at start.
    own: Option<Arc<apiserver::openapi::OpenApi>>,
    crds: RwLock<Arc<Vec<Arc<Value>>>>,
    /// (group, version) → (content key, document bytes).
    cache: Mutex<HashMap<(String, String), (u64, Arc<Vec<u8>>)>>,
    /// `/openapi/v2`: (content key, document bytes, ETag).
    v2: Mutex<Option<(u64, bytes::Bytes, Arc<str>)>>,
    /// `/openapi/v2`'s protobuf form.
    v2_protobuf: apiserver::openapi::v2::ProtobufForm,
}

fn served_versions(c: &Value) -> impl Iterator<Item = &str> {
    crd::versions(c)
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| v.get("name").and_then(Value::as_str))
}

/// upstream's definition-name prefix: the reversed group (`com.example`).
pub(crate) fn reversed_group(group: &str) -> String {
    group.split('.').rev().collect::<Vec<_>>().join(".")
}

impl OpenApi {
    /// Replaces the set of Established CRDs (cheap: documents are rebuilt
    /// only when requested and changed).
    pub fn set_crds(&self, crds: Vec<Arc<Value>>) {
        match self.crds.write() {
            Ok(mut c) => *c = Arc::new(crds),
            Err(p) => *p.into_inner() = Arc::new(crds),
        }
    }

    fn crds(&self) -> Arc<Vec<Arc<Value>>> {
        match self.crds.read() {
            Ok(c) => c.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// The CRDs serving `group`/`version` and a key of their contents.
    fn members(crds: &[Arc<Value>], group: &str, version: &str) -> (Vec<Value>, u64) {
        let mut h = DefaultHasher::new();
        let mut out = Vec::new();
        for c in crds {
            if crd::spec_str(c, &["group"]) == group && served_versions(c).any(|v| v == version) {
                meta::uid(c).hash(&mut h);
                c.get("metadata")
                    .and_then(|m| m.get("generation"))
                    .and_then(Value::as_i64)
                    .hash(&mut h);
                out.push((**c).clone());
            }
        }
        (out, h.finish())
    }

    /// The published documents, with `own` (this tier's own kinds) beside
    /// the CRDs'.
    pub fn with_own(own: Arc<apiserver::openapi::OpenApi>) -> Self {
        OpenApi {
            own: Some(own),
            ..Default::default()
        }
    }

    /// `/openapi/v3`.
    fn index(&self) -> Value {
        let crds = self.crds();
        let mut gvs: BTreeMap<String, u64> = BTreeMap::new();
        let mut seen = std::collections::BTreeSet::new();
        for c in crds.iter() {
            let g = crd::spec_str(c, &["group"]).to_string();
            for v in served_versions(c) {
                seen.insert((g.clone(), v.to_string()));
            }
        }
        for (g, v) in seen {
            let (_, key) = Self::members(&crds, &g, &v);
            gvs.insert(format!("apis/{g}/{v}"), key);
        }
        let mut paths: Map<String, Value> = gvs
            .into_iter()
            .map(|(p, key)| {
                let url = format!("/openapi/v3/{p}?hash={key:016X}");
                (p, json!({"serverRelativeURL": url}))
            })
            .collect();
        if let Some(own) = &self.own {
            if let Some(Value::Object(theirs)) = own.v3_root().get("paths") {
                for (k, v) in theirs {
                    paths.insert(k.clone(), v.clone());
                }
            }
        }
        json!({"paths": paths})
    }

    /// `/openapi/v3/apis/<group>/<version>`, from the cache when unchanged.
    fn document(&self, group: &str, version: &str) -> Option<Arc<Vec<u8>>> {
        let crds = self.crds();
        let (members, key) = Self::members(&crds, group, version);
        if members.is_empty() {
            return None;
        }
        let gv = (group.to_string(), version.to_string());
        if let Ok(cache) = self.cache.lock() {
            if let Some((k, doc)) = cache.get(&gv) {
                if *k == key {
                    return Some(doc.clone());
                }
            }
        }
        let doc = Arc::new(serde_json::to_vec(&build_document(&members, group, version)).ok()?);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(gv, (key, doc.clone()));
        }
        Some(doc)
    }

    /// `/openapi/v2` (see [`crate::openapi_v2`]) and its ETag, rebuilt only
    /// when a CRD changed (any CRD's uid or resourceVersion).
    fn v2_document(&self) -> (bytes::Bytes, Arc<str>) {
        let crds = self.crds();
        let mut h = DefaultHasher::new();
        for c in crds.iter() {
            meta::uid(c).hash(&mut h);
            meta::resource_version(c).hash(&mut h);
        }
        let key = h.finish();
        if let Ok(cached) = self.v2.lock() {
            if let Some((k, bytes, etag)) = cached.as_ref() {
                if *k == key {
                    return (bytes.clone(), etag.clone());
                }
            }
        }
        let own = self.own.as_ref().map(|o| &o.v2_bytes()[..]);
        let doc = crate::openapi_v2::build(&crds, own);
        let bytes = bytes::Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
        let etag: Arc<str> = apiserver::openapi::v2::etag_of(&bytes).into();
        if let Ok(mut cached) = self.v2.lock() {
            *cached = Some((key, bytes.clone(), etag.clone()));
        }
        (bytes, etag)
    }

    /// Serves `/openapi/v2`, answering `If-None-Match` with 304.
    pub async fn serve_v2(self: Arc<Self>, req: Request) -> Response {
        if req.uri().path().trim_end_matches('/') != "/openapi/v2" {
            return ApiError::path_not_found().into_response();
        }
        let (bytes, etag) = self.v2_document();
        let inm = req
            .headers()
            .get(http::header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok());
        let accept = req
            .headers()
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        apiserver::openapi::v2::respond(&bytes, &etag, inm, accept, &self.v2_protobuf)
    }

    /// Serves `/openapi/v3` and `/openapi/v3/apis/<group>/<version>`.
    pub async fn serve(self: Arc<Self>, req: Request) -> Response {
        let path = req.uri().path().trim_end_matches('/').to_string();
        let rest = path
            .trim_start_matches("/openapi/v3")
            .trim_start_matches('/');
        if rest.is_empty() {
            return json_response(200, &self.index(), false);
        }
        if let Some(own) = &self.own {
            let inm = req
                .headers()
                .get(http::header::IF_NONE_MATCH)
                .and_then(|v| v.to_str().ok());
            if let Some(resp) = own.serve(&path, req.uri().query(), inm) {
                return resp;
            }
        }
        let parts: Vec<&str> = rest.split('/').collect();
        let doc = match parts.as_slice() {
            ["apis", g, v] => self.document(g, v),
            _ => None,
        };
        match doc {
            Some(bytes) => http::Response::builder()
                .status(200)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(apiserver::body::full(bytes.as_ref().clone()))
                .unwrap_or_else(|_| ApiError::internal("building response").into_response()),
            None => ApiError::path_not_found().into_response(),
        }
    }
}

/// A GET operation on a path, with the GVK kubectl explain looks for.
fn get_operation(action: &str, kind: &str, group: &str, version: &str, schema_ref: &str) -> Value {
    json!({"get": operation(action, "get", kind, group, version, schema_ref, &[])})
}

/// One operation of a path. `query` names the query parameters it takes.
fn operation(
    action: &str,
    verb: &str,
    kind: &str,
    group: &str,
    version: &str,
    schema_ref: &str,
    query: &[&str],
) -> Value {
    let parameters: Vec<Value> = query
        .iter()
        .map(|name| {
            let schema = if *name == "force" {
                json!({"type": "boolean", "uniqueItems": true})
            } else {
                json!({"type": "string", "uniqueItems": true})
            };
            json!({"name": name, "in": "query", "schema": schema})
        })
        .collect();
    json!({
        "description": format!("{action} {kind}"),
        "operationId": format!("{verb}{kind}"),
        "parameters": parameters,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": schema_ref}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": group, "kind": kind, "version": version},
    })
}

/// The operations on a collection path: list and, when `writable`, create.
fn collection_operations(
    kind: &str,
    group: &str,
    version: &str,
    list_ref: &str,
    item_ref: &str,
    writable: bool,
) -> Value {
    let mut ops = get_operation("list", kind, group, version, list_ref);
    if writable {
        ops["post"] = operation(
            "post",
            "create",
            kind,
            group,
            version,
            item_ref,
            &["dryRun", "fieldManager", "fieldValidation"],
        );
        ops["post"]["requestBody"] = json!({"content": {"application/json": {"schema": {"$ref": item_ref}}}, "required": true});
    }
    ops
}

/// The operations on an object path: get, replace, patch and delete. The
/// `fieldValidation` parameter of PATCH is what tells kubectl the server
/// validates fields itself (it then skips downloading OpenAPI v2).
fn item_operations(kind: &str, group: &str, version: &str, item_ref: &str) -> Value {
    let write = ["dryRun", "fieldManager", "fieldValidation"];
    let mut ops = get_operation("get", kind, group, version, item_ref);
    ops["put"] = operation("put", "replace", kind, group, version, item_ref, &write);
    ops["put"]["requestBody"] =
        json!({"content": {"application/json": {"schema": {"$ref": item_ref}}}, "required": true});
    ops["patch"] = operation(
        "patch",
        "patch",
        kind,
        group,
        version,
        item_ref,
        &["dryRun", "fieldManager", "fieldValidation", "force"],
    );
    ops["patch"]["requestBody"] = json!({"content": {
        "application/json-patch+json": {"schema": {"type": "object"}},
        "application/merge-patch+json": {"schema": {"type": "object"}},
        "application/apply-patch+yaml": {"schema": {"type": "object"}}
    }, "required": true});
    ops["delete"] = operation(
        "delete",
        "delete",
        kind,
        group,
        version,
        item_ref,
        &["dryRun"],
    );
    ops
}

fn build_document(crds: &[Value], group: &str, version: &str) -> Value {
    let mut schemas = Map::new();
    let mut paths = Map::new();
    let prefix = format!("{}.{version}", reversed_group(group));
    for c in crds {
        let kind = c
            .get("status")
            .and_then(|s| s.get("acceptedNames"))
            .and_then(|n| n.get("kind"))
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| crd::spec_str(c, &["names", "kind"]))
            .to_string();
        let list_kind = format!("{kind}List");
        let Some(v) = crd::versions(c)
            .iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        else {
            continue;
        };
        let mut schema = v
            .get("schema")
            .and_then(|s| s.get("openAPIV3Schema"))
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}));
        if let Value::Object(m) = &mut schema {
            let props = m.entry("properties").or_insert_with(|| json!({}));
            if let Value::Object(p) = props {
                p.insert(
                    "apiVersion".into(),
                    json!({"type": "string", "description": API_VERSION_DOC}),
                );
                p.insert(
                    "kind".into(),
                    json!({"type": "string", "description": KIND_DOC}),
                );
                p.insert(
                    "metadata".into(),
                    json!({"allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}], "description": METADATA_DOC}),
                );
            }
            m.insert(
                "x-kubernetes-group-version-kind".into(),
                json!([{"group": group, "kind": kind, "version": version}]),
            );
        }
        schemas.insert(format!("{prefix}.{kind}"), schema);
        let plural = c
            .get("status")
            .and_then(|s| s.get("acceptedNames"))
            .and_then(|n| n.get("plural"))
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| crd::spec_str(c, &["names", "plural"]))
            .to_string();
        let item_ref = format!("#/components/schemas/{prefix}.{kind}");
        let list_ref = format!("#/components/schemas/{prefix}.{list_kind}");
        let base = format!("/apis/{group}/{version}");
        let scoped = if crd::spec_str(c, &["scope"]) == "Cluster" {
            base.clone()
        } else {
            paths.insert(
                format!("{base}/{plural}"),
                collection_operations(&kind, group, version, &list_ref, &item_ref, false),
            );
            format!("{base}/namespaces/{{namespace}}")
        };
        paths.insert(
            format!("{scoped}/{plural}"),
            collection_operations(&kind, group, version, &list_ref, &item_ref, true),
        );
        paths.insert(
            format!("{scoped}/{plural}/{{name}}"),
            item_operations(&kind, group, version, &item_ref),
        );
        schemas.insert(
            format!("{prefix}.{list_kind}"),
            json!({
                "description": format!("{list_kind} is a list of {kind}"),
                "type": "object",
                "required": ["items"],
                "properties": {
                    "apiVersion": {"type": "string", "description": API_VERSION_DOC},
                    "kind": {"type": "string", "description": KIND_DOC},
                    "items": {"type": "array", "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/api-conventions.md", crd::spec_str(c, &["names", "plural"])),
                              "items": {"$ref": format!("#/components/schemas/{prefix}.{kind}")}},
                    "metadata": {"allOf": [{"$ref": format!("#/components/schemas/{LIST_META}")}], "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}
                },
                "x-kubernetes-group-version-kind": [{"group": group, "kind": list_kind, "version": version}]
            }),
        );
    }
    schemas.insert(OBJECT_META.into(), object_meta_schema());
    schemas.insert(
        LIST_META.into(),
        json!({"description": "ListMeta describes metadata that synthetic resources must have, including lists and various status objects.", "type": "object", "properties": {
            "continue": {"type": "string", "description": "continue may be set if the user set a limit on the number of items returned."},
            "remainingItemCount": {"type": "integer", "format": "int64", "description": "remainingItemCount is the number of subsequent items in the list which are not included in this list response."},
            "resourceVersion": {"type": "string", "description": "String that identifies the server's internal version of this object."}
        }}),
    );
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

fn object_meta_schema() -> Value {
    let s = |d: &str| json!({"type": "string", "description": d});
    json!({
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "type": "object",
        "properties": {
            "name": s("Name must be unique within a namespace."),
            "generateName": s("GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."),
            "namespace": s("Namespace defines the space within which each name must be unique."),
            "uid": s("UID is the unique in time and space value for this object."),
            "resourceVersion": s("An opaque value that represents the internal version of this object."),
            "generation": {"type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state."},
            "creationTimestamp": {"type": "string", "format": "date-time", "description": "CreationTimestamp is a timestamp representing the server time when this object was created."},
            "deletionTimestamp": {"type": "string", "format": "date-time", "description": "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted."},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Map of string keys and values that can be used to organize and categorize (scope and select) objects."},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Annotations is an unstructured key value map stored with a resource."},
            "finalizers": {"type": "array", "items": {"type": "string"}, "description": "Must be empty before the object is deleted from the registry."},
            "ownerReferences": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}, "description": "List of objects depended by this object."}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_per_group_version_and_cached() {
        let crd = json!({"metadata": {"uid": "u1", "generation": 1},
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
                "versions": [{"name": "v1", "served": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}}]}});
        let o = OpenApi::default();
        o.set_crds(vec![Arc::new(crd)]);
        let idx = o.index();
        let url = idx["paths"]["apis/example.com/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap();
        assert!(url.starts_with("/openapi/v3/apis/example.com/v1?hash="));
        let doc: Value = serde_json::from_slice(&o.document("example.com", "v1").unwrap()).unwrap();
        let w = &doc["components"]["schemas"]["com.example.v1.Widget"];
        assert_eq!(w["x-kubernetes-group-version-kind"][0]["kind"], "Widget");
        assert!(w["properties"]["spec"].is_object());
        assert!(o.document("example.com", "v2").is_none());
        let a = o.document("example.com", "v1").unwrap();
        let b = o.document("example.com", "v1").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
