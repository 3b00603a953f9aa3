//! Built-in kinds: OpenAPI-driven validation and explain, and the
//! subresources (scale, binding, eviction, approval, kubelet ones).

use crate::builtins::DEPLOYMENT;
use crate::harness::{SendExt, TestCluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_and_field_validation_use_the_openapi_documents() {
    let c = TestCluster::start().await;

    let out = c
        .kubectl_ok(&["explain", "deployment.spec.strategy.rollingUpdate"])
        .await;
    for want in [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "maxSurge",
        "maxUnavailable",
        "The maximum number of pods that can be scheduled above the desired number",
    ] {
        assert!(out.contains(want), "missing {want} in:\n{out}");
    }
    let out = c
        .kubectl_ok(&["explain", "pods.spec.containers.ports"])
        .await;
    assert!(
        out.contains("containerPort") && out.contains("<integer>"),
        "{out}"
    );

    // kubectl's default validation (strict) now uses the server: an unknown
    // field fails with upstream's message.
    let bad = DEPLOYMENT.replace("\"replicas\": 2,", "\"replicas\": 2, \"replicaz\": 3,");
    let (ok, _, err) = c.kubectl_stdin(&["apply", "-f", "-"], Some(&bad)).await;
    assert!(!ok);
    assert!(
        err.contains(
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replicaz\""
        ),
        "{err}"
    );
    // With --validate=warn it is created, and kubectl prints the warning.
    let (ok, _, err) = c
        .kubectl_stdin(&["apply", "--validate=warn", "-f", "-"], Some(&bad))
        .await;
    assert!(ok, "{err}");
    assert!(
        err.contains("Warning: unknown field \"spec.replicaz\""),
        "{err}"
    );
    // A valid apply with default validation works and a second apply is a no-op patch.
    c.kubectl_ok(&["delete", "deployment", "web"]).await;
    let out = c
        .kubectl_stdin(&["apply", "-f", "-"], Some(DEPLOYMENT))
        .await;
    assert!(out.0, "{}", out.2);
    let out = c
        .kubectl_stdin(&["apply", "-f", "-"], Some(DEPLOYMENT))
        .await;
    assert!(out.0 && out.1.contains("unchanged"), "{out:?}");

    // A changed apply is a strategic merge patch: containers merge by name
    // (the port stays), no patch directive is stored.
    let changed = DEPLOYMENT.replace("nginx:1.27", "nginx:1.28");
    let out = c.kubectl_stdin(&["apply", "-f", "-"], Some(&changed)).await;
    assert!(out.0 && out.1.contains("configured"), "{out:?}");
    let json = c
        .kubectl_ok(&["get", "deployment", "web", "-o", "json"])
        .await;
    assert!(!json.contains("$setElementOrder"), "{json}");
    let d: serde_json::Value = serde_json::from_str(&json).expect("json");
    let containers = &d["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "nginx:1.28", "{containers}");
    assert_eq!(
        containers[0]["ports"][0]["containerPort"], 80,
        "{containers}"
    );
    // kubectl patch (strategic by default) adds a container by name.
    c.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}"#,
    ])
    .await;
    let names = c
        .kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}",
        ])
        .await;
    assert_eq!(names, "nginx sidecar");

    // /openapi/v3 lists group versions with hashes; the hashed URL is immutable.
    let http = c.http(crate::harness::Auth::AdminCert);
    let root: serde_json::Value = http.get(c.url("/openapi/v3")).fetch_json().await;
    let url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .expect("apps/v1 listed")
        .to_string();
    assert!(root["paths"]["api/v1"].is_object(), "{root}");
    let r = http.get(c.url(&url)).sent().await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "public, immutable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_scale_uses_the_scale_subresource() {
    let c = TestCluster::start().await;
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(DEPLOYMENT))
        .await;
    assert!(ok, "{err}");
    let out = c
        .kubectl_ok(&["scale", "deployment", "web", "--replicas=5"])
        .await;
    assert!(out.contains("deployment.apps/web scaled"), "{out}");
    let r = c
        .kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.generation}",
        ])
        .await;
    assert_eq!(r, "5 2");
    // A stale precondition is refused.
    let (ok, _, err) = c
        .kubectl(&[
            "scale",
            "deployment",
            "web",
            "--current-replicas=3",
            "--replicas=1",
        ])
        .await;
    assert!(!ok);
    assert!(err.contains("Expected replicas to be 3, was 5"), "{err}");

    // The Scale view, as upstream serves it.
    let http = c.http(crate::harness::Auth::AdminCert);
    let s: serde_json::Value = http
        .get(c.url("/apis/apps/v1/namespaces/default/deployments/web/scale"))
        .fetch_json()
        .await;
    assert_eq!(s["kind"], "Scale");
    assert_eq!(s["apiVersion"], "autoscaling/v1");
    assert_eq!(s["spec"]["replicas"], 5);
    assert_eq!(s["status"]["selector"], "app=web");
    // Negative replicas: 422.
    let r = http
        .patch(c.url("/apis/apps/v1/namespaces/default/deployments/web/scale"))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"spec":{"replicas":-1}}"#)
        .sent()
        .await;
    let v = crate::harness::expect_status(r, 422, "Invalid").await;
    assert_eq!(v["details"]["causes"][0]["field"], "spec.replicas", "{v}");
    // Discovery names the subresource's kind.
    let list: serde_json::Value = http.get(c.url("/apis/apps/v1")).fetch_json().await;
    let scale = list["resources"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["name"] == "deployments/scale"))
        .cloned()
        .expect("deployments/scale listed");
    assert_eq!(scale["group"], "autoscaling");
    assert_eq!(scale["version"], "v1");
    assert_eq!(scale["kind"], "Scale");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_eviction_approval_and_kubelet_subresources() {
    let c = TestCluster::start().await;
    let http = c.http(crate::harness::Auth::AdminCert);
    let pod = |name: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    };
    for n in ["a", "b"] {
        let r = http
            .post(c.url("/api/v1/namespaces/default/pods"))
            .json(&pod(n))
            .sent()
            .await;
        assert_eq!(r.status(), 201);
    }
    // pods/binding, as kube-scheduler binds.
    let binding = serde_json::json!({"apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "a"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}});
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/a/binding"))
        .json(&binding)
        .sent()
        .await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    let node = c
        .kubectl_ok(&[
            "get",
            "pod",
            "a",
            "-o",
            "jsonpath={.spec.nodeName} {.status.conditions[0].type}",
        ])
        .await;
    assert_eq!(node, "node-1 PodScheduled");
    // Binding again: 409.
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/a/binding"))
        .json(&binding)
        .sent()
        .await;
    let v = crate::harness::expect_status(r, 409, "Conflict").await;
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("pod a is already assigned to node \"node-1\""),
        "{v}"
    );
    // The bindings resource.
    let r = http
        .post(c.url("/api/v1/namespaces/default/bindings"))
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "b"}, "target": {"kind": "Node", "name": "node-2"}}))
        .sent()
        .await;
    assert_eq!(r.status(), 201);
    assert_eq!(
        c.kubectl_ok(&["get", "pod", "b", "-o", "jsonpath={.spec.nodeName}"])
            .await,
        "node-2"
    );

    // Kubelet subresources answer with a clear error.
    let (ok, _, err) = c.kubectl(&["logs", "a"]).await;
    assert!(!ok);
    assert!(err.contains("no connection to kubelets"), "{err}");

    // A PodDisruptionBudget protects a running pod: 429 until its status
    // allows a disruption, which the eviction then takes.
    let r = http
        .patch(c.url("/api/v1/namespaces/default/pods/b/status"))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"status":{"phase":"Running"}}"#)
        .sent()
        .await;
    assert_eq!(r.status(), 200);
    let pdb = r#"{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "default"},
      "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "b"}}}}"#;
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(pdb))
        .await;
    assert!(ok, "{err}");
    let evict = serde_json::json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "b"}, "deleteOptions": {"gracePeriodSeconds": 0}});
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/b/eviction"))
        .json(&evict)
        .sent()
        .await;
    let v = crate::harness::expect_status(r, 429, "TooManyRequests").await;
    assert_eq!(
        v["message"], "Cannot evict pod as it would violate the pod's disruption budget.",
        "{v}"
    );
    assert_eq!(
        v["details"]["causes"][0]["reason"], "DisruptionBudget",
        "{v}"
    );
    let r = http
        .patch(c.url("/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb/status"))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}}"#)
        .sent().await;
    assert_eq!(r.status(), 200);

    // pods/eviction deletes the pod (gracefully, as it is bound).
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/b/eviction"))
        .json(
            &serde_json::json!({"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": "b"}, "deleteOptions": {"gracePeriodSeconds": 0}}),
        )
        .sent()
        .await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    let (ok, _, err) = c.kubectl(&["get", "pod", "b"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    let left = c
        .kubectl_ok(&[
            "get",
            "pdb",
            "pdb",
            "-o",
            "jsonpath={.status.disruptionsAllowed}",
        ])
        .await;
    assert_eq!(left, "0");

    // CSR approval: kubectl certificate approve.
    let csr = r#"{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
      "metadata": {"name": "req"},
      "spec": {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K", "signerName": "example.com/signer", "usages": ["client auth"]}}"#;
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(csr))
        .await;
    assert!(ok, "{err}");
    let t = c.kubectl_ok(&["get", "csr", "req"]).await;
    assert!(t.contains("Pending"), "{t}");
    // (kubectl certificate approve sends protobuf, not decoded yet: send
    // the same update as JSON.)
    let mut obj: serde_json::Value = http
        .get(c.url("/apis/certificates.k8s.io/v1/certificatesigningrequests/req"))
        .fetch_json()
        .await;
    obj["status"]["conditions"] = serde_json::json!([{"type": "Approved", "status": "True",
        "reason": "KubectlApprove", "message": "This CSR was approved by kubectl certificate approve."}]);
    obj["spec"]["signerName"] = serde_json::json!("ignored.example.com/changed");
    let r = http
        .put(c.url("/apis/certificates.k8s.io/v1/certificatesigningrequests/req/approval"))
        .json(&obj)
        .sent()
        .await;
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap_or_default());
    let signer = c
        .kubectl_ok(&["get", "csr", "req", "-o", "jsonpath={.spec.signerName}"])
        .await;
    assert_eq!(
        signer, "example.com/signer",
        "approval changes only conditions"
    );
    let t = c.kubectl_ok(&["get", "csr", "req"]).await;
    assert!(t.contains("Approved"), "{t}");
}

