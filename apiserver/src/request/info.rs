//! Request classification, after upstream's `RequestInfoFactory`
//! (`k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`) configured as
//! kube-apiserver does (API prefixes `api` and `apis`, `api` without a
//! group), plus the query-string helpers it needs.
//!
//! Resource paths:
//! `/api/{version}/[namespaces/{namespace}/]{resource}[/{name}[/{subresource}...]]`,
//! `/apis/{group}/{version}/...` likewise, and the legacy verb prefixes
//! `/api/{version}/watch/...` and `/api/{version}/proxy/...`. Everything else
//! (`/`, `/api`, `/apis/{group}`, `/healthz`, ...) is a non-resource request
//! whose verb is the lowercased HTTP method.

use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::validation::names::is_valid_path_segment_name;

/// What a request is about (upstream's `request.RequestInfo`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestInfo {
    /// Whether this is a request for an API resource or subresource.
    pub is_resource_request: bool,
    /// The URL path, percent-decoded (Go's `URL.Path`).
    pub path: String,
    /// The Kubernetes verb (`get`, `list`, `watch`, `create`, `update`,
    /// `patch`, `delete`, `deletecollection`, `proxy`); for non-resource
    /// requests the lowercased HTTP method.
    pub verb: String,
    /// `api` or `apis` (empty for non-resource requests).
    pub api_prefix: String,
    /// The API group (empty for the core group).
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The namespace, if the path names one.
    pub namespace: String,
    /// The resource (plural name), e.g. `pods`.
    pub resource: String,
    /// The subresource, e.g. `status`.
    pub subresource: String,
    /// The object name, if the request names one (directly, or through a
    /// `metadata.name=` field selector on a list or watch).
    pub name: String,
    /// The path parts from the resource on (`[pods, foo, status]`).
    pub parts: Vec<String>,
    /// The raw `fieldSelector` of list, watch and deletecollection requests
    /// (not of the legacy `/watch/` paths), for authorization.
    pub field_selector: Option<String>,
    /// The raw `labelSelector` of list, watch and deletecollection requests
    /// (not of the legacy `/watch/` paths), for authorization.
    pub label_selector: Option<String>,
    /// What a non-resource request asks for ([`NonResource::Other`] for
    /// resource requests), so that no tier splits the path again.
    pub non_resource: NonResource,
    /// The query string, parsed once (Go's `url.ParseQuery`) for every
    /// filter and handler that reads a parameter.
    pub query: std::sync::Arc<[(String, String)]>,
}

/// The non-resource endpoints every tier serves or routes, recognised once
/// with the rest of a [`RequestInfo`] (trailing slashes ignored).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum NonResource {
    /// `/healthz`, `/livez` or `/readyz` (`endpoint`), with the named check
    /// after it (`/readyz/etcd`: `etcd`), empty for all checks.
    Health {
        endpoint: &'static str,
        check: String,
    },
    /// `/version`.
    Version,
    /// `/metrics`.
    Metrics,
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiV3,
    /// `/openapi/v3/apis/<group>/<version>` (or `/openapi/v3/api/<version>`,
    /// with an empty group).
    OpenApiV3GroupVersion { group: String, version: String },
    /// `/api`: the core group's versions.
    Api,
    /// `/api/<version>`: the core group's resources.
    ApiVersion(String),
    /// `/apis`: the named groups.
    Apis,
    /// `/apis/<group>`.
    ApiGroup(String),
    /// `/apis/<group>/<version>`: a group version's resources.
    ApiGroupVersion(String, String),
    /// Anything else (a resource request, or a path a handler registered).
    #[default]
    Other,
}

impl NonResource {
    fn of(parts: &[&str]) -> NonResource {
        let s = |p: &str| p.to_string();
        match parts {
            [e @ ("healthz" | "livez" | "readyz"), rest @ ..] => NonResource::Health {
                endpoint: match *e {
                    "healthz" => "healthz",
                    "livez" => "livez",
                    _ => "readyz",
                },
                check: rest.join("/"),
            },
            ["version"] => NonResource::Version,
            ["metrics"] => NonResource::Metrics,
            ["openapi", "v2"] => NonResource::OpenApiV2,
            ["openapi", "v3"] => NonResource::OpenApiV3,
            ["openapi", "v3", "apis", g, v] => NonResource::OpenApiV3GroupVersion {
                group: s(g),
                version: s(v),
            },
            ["openapi", "v3", "api", v] => NonResource::OpenApiV3GroupVersion {
                group: String::new(),
                version: s(v),
            },
            ["api"] => NonResource::Api,
            ["api", v] => NonResource::ApiVersion(s(v)),
            ["apis"] => NonResource::Apis,
            ["apis", g] => NonResource::ApiGroup(s(g)),
            ["apis", g, v] => NonResource::ApiGroupVersion(s(g), s(v)),
            _ => NonResource::Other,
        }
    }
}

