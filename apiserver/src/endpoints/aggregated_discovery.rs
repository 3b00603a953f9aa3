//! Aggregated discovery (`apidiscovery.k8s.io/v2`): one
//! `APIGroupDiscoveryList` holding every group, version and resource, asked
//! for with `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`.
//! Clients (client-go, kubectl ≥ 1.26) decide between it and legacy
//! discovery from the response `Content-Type`; responses carry an `ETag` and
//! answer `If-None-Match` with 304, as upstream's handler.

use base64::Engine;
use serde_json::{json, Map, Value};

use crate::body::{self, Response};
use crate::registry::catalog::Catalog;

/// The `Content-Type` of an aggregated discovery response.
pub const CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether the first acceptable JSON media range of `accept` asks for
/// `APIGroupDiscoveryList` v2 (a plain `application/json` earlier in the list
/// means legacy discovery).
pub fn wants_aggregated(accept: Option<&str>) -> bool {
    let Some(accept) = accept else { return false };
    for range in accept.split(',') {
        let mut pieces = range.split(';').map(str::trim);
        let type_ = pieces.next().unwrap_or("");
        let params: Vec<(&str, &str)> = pieces
            .filter_map(|p| p.split_once('=').map(|(k, v)| (k.trim(), v.trim())))
            .collect();
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        if type_ != "application/json" && type_ != "application/*" && type_ != "*/*" {
            continue;
        }
        match (param("g"), param("v"), param("as")) {
            (Some("apidiscovery.k8s.io"), Some("v2"), Some("APIGroupDiscoveryList")) => {
                return true
            }
            (None, None, None) => return false,
            _ => continue,
        }
    }
    false
}

/// `Current` or `Stale`.
pub fn freshness(stale: bool) -> &'static str {
    if stale {
        "Stale"
    } else {
        "Current"
    }
}

/// One version of a group, from a legacy `APIResourceList` (`/apis/<g>/<v>`):
/// subresources (`pods/status`) are folded into their resource.
pub fn version_from_resource_list(group: &str, version: &str, list: &Value, stale: bool) -> Value {
    let resources: Vec<Value> = list
        .get("resources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out: Vec<Map<String, Value>> = Vec::new();
    for r in resources.iter() {
        let Some(name) = r.get("name").and_then(Value::as_str) else {
            continue;
        };
        let kind_of = |r: &Value| {
            json!({
                "group": r.get("group").and_then(Value::as_str).unwrap_or(group),
                "version": r.get("version").and_then(Value::as_str).unwrap_or(version),
                "kind": r.get("kind").cloned().unwrap_or(json!("")),
            })
        };
        if let Some((parent, sub)) = name.split_once('/') {
            if let Some(p) = out
                .iter_mut()
                .find(|p| p.get("resource").and_then(Value::as_str) == Some(parent))
            {
                let subs = p.entry("subresources").or_insert_with(|| json!([]));
                if let Some(a) = subs.as_array_mut() {
                    a.push(json!({
                        "subresource": sub,
                        "responseKind": kind_of(r),
                        "verbs": r.get("verbs").cloned().unwrap_or(json!([])),
                    }));
                }
            }
            continue;
        }
        let mut m = Map::new();
        m.insert("resource".into(), json!(name));
        m.insert("responseKind".into(), kind_of(r));
        m.insert(
            "scope".into(),
            json!(
                if r.get("namespaced").and_then(Value::as_bool) == Some(true) {
                    "Namespaced"
                } else {
                    "Cluster"
                }
            ),
        );
        m.insert(
            "singularResource".into(),
            r.get("singularName").cloned().unwrap_or(json!("")),
        );
        m.insert("verbs".into(), r.get("verbs").cloned().unwrap_or(json!([])));
        for (from, to) in [("shortNames", "shortNames"), ("categories", "categories")] {
            if let Some(v) = r
                .get(from)
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            {
                m.insert(to.into(), v.clone());
            }
        }
        out.push(m);
    }
    json!({
        "version": version,
        "resources": out.into_iter().map(Value::Object).collect::<Vec<_>>(),
        "freshness": freshness(stale),
    })
}

/// One group entry of the list.
pub fn group_entry(name: &str, versions: Vec<Value>) -> Value {
    let mut metadata = json!({"creationTimestamp": null});
    if !name.is_empty() {
        metadata["name"] = json!(name);
    }
    json!({"metadata": metadata, "versions": versions})
}

/// The list document.
pub fn list(groups: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": groups,
    })
}