/// Repeated JSON keys, as upstream's strict decoder reports them: 400 under
/// `fieldValidation=Strict`, interleaved with unknown fields in document
/// order; a `Warning` each under the default `Warn`, the last value kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_json_fields_under_strict_and_warn() {
    let c = crate::harness::TestCluster::start().await;
    let http = c.http(crate::harness::Auth::AdminCert);
    let url = c.url("/api/v1/namespaces/default/configmaps");
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup","unknownMeta":1},"data":{"a":"1","a":"2"}}"#;
    let resp = http
        .post(format!("{url}?fieldValidation=Strict"))
        .header("content-type", "application/json")
        .body(body)
        .sent()
        .await;
    let status = crate::harness::expect_status(resp, 400, "BadRequest").await;
    assert_eq!(
        status["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: \
         duplicate field \"metadata.name\", unknown field \"metadata.unknownMeta\", duplicate field \"data.a\"",
        "{status}"
    );

    let resp = http
        .post(&url)
        .header("content-type", "application/json")
        .body(body)
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 201);
    let warnings: Vec<String> = resp
        .headers()
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect();
    assert_eq!(
        warnings,
        [
            "299 - \"duplicate field \\\"metadata.name\\\"\"",
            "299 - \"unknown field \\\"metadata.unknownMeta\\\"\"",
            "299 - \"duplicate field \\\"data.a\\\"\"",
        ]
    );
    let created: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(created["data"]["a"], "2");
    assert!(
        created["metadata"].get("unknownMeta").is_none(),
        "{created}"
    );
}

