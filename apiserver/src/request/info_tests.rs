//! Unit tests of `request_info`.
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

#[test]
fn non_resource_endpoints_are_recognised_once() {
    use super::NonResource as N;
    let of = |p: &str| info("GET", p).non_resource;
    assert_eq!(
        of("/readyz/etcd"),
        N::Health {
            endpoint: "readyz",
            check: "etcd".into()
        }
    );
    assert_eq!(
        of("/livez/"),
        N::Health {
            endpoint: "livez",
            check: String::new()
        }
    );
    assert_eq!(of("/version"), N::Version);
    assert_eq!(of("/metrics"), N::Metrics);
    assert_eq!(of("/openapi/v2"), N::OpenApiV2);
    assert_eq!(of("/openapi/v3"), N::OpenApiV3);
    assert_eq!(
        of("/openapi/v3/apis/apps/v1"),
        N::OpenApiV3GroupVersion {
            group: "apps".into(),
            version: "v1".into()
        }
    );
    assert_eq!(of("/api"), N::Api);
    assert_eq!(of("/api/v1"), N::ApiVersion("v1".into()));
    assert_eq!(of("/apis/"), N::Apis);
    assert_eq!(of("/apis/apps"), N::ApiGroup("apps".into()));
    assert_eq!(
        of("/apis/apps/v1"),
        N::ApiGroupVersion("apps".into(), "v1".into())
    );
    // Resource requests and unknown paths are not discovery.
    assert_eq!(of("/api/v1/pods"), N::Other);
    assert_eq!(of("/apis/apps/v1/deployments"), N::Other);
    assert_eq!(of("/healthzx"), N::Other);
    assert_eq!(of("/logs/x"), N::Other);
}
