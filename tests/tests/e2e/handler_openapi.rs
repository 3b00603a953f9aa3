//! OpenAPI for the kinds custom handlers serve (TokenReview,
//! SubjectAccessReview, SelfSubjectAccessReview, SelfSubjectReview, Binding): `kubectl explain` works and
//! `/openapi/v3` lists their paths, and those of the subresources with
//! their own handlers (pods/eviction, pods/binding, serviceaccounts/token).

use serde_json::Value;

use crate::harness::TestCluster;

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