/// `/status` writes change metadata as each kind's upstream status strategy
/// allows: a CronJob keeps the annotations sent with its status (upstream's
/// CronJob API conformance test), a pod does not (ResetObjectMetaForStatus),
/// a Deployment keeps its old labels. A Service port whose targetPort is the
/// zero value (as protobuf bodies carry it) defaults to the port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_writes_keep_the_metadata_each_kind_allows() {
    let c = TestCluster::start().await;
    c.kubectl_ok(&[
        "create",
        "cronjob",
        "cj",
        "--image=busybox",
        "--schedule=*/5 * * * *",
    ])
    .await;
    let patch = r#"{"metadata":{"annotations":{"patchedstatus":"true"}},"status":{"lastScheduleTime":"2026-12-04T18:00:00Z"}}"#;
    let out = c
        .kubectl_ok(&[
            "patch",
            "cronjob",
            "cj",
            "--subresource=status",
            "--type=merge",
            "-p",
            patch,
            "-o",
            "json",
        ])
        .await;
    let cj: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        cj["metadata"]["annotations"]["patchedstatus"], "true",
        "{cj}"
    );
    assert_eq!(
        cj["status"]["lastScheduleTime"], "2026-12-04T18:00:00Z",
        "{cj}"
    );

    c.kubectl_stdin(
        &["create", "--validate=false", "-f", "-"],
        Some(crate::builtins::DEPLOYMENT),
    )
    .await;
    let patch = r#"{"metadata":{"labels":{"x":"y"},"annotations":{"a":"b"}},"status":{"observedGeneration":1}}"#;
    let out = c
        .kubectl_ok(&[
            "patch",
            "deployment",
            "web",
            "--subresource=status",
            "--type=merge",
            "-p",
            patch,
            "-o",
            "json",
        ])
        .await;
    let d: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(d["metadata"]["annotations"]["a"], "b", "{d}");
    assert!(d["metadata"]["labels"].get("x").is_none(), "{d}");

    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"pause"}]}}"#;
    c.kubectl_stdin(&["create", "-f", "-"], Some(pod)).await;
    let out = c
        .kubectl_ok(&[
            "patch",
            "pod",
            "p",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"metadata":{"annotations":{"a":"b"}},"status":{"message":"m"}}"#,
            "-o",
            "json",
        ])
        .await;
    let p: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(
        p["metadata"]
            .get("annotations")
            .is_none_or(|a| a.get("a").is_none()),
        "{p}"
    );
    assert_eq!(p["status"]["message"], "m");

    let svc = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80,"targetPort":0}]}}"#;
    c.kubectl_stdin(&["create", "-f", "-"], Some(svc)).await;
    // A Service keeps the annotations of its status writes (upstream's
    // service status lifecycle conformance test).
    let out = c
        .kubectl_ok(&[
            "patch",
            "service",
            "s",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"metadata":{"annotations":{"patchedstatus":"true"}},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.1"}]}}}"#,
            "-o",
            "json",
        ])
        .await;
    let s: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(s["metadata"]["annotations"]["patchedstatus"], "true", "{s}");
    let tp = c
        .kubectl_ok(&[
            "get",
            "service",
            "s",
            "-o",
            "jsonpath={.spec.ports[0].targetPort}",
        ])
        .await;
    assert_eq!(tp.trim(), "80");
}

