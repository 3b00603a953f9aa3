//! What a kubectl user does first.

use crate::harness::{table_header, TestCluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_namespace_and_configmap_then_read_it_back() {
    let c = TestCluster::start().await;
    c.kubectl_ok(&["create", "namespace", "demo"]).await;
    c.kubectl_ok(&[
        "-n",
        "demo",
        "create",
        "configmap",
        "c",
        "--from-literal=a=b",
    ])
    .await;
    let yaml = c
        .kubectl_ok(&["-n", "demo", "get", "cm", "c", "-o", "yaml"])
        .await;
    for field in [
        "uid:",
        "resourceVersion:",
        "creationTimestamp:",
        "name: c",
        "namespace: demo",
        "a: b",
        "kind: ConfigMap",
    ] {
        assert!(yaml.contains(field), "missing {field} in:\n{yaml}");
    }
    // Table output with upstream's configmap columns.
    let table = c.kubectl_ok(&["-n", "demo", "get", "configmaps"]).await;
    let header: Vec<&str> = table_header(&table);
    assert_eq!(header, ["NAME", "DATA", "AGE"], "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("c ") && l.split_whitespace().nth(1) == Some("1")),
        "{table}"
    );

    let (ok, _, err) = c
        .kubectl(&["get", "--raw", "/api/v1/namespaces/demo/configmaps/nope"])
        .await;
    assert!(!ok);
    assert!(
        err.contains("NotFound") && err.contains("configmaps \"nope\" not found"),
        "{err}"
    );

    // The system namespaces exist.
    let ns = c.kubectl_ok(&["get", "namespaces", "-o", "name"]).await;
    for n in [
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "demo",
    ] {
        assert!(
            ns.lines().any(|l| l == format!("namespace/{n}")),
            "{n} missing in {ns}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_edit_label_delete_and_chunked_get() {
    let c = TestCluster::start().await;
    let manifest = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
  namespace: default
  labels: {app: web}
data:
  k: v1
"#;
    // --validate=false until the server publishes OpenAPI (kubectl validates against it).
    let (ok, _, err) = c
        .kubectl_stdin(&["apply", "--validate=false", "-f", "-"], Some(manifest))
        .await;
    assert!(ok, "{err}");
    let v = c
        .kubectl_ok(&["get", "cm", "applied", "-o", "jsonpath={.data.k}"])
        .await;
    assert_eq!(v, "v1");
    let (ok, _, err) = c
        .kubectl_stdin(
            &["apply", "--validate=false", "-f", "-"],
            Some(&manifest.replace("k: v1", "k: v2")),
        )
        .await;
    assert!(ok, "{err}");
    assert_eq!(
        c.kubectl_ok(&["get", "cm", "applied", "-o", "jsonpath={.data.k}"])
            .await,
        "v2"
    );
    c.kubectl_ok(&["label", "cm", "applied", "tier=front"])
        .await;
    c.kubectl_ok(&[
        "patch",
        "cm",
        "applied",
        "--type=merge",
        "-p",
        r#"{"data":{"x":"y"}}"#,
    ])
    .await;
    c.kubectl_ok(&[
        "patch",
        "cm",
        "applied",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/data/x"}]"#,
    ])
    .await;
    let labels = c
        .kubectl_ok(&[
            "get",
            "cm",
            "-l",
            "app=web,tier in (front,back)",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(labels.trim(), "configmap/applied");
    let others = c
        .kubectl_ok(&["get", "cm", "-l", "tier!=front", "-o", "name"])
        .await;
    assert!(others.trim().is_empty(), "{others}");

    for i in 0..5 {
        c.kubectl_ok(&[
            "create",
            "configmap",
            &format!("chunk-{i}"),
            "--from-literal=i=x",
        ])
        .await;
    }
    let names = c
        .kubectl_ok(&["get", "cm", "--chunk-size=2", "-o", "name"])
        .await;
    for i in 0..5 {
        assert!(names.contains(&format!("configmap/chunk-{i}")), "{names}");
    }
    let table = c.kubectl_ok(&["get", "cm", "--chunk-size=2"]).await;
    assert_eq!(
        table.lines().filter(|l| l.starts_with("chunk-")).count(),
        5,
        "{table}"
    );

    c.kubectl_ok(&["delete", "cm", "applied"]).await;
    let (ok, _, err) = c.kubectl(&["get", "cm", "applied"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_namespace_removes_its_content() {
    let c = TestCluster::start().await;
    c.kubectl_ok(&["create", "namespace", "gone"]).await;
    c.kubectl_ok(&[
        "-n",
        "gone",
        "create",
        "configmap",
        "c1",
        "--from-literal=a=b",
    ])
    .await;
    c.kubectl_ok(&[
        "-n",
        "gone",
        "create",
        "secret",
        "generic",
        "s1",
        "--from-literal=a=b",
    ])
    .await;
    c.kubectl_ok(&["delete", "namespace", "gone", "--timeout=60s"])
        .await;
    let (ok, _, err) = c.kubectl(&["get", "namespace", "gone"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    let left = c
        .kubectl_ok(&[
            "get",
            "configmaps,secrets",
            "-A",
            "-o",
            "name",
            "--field-selector",
            "metadata.namespace=gone",
        ])
        .await;
    assert!(left.trim().is_empty(), "content left behind: {left}");
    // A terminating or missing namespace accepts no new content.
    let (ok, _, err) = c
        .kubectl(&["-n", "gone", "create", "configmap", "late"])
        .await;
    assert!(
        !ok && err.contains("namespaces \"gone\" not found"),
        "{err}"
    );
    // The system namespaces cannot be deleted.
    let (ok, _, err) = c.kubectl(&["delete", "namespace", "kube-system"]).await;
    assert!(!ok && err.contains("Forbidden"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whoami_and_version() {
    let c = TestCluster::start().await;
    let who = c.kubectl_ok(&["auth", "whoami"]).await;
    assert!(who.contains("kubernetes-admin"), "{who}");
    assert!(who.contains("system:masters"), "{who}");
    let v = c.kubectl_ok(&["version", "-o", "json"]).await;
    let v: serde_json::Value = serde_json::from_str(&v).expect("json");
    assert_eq!(v["serverVersion"]["major"], "1");
    assert_eq!(v["serverVersion"]["minor"], "37");
    let resources = c.kubectl_ok(&["api-resources", "-o", "name"]).await;
    for r in [
        "configmaps",
        "namespaces",
        "pods",
        "secrets",
        "services",
        "customresourcedefinitions.apiextensions.k8s.io",
    ] {
        assert!(
            resources.lines().any(|l| l == r),
            "{r} missing in\n{resources}"
        );
    }
}

/// kubectl's client-side validation of a `List` reads `/openapi/v2` in
/// protobuf (gnostic's `openapi.v2.Document`): a valid List is created, an
/// unknown field is named as upstream's definitions make kubectl name it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_validates_lists_with_the_protobuf_openapi_v2_document() {
    let c = TestCluster::start().await;
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "listed", "namespace": "default"}, "data": {"a": "b"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "listed", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"a": "b"}},
                  "template": {"metadata": {"labels": {"a": "b"}},
                               "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}}]});
    let (ok, out, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&list.to_string()))
        .await;
    assert!(ok, "{out} {err}");
    assert!(
        out.contains("configmap/listed created") && out.contains("deployment.apps/listed created"),
        "{out}"
    );
    let bad = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad", "namespace": "default"}, "bogus": 1}]});
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&bad.to_string()))
        .await;
    assert!(!ok);
    assert!(
        err.contains(
            r#"ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap"#
        ),
        "{err}"
    );
}
