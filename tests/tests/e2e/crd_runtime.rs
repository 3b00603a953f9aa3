//! Custom resources at runtime: the real-world operator CRDs in
//! `../shared/testdata/crds/` with their examples, printer columns and
//! `kubectl explain`; kube-rs clients with watch; no false 404 while the
//! extensions tier restarts.

use crate::harness::{
    eventually, expect_code, expect_status, table_header, Auth, SendExt, TestCluster,
};
use std::time::Duration;

use serde_json::json;

use crate::crds::{create_json, create_namespace, wait_established, widget_crd, TESTDATA};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_world_crds_install_and_accept_their_examples() {
    let c = TestCluster::start().await;
    for ns in ["argocd", "sandbox"] {
        create_namespace(&c, ns).await;
    }
    let crds = [
        ("certificates.cert-manager.io", "certificates"),
        ("servicemonitors.monitoring.coreos.com", "servicemonitors"),
        ("prometheusrules.monitoring.coreos.com", "prometheusrules"),
        ("applications.argoproj.io", "applications"),
        ("rollouts.argoproj.io", "rollouts"),
        ("httproutes.gateway.networking.k8s.io", "httproutes"),
    ];
    for (name, _) in crds {
        let file = format!("{TESTDATA}/{name}.yaml");
        c.kubectl_ok(&["create", "--validate=false", "-f", &file])
            .await;
    }
    for (name, _) in crds {
        wait_established(&c, name).await;
    }
    for (name, plural) in crds {
        let file = format!("{TESTDATA}/{name}-example.yaml");
        let (ok, out, err) = c.kubectl(&["apply", "--validate=false", "-f", &file]).await;
        assert!(ok, "{name} examples: {out}\n{err}");
        let table = c.kubectl_ok(&["get", plural, "-A"]).await;
        assert!(table.lines().count() >= 2, "{name}: {table}");
    }
    // kubectl explain reads the per-group-version OpenAPI v3 documents.
    let explain = c
        .kubectl_ok(&["explain", "certificates.spec.secretName"])
        .await;
    assert!(
        explain.contains("GROUP:      cert-manager.io") || explain.contains("cert-manager.io"),
        "{explain}"
    );
    assert!(
        explain.contains("secretName") && explain.contains("<string>"),
        "{explain}"
    );
    let explain = c.kubectl_ok(&["explain", "servicemonitors.spec"]).await;
    assert!(
        explain.contains("endpoints") && explain.contains("FIELDS:"),
        "{explain}"
    );

    // Printer columns of cert-manager's Certificate.
    let table = c
        .kubectl_ok(&["get", "certificates", "-n", "sandbox"])
        .await;
    let header: Vec<&str> = table_header(&table);
    assert_eq!(header, ["NAME", "READY", "SECRET", "AGE"], "{table}");
    assert!(table.contains("example-com-tls"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_through_kube_rs_with_watch() {
    use futures_util::{StreamExt, TryStreamExt};
    use kube::api::{Api, DynamicObject, ListParams, PostParams, WatchEvent, WatchParams};
    use kube::core::GroupVersionKind;
    use kube::discovery::ApiResource;

    let c = TestCluster::start().await;
    create_json(&c, &widget_crd("Namespaced")).await;
    wait_established(&c, "widgets.example.com").await;
    let client = c.client().await;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let mut events = api
        .watch(&WatchParams::default().timeout(20), "0")
        .await
        .expect("watch")
        .boxed();
    let mut obj = DynamicObject::new("kw", &ar);
    obj.data = json!({"spec": {"size": 2}});
    let created = api
        .create(&PostParams::default(), &obj)
        .await
        .expect("create");
    assert_eq!(created.data["spec"]["color"], "red");
    let added = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(ev) = events.try_next().await.expect("event") {
            if let WatchEvent::Added(o) = ev {
                return Some(o);
            }
        }
        None
    })
    .await
    .expect("no ADDED event in time")
    .expect("stream ended");
    assert_eq!(added.metadata.name.as_deref(), Some("kw"));
    assert_eq!(added.data["spec"]["size"], 2);
    let list = api.list(&ListParams::default()).await.expect("list");
    assert_eq!(list.items.len(), 1);
    let err = api.get("missing").await.expect_err("404");
    assert!(
        matches!(err, kube::Error::Api(s) if s.code == 404 && s.message == "widgets.example.com \"missing\" not found")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_false_404_while_extensions_restarts() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    let mut c = TestCluster::start().await;
    create_json(&c, &widget_crd("Cluster")).await;
    wait_established(&c, "widgets.example.com").await;
    let http = c.http(Auth::AdminCert);
    let url = c.url("/apis/example.com/v1/widgets");
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let poller = {
        let (http, url, stop, seen) = (http.clone(), url.clone(), stop.clone(), seen.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                if let Ok(r) = http.get(&url).send().await {
                    let code = r.status().as_u16();
                    let retry = r.headers().contains_key("retry-after");
                    seen.lock().expect("lock").push((code, retry));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    c.cluster
        .stop_tier(deploy::Tier::Extensions)
        .await
        .expect("stop");
    c.cluster
        .start_tier(deploy::Tier::Extensions)
        .await
        .expect("start");
    let resp = http.get(&url).sent().await;
    assert_eq!(
        resp.status().as_u16(),
        200,
        "not served right after the restart"
    );
    stop.store(true, Ordering::SeqCst);
    poller.await.expect("poller");
    let seen = seen.lock().expect("lock").clone();
    assert!(!seen.is_empty());
    assert!(
        !seen.iter().any(|(code, _)| *code == 404),
        "false 404 during restart: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tightened_schemas_ratchet_unchanged_values() {
    let c = TestCluster::start().await;
    create_json(&c, &widget_crd("Cluster")).await;
    wait_established(&c, "widgets.example.com").await;
    let http = c.http(Auth::AdminCert);
    let widgets = c.url("/apis/example.com/v1/widgets");
    let resp = http
        .post(&widgets)
        .json(&json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "big"}, "spec": {"size": 8}}))
        .sent().await;
    assert_eq!(resp.status().as_u16(), 201);
    // Tighten spec.size to at most 5.
    let resp = http
        .patch(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"))
        .header("content-type", "application/json-patch+json")
        .body(r#"[{"op":"replace","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/maximum","value":5}]"#)
        .sent().await;
    expect_code(resp, 200).await;
    let tightened = eventually(Duration::from_secs(15), || async {
        let r = http
            .post(&widgets)
            .json(&json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "probe"}, "spec": {"size": 8}}))
            .send()
            .await;
        r.is_ok_and(|r| r.status().as_u16() == 422)
    })
    .await;
    assert!(tightened, "the new schema never applied");
    // The stored invalid value may stay while something else changes...
    let patch = |body: &'static str| {
        http.patch(format!("{widgets}/big"))
            .header("content-type", "application/merge-patch+json")
            .body(body)
            .send()
    };
    let resp = patch(r#"{"spec":{"color":"green"}}"#).await.expect("patch");
    expect_code(resp, 200).await;
    // ...but may not change to another invalid value.
    let resp = patch(r#"{"spec":{"size":9}}"#).await.expect("patch");
    let st = expect_status(resp, 422, "Invalid").await;
    assert!(
        st["message"].as_str().unwrap_or("").contains(
            "spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5"
        ),
        "{st}"
    );
}

/// `kubectl apply` with its default `--validate=strict` works for a CRD, its
/// custom resources and an APIService: each tier publishes OpenAPI v3 with
/// the `fieldValidation` parameter kubectl looks for, so kubectl leaves
/// validation to the server (it would otherwise download `/openapi/v2` in
/// protobuf). Unknown fields are then refused by the server, as upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_with_default_validation_for_crds_crs_and_apiservices() {
    let c = TestCluster::start().await;
    let crd = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.validate.example.com
spec:
  group: validate.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"#;
    let (ok, out, err) = c.kubectl_stdin(&["apply", "-f", "-"], Some(crd)).await;
    assert!(ok, "applying a CRD with default validation: {out}\n{err}");
    assert!(out.contains("created"), "{out}");
    assert!(
        eventually(Duration::from_secs(20), || async {
            c.kubectl(&["get", "gadgets", "-n", "default"]).await.0
        })
        .await,
        "the CRD is served"
    );
    let gadget = "apiVersion: validate.example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\nspec: {size: 3}\n";
    let mut applied = false;
    for _ in 0..20 {
        let (ok, _, _) = c.kubectl_stdin(&["apply", "-f", "-"], Some(gadget)).await;
        if ok {
            applied = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        applied,
        "applying a custom resource with default validation"
    );
    let (ok, out, err) = c
        .kubectl_stdin(&["apply", "--server-side", "-f", "-"], Some(gadget))
        .await;
    assert!(ok, "server-side apply of a custom resource: {out}\n{err}");

    let unknown = "apiVersion: validate.example.com/v1\nkind: Gadget\nmetadata: {name: g2, namespace: default}\nspec: {size: 3, colour: red}\n";
    let (ok, _, err) = c.kubectl_stdin(&["apply", "-f", "-"], Some(unknown)).await;
    assert!(!ok, "an unknown field is refused under strict validation");
    assert!(err.contains(r#"unknown field "spec.colour""#), "{err}");

    let out = c.kubectl_ok(&["explain", "crd.spec.names"]).await;
    assert!(out.contains("plural"), "{out}");
    let out = c.kubectl_ok(&["explain", "apiservice.spec"]).await;
    assert!(out.contains("groupPriorityMinimum"), "{out}");

    let apiservice = "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1alpha1.validate.example.org}\nspec: {group: validate.example.org, version: v1alpha1, groupPriorityMinimum: 100, versionPriority: 10, insecureSkipTLSVerify: true, service: {namespace: default, name: nowhere, port: 443}}\n";
    let (ok, out, err) = c
        .kubectl_stdin(&["apply", "-f", "-"], Some(apiservice))
        .await;
    assert!(
        ok,
        "applying an APIService with default validation: {out}\n{err}"
    );
}
