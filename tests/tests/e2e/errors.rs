//! Bad input gets a clear Status with upstream's code and reason, and never
//! takes a process down.

use crate::harness::{expect_code, expect_json, expect_status, Auth, SendExt, TestCluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_statuses_match_upstream() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let cms = c.url("/api/v1/namespaces/default/configmaps");

    // 404 for a missing object, with details.
    let st = expect_status(
        http.get(format!("{cms}/nope")).sent().await,
        404,
        "NotFound",
    )
    .await;
    assert_eq!(st["message"], "configmaps \"nope\" not found");
    assert_eq!(st["details"]["name"], "nope");
    assert_eq!(st["details"]["kind"], "configmaps");

    // 409 AlreadyExists.
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"}}"#;
    let r = http
        .post(&cms)
        .header("content-type", "application/json")
        .body(body)
        .sent()
        .await;
    assert_eq!(r.status(), 201);
    let st = expect_status(
        http.post(&cms)
            .header("content-type", "application/json")
            .body(body)
            .sent()
            .await,
        409,
        "AlreadyExists",
    )
    .await;
    assert_eq!(st["message"], "configmaps \"dup\" already exists");

    // 409 Conflict on a stale resourceVersion.
    let stale = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","resourceVersion":"1"},"data":{"a":"b"}}"#;
    let st = expect_status(
        http.put(format!("{cms}/dup"))
            .header("content-type", "application/json")
            .body(stale)
            .sent()
            .await,
        409,
        "Conflict",
    )
    .await;
    assert!(
        st["message"]
            .as_str()
            .unwrap_or("")
            .contains("the object has been modified"),
        "{st}"
    );

    // 422 Invalid with causes for a name that is not DNS-1123.
    let bad = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}"#;
    let st = expect_status(
        http.post(&cms)
            .header("content-type", "application/json")
            .body(bad)
            .sent()
            .await,
        422,
        "Invalid",
    )
    .await;
    assert_eq!(st["details"]["kind"], "ConfigMap");
    assert_eq!(st["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(st["details"]["causes"][0]["reason"], "FieldValueInvalid");
    assert!(st["message"].as_str().unwrap_or("").starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"), "{st}");

    // 400 for malformed JSON, for deeply nested JSON, for a mismatched namespace.
    expect_status(
        http.post(&cms)
            .header("content-type", "application/json")
            .body("{not json")
            .sent()
            .await,
        400,
        "BadRequest",
    )
    .await;
    let deep = format!(
        "{{\"metadata\":{{\"name\":\"deep\"}},\"data\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    expect_status(
        http.post(&cms)
            .header("content-type", "application/json")
            .body(deep)
            .sent()
            .await,
        400,
        "BadRequest",
    )
    .await;
    let other_ns = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"kube-system"}}"#;
    expect_status(
        http.post(&cms)
            .header("content-type", "application/json")
            .body(other_ns)
            .sent()
            .await,
        400,
        "BadRequest",
    )
    .await;

    // 413 for a body over 3 MiB.
    let huge = format!(
        r#"{{"metadata":{{"name":"huge"}},"data":{{"a":"{}"}}}}"#,
        "x".repeat(3 * 1024 * 1024 + 10)
    );
    expect_status(
        http.post(&cms)
            .header("content-type", "application/json")
            .body(huge)
            .sent()
            .await,
        413,
        "RequestEntityTooLarge",
    )
    .await;

    // 415 for a body format nobody speaks; 406 for an Accept we cannot produce.
    expect_status(
        http.post(&cms)
            .header("content-type", "text/plain")
            .body("hi")
            .sent()
            .await,
        415,
        "UnsupportedMediaType",
    )
    .await;
    expect_status(
        http.get(format!("{cms}/dup"))
            .header("accept", "text/html")
            .sent()
            .await,
        406,
        "NotAcceptable",
    )
    .await;

    // 404 for unknown resources, in core, in a served group and in no group.
    expect_status(
        http.get(c.url("/api/v1/foos")).sent().await,
        404,
        "NotFound",
    )
    .await;
    expect_status(
        http.get(c.url("/apis/apiextensions.k8s.io/v1/foos"))
            .sent()
            .await,
        404,
        "NotFound",
    )
    .await;
    let st = expect_status(
        http.get(c.url("/apis/nope.example.com/v1/things"))
            .sent()
            .await,
        404,
        "NotFound",
    )
    .await;
    assert_eq!(
        st["message"],
        "the server could not find the requested resource"
    );

    // 405 for a verb a path does not serve.
    expect_status(
        http.post(c.url("/api/v1/configmaps"))
            .header("content-type", "application/json")
            .body(body)
            .sent()
            .await,
        405,
        "MethodNotAllowed",
    )
    .await;

    // 400 for a bad timeout, 400 for an unparsable label selector.
    expect_status(
        http.get(format!("{cms}?timeout=abc")).sent().await,
        400,
        "BadRequest",
    )
    .await;
    expect_status(
        http.get(format!("{cms}?labelSelector=a%20in%20("))
            .sent()
            .await,
        400,
        "BadRequest",
    )
    .await;

    // Every process is still alive and ready.
    for url in [
        c.cluster.aggregator_url(),
        c.cluster.kube_core_url(),
        c.cluster.extensions_url(),
    ] {
        let r = http.get(format!("{url}/readyz")).sent().await;
        assert_eq!(r.status(), 200, "{url}");
    }
}

