//! Bound service account tokens (TokenRequest with `boundObjectRef`) work
//! while the object they are bound to exists and stop working (401) once
//! it is deleted, as upstream's service account authenticator validates
//! them; so do tokens of a deleted service account.

use crate::harness::{expect_status, Auth, SendExt, TestCluster};
use serde_json::{json, Value};

async fn create(c: &TestCluster, path: &str, body: Value) -> Value {
    let r = c
        .http(Auth::AdminCert)
        .post(c.url(path))
        .json(&body)
        .sent()
        .await;
    let code = r.status().as_u16();
    let v: Value = r.json().await.expect("json");
    assert_eq!(code, 201, "{v}");
    v
}

async fn token_request(c: &TestCluster, sa: &str, bound: Option<Value>) -> reqwest::Response {
    let mut spec = json!({"expirationSeconds": 3600});
    if let Some(b) = bound {
        spec["boundObjectRef"] = b;
    }
    c.http(Auth::AdminCert)
        .post(c.url(&format!(
            "/api/v1/namespaces/default/serviceaccounts/{sa}/token"
        )))
        .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}))
        .sent().await
}

async fn token(c: &TestCluster, sa: &str, bound: Option<Value>) -> (String, Value) {
    let r = token_request(c, sa, bound).await;
    let code = r.status().as_u16();
    let v: Value = r.json().await.expect("json");
    assert_eq!(code, 201, "{v}");
    (v["status"]["token"].as_str().expect("token").to_string(), v)
}

/// The status code of a request made with `token`, and its body.
async fn use_token(c: &TestCluster, token: &str) -> (u16, Value) {
    let r = c
        .http(Auth::None)
        .post(c.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"))
        .bearer_auth(token)
        .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .sent()
        .await;
    let code = r.status().as_u16();
    (code, r.json().await.expect("json"))
}

/// Uses `token` until it is refused, as it must be within the 10 seconds
/// a token found valid is remembered (upstream's token authentication
/// cache) plus a cache's delay; the last refusal's body.
async fn refused_soon(c: &TestCluster, token: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (code, v) = use_token(c, token).await;
        if code == 401 {
            return v;
        }
        assert_eq!(code, 201, "{v}");
        assert!(
            std::time::Instant::now() < deadline,
            "the token still works 30 s after its object was deleted"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

async fn delete_now(c: &TestCluster, path: &str) {
    let r = c
        .http(Auth::AdminCert)
        .delete(c.url(path))
        .json(&json!({"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}))
        .sent()
        .await;
    assert!(r.status().is_success(), "{}", r.status());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bound_tokens_die_with_their_objects() {
    let c = TestCluster::start().await;
    create(
        &c,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}),
    )
    .await;
    let pod = create(
        &c,
        "/api/v1/namespaces/default/pods",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "busybox"}]}}),
    )
    .await;
    let pod_uid = pod["metadata"]["uid"].as_str().expect("uid").to_string();

    // Binding checks the object, as upstream: it must exist, run as the
    // account, and have the uid given.
    let missing = token_request(
        &c,
        "robot",
        Some(json!({"kind": "Pod", "apiVersion": "v1", "name": "nope"})),
    )
    .await;
    expect_status(missing, 404, "NotFound").await;
    let stale = token_request(
        &c,
        "robot",
        Some(json!({"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "not-the-uid"})),
    )
    .await;
    let v = expect_status(stale, 409, "Conflict").await;
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("does not match the UID in record"),
        "{v}"
    );

    // A token bound to the pod works, and names the pod.
    let (pod_token, tr) = token(
        &c,
        "robot",
        Some(json!({"kind": "Pod", "apiVersion": "v1", "name": "p"})),
    )
    .await;
    assert_eq!(tr["spec"]["boundObjectRef"]["uid"], pod_uid.as_str());
    let (code, v) = use_token(&c, &pod_token).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-uid"],
        json!([pod_uid])
    );

    // A token bound to a secret, and an unbound one.
    create(
        &c,
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
    )
    .await;
    let (secret_token, _) = token(
        &c,
        "robot",
        Some(json!({"kind": "Secret", "apiVersion": "v1", "name": "s"})),
    )
    .await;
    let (plain_token, _) = token(&c, "robot", None).await;
    assert_eq!(use_token(&c, &secret_token).await.0, 201);

    // The pod is deleted: its token is refused with upstream's 401 Status;
    // TokenReview says why.
    delete_now(&c, "/api/v1/namespaces/default/pods/p").await;
    let v = refused_soon(&c, &pod_token).await;
    assert_eq!(v["code"], 401, "{v}");
    assert_eq!(v["reason"], "Unauthorized", "{v}");
    let review = c
        .http(Auth::AdminCert)
        .post(c.url("/apis/authentication.k8s.io/v1/tokenreviews"))
        .json(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": pod_token}}),
        )
        .sent()
        .await;
    let review: Value = review.json().await.expect("json");
    assert_ne!(review["status"]["authenticated"], true, "{review}");
    assert!(
        review["status"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("service account token has been invalidated"),
        "{review}"
    );
    // A new pod under the old name does not revive the token (uid differs).
    create(
        &c,
        "/api/v1/namespaces/default/pods",
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"serviceAccountName": "robot", "containers": [{"name": "c", "image": "busybox"}]}}),
    )
    .await;
    assert_eq!(use_token(&c, &pod_token).await.0, 401);

    // The secret is deleted: its token goes; the unbound one still works.
    delete_now(&c, "/api/v1/namespaces/default/secrets/s").await;
    refused_soon(&c, &secret_token).await;
    assert_eq!(use_token(&c, &plain_token).await.0, 201);

    // The service account is deleted: every token of it goes.
    delete_now(&c, "/api/v1/namespaces/default/serviceaccounts/robot").await;
    refused_soon(&c, &plain_token).await;
}

