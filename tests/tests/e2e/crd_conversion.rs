//! CRD conversion: a v1/v2 CRD with a conversion webhook written here (HTTPS,
//! trusted through the CRD's `caBundle`); objects written as v1 read as v2
//! and back, and are stored in the storage version.

use crate::harness::{expect_code, expect_json, Auth, SendExt, TestCluster};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use base64::Engine;
use serde_json::{json, Value};

use crate::review_server;

/// v1 has `spec.name`; v2 has `spec.fullName`.
fn convert(obj: &Value, desired: &str) -> Value {
    let mut out = obj.clone();
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    out["apiVersion"] = json!(desired);
    out["spec"] = if desired.ends_with("/v2") {
        json!({"fullName": spec.get("name").or(spec.get("fullName")).cloned().unwrap_or(Value::Null)})
    } else {
        json!({"name": spec.get("fullName").or(spec.get("name")).cloned().unwrap_or(Value::Null)})
    };
    out
}

/// Serves ConversionReviews on 127.0.0.1 with the given certificate.
/// Returns the port and a call counter.
async fn start_webhook(cert_pem: &[u8], key_pem: &[u8]) -> (u16, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let port = review_server::serve(cert_pem, key_pem, move |_path, review| {
        counter.fetch_add(1, Ordering::SeqCst);
        let req = &review["request"];
        let desired = req["desiredAPIVersion"].as_str().unwrap_or("");
        let converted: Vec<Value> = req["objects"]
            .as_array()
            .map(|a| a.iter().map(|o| convert(o, desired)).collect())
            .unwrap_or_default();
        let resp = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": req["uid"], "convertedObjects": converted, "result": {"status": "Success"}}});
        (serde_json::to_vec(&resp).expect("json"), std::time::Duration::ZERO)
    })
    .await;
    (port, calls)
}

fn version(name: &str, storage: bool, spec_field: &str) -> Value {
    json!({"name": name, "served": true, "storage": storage,
        "additionalPrinterColumns": [{"name": "Value", "type": "string", "jsonPath": format!(".spec.{spec_field}")}],
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
            "spec": {"type": "object", "properties": {spec_field: {"type": "string"}}}}}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_conversion_between_v1_and_v2() {
    let c = TestCluster::start().await;
    let pki = c.cluster.pki();
    let cert = std::fs::read(&pki.extensions_cert).expect("cert");
    let key = std::fs::read(&pki.extensions_key).expect("key");
    let ca = std::fs::read(&pki.ca_cert).expect("ca");
    let (port, calls) = start_webhook(&cert, &key).await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "people.conv.example.com"},
        "spec": {
            "group": "conv.example.com", "scope": "Namespaced",
            "names": {"plural": "people", "singular": "person", "kind": "Person"},
            "versions": [version("v1", true, "name"), version("v2", false, "fullName")],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"url": format!("https://127.0.0.1:{port}/convert"),
                                 "caBundle": base64::engine::general_purpose::STANDARD.encode(&ca)}}}
        }
    });
    let (ok, out, err) = c
        .kubectl_stdin(
            &["create", "--validate=false", "-f", "-"],
            Some(&crd.to_string()),
        )
        .await;
    assert!(ok, "{out} {err}");
    c.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "--timeout=30s",
        "crd/people.conv.example.com",
    ])
    .await;
    let http = c.http(Auth::AdminCert);
    let base = |v: &str| {
        c.url(&format!(
            "/apis/conv.example.com/{v}/namespaces/default/people"
        ))
    };

    // Written as v1, read as v2.
    let r = http
        .post(base("v1"))
        .json(&json!({"apiVersion": "conv.example.com/v1", "kind": "Person", "metadata": {"name": "ada"}, "spec": {"name": "Ada Lovelace"}}))
        .sent().await;
    expect_code(r, 201).await;
    let v2: Value = http.get(format!("{}/ada", base("v2"))).fetch_json().await;
    assert_eq!(v2["apiVersion"], "conv.example.com/v2", "{v2}");
    assert_eq!(v2["spec"], json!({"fullName": "Ada Lovelace"}), "{v2}");

    // Written as v2 (stored as v1 through the webhook), read as v1 and v2.
    let r = http
        .post(base("v2"))
        .json(&json!({"apiVersion": "conv.example.com/v2", "kind": "Person", "metadata": {"name": "grace"}, "spec": {"fullName": "Grace Hopper"}}))
        .sent().await;
    let created = expect_json(r, 201).await;
    assert_eq!(created["apiVersion"], "conv.example.com/v2");
    assert_eq!(created["spec"], json!({"fullName": "Grace Hopper"}));
    let v1: Value = http.get(format!("{}/grace", base("v1"))).fetch_json().await;
    assert_eq!(v1["spec"], json!({"name": "Grace Hopper"}), "{v1}");

    // Lists and kubectl in either version; a LIST converts all its objects
    // in one ConversionReview, as upstream.
    for n in ["c1", "c2", "c3"] {
        let r = http
            .post(base("v1"))
            .json(&json!({"apiVersion": "conv.example.com/v1", "kind": "Person", "metadata": {"name": n}, "spec": {"name": n}}))
            .sent().await;
        assert_eq!(r.status().as_u16(), 201);
    }
    let before = calls.load(Ordering::SeqCst);
    let list: Value = http.get(base("v2")).fetch_json().await;
    let names: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["spec"]["fullName"].as_str())
        .collect();
    assert_eq!(
        names,
        ["Ada Lovelace", "c1", "c2", "c3", "Grace Hopper"],
        "{list}"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst) - before,
        1,
        "a LIST of 5 objects must make one webhook call"
    );
    let table = c
        .kubectl_ok(&["get", "people.v1.conv.example.com", "grace"])
        .await;
    assert!(table.contains("Grace Hopper"), "{table}");

    // An update through v2 keeps the v1 view consistent.
    let r = http
        .patch(format!("{}/ada", base("v2")))
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"spec":{"fullName":"Augusta Ada King"}}"#)
        .sent()
        .await;
    expect_code(r, 200).await;
    let v1: Value = http.get(format!("{}/ada", base("v1"))).fetch_json().await;
    assert_eq!(v1["spec"], json!({"name": "Augusta Ada King"}), "{v1}");
    assert!(
        calls.load(Ordering::SeqCst) >= 4,
        "webhook called {} times",
        calls.load(Ordering::SeqCst)
    );
}
