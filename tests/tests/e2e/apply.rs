//! Server-side apply and managedFields through the aggregator: kubectl
//! `apply --server-side` (create, update, conflicts, `--force-conflicts`,
//! removal of fields dropped from the file), `--show-managed-fields`, and
//! kube-rs `Patch::Apply`, on built-in kinds and custom resources.

use crate::harness::{expect_status, Auth, SendExt, TestCluster};
use serde_json::{json, Value};

use crate::crds::{create_json, wait_established};

fn deployment(replicas: u32, labels: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels:
{labels}
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
"
    )
}

async fn get_json(c: &TestCluster, args: &[&str]) -> Value {
    let mut all = vec!["get", "-o", "json"];
    all.extend_from_slice(args);
    let out = c.kubectl_ok(&all).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("kubectl get output: {e}: {out}"))
}

fn managers(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_string(),
                        e["operation"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_server_side_apply_of_a_deployment() {
    let c = TestCluster::start().await;
    let two_labels = "    app: web\n    tier: front";

    // Apply creates.
    let (ok, out, err) = c
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&deployment(2, two_labels)),
        )
        .await;
    assert!(ok, "apply: {out} {err}");
    assert!(
        out.contains("deployment.apps/web serverside-applied"),
        "{out}"
    );
    let d = get_json(&c, &["deployment", "web", "--show-managed-fields"]).await;
    assert_eq!(d["spec"]["replicas"], 2);
    assert!(
        managers(&d).contains(&("kubectl".into(), "Apply".into())),
        "{:?}",
        d["metadata"]["managedFields"]
    );
    let entry = d["metadata"]["managedFields"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["operation"] == "Apply"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(entry["apiVersion"], "apps/v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(entry["fieldsV1"]["f:spec"]["f:replicas"], json!({}));
    assert_eq!(
        entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
            ["k:{\"name\":\"nginx\"}"]["f:image"],
        json!({})
    );
    assert_eq!(entry["fieldsV1"]["f:spec"]["f:selector"], json!({}));
    // kubectl hides managedFields unless asked.
    let plain = c
        .kubectl_ok(&["get", "deployment", "web", "-o", "yaml"])
        .await;
    assert!(!plain.contains("managedFields"), "{plain}");
    let shown = c
        .kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "yaml",
            "--show-managed-fields",
        ])
        .await;
    assert!(
        shown.contains("managedFields:") && shown.contains("operation: Apply"),
        "{shown}"
    );

    // Re-apply with other replicas updates.
    let (ok, out, err) = c
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&deployment(3, two_labels)),
        )
        .await;
    assert!(ok, "re-apply: {out} {err}");
    let d = get_json(&c, &["deployment", "web"]).await;
    assert_eq!(d["spec"]["replicas"], 3);

    // Another manager takes replicas; a conflicting apply fails.
    c.kubectl_ok(&["scale", "deployment", "web", "--replicas=5"])
        .await;
    let (ok, out, err) = c
        .kubectl_stdin(
            &["apply", "--server-side", "-f", "-"],
            Some(&deployment(4, two_labels)),
        )
        .await;
    assert!(!ok, "conflicting apply succeeded: {out}");
    // Upstream's text: kubectl scale writes /scale as manager "kubectl".
    assert!(
        err.contains(
            "error: Apply failed with 1 conflict: conflict with \"kubectl\" with subresource \"scale\" using apps/v1: .spec.replicas"
        ),
        "{err}"
    );
    assert!(err.contains("--force-conflicts"), "{err}");
    let d = get_json(&c, &["deployment", "web"]).await;
    assert_eq!(d["spec"]["replicas"], 5);

    // Applying the other manager's value is no conflict; forcing wins.
    let (ok, out, err) = c
        .kubectl_stdin(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(&deployment(4, two_labels)),
        )
        .await;
    assert!(ok, "forced apply: {out} {err}");
    let d = get_json(&c, &["deployment", "web", "--show-managed-fields"]).await;
    assert_eq!(d["spec"]["replicas"], 4);
    let owners_of_replicas: Vec<&str> = d["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|e| e["fieldsV1"]["f:spec"].get("f:replicas").is_some())
                .filter_map(|e| e["manager"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        owners_of_replicas,
        ["kubectl"],
        "{:?}",
        d["metadata"]["managedFields"]
    );

    // A label dropped from the file is removed from the object.
    let (ok, out, err) = c
        .kubectl_stdin(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(&deployment(4, "    app: web")),
        )
        .await;
    assert!(ok, "apply without the label: {out} {err}");
    let d = get_json(&c, &["deployment", "web"]).await;
    assert_eq!(d["metadata"]["labels"], json!({"app": "web"}));

    // Another applier with the same value shares the field instead.
    let (ok, out, err) = c
        .kubectl_stdin(
            &["apply", "--server-side", "--field-manager=other", "-f", "-"],
            Some(&deployment(4, "    app: web")),
        )
        .await;
    assert!(ok, "second applier: {out} {err}");
    let d = get_json(&c, &["deployment", "web", "--show-managed-fields"]).await;
    let m = managers(&d);
    assert!(m.contains(&("other".into(), "Apply".into())), "{m:?}");
    assert!(m.contains(&("kubectl".into(), "Apply".into())), "{m:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_from_kube_rs_and_to_custom_resources() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};

    let c = TestCluster::start().await;
    let client = c.client().await;

    // ConfigMap through kube-rs: created, then a key dropped is removed.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let pp = PatchParams::apply("my-operator");
    let cm = cms
        .patch(
            "settings",
            &pp,
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings"}, "data": {"a": "1", "b": "2"}})),
        )
        .await
        .expect("apply creates");
    let data = cm.data.clone().unwrap_or_default();
    assert_eq!(data.get("a").map(String::as_str), Some("1"));
    let mf = cm.metadata.managed_fields.clone().unwrap_or_default();
    assert_eq!(mf.len(), 1);
    assert_eq!(mf[0].manager.as_deref(), Some("my-operator"));
    assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
    let cm = cms
        .patch(
            "settings",
            &pp,
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings"}, "data": {"a": "3"}})),
        )
        .await
        .expect("re-apply");
    assert_eq!(
        cm.data.unwrap_or_default().into_iter().collect::<Vec<_>>(),
        [("a".to_string(), "3".to_string())]
    );

    // An update by another manager is recorded as an Update entry.
    let (ok, out, err) = c.kubectl(&["label", "configmap", "settings", "x=y"]).await;
    assert!(ok, "{out} {err}");
    let cm = cms.get("settings").await.expect("get");
    let ops: Vec<(Option<String>, Option<String>)> = cm
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|e| (e.manager, e.operation))
        .collect();
    assert!(
        ops.iter().any(|(m, o)| o.as_deref() == Some("Update")
            && m.as_deref().is_some_and(|m| m.starts_with("kubectl"))),
        "{ops:?}"
    );

    // Apply needs a field manager: upstream's 422.
    let resp = c
        .http(Auth::AdminCert)
        .patch(c.url("/api/v1/namespaces/default/configmaps/settings"))
        .header("Content-Type", "application/apply-patch+yaml")
        .body("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")
        .sent()
        .await;
    let st = expect_status(resp, 422, "Invalid").await;
    assert_eq!(
        st["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    // The configuration must name the object of the URL.
    let resp = c
        .http(Auth::AdminCert)
        .patch(c.url("/api/v1/namespaces/default/configmaps/settings?fieldManager=m"))
        .header("Content-Type", "application/apply-patch+yaml")
        .body("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
        .sent()
        .await;
    expect_status(resp, 400, "BadRequest").await;
    // A dry run changes nothing.
    let resp = c
        .http(Auth::AdminCert)
        .patch(c.url("/api/v1/namespaces/default/configmaps/dry?fieldManager=m&dryRun=All"))
        .header("Content-Type", "application/apply-patch+yaml")
        .body("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\ndata:\n  k: v\n")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 201);
    assert!(cms.get_opt("dry").await.expect("get").is_none());

    // A custom resource with a list-map.
    create_json(
        &c,
        &json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.ssa.example.com"},
            "spec": {"group": "ssa.example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer"},
                            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {"type": "object", "required": ["name"], "properties": {
                                    "name": {"type": "string"}, "port": {"type": "integer"}}}}
                        }}
                    }}}}]}
        }),
    )
    .await;
    wait_established(&c, "widgets.ssa.example.com").await;
    let widget = |size: u32, ports: &str| {
        format!(
            "apiVersion: ssa.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  size: {size}\n  ports:\n{ports}"
        )
    };
    let (ok, out, err) = c
        .kubectl_stdin(
            &["apply", "--server-side", "--validate=false", "-f", "-"],
            Some(&widget(1, "  - name: a\n    port: 1\n")),
        )
        .await;
    assert!(ok, "apply widget: {out} {err}");
    assert!(
        out.contains("widget.ssa.example.com/w serverside-applied"),
        "{out}"
    );

    // kube-rs applies another port as another manager: the lists merge.
    let ar = ApiResource {
        group: "ssa.example.com".into(),
        version: "v1".into(),
        api_version: "ssa.example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let w = widgets
        .patch(
            "w",
            &PatchParams::apply("other"),
            &Patch::Apply(json!({"apiVersion": "ssa.example.com/v1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": {"ports": [{"name": "b", "port": 2}]}})),
        )
        .await
        .expect("apply as other");
    assert_eq!(
        w.data["spec"]["ports"],
        json!([{"name": "a", "port": 1}, {"name": "b", "port": 2}])
    );
    // A conflicting value from kube-rs: 409 with the causes.
    let err = widgets
        .patch(
            "w",
            &PatchParams::apply("other"),
            &Patch::Apply(json!({"apiVersion": "ssa.example.com/v1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": {"size": 7, "ports": [{"name": "b", "port": 2}]}})),
        )
        .await
        .expect_err("conflict");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert_eq!(s.reason, "Conflict");
            assert_eq!(
                s.message,
                "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.size"
            );
        }
        other => panic!("unexpected error: {other:?}"),
    }
    let mut forced = PatchParams::apply("other");
    forced.force = true;
    let w = widgets
        .patch(
            "w",
            &forced,
            &Patch::Apply(json!({"apiVersion": "ssa.example.com/v1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": {"size": 7, "ports": [{"name": "b", "port": 2}]}})),
        )
        .await
        .expect("forced");
    assert_eq!(w.data["spec"]["size"], 7);

    // kubectl drops port a (and, having lost size, still applies its
    // old value with force): a goes, b stays.
    let (ok, out, err) = c
        .kubectl_stdin(
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--validate=false",
                "-f",
                "-",
            ],
            Some(&widget(1, "  - name: c\n    port: 3\n")),
        )
        .await;
    assert!(ok, "apply widget again: {out} {err}");
    let w = get_json(&c, &["widget", "w", "--show-managed-fields"]).await;
    assert_eq!(w["spec"]["size"], 1);
    assert_eq!(
        w["spec"]["ports"],
        json!([{"name": "b", "port": 2}, {"name": "c", "port": 3}])
    );
    let m = managers(&w);
    assert!(m.contains(&("kubectl".into(), "Apply".into())), "{m:?}");
    assert!(m.contains(&("other".into(), "Apply".into())), "{m:?}");
}