/// A JSON Patch whose `copy` operations double the object is refused (422)
/// before it can exhaust memory, one with more than 10,000 operations is a
/// 413, and the tier keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_patch_bombs_are_refused() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps");
    let r = http
        .post(&url)
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bomb"}, "data": {"seed": "x".repeat(1024)}}))
        .sent()
        .await;
    assert_eq!(r.status().as_u16(), 201);
    let mut ops =
        vec![serde_json::json!({"op": "add", "path": "/metadata/annotations", "value": {}})];
    ops.push(
        serde_json::json!({"op": "copy", "from": "/data/seed", "path": "/metadata/annotations/a0"}),
    );
    for i in 1..64 {
        // Each copy doubles what the previous one wrote.
        ops.push(
            serde_json::json!({"op": "copy", "from": "/metadata/annotations",
            "path": format!("/metadata/annotations/a{i}")}),
        );
    }
    let patch = |body: String| {
        http.patch(format!("{url}/bomb"))
            .header("Content-Type", "application/json-patch+json")
            .body(body)
            .send()
    };
    let r = patch(serde_json::to_string(&ops).expect("json"))
        .await
        .expect("patch");
    let status = expect_status(r, 422, "Invalid").await;
    assert!(
        status["message"]
            .as_str()
            .unwrap_or("")
            .contains("more than 3145728 bytes"),
        "{status}"
    );
    let many: Vec<_> = (0..10_001)
        .map(|_| serde_json::json!({"op": "test", "path": "/kind", "value": "ConfigMap"}))
        .collect();
    let r = patch(serde_json::to_string(&many).expect("json"))
        .await
        .expect("patch");
    let status = expect_status(r, 413, "RequestEntityTooLarge").await;
    assert_eq!(
        status["message"],
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
    let r = http.get(format!("{url}/bomb")).sent().await;
    assert_eq!(r.status().as_u16(), 200);
}

