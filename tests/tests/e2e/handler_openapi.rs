//! OpenAPI for the kinds custom handlers serve (TokenReview,
//! SubjectAccessReview, SelfSubjectAccessReview, SelfSubjectReview, Binding): `kubectl explain` works and
//! `/openapi/v3` lists their paths, and those of the subresources with
//! their own handlers (pods/eviction, pods/binding, serviceaccounts/token).
//! Custom resources in the merged `/openapi/v2`.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_works_for_handler_served_kinds() {
    let c = TestCluster::start().await;
    for (resource, expect) in [
        ("tokenreview.spec", "token"),
        ("subjectaccessreview.spec", "resourceAttributes"),
        ("selfsubjectaccessreview", "spec"),
        ("selfsubjectreview", "status"),
        ("binding", "target"),
    ] {
        let (ok, out, err) = c.kubectl(&["explain", resource]).await;
        assert!(ok && out.contains(expect), "explain {resource}: {out}{err}");
    }
    let root: Value = serde_json::from_str(&c.kubectl_ok(&["get", "--raw", "/openapi/v3"]).await)
        .expect("openapi v3 root");
    let doc = root["paths"]["apis/authentication.k8s.io/v1"]["serverRelativeURL"]
        .as_str()
        .expect("authentication.k8s.io/v1 listed")
        .to_string();
    let doc: Value = serde_json::from_str(&c.kubectl_ok(&["get", "--raw", &doc]).await)
        .expect("group-version document");
    // Subresources served by their own handlers.
    let core = root["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .expect("api/v1 listed")
        .to_string();
    let core: Value =
        serde_json::from_str(&c.kubectl_ok(&["get", "--raw", &core]).await).expect("core document");
    for (path, schema) in [
        (
            "/api/v1/namespaces/{namespace}/pods/{name}/eviction",
            "io.k8s.api.policy.v1.Eviction",
        ),
        (
            "/api/v1/namespaces/{namespace}/pods/{name}/binding",
            "io.k8s.api.core.v1.Binding",
        ),
        (
            "/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            "io.k8s.api.authentication.v1.TokenRequest",
        ),
    ] {
        let post = &core["paths"][path]["post"];
        assert_eq!(post["x-kubernetes-action"], "post", "{path}: {post}");
        assert!(
            core["components"]["schemas"].get(schema).is_some(),
            "{schema}"
        );
    }
    assert!(
        doc["paths"]
            .get("/apis/authentication.k8s.io/v1/tokenreviews")
            .is_some_and(|p| p.get("post").is_some()),
        "{}",
        doc["paths"]
    );
}

/// GETs `/openapi/v2` through the aggregator: status, ETag and document.
async fn openapi_v2(
    http: &reqwest::Client,
    c: &TestCluster,
    etag: Option<&str>,
) -> (u16, String, Value) {
    let mut req = http.get(c.url("/openapi/v2"));
    if let Some(tag) = etag {
        req = req.header("If-None-Match", tag);
    }
    let resp = req.sent().await;
    let status = resp.status().as_u16();
    let tag = resp
        .headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = resp.text().await.expect("body");
    (
        status,
        tag,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

/// Custom resources appear in the aggregator's merged `/openapi/v2` (their
/// definitions named by the reversed group, with their GVK, and their
/// paths) once their CRD is Established, and leave it with the CRD.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_are_published_in_openapi_v2() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "description": "The cron spec.", "properties": {
                        "cronSpec": {"type": "string", "description": "When it runs."},
                        "replicas": {"type": "integer"}}}}}}
            }]
        }
    });
    crate::crds::create_json(&c, &crd).await;
    crate::crds::wait_established(&c, "crontabs.stable.example.com").await;
    let definition = "com.example.stable.v1.CronTab";
    let path = "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs";
    let published = eventually(Duration::from_secs(90), || {
        let (http, c) = (&http, &c);
        async move {
            let (_, _, doc) = openapi_v2(http, c, None).await;
            doc["definitions"].get(definition).is_some() && doc["paths"].get(path).is_some()
        }
    })
    .await;
    let (_, _, last) = openapi_v2(&http, &c, None).await;
    assert!(published, "{definition} not published: {}", last["paths"]);
    assert_eq!(
        last["definitions"][definition]["x-kubernetes-group-version-kind"],
        serde_json::json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
    );
    assert!(
        last["definitions"][definition]["properties"]["spec"]["properties"]["cronSpec"].is_object()
    );
    assert!(last["definitions"]["com.example.stable.v1.CronTabList"].is_object());
    assert!(last["definitions"]["io.k8s.api.core.v1.Pod"].is_object());
    assert!(last["paths"][path]["post"].is_object());
    // The tiers' own kinds: CustomResourceDefinitions and APIServices.
    for own in [
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "/apis/apiregistration.k8s.io/v1/apiservices",
    ] {
        assert!(last["paths"].get(own).is_some(), "{own} missing");
    }
    // The merged document is cached: its ETag answers 304.
    let (status, etag, _) = openapi_v2(&http, &c, None).await;
    assert_eq!(status, 200);
    assert!(!etag.is_empty());
    let (status, _, _) = openapi_v2(&http, &c, Some(&etag)).await;
    assert_eq!(status, 304);

    c.kubectl_ok(&[
        "delete",
        "crd",
        "crontabs.stable.example.com",
        "--timeout=60s",
    ])
    .await;
    let gone = eventually(Duration::from_secs(90), || {
        let (http, c) = (&http, &c);
        async move {
            let (_, _, doc) = openapi_v2(http, c, None).await;
            doc["swagger"] == "2.0"
                && doc["definitions"].get(definition).is_none()
                && doc["paths"].get(path).is_none()
        }
    })
    .await;
    assert!(
        gone,
        "{definition} still published after the CRD was deleted"
    );
}
