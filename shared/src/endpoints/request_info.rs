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

use crate::registry::validation::names::is_valid_path_segment_name;
use crate::selection::fields::FieldSelector;
use crate::selection::labels::LabelSelector;

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
        ..RequestInfo::default()
    };
    let trimmed = path.trim_matches('/');
    let all_parts: Vec<&str> = if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    };
    if all_parts.len() < 3 || !API_PREFIXES.contains(&all_parts[0]) {
        return (info, None);
    }
    info.api_prefix = all_parts[0].to_string();
    let mut cur = &all_parts[1..];
    if !GROUPLESS_API_PREFIXES.contains(&all_parts[0]) {
        // One part (the prefix) is consumed: this asks for four parts.
        if cur.len() < 3 {
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

    let pairs = parse_query(query);
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
mod tests {
    use super::*;

    fn split_url(url: &str) -> (&str, Option<&str>) {
        match url.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (url, None),
        }
    }

    fn info(method: &str, url: &str) -> RequestInfo {
        let (p, q) = split_url(url);
        parse_request_info(method, p, q)
    }

    #[allow(clippy::type_complexity)]
    const RESOURCE_CASES: &[(
        &str,
        &str,
        &str,
        &str,
        &str,
        &str,
        &str,
        &str,
        &str,
        &str,
        &[&str],
    )] = &[
        // method, url, verb, prefix, group, version, namespace, resource, subresource, name, parts
        (
            "GET",
            "/api/v1/namespaces",
            "list",
            "api",
            "",
            "v1",
            "",
            "namespaces",
            "",
            "",
            &["namespaces"],
        ),
        (
            "GET",
            "/api/v1/namespaces/other",
            "get",
            "api",
            "",
            "v1",
            "other",
            "namespaces",
            "",
            "other",
            &["namespaces", "other"],
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods",
            "list",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods/foo",
            "get",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "foo",
            &["pods", "foo"],
        ),
        (
            "HEAD",
            "/api/v1/namespaces/other/pods/foo",
            "get",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "foo",
            &["pods", "foo"],
        ),
        (
            "GET",
            "/api/v1/pods",
            "list",
            "api",
            "",
            "v1",
            "",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "HEAD",
            "/api/v1/pods",
            "list",
            "api",
            "",
            "v1",
            "",
            "pods",
            "",
            "",
            &["pods"],
        ),
        // legacy path verbs
        (
            "GET",
            "/api/v1/proxy/namespaces/other/pods/foo",
            "proxy",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "foo",
            &["pods", "foo"],
        ),
        (
            "GET",
            "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource",
            "proxy",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "foo",
            &["pods", "foo", "subpath", "not", "a", "subresource"],
        ),
        (
            "GET",
            "/api/v1/watch/pods",
            "watch",
            "api",
            "",
            "v1",
            "",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/pods?watch=true",
            "watch",
            "api",
            "",
            "v1",
            "",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/pods?watch=false",
            "list",
            "api",
            "",
            "v1",
            "",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/watch/namespaces/other/pods",
            "watch",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods?watch=1",
            "watch",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods?watch=0",
            "list",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        // subresources
        (
            "GET",
            "/api/v1/namespaces/other/pods/foo/status",
            "get",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "status",
            "foo",
            &["pods", "foo", "status"],
        ),
        (
            "GET",
            "/api/v1/namespaces/other/pods/foo/proxy/subpath",
            "get",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "proxy",
            "foo",
            &["pods", "foo", "proxy", "subpath"],
        ),
        (
            "PUT",
            "/api/v1/namespaces/other/finalize",
            "update",
            "api",
            "",
            "v1",
            "other",
            "namespaces",
            "finalize",
            "other",
            &["namespaces", "other", "finalize"],
        ),
        (
            "PUT",
            "/api/v1/namespaces/other/status",
            "update",
            "api",
            "",
            "v1",
            "other",
            "namespaces",
            "status",
            "other",
            &["namespaces", "other", "status"],
        ),
        // verbs
        (
            "PATCH",
            "/api/v1/namespaces/other/pods/foo",
            "patch",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "foo",
            &["pods", "foo"],
        ),
        (
            "DELETE",
            "/api/v1/namespaces/other/pods/foo",
            "delete",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "foo",
            &["pods", "foo"],
        ),
        (
            "POST",
            "/api/v1/namespaces/other/pods",
            "create",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        // deletecollection
        (
            "DELETE",
            "/api/v1/nodes",
            "deletecollection",
            "api",
            "",
            "v1",
            "",
            "nodes",
            "",
            "",
            &["nodes"],
        ),
        (
            "DELETE",
            "/api/v1/namespaces",
            "deletecollection",
            "api",
            "",
            "v1",
            "",
            "namespaces",
            "",
            "",
            &["namespaces"],
        ),
        (
            "DELETE",
            "/api/v1/namespaces/other/pods",
            "deletecollection",
            "api",
            "",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "DELETE",
            "/apis/extensions/v1/namespaces/other/pods",
            "deletecollection",
            "apis",
            "extensions",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        // groups and versions
        (
            "POST",
            "/apis/extensions/v1/namespaces/other/pods",
            "create",
            "apis",
            "extensions",
            "v1",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "POST",
            "/apis/extensions/v1beta3/namespaces/other/pods",
            "create",
            "apis",
            "extensions",
            "v1beta3",
            "other",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/apis/apps/v1/deployments",
            "list",
            "apis",
            "apps",
            "v1",
            "",
            "deployments",
            "",
            "",
            &["deployments"],
        ),
        (
            "GET",
            "/apis/apps/v1/namespaces/ns/deployments/d/scale",
            "get",
            "apis",
            "apps",
            "v1",
            "ns",
            "deployments",
            "scale",
            "d",
            &["deployments", "d", "scale"],
        ),
        // trailing and doubled slashes
        (
            "GET",
            "/api/v1/pods/",
            "list",
            "api",
            "",
            "v1",
            "",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/namespaces/ns/pods//",
            "list",
            "api",
            "",
            "v1",
            "ns",
            "pods",
            "",
            "",
            &["pods"],
        ),
        (
            "GET",
            "/api/v1/namespaces/ns/pods//status",
            "list",
            "api",
            "",
            "v1",
            "ns",
            "pods",
            "status",
            "",
            &["pods", "", "status"],
        ),
        // an unknown method has no verb
        (
            "OPTIONS",
            "/api/v1/pods",
            "",
            "api",
            "",
            "v1",
            "",
            "pods",
            "",
            "",
            &["pods"],
        ),
    ];

    #[test]
    fn resource_requests() {
        for &(method, url, verb, prefix, group, version, ns, resource, sub, name, parts) in
            RESOURCE_CASES
        {
            let i = info(method, url);
            assert!(i.is_resource_request, "{method} {url}");
            assert_eq!(i.verb, verb, "verb of {method} {url}");
            assert_eq!(i.api_prefix, prefix, "prefix of {url}");
            assert_eq!(i.api_group, group, "group of {url}");
            assert_eq!(i.api_version, version, "version of {url}");
            assert_eq!(i.namespace, ns, "namespace of {url}");
            assert_eq!(i.resource, resource, "resource of {url}");
            assert_eq!(i.subresource, sub, "subresource of {url}");
            assert_eq!(i.name, name, "name of {url}");
            assert_eq!(i.parts, parts, "parts of {url}");
        }
    }

    #[test]
    fn non_resource_requests() {
        let cases = [
            ("/", false),
            ("", false),
            ("/api", false),
            ("/api/version", false),
            ("/api/version/", false),
            ("/apis", false),
            ("/apis/group/version/", false),
            ("/apis/extensions/v1beta1", false),
            ("/apis/extensions/v1beta1/", false),
            ("/apis/version/resource", false),
            ("/badprefix/version/resource", false),
            ("/not-api/version/resource", false),
            ("/healthz", false),
            ("/api/version/resource", true),
            ("/apis/group/version/resource/name/subresource", true),
            ("/api/version/resource/name/subresource", true),
            ("/apis/batch/v1/job", true),
            ("/apis/batch/v1/job/foo", true),
            ("/apis/batch/v1/job/foo/scale", true),
        ];
        for (url, expected) in cases {
            let i = info("GET", url);
            assert_eq!(i.is_resource_request, expected, "{url}");
        }
        let i = info("GET", "/healthz");
        assert_eq!(i.verb, "get");
        assert_eq!(i.path, "/healthz");
        assert!(i.parts.is_empty());
        assert_eq!(info("POST", "/apis").verb, "post");
        assert_eq!(info("HEAD", "/version").verb, "head");
        assert_eq!(info("PUT", "/apis/group").api_prefix, "");
    }

    #[test]
    fn legacy_verb_without_resource_is_an_error() {
        assert_eq!(
            try_parse_request_info("GET", "/api/v1/watch", Some("a=b")),
            Err("unable to determine kind and namespace from url, /api/v1/watch?a=b".to_string())
        );
        assert_eq!(
            try_parse_request_info("GET", "/apis/g/v1/proxy", None),
            Err("unable to determine kind and namespace from url, /apis/g/v1/proxy".to_string())
        );
        let i = parse_request_info("GET", "/api/v1/watch", None);
        assert!(i.is_resource_request);
        assert_eq!(i.verb, "get");
        assert_eq!(i.api_version, "v1");
        assert!(i.resource.is_empty());
        assert!(try_parse_request_info("GET", "/api/v1/pods", None).is_ok());
    }

    #[allow(clippy::type_complexity)]
    const SELECTOR_CASES: &[(&str, &str, &str, &str, Option<&str>, Option<&str>)] = &[
        // method, url, name, verb, fieldSelector, labelSelector
        ("GET", "/apis/group/version/resource", "", "list", None, None),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1", "name1", "list", Some("metadata.name=name1"), None),
        ("GET", "/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1", "name1", "watch", Some("metadata.name=name1"), None),
        ("GET", "/apis/group/version/resource?fieldSelector=foo=bar&labelSelector=baz=qux", "", "list", Some("foo=bar"), Some("baz=qux")),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo", "", "list", Some("metadata.name=name1,foo"), None),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=true", "", "watch", Some("metadata.name=name1,foo"), None),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=false", "", "list", Some("metadata.name=name1,foo"), None),
        ("DELETE", "/apis/group/version/resource?fieldSelector=foo=bar&labelSelector=baz=qux", "", "deletecollection", Some("foo=bar"), Some("baz=qux")),
        ("GET", "/apis/group/version/resource?fieldSelector=metadata.name=foo&fieldSelector=metadata.name=bar&labelSelector=foo=bar&labelSelector=foo=baz", "foo", "list", Some("metadata.name=foo"), Some("foo=bar")),
        ("GET", "/apis/group/version/resource/name?fieldSelector=foo=bar&labelSelector=foo=bar", "name", "get", None, None),
        ("GET", "/apis/group/version/watch/resource?fieldSelector=metadata.name=foo&labelSelector=foo=bar", "", "watch", None, None),
        ("GET", "/apis/group/version/watch/resource/name?fieldSelector=metadata.name=foo&labelSelector=foo=bar", "name", "watch", None, None),
        // metadata.name must be a valid path segment to become the name
        ("GET", "/api/v1/pods?fieldSelector=metadata.name%3D..", "", "list", Some("metadata.name=.."), None),
        ("GET", "/api/v1/pods?fieldSelector=metadata.name%3Da%25b", "", "list", Some("metadata.name=a%b"), None),
        ("GET", "/api/v1/pods?fieldSelector=metadata.name%3D%3Dfoo", "foo", "list", Some("metadata.name==foo"), None),
        ("GET", "/api/v1/pods?fieldSelector=metadata.name!%3Dfoo", "", "list", Some("metadata.name!=foo"), None),
        // a bad label selector (or integer option) voids the name, not the watch
        ("GET", "/api/v1/pods?fieldSelector=metadata.name%3Dfoo&labelSelector=-x&watch=1", "", "watch", Some("metadata.name=foo"), Some("-x")),
        ("GET", "/api/v1/pods?fieldSelector=metadata.name%3Dfoo&limit=abc", "", "list", Some("metadata.name=foo"), None),
        ("GET", "/api/v1/pods?fieldSelector=metadata.name%3Dfoo&timeoutSeconds=", "", "list", Some("metadata.name=foo"), None),
        ("GET", "/api/v1/pods?fieldSelector=metadata.name%3Dfoo&limit=5&timeoutSeconds=30", "foo", "list", Some("metadata.name=foo"), None),
        // watch values: anything but 0/false is true
        ("GET", "/api/v1/pods?watch=FALSE", "", "list", None, None),
        ("GET", "/api/v1/pods?watch=", "", "watch", None, None),
        ("GET", "/api/v1/pods?watch=yes", "", "watch", None, None),
        ("GET", "/api/v1/pods?watch", "", "watch", None, None),
        ("GET", "/api/v1/pods?labelSelector=a%3Db&fieldSelector=", "", "list", Some(""), Some("a=b")),
        ("GET", "/api/v1/pods?labelSelector=a+in+(b)", "", "list", None, Some("a in (b)")),
    ];

    #[test]
    fn selectors_and_names() {
        for &(method, url, name, verb, fs, ls) in SELECTOR_CASES {
            let i = info(method, url);
            assert_eq!(i.name, name, "name of {method} {url}");
            assert_eq!(i.verb, verb, "verb of {method} {url}");
            assert_eq!(i.field_selector.as_deref(), fs, "fieldSelector of {url}");
            assert_eq!(i.label_selector.as_deref(), ls, "labelSelector of {url}");
        }
    }

    #[test]
    fn path_is_percent_decoded_like_go() {
        let i = info("GET", "/api/v1/namespaces/default/pods/a%2Fb");
        assert_eq!(i.path, "/api/v1/namespaces/default/pods/a/b");
        assert_eq!(i.name, "a");
        assert_eq!(i.subresource, "b");
        let i = info("GET", "/api/v1/namespaces/default/configmaps/a+b%20c");
        assert_eq!(i.name, "a+b c");
        assert_eq!(decode_path("/a%zz"), "/a%zz");
    }

    #[test]
    fn long_running() {
        let lr = |method: &str, url: &str| info(method, url).is_long_running();
        assert!(lr("GET", "/api/v1/pods?watch=true"));
        assert!(lr("GET", "/api/v1/watch/pods"));
        assert!(lr("GET", "/api/v1/proxy/namespaces/ns/pods/p"));
        assert!(lr("POST", "/api/v1/namespaces/ns/pods/p/exec"));
        assert!(lr("GET", "/api/v1/namespaces/ns/pods/p/attach"));
        assert!(lr("GET", "/api/v1/namespaces/ns/pods/p/log"));
        assert!(lr("POST", "/api/v1/namespaces/ns/pods/p/portforward"));
        assert!(lr("GET", "/api/v1/namespaces/ns/services/s/proxy/x"));
        assert!(lr("GET", "/debug/pprof/profile"));
        assert!(!lr("GET", "/debug/pprof"));
        assert!(!lr("GET", "/api/v1/pods"));
        assert!(!lr("GET", "/api/v1/namespaces/ns/pods/p/status"));
        assert!(!lr("GET", "/healthz"));
    }

    #[test]
    fn query_parsing_like_go() {
        let q = parse_query(Some("a=1&b=x+y&c=%41%2b&a=2&&d&e=&bad=%zz&semi=1;2&%3D=eq"));
        let expect: Vec<(String, String)> = [
            ("a", "1"),
            ("b", "x y"),
            ("c", "A+"),
            ("a", "2"),
            ("d", ""),
            ("e", ""),
            ("=", "eq"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(q, expect);
        assert_eq!(query_param(&q, "a"), Some("1"));
        assert_eq!(query_values(&q, "a"), vec!["1", "2"]);
        assert_eq!(query_param(&q, "zz"), None);
        assert!(parse_query(None).is_empty());
        assert!(parse_query(Some("")).is_empty());
        assert_eq!(query_unescape("%4"), None);
        assert_eq!(query_unescape("%g0"), None);
        assert_eq!(query_unescape("%C3%A9"), Some("é".to_string()));
    }

    #[test]
    fn go_bool_conversion() {
        assert!(!go_query_bool("0"));
        assert!(!go_query_bool("false"));
        assert!(!go_query_bool("FaLsE"));
        assert!(!go_query_bool("fal\u{17f}e"));
        assert!(go_query_bool("1"));
        assert!(go_query_bool(""));
        assert!(go_query_bool("no"));
    }
}