/// The aggregated entries of what `set` serves itself: the core group alone
/// (`core`, the `/api` document) or every named group (`/apis`), in
/// registration order.
pub fn groups_of(set: &Catalog, core: bool) -> Vec<Value> {
    let entry = |name: &str, versions: &[String]| {
        let vs = versions
            .iter()
            .filter_map(|v| {
                let list = set.resource_list(name, v)?;
                Some(version_from_resource_list(name, v, &list, false))
            })
            .collect();
        group_entry(name, vs)
    };
    if core {
        if !set.owns_group("") {
            return Vec::new();
        }
        let versions: Vec<String> = set.api_versions("")["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        return vec![entry("", &versions)];
    }
    set.named_groups()
        .map(|g| entry(&g.name, &g.versions))
        .collect()
}

/// The name of a group entry (`""` for the core group).
pub fn entry_name(entry: &Value) -> &str {
    entry
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `own` followed by the entries of `delegated` whose group `own` lacks.
pub fn merge(mut own: Vec<Value>, delegated: Vec<Value>) -> Vec<Value> {
    for g in delegated {
        if !own.iter().any(|o| entry_name(o) == entry_name(&g)) {
            own.push(g);
        }
    }
    own
}

/// Whether a response `Content-Type` is an aggregated discovery document
/// (servers that do not serve one answer with a legacy document instead).
pub fn is_aggregated(content_type: Option<&str>) -> bool {
    let Some(ct) = content_type else { return false };
    let mut pieces = ct.split(';').map(str::trim);
    if pieces.next() != Some("application/json") {
        return false;
    }
    let params: Vec<(&str, &str)> = pieces
        .filter_map(|p| p.split_once('=').map(|(k, v)| (k.trim(), v.trim())))
        .collect();
    params.contains(&("g", "apidiscovery.k8s.io"))
        && params.contains(&("v", "v2"))
        && params.contains(&("as", "APIGroupDiscoveryList"))
}

/// The group entries of an `APIGroupDiscoveryList` body.
pub fn parse_items(bytes: &[u8]) -> Option<Vec<Value>> {
    let doc: Value = serde_json::from_slice(bytes).ok()?;
    if doc.get("kind").and_then(Value::as_str) != Some("APIGroupDiscoveryList") {
        return None;
    }
    doc.get("items").and_then(Value::as_array).cloned()
}

/// A discovery document serialized once, with its ETag (a hash of the
/// body), so that serving it again costs no work.
#[derive(Clone, Debug)]
pub struct Document {
    bytes: bytes::Bytes,
    etag: String,
}

impl Document {
    /// Serializes `doc`.
    pub fn new(doc: &Value) -> Self {
        let bytes = serde_json::to_vec(doc).unwrap_or_default();
        let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
        let etag = format!(
            "\"{}\"",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16])
        );
        Document {
            bytes: bytes.into(),
            etag,
        }
    }

    /// The quoted ETag.
    pub fn etag(&self) -> &str {
        &self.etag
    }

    /// The response: 304 when `if_none_match` already names the ETag.
    pub fn response(&self, if_none_match: Option<&str>) -> Response {
        let etag = self.etag.as_str();
        let not_modified = if_none_match
            .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
        let builder = http::Response::builder()
            .header(http::header::CONTENT_TYPE, CONTENT_TYPE)
            .header(http::header::ETAG, etag)
            .header(http::header::VARY, "Accept");
        let resp = if not_modified {
            builder.status(304).body(body::empty())
        } else {
            builder.status(200).body(body::full(self.bytes.clone()))
        };
        resp.unwrap_or_else(|_| http::Response::new(body::empty()))
    }
}

/// Serves `doc` with its ETag (a hash of the body), or 304 when
/// `if_none_match` already names it.
pub fn respond(doc: &Value, if_none_match: Option<&str>) -> Response {
    Document::new(doc).response(if_none_match)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_accept_header_asks_for_v2() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert!(wants_aggregated(Some(kubectl)));
        assert!(!wants_aggregated(Some("application/json")));
        assert!(!wants_aggregated(None));
        assert!(!wants_aggregated(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
        )));
    }

    #[test]
    fn subresources_fold_into_their_resource() {
        let list = json!({"resources": [
            {"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod",
             "verbs": ["get", "list"], "shortNames": ["po"], "categories": ["all"]},
            {"name": "pods/status", "singularName": "pod", "namespaced": true, "kind": "Pod",
             "verbs": ["get", "patch"]},
            {"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": ["get"]},
        ]});
        let v = version_from_resource_list("", "v1", &list, true);
        assert_eq!(v["freshness"], "Stale");
        assert_eq!(v["resources"][0]["scope"], "Namespaced");
        assert_eq!(v["resources"][0]["shortNames"], json!(["po"]));
        assert_eq!(
            v["resources"][0]["subresources"][0]["subresource"],
            "status"
        );
        assert_eq!(v["resources"][1]["scope"], "Cluster");
        assert_eq!(v["resources"][1]["responseKind"]["kind"], "NodeMetrics");
    }

    #[test]
    fn content_types_tell_aggregated_from_legacy() {
        assert!(is_aggregated(Some(CONTENT_TYPE)));
        assert!(!is_aggregated(Some("application/json")));
        assert!(!is_aggregated(None));
        assert!(!is_aggregated(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        )));
    }

    #[test]
    fn merge_keeps_own_groups_first_without_duplicates() {
        let own = vec![group_entry("apps", vec![]), group_entry("batch", vec![])];
        let theirs = vec![
            group_entry("apps", vec![json!({"version": "v9"})]),
            group_entry("x.io", vec![]),
        ];
        let names: Vec<String> = merge(own, theirs)
            .iter()
            .map(|e| entry_name(e).to_string())
            .collect();
        assert_eq!(names, ["apps", "batch", "x.io"]);
    }

    #[test]
    fn etag_answers_304() {
        let doc = list(vec![group_entry("apps", vec![])]);
        let first = respond(&doc, None);
        assert_eq!(first.status(), 200);
        let etag = first.headers()["etag"].to_str().unwrap().to_string();
        assert_eq!(respond(&doc, Some(&etag)).status(), 304);
        assert_eq!(respond(&doc, Some("\"other\"")).status(), 200);
    }
}
