//! Custom resources and their namespaces: deleting a namespace deletes its
//! custom resources, finalizers holding it.

use std::time::Duration;

use serde_json::{json, Value};

use crate::crds::{create_json, create_namespace, wait_established, widget_crd};
use crate::harness::{eventually, TestCluster};

/// Deleting a namespace deletes its custom resources (a finalizer on one
/// holds the namespace until it is removed); recreating the namespace finds
/// none of them again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_namespace_deletes_its_custom_resources() {
    let c = TestCluster::start().await;
    create_json(&c, &widget_crd("Namespaced")).await;
    wait_established(&c, "widgets.example.com").await;
    create_namespace(&c, "doomed").await;
    let widget = |name: &str, finalizers: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "doomed", "finalizers": finalizers},
            "spec": {"size": 1}})
    };
    create_json(&c, &widget("plain", json!([]))).await;
    create_json(&c, &widget("held", json!(["example.com/hold"]))).await;
    c.kubectl_ok(&["delete", "namespace", "doomed", "--wait=false"])
        .await;
    // The plain widget goes; the held one is marked for deletion and keeps
    // the namespace.
    let marked = eventually(Duration::from_secs(20), || async {
        let (ok, out, _) = c
            .kubectl(&["get", "widgets", "-n", "doomed", "-o", "json"])
            .await;
        let Ok(v) = serde_json::from_str::<Value>(&out) else {
            return false;
        };
        let items = v["items"].as_array().cloned().unwrap_or_default();
        ok && items.len() == 1
            && items[0]["metadata"]["name"] == "held"
            && items[0]["metadata"]["deletionTimestamp"].is_string()
    })
    .await;
    assert!(marked, "the namespace's custom resources were not deleted");
    assert!(
        c.kubectl(&["get", "namespace", "doomed"]).await.0,
        "removed too early"
    );
    c.kubectl_ok(&[
        "patch",
        "widget",
        "held",
        "-n",
        "doomed",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ])
    .await;
    let gone = eventually(Duration::from_secs(30), || async {
        !c.kubectl(&["get", "namespace", "doomed"]).await.0
    })
    .await;
    assert!(gone, "the namespace was never removed");
    create_namespace(&c, "doomed").await;
    let out = c
        .kubectl_ok(&["get", "widgets", "-n", "doomed", "-o", "name"])
        .await;
    assert!(out.trim().is_empty(), "custom resources came back: {out}");
}