/// Discovery lists what v1.36 lists for the core kinds (checked against an
/// upstream v1.36.2 kube-apiserver): no deletecollection of namespaces,
/// `nodes/proxy`, `services/proxy`, `pods/resize`, and the proxy verbs; a
/// resize changes only container resources.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_discovery_matches_v1_36_and_pods_resize() {
    let c = TestCluster::start().await;
    let out = c.kubectl_ok(&["get", "--raw", "/api/v1"]).await;
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let find = |name: &str| {
        v["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or(serde_json::Value::Null)
    };
    let verbs = |name: &str| -> Vec<String> {
        find(name)["verbs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    assert!(!verbs("namespaces").contains(&"deletecollection".to_string()));
    for (sub, kind) in [
        ("nodes/proxy", "NodeProxyOptions"),
        ("services/proxy", "ServiceProxyOptions"),
        ("pods/resize", "Pod"),
    ] {
        assert_eq!(find(sub)["kind"], kind, "{sub}: {}", find(sub));
    }
    assert_eq!(
        verbs("pods/proxy"),
        vec!["create", "delete", "get", "patch", "update"]
    );
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "r", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}]}});
    let (ok, out, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&pod.to_string()))
        .await;
    assert!(ok, "{out} {err}");
    let patch = r#"{"spec":{"containers":[{"name":"app","image":"other:1","resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"200m"}}}]}}"#;
    let (ok, _, err) = c
        .kubectl(&[
            "patch",
            "pod",
            "r",
            "-n",
            "default",
            "--subresource=resize",
            "-p",
            patch,
        ])
        .await;
    assert!(ok, "{err}");
    let got: serde_json::Value = serde_json::from_str(
        &c.kubectl_ok(&["get", "pod", "r", "-n", "default", "-o", "json"])
            .await,
    )
    .expect("json");
    let container = &got["spec"]["containers"][0];
    assert_eq!(
        container["resources"]["requests"]["cpu"], "150m",
        "{container}"
    );
    assert_eq!(
        container["image"], "registry.k8s.io/pause:3.10",
        "only resources change"
    );
}