/// Root path segments of resource requests.
pub const API_PREFIXES: [&str; 2] = ["api", "apis"];
/// Prefixes whose resource paths carry no API group.
pub const GROUPLESS_API_PREFIXES: [&str; 1] = ["api"];
/// Legacy verbs given as a path segment after the version.
const SPECIAL_VERBS: [&str; 2] = ["proxy", "watch"];
/// Legacy path verbs whose paths have no subresource.
const SPECIAL_VERBS_NO_SUBRESOURCES: [&str; 1] = ["proxy"];
/// Subresources of namespaces (so `/namespaces/{ns}/status` is not a
/// resource named `status` inside the namespace).
pub const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];
/// Verbs that honour `fieldSelector` and `labelSelector`.
const VERBS_WITH_SELECTORS: [&str; 3] = ["list", "watch", "deletecollection"];
/// Verbs kube-apiserver treats as long-running.
pub const LONG_RUNNING_VERBS: [&str; 2] = ["watch", "proxy"];
/// Subresources kube-apiserver treats as long-running.
pub const LONG_RUNNING_SUBRESOURCES: [&str; 5] = ["attach", "exec", "proxy", "log", "portforward"];

impl RequestInfo {
    /// kube-apiserver's long-running check (`BasicLongRunningRequestCheck`
    /// with verbs `watch`, `proxy` and subresources `attach`, `exec`,
    /// `proxy`, `log`, `portforward`), which also counts non-resource
    /// `/debug/pprof/` requests.
    pub fn is_long_running(&self) -> bool {
        if LONG_RUNNING_VERBS.contains(&self.verb.as_str()) {
            return true;
        }
        if self.is_resource_request
            && LONG_RUNNING_SUBRESOURCES.contains(&self.subresource.as_str())
        {
            return true;
        }
        !self.is_resource_request && self.path.starts_with("/debug/pprof/")
    }
}

/// Classifies a request. `method` is the HTTP method as sent (`GET`, ...),
/// `path` the raw (still percent-encoded) request path and `query` the raw
/// query string. Never fails: for paths upstream rejects (a legacy verb
/// prefix with nothing after it) this returns what was known at that point;
/// use [`try_parse_request_info`] to get upstream's error.
pub fn parse_request_info(method: &str, path: &str, query: Option<&str>) -> RequestInfo {
    resolve(method, path, query).0
}

/// Like [`parse_request_info`], but fails as upstream's `NewRequestInfo`
/// does for `/api/{v}/watch` and `/api/{v}/proxy` with nothing after them
/// (`unable to determine kind and namespace from url, <url>`; upstream
/// answers such requests with a 500).
pub fn try_parse_request_info(
    method: &str,
    path: &str,
    query: Option<&str>,
) -> Result<RequestInfo, String> {
    match resolve(method, path, query) {
        (info, None) => Ok(info),
        (_, Some(err)) => Err(err),
    }
}

fn resolve(method: &str, raw_path: &str, query: Option<&str>) -> (RequestInfo, Option<String>) {
    let path = decode_path(raw_path);
    let mut info = RequestInfo {
        path: path.clone(),
        verb: method.to_lowercase(),
        query: parse_query(query).into(),
        ..RequestInfo::default()
    };
    let trimmed = path.trim_matches('/');
    let all_parts: Vec<&str> = if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    };
    if all_parts.len() < 3 || !API_PREFIXES.contains(&all_parts[0]) {
        info.non_resource = NonResource::of(&all_parts);
        return (info, None);
    }
    info.api_prefix = all_parts[0].to_string();
    let mut cur = &all_parts[1..];
    if !GROUPLESS_API_PREFIXES.contains(&all_parts[0]) {
        // One part (the prefix) is consumed: this asks for four parts.
        if cur.len() < 3 {
            info.non_resource = NonResource::of(&all_parts);
            return (info, None);
        }
        info.api_group = cur[0].to_string();
        cur = &cur[1..];
    }
    info.is_resource_request = true;
    let Some((version, rest)) = cur.split_first() else {
        return (info, None);
    };
    info.api_version = version.to_string();
    cur = rest;

    let mut verb_via_path = false;
    let first = cur.first().copied().unwrap_or("");
    if SPECIAL_VERBS.contains(&first) {
        if cur.len() < 2 {
            let url = match query {
                Some(q) if !q.is_empty() => format!("{raw_path}?{q}"),
                _ => raw_path.to_string(),
            };
            return (
                info,
                Some(format!(
                    "unable to determine kind and namespace from url, {url}"
                )),
            );
        }
        info.verb = first.to_string();
        cur = &cur[1..];
        verb_via_path = true;
    } else {
        info.verb = match method {
            "POST" => "create",
            "GET" | "HEAD" => "get",
            "PUT" => "update",
            "PATCH" => "patch",
            "DELETE" => "delete",
            _ => "",
        }
        .to_string();
    }

    // `/namespaces/{namespace}/{resource}...`: parts become relative to the
    // resource unless what follows the namespace is one of its subresources.
    if let ["namespaces", namespace, rest @ ..] = cur {
        info.namespace = namespace.to_string();
        if let Some(next) = rest.first() {
            if !NAMESPACE_SUBRESOURCES.contains(next) {
                cur = rest;
            }
        }
    }
    info.parts = cur.iter().map(|s| s.to_string()).collect();

    let parts = &info.parts;
    if parts.len() >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.contains(&info.verb.as_str()) {
        info.subresource = parts[2].clone();
    }
    if parts.len() >= 2 {
        info.name = parts[1].clone();
    }
    if let Some(resource) = parts.first() {
        info.resource = resource.clone();
    }

    let pairs = info.query.clone();
    if info.name.is_empty() && info.verb == "get" {
        match decode_list_options(&pairs) {
            Ok((watch, field_selector)) => {
                info.verb = if watch { "watch" } else { "list" }.to_string();
                if let Some(name) = field_selector.requires_exact_match("metadata.name") {
                    if is_valid_path_segment_name(name).is_empty() {
                        info.name = name.to_string();
                    }
                }
            }
            Err(()) => {
                // Upstream falls back to reading `watch` directly.
                let watch = match query_param(&pairs, "watch") {
                    Some(v) => !matches!(v.to_lowercase().as_str(), "false" | "0"),
                    None => false,
                };
                info.verb = if watch { "watch" } else { "list" }.to_string();
            }
        }
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".to_string();
    }

    if !verb_via_path && VERBS_WITH_SELECTORS.contains(&info.verb.as_str()) {
        info.field_selector = query_param(&pairs, "fieldSelector").map(str::to_string);
        info.label_selector = query_param(&pairs, "labelSelector").map(str::to_string);
    }
    (info, None)
}

