//! RBAC enforced end to end: the bootstrap policy, Roles and bindings
//! taking effect, aggregated ClusterRoles, impersonation, and the access
//! reviews (`kubectl auth can-i`, `--list`), as a user of upstream sees them.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use k8s_openapi::api::authorization::v1::{
    LocalSubjectAccessReview, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use serde_json::json;

async fn can_i(tc: &TestCluster, args: &[&str]) -> String {
    let mut all = vec!["auth", "can-i"];
    all.extend_from_slice(args);
    let (_, out, _) = tc.kubectl(&all).await;
    out.trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_and_bindings_decide_what_users_may_do() {
    let tc = TestCluster::start().await;
    tc.kubectl_ok(&["create", "namespace", "team"]).await;

    // Nothing granted yet: kubectl gets upstream's 403.
    assert_eq!(
        can_i(&tc, &["list", "pods", "-n", "team", "--as", "bob"]).await,
        "no"
    );
    let (ok, _, err) = tc
        .kubectl(&["get", "pods", "-n", "team", "--as", "bob"])
        .await;
    assert!(!ok);
    assert!(
        err.contains("Error from server (Forbidden): pods is forbidden: User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"team\""),
        "{err}"
    );
    // Discovery and the self reviews are every authenticated user's.
    assert_eq!(can_i(&tc, &["get", "/apis", "--as", "bob"]).await, "yes");
    assert_eq!(
        can_i(
            &tc,
            &[
                "create",
                "selfsubjectaccessreviews.authorization.k8s.io",
                "--as",
                "bob"
            ]
        )
        .await,
        "yes"
    );

    // `view` in team, through the aggregated ClusterRole.
    let view_rules = tc
        .kubectl_ok(&[
            "get",
            "clusterrole",
            "view",
            "-o",
            "jsonpath={.rules[*].resources}",
        ])
        .await;
    assert!(
        view_rules.contains("pods"),
        "view was not aggregated: {view_rules}"
    );
    tc.kubectl_ok(&[
        "create",
        "rolebinding",
        "bob-view",
        "--clusterrole=view",
        "--user=bob",
        "-n",
        "team",
    ])
    .await;
    let ok = eventually(Duration::from_secs(10), || async {
        can_i(&tc, &["list", "pods", "-n", "team", "--as", "bob"]).await == "yes"
    })
    .await;
    assert!(ok, "the RoleBinding did not take effect");
    let out = tc
        .kubectl_ok(&["get", "pods", "-n", "team", "--as", "bob"])
        .await;
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        can_i(&tc, &["list", "pods", "-n", "default", "--as", "bob"]).await,
        "no"
    );
    assert_eq!(
        can_i(&tc, &["get", "secrets", "-n", "team", "--as", "bob"]).await,
        "no"
    );
    let (ok, _, err) = tc
        .kubectl(&["create", "configmap", "c", "-n", "team", "--as", "bob"])
        .await;
    assert!(
        !ok && err.contains("cannot create resource \"configmaps\""),
        "{err}"
    );

    // A Role with resourceNames, bound to a group.
    tc.kubectl_ok(&[
        "create",
        "role",
        "one-cm",
        "-n",
        "team",
        "--verb=get,update",
        "--resource=configmaps",
        "--resource-name=settings",
    ])
    .await;
    tc.kubectl_ok(&[
        "create",
        "rolebinding",
        "devs-cm",
        "--role=one-cm",
        "--group=devs",
        "-n",
        "team",
    ])
    .await;
    let ok = eventually(Duration::from_secs(10), || async {
        can_i(
            &tc,
            &[
                "update",
                "configmaps/settings",
                "-n",
                "team",
                "--as",
                "carol",
                "--as-group",
                "devs",
            ],
        )
        .await
            == "yes"
    })
    .await;
    assert!(ok, "the group binding did not take effect");
    assert_eq!(
        can_i(
            &tc,
            &[
                "update",
                "configmaps/other",
                "-n",
                "team",
                "--as",
                "carol",
                "--as-group",
                "devs"
            ]
        )
        .await,
        "no"
    );

    // `kubectl auth can-i --list`: SelfSubjectRulesReview.
    let list = tc
        .kubectl_ok(&["auth", "can-i", "--list", "-n", "team", "--as", "bob"])
        .await;
    assert!(
        list.lines()
            .any(|l| l.starts_with("pods ") && l.contains("[get list watch]")),
        "{list}"
    );
    assert!(
        list.contains("selfsubjectaccessreviews.authorization.k8s.io"),
        "{list}"
    );

    // Removing the binding takes the right away again.
    tc.kubectl_ok(&["delete", "rolebinding", "bob-view", "-n", "team"])
        .await;
    let ok = eventually(Duration::from_secs(10), || async {
        can_i(&tc, &["list", "pods", "-n", "team", "--as", "bob"]).await == "no"
    })
    .await;
    assert!(ok, "deleting the RoleBinding did not take effect");

    // Escalation: a namespace admin may grant what admin holds, no more.
    tc.kubectl_ok(&[
        "create",
        "rolebinding",
        "bob-admin",
        "--clusterrole=admin",
        "--user=bob",
        "-n",
        "team",
    ])
    .await;
    let ok = eventually(Duration::from_secs(10), || async {
        can_i(
            &tc,
            &["create", "rolebindings", "-n", "team", "--as", "bob"],
        )
        .await
            == "yes"
    })
    .await;
    assert!(ok, "admin did not take effect");
    tc.kubectl_ok(&[
        "create",
        "rolebinding",
        "carol-view",
        "--clusterrole=view",
        "--user=carol",
        "-n",
        "team",
        "--as",
        "bob",
    ])
    .await;
    let (ok, _, err) = tc
        .kubectl(&[
            "create",
            "rolebinding",
            "bob-root",
            "--clusterrole=cluster-admin",
            "--user=bob",
            "-n",
            "team",
            "--as",
            "bob",
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains("rolebindings.rbac.authorization.k8s.io \"bob-root\" is forbidden: user \"bob\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:"),
        "{err}"
    );
    let everything = r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
      "metadata": {"name": "everything", "namespace": "team"},
      "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}"#;
    let (ok, _, err) = tc
        .kubectl_stdin(&["create", "-f", "-", "--as", "bob"], Some(everything))
        .await;
    assert!(!ok);
    assert!(
        err.contains("is attempting to grant RBAC permissions not currently held")
            && err.contains("{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}"),
        "{err}"
    );
    let (ok, _, err) = tc
        .kubectl_stdin(&["create", "-f", "-"], Some(everything))
        .await;
    assert!(ok, "the cluster admin may: {err}");

    // The access reviews through kube-rs.
    let client = tc.client().await;
    let attrs = |verb: &str| ResourceAttributes {
        namespace: Some("team".into()),
        verb: Some(verb.into()),
        resource: Some("configmaps".into()),
        name: Some("settings".into()),
        ..Default::default()
    };
    let sar = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some("carol".into()),
            groups: Some(vec!["devs".into()]),
            resource_attributes: Some(attrs("update")),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &sar)
        .await
        .expect("sar");
    assert!(answer.status.expect("status").allowed);
    let mut lsar = LocalSubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some("carol".into()),
            resource_attributes: Some(attrs("delete")),
            ..Default::default()
        },
        ..Default::default()
    };
    lsar.metadata.namespace = Some("team".into());
    let answer = Api::<LocalSubjectAccessReview>::namespaced(client.clone(), "team")
        .create(&PostParams::default(), &lsar)
        .await
        .expect("lsar");
    assert!(!answer.status.expect("status").allowed);
    // A LocalSubjectAccessReview about another namespace is invalid.
    lsar.spec
        .resource_attributes
        .as_mut()
        .expect("attrs")
        .namespace = Some("default".into());
    let err = Api::<LocalSubjectAccessReview>::namespaced(client, "team")
        .create(&PostParams::default(), &lsar)
        .await
        .expect_err("namespace mismatch");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422);
            assert!(
                s.message.contains("spec.resourceAttributes.namespace"),
                "{}",
                s.message
            );
        }
        other => panic!("{other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_account_tokens_and_impersonation_are_authorized() {
    let tc = TestCluster::start().await;
    tc.kubectl_ok(&["create", "namespace", "apps"]).await;
    tc.kubectl_ok(&["create", "serviceaccount", "robot", "-n", "apps"])
        .await;
    let token = tc
        .kubectl_ok(&["create", "token", "robot", "-n", "apps"])
        .await
        .trim()
        .to_string();
    let http = tc.http(Auth::None);
    let get = |path: &str| http.get(tc.url(path)).bearer_auth(&token).send();
    let r = get("/api/v1/namespaces/apps/configmaps")
        .await
        .expect("get");
    assert_eq!(r.status(), 403);
    let v: serde_json::Value = r.json().await.expect("json");
    assert_eq!(v["reason"], "Forbidden");
    assert_eq!(v["details"]["kind"], "configmaps");
    assert_eq!(
        v["message"],
        "configmaps is forbidden: User \"system:serviceaccount:apps:robot\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"apps\""
    );

    // `edit` for the account in its namespace.
    tc.kubectl_ok(&[
        "create",
        "rolebinding",
        "robot-edit",
        "--clusterrole=edit",
        "--serviceaccount=apps:robot",
        "-n",
        "apps",
    ])
    .await;
    let ok = eventually(Duration::from_secs(10), || async {
        get("/api/v1/namespaces/apps/configmaps")
            .await
            .is_ok_and(|r| r.status() == 200)
    })
    .await;
    assert!(ok, "edit did not take effect for the service account");
    let r = http
        .post(tc.url("/api/v1/namespaces/apps/configmaps"))
        .bearer_auth(&token)
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made-by-robot"}}))
        .sent().await;
    assert_eq!(r.status(), 201);
    // edit may not touch RBAC.
    let r = http
        .get(tc.url("/apis/rbac.authorization.k8s.io/v1/namespaces/apps/roles"))
        .bearer_auth(&token)
        .sent()
        .await;
    assert_eq!(r.status(), 403);

    // Impersonation needs the impersonate verb.
    let r = http
        .get(tc.url("/api/v1/namespaces/apps/configmaps"))
        .bearer_auth(&token)
        .header("Impersonate-User", "alice")
        .sent()
        .await;
    assert_eq!(r.status(), 403);
    let v: serde_json::Value = r.json().await.expect("json");
    assert_eq!(
        v["message"],
        "users \"alice\" is forbidden: User \"system:serviceaccount:apps:robot\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
    // The admin may impersonate; the request then runs as the impersonated
    // user, with system:authenticated added.
    let r = tc
        .http(Auth::AdminCert)
        .post(tc.url("/apis/authentication.k8s.io/v1/selfsubjectreviews"))
        .header("Impersonate-User", "alice")
        .header("Impersonate-Group", "devs")
        .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .sent()
        .await;
    assert_eq!(r.status(), 201);
    let v: serde_json::Value = r.json().await.expect("json");
    assert_eq!(v["status"]["userInfo"]["username"], "alice");
    assert_eq!(
        v["status"]["userInfo"]["groups"],
        json!(["devs", "system:authenticated"])
    );
    // Anonymous users reach health and version only.
    let anon = tc.http(Auth::None);
    assert_eq!(anon.get(tc.url("/version")).sent().await.status(), 200);
}