/// Issue 16: list merges cost the lists' lengths, not their product. A
/// strategic merge patch adding 10,000 finalizers to 10,000 (half of them
/// already there), one adding 10,000 keyed `ownerReferences` and one
/// merging 5,000 into them, then a server-side apply of 5,000 keyed items
/// into the 7,500 left, each give the merged result; an object past etcd's
/// limit is a 413;
/// the time each took is printed (the figures of the README).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_item_list_patches_merge() {
    use serde_json::{json, Value};
    const N: usize = 10_000;
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps");
    let finalizers: Vec<String> = (0..N).map(|i| format!("example.com/f{i}")).collect();
    let r = http
        .post(&url)
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "long-lists", "finalizers": finalizers}}))
        .sent()
        .await;
    expect_code(r, 201).await;
    let mut figures = Vec::new();
    let patch = |body: Value, ctype: &'static str| {
        http.patch(format!("{url}/long-lists"))
            .header("Content-Type", ctype)
            .body(body.to_string())
            .send()
    };
    // A primitive union: N/2 present, N/2 new; N/4 removed by directive.
    let more: Vec<String> = (N / 2..N + N / 2)
        .map(|i| format!("example.com/f{i}"))
        .collect();
    let gone: Vec<String> = (0..N / 4).map(|i| format!("example.com/f{i}")).collect();
    let start = std::time::Instant::now();
    let r = patch(
        json!({"metadata": {"finalizers": more, "$deleteFromPrimitiveList/finalizers": gone}}),
        "application/strategic-merge-patch+json",
    )
    .await
    .expect("patch finalizers");
    figures.push(format!("finalizers SMP {:?}", start.elapsed()));
    let cm = expect_json(r, 200).await;
    let fs = cm["metadata"]["finalizers"].as_array().expect("finalizers");
    assert_eq!(fs.len(), N + N / 2 - N / 4);
    assert_eq!(fs[0], format!("example.com/f{}", N / 4));
    // Cleared, to leave room in etcd (1.5 MiB an object) for what follows.
    let r = patch(
        json!({"metadata": {"finalizers": null}}),
        "application/merge-patch+json",
    )
    .await
    .expect("clear");
    assert_eq!(r.status().as_u16(), 200);
    // Keyed items (ownerReferences merge on uid): N new, then N/2 of them
    // patched and N/4 deleted.
    let owner = |i: usize, name: &str| json!({"apiVersion": "v1", "kind": "C", "name": name, "uid": format!("u{i}")});
    let refs: Vec<Value> = (0..N).map(|i| owner(i, "a")).collect();
    let start = std::time::Instant::now();
    let r = patch(
        json!({"metadata": {"ownerReferences": refs}}),
        "application/strategic-merge-patch+json",
    )
    .await
    .expect("patch owners");
    figures.push(format!("ownerReferences add SMP {:?}", start.elapsed()));
    expect_code(r, 200).await;
    let edits: Vec<Value> = (N / 2..N)
        .map(|i| {
            if i % 2 == 0 {
                json!({"uid": format!("u{i}"), "$patch": "delete"})
            } else {
                owner(i, "b")
            }
        })
        .collect();
    let start = std::time::Instant::now();
    let r = patch(
        json!({"metadata": {"ownerReferences": edits}}),
        "application/strategic-merge-patch+json",
    )
    .await
    .expect("patch owners");
    figures.push(format!("ownerReferences merge SMP {:?}", start.elapsed()));
    let cm = expect_json(r, 200).await;
    let owners = cm["metadata"]["ownerReferences"]
        .as_array()
        .expect("owners");
    assert_eq!(owners.len(), N - N / 4);
    assert_eq!(owners[N / 2]["name"], "b");
    assert_eq!(owners[0]["name"], "a");
    // Server-side apply of the same N keyed items by another manager.
    // (Half of them: a second manager's entry for all N would take the
    // object past etcd's limit.)
    let applied: Vec<Value> = (0..N / 2).map(|i| owner(i, "c")).collect();
    let start = std::time::Instant::now();
    let r = http
        .patch(format!("{url}/long-lists?fieldManager=bulk&force=true"))
        .header("Content-Type", "application/apply-patch+yaml")
        .body(
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "long-lists", "ownerReferences": applied}})
            .to_string(),
        )
        .sent()
        .await;
    figures.push(format!("ownerReferences apply {:?}", start.elapsed()));
    let cm = expect_json(r, 200).await;
    let owners = cm["metadata"]["ownerReferences"]
        .as_array()
        .expect("owners");
    assert_eq!(owners.len(), N - N / 4);
    assert!(owners[..N / 2].iter().all(|o| o["name"] == "c"));
    assert_eq!(owners[N / 2]["name"], "b");
    eprintln!("10,000-item list patches: {}", figures.join(", "));
    // More than etcd stores in one object: 413, not a 5xx (retrying cannot
    // help), and the object is as it was.
    let huge: Vec<Value> = (N..3 * N).map(|i| owner(i, &"n".repeat(100))).collect();
    let r = patch(
        json!({"metadata": {"ownerReferences": huge}}),
        "application/strategic-merge-patch+json",
    )
    .await
    .expect("patch");
    let status = expect_status(r, 413, "RequestEntityTooLarge").await;
    assert_eq!(
        status["message"],
        "Request entity too large: etcdserver: request is too large"
    );
    let r = http.get(format!("{url}/long-lists")).sent().await;
    let cm: Value = r.json().await.expect("json");
    assert_eq!(
        cm["metadata"]["ownerReferences"].as_array().map(Vec::len),
        Some(N - N / 4)
    );
}