/// Go's `strings.EqualFold(s, "false")`, including its simple case folds.
fn equal_fold_false(s: &str) -> bool {
    let target = "false";
    if s.chars().count() != target.chars().count() {
        return false;
    }
    s.chars()
        .zip(target.chars())
        .all(|(a, b)| a.to_ascii_lowercase() == b || (a == '\u{17f}' && b == 's'))
}

/// Go's conversion of a query value to bool: only `0` and (case-insensitive)
/// `false` are false.
fn go_query_bool(v: &str) -> bool {
    !(v == "0" || equal_fold_false(v))
}

/// Emulates decoding `metainternalversion.ListOptions` from the query
/// (`ParameterCodec.DecodeParameters`): the `watch` flag and the field
/// selector, or `Err` when any list option fails to decode.
fn decode_list_options(pairs: &[(String, String)]) -> Result<(bool, FieldSelector), ()> {
    if let Some(v) = query_param(pairs, "labelSelector") {
        LabelSelector::parse(v).map_err(|_| ())?;
    }
    let field_selector = match query_param(pairs, "fieldSelector") {
        Some(v) => FieldSelector::parse(v).map_err(|_| ())?,
        None => FieldSelector::everything(),
    };
    for int_param in ["timeoutSeconds", "limit"] {
        if let Some(v) = query_param(pairs, int_param) {
            v.parse::<i64>().map_err(|_| ())?;
        }
    }
    let watch = query_param(pairs, "watch").is_some_and(go_query_bool);
    Ok((watch, field_selector))
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Go's `url.QueryUnescape`: `+` is a space, `%XX` a byte; `None` for a
/// malformed escape. Bytes that are not UTF-8 are replaced.
pub fn query_unescape(s: &str) -> Option<String> {
    unescape(s, true)
}

fn unescape(s: &str, plus_is_space: bool) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hi = b.get(i + 1).copied().and_then(hex_val)?;
                let lo = b.get(i + 2).copied().and_then(hex_val)?;
                out.push(hi << 4 | lo);
                i += 3;
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Percent-decodes a request path as Go's `URL.Path` (`+` stays `+`). A
/// path with a malformed escape, which Go's server rejects outright, is
/// returned unchanged.
pub fn decode_path(raw: &str) -> String {
    unescape(raw, false).unwrap_or_else(|| raw.to_string())
}

/// Parses a query string as Go's `url.ParseQuery`: `&`-separated pairs,
/// each `key[=value]` unescaped with [`query_unescape`]; empty pairs, pairs
/// containing `;` and pairs with malformed escapes are skipped. Order and
/// repeats are kept.
pub fn parse_query(query: Option<&str>) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let Some(query) = query else {
        return pairs;
    };
    for part in query.split('&') {
        if part.is_empty() || part.contains(';') {
            continue;
        }
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        if let (Some(k), Some(v)) = (query_unescape(k), query_unescape(v)) {
            pairs.push((k, v));
        }
    }
    pairs
}

/// The first value of `name` in parsed query pairs.
pub fn query_param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// All values of `name` in parsed query pairs, in order.
pub fn query_values<'a>(pairs: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    pairs
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

#[cfg(test)]
#[path = "info_tests.rs"]
mod tests;