/// A TokenReview of `token` for `audiences` (none: the API server's).
async fn review(c: &TestCluster, token: &str, audiences: &[&str]) -> Value {
    let mut spec = json!({"token": token});
    if !audiences.is_empty() {
        spec["audiences"] = json!(audiences);
    }
    create(
        c,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}),
    )
    .await
}

/// Tokens are bound to their audiences: one issued for another audience is
/// not accepted by the API server, and a TokenReview for an audience (as a
/// service that trusts Kubernetes tokens makes) accepts only tokens issued
/// for it, and says which of the requested audiences matched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_valid_only_for_their_audiences() {
    let c = TestCluster::start().await;
    create(
        &c,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}),
    )
    .await;
    let (api_token, issued) = token(&c, "robot", None).await;
    let api_audiences = issued["spec"]["audiences"].clone();
    let r = c
        .http(Auth::AdminCert)
        .post(c.url("/api/v1/namespaces/default/serviceaccounts/robot/token"))
        .json(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": ["vault"], "expirationSeconds": 3600}}),
        )
        .sent()
        .await;
    let vault: Value = r.json().await.expect("json");
    let vault_token = vault["status"]["token"]
        .as_str()
        .expect("token")
        .to_string();

    // The vault token is not a credential for the API server.
    let (code, v) = use_token(&c, &vault_token).await;
    assert_eq!(code, 401, "{v}");
    let v = review(&c, &vault_token, &[]).await;
    assert_ne!(v["status"]["authenticated"], true, "{v}");
    // Vault's own review accepts it, for vault.
    let v = review(&c, &vault_token, &["vault", "elsewhere"]).await;
    assert_eq!(v["status"]["authenticated"], true, "{v}");
    assert_eq!(
        v["status"]["user"]["username"],
        "system:serviceaccount:default:robot"
    );
    assert_eq!(v["status"]["audiences"], json!(["vault"]), "{v}");

    // A token for the API server, replayed to vault, is refused there.
    let v = review(&c, &api_token, &["vault"]).await;
    assert_ne!(v["status"]["authenticated"], true, "{v}");
    assert!(
        v["status"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("audiences"),
        "{v}"
    );
    // ... and accepted for the API server's audiences, which it names.
    let v = review(&c, &api_token, &[]).await;
    assert_eq!(v["status"]["authenticated"], true, "{v}");
    assert_eq!(v["status"]["audiences"], api_audiences, "{v}");
}
