//! LIST and WATCH options as upstream takes them: the field selectors it
//! supports per kind, as controllers and kubelets use them (a kubelet lists
//! Services with `spec.clusterIP!=None`; unset fields read as Go's zero
//! values), and the option combinations it rejects.

use crate::harness::{expect_status, Auth, SendExt, TestCluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_specific_field_selectors() {
    let c = TestCluster::start().await;
    c.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"])
        .await;
    c.kubectl_ok(&[
        "create",
        "service",
        "clusterip",
        "headless",
        "--clusterip=None",
    ])
    .await;
    let names = |out: String| {
        let mut v: Vec<String> = out.split_whitespace().map(str::to_string).collect();
        v.sort();
        v
    };

    // The kubelet's Service informer.
    let out = c
        .kubectl_ok(&[
            "get",
            "services",
            "-A",
            "--field-selector",
            "spec.clusterIP!=None",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .await;
    assert_eq!(names(out), ["kubernetes", "web"]);
    let out = c
        .kubectl_ok(&[
            "get",
            "services",
            "--field-selector",
            "spec.type=ClusterIP,spec.clusterIP=None",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .await;
    assert_eq!(names(out), ["headless"]);

    // Unset fields select as their zero values.
    c.kubectl_ok(&["create", "deployment", "d", "--image=nginx", "--replicas=0"])
        .await;
    c.kubectl_ok(&["create", "job", "j", "--image=busybox"])
        .await;
    let out = c
        .kubectl_ok(&[
            "get",
            "jobs",
            "--field-selector",
            "status.successful=0",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .await;
    assert_eq!(names(out), ["j"]);
    let out = c
        .kubectl_ok(&[
            "get",
            "namespaces",
            "--field-selector",
            "name=default",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .await;
    assert_eq!(names(out), ["default"]);

    // A field the kind does not select on is upstream's 400.
    let (ok, _, err) = c
        .kubectl(&["get", "services", "--field-selector", "spec.ports=1"])
        .await;
    assert!(!ok);
    assert!(
        err.contains("field label not supported: spec.ports"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_option_combinations_are_422_with_their_field() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let cms = c.url("/api/v1/namespaces/default/configmaps");
    let cases = [
        ("?resourceVersionMatch=NotOlderThan",
         "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
        ("?resourceVersion=1&resourceVersionMatch=Newest",
         "resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""),
        ("?resourceVersion=0&resourceVersionMatch=Exact",
         "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""),
        ("?sendInitialEvents=true",
         "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
        ("?watch=true&resourceVersionMatch=NotOlderThan",
         "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
    ];
    for (query, message) in cases {
        let resp = http.get(format!("{cms}{query}")).sent().await;
        let status = expect_status(resp, 422, "Invalid").await;
        let text = status["message"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("ListOptions.meta.k8s.io \"\" is invalid: ") && text.contains(message),
            "{query}: {status}"
        );
        let field = status["details"]["causes"][0]["field"]
            .as_str()
            .unwrap_or_default();
        assert!(
            message.starts_with(field) && !field.is_empty(),
            "{query}: {status}"
        );
    }
}

/// A continue token whose revision etcd has compacted is 410 Expired with an
/// inconsistent continue token in the Status's metadata; that token goes on
/// from the same key at the latest revision (upstream's chunking
/// conformance test).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compacted_continue_token_offers_an_inconsistent_continue() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps");
    for i in 0..6 {
        let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i}")}});
        let resp = http.post(&url).json(&cm).sent().await;
        assert_eq!(resp.status(), 201);
    }
    let first: serde_json::Value = http.get(format!("{url}?limit=2")).fetch_json().await;
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    let first_rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // A write, then compaction past the first page's revision.
    let cm =
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-9"}});
    let resp = http.post(&url).json(&cm).sent().await;
    let rv = resp.json::<serde_json::Value>().await.expect("json")["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    let compacted = c
        .cluster
        .etcd_http_client()
        .post(format!("{}/v3/kv/compaction", c.cluster.etcd_url()))
        .body(format!(r#"{{"revision":"{rv}","physical":true}}"#))
        .sent()
        .await;
    assert!(compacted.status().is_success());

    let resp = http
        .get(format!("{url}?limit=2&continue={token}"))
        .sent()
        .await;
    let status = expect_status(resp, 410, "Expired").await;
    let inconsistent = status["metadata"]["continue"]
        .as_str()
        .expect("a token in the Status")
        .to_string();
    assert!(
        status["message"]
            .as_str()
            .unwrap_or("")
            .contains("inconsistent list"),
        "{status}"
    );
    let second: serde_json::Value = http
        .get(format!("{url}?limit=2&continue={inconsistent}"))
        .fetch_json()
        .await;
    let names: Vec<&str> = second["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["metadata"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["cm-2", "cm-3"], "{second}");
    assert_ne!(second["metadata"]["resourceVersion"], first_rv.as_str());
}
