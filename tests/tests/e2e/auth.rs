//! Authentication at the front door and identity across tiers.

use crate::harness::{expect_status, Auth, SendExt, TestCluster};

async fn whoami(
    http: &reqwest::Client,
    url: &str,
    extra_headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = http
        .post(format!(
            "{url}/apis/authentication.k8s.io/v1/selfsubjectreviews"
        ))
        .header("content-type", "application/json")
        .body(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#);
    for (k, v) in extra_headers {
        req = req.header(*k, *v);
    }
    req.sent().await
}

async fn user_of(resp: reqwest::Response) -> serde_json::Value {
    assert_eq!(resp.status(), 201);
    let v: serde_json::Value = resp.json().await.expect("json");
    v["status"]["userInfo"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_and_forged_identity_headers() {
    let c = TestCluster::start().await;
    let agg = c.cluster.aggregator_url();
    let core = c.cluster.kube_core_url();

    // No credentials: 401 Status; health stays reachable anonymously.
    let anon = c.http(Auth::None);
    expect_status(
        anon.get(c.url("/api/v1/namespaces")).sent().await,
        401,
        "Unauthorized",
    )
    .await;
    assert_eq!(anon.get(c.url("/readyz")).sent().await.status(), 200);
    assert_eq!(anon.get(c.url("/livez")).sent().await.status(), 200);
    let bad_token = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(&std::fs::read(&c.cluster.pki().ca_cert).expect("ca"))
                .expect("pem"),
        )
        .build()
        .expect("client");
    expect_status(
        bad_token
            .get(c.url("/readyz"))
            .bearer_auth("wrong")
            .sent()
            .await,
        401,
        "Unauthorized",
    )
    .await;

    // Certificates and tokens authenticate; the identity reaches kube-core.
    let cert_user = user_of(whoami(&c.http(Auth::AdminCert), &agg, &[]).await).await;
    assert_eq!(cert_user["username"], "kubernetes-admin");
    let groups: Vec<&str> = cert_user["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g.as_str())
        .collect();
    assert!(
        groups.contains(&"system:masters") && groups.contains(&"system:authenticated"),
        "{groups:?}"
    );
    let token_user = user_of(whoami(&c.http(Auth::AdminToken), &agg, &[]).await).await;
    assert_eq!(token_user["username"], "admin");

    // A client that sends X-Remote-* itself gains nothing: at the aggregator...
    let forged = [
        ("X-Remote-User", "mallory"),
        ("X-Remote-Group", "system:masters"),
        ("X-Remote-Extra-Scopes", "all"),
    ];
    let u = user_of(whoami(&c.http(Auth::AdminToken), &agg, &forged).await).await;
    assert_eq!(u["username"], "admin");
    assert!(
        u.get("extra").is_none() || u["extra"].get("scopes").is_none(),
        "{u}"
    );
    expect_status(whoami(&anon, &agg, &forged).await, 401, "Unauthorized").await;
    // ...and directly at kube-core, which trusts the headers only from the front proxy.
    expect_status(whoami(&anon, &core, &forged).await, 401, "Unauthorized").await;
    let direct = user_of(whoami(&c.http(Auth::AdminCert), &core, &forged).await).await;
    assert_eq!(
        direct["username"], "kubernetes-admin",
        "the user certificate wins over forged headers"
    );
    // The front proxy's certificate does carry identity to kube-core.
    let proxied = user_of(
        whoami(
            &c.http(Auth::FrontProxyCert),
            &core,
            &[("X-Remote-User", "alice"), ("X-Remote-Group", "devs")],
        )
        .await,
    )
    .await;
    assert_eq!(proxied["username"], "alice");
    // The front-proxy certificate is not a user certificate at the aggregator.
    expect_status(
        c.http(Auth::FrontProxyCert)
            .get(c.url("/api/v1/namespaces"))
            .sent()
            .await,
        401,
        "Unauthorized",
    )
    .await;
}

/// `serviceaccounts/<name>/token` issues a JWT the front door accepts as
/// the service account.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_request_issues_a_token_the_authenticator_accepts() {
    let c = crate::harness::TestCluster::start().await;
    let admin = c.http(crate::harness::Auth::AdminCert);
    let r = admin
        .post(c.url("/api/v1/namespaces/default/serviceaccounts"))
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}))
        .sent().await;
    assert_eq!(r.status(), 201);
    let r = admin
        .post(c.url("/api/v1/namespaces/default/serviceaccounts/robot/token"))
        .json(
            &serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600}}),
        )
        .sent()
        .await;
    assert_eq!(r.status(), 201);
    let tr: serde_json::Value = r.json().await.expect("json");
    assert_eq!(tr["kind"], "TokenRequest");
    assert_eq!(
        tr["spec"]["audiences"],
        serde_json::json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let token = tr["status"]["token"].as_str().expect("token").to_string();
    assert!(tr["status"]["expirationTimestamp"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));

    // The token authenticates as the service account.
    let r = c
        .http(crate::harness::Auth::None)
        .post(c.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .sent().await;
    let code = r.status();
    let v: serde_json::Value = r.json().await.expect("json");
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["status"]["userInfo"]["username"], "system:serviceaccount:default:robot",
        "{v}"
    );
    let groups = v["status"]["userInfo"]["groups"].to_string();
    assert!(
        groups.contains("system:serviceaccounts:default"),
        "{groups}"
    );

    // A tampered token is refused; too short a lifetime is invalid.
    let mut bad = token.clone();
    bad.truncate(bad.len() - 2);
    let r = c
        .http(crate::harness::Auth::None)
        .get(c.url("/api/v1/namespaces/default/pods"))
        .bearer_auth(&bad)
        .sent()
        .await;
    assert_eq!(r.status(), 401);
    let r = admin
        .post(c.url("/api/v1/namespaces/default/serviceaccounts/robot/token"))
        .json(
            &serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": 60}}),
        )
        .sent()
        .await;
    let v = crate::harness::expect_status(r, 422, "Invalid").await;
    assert_eq!(
        v["details"]["causes"][0]["field"], "spec.expirationSeconds",
        "{v}"
    );
}
