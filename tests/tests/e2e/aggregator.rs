//! The aggregator with an external API server: the example metrics server
//! (`example-metrics-server`, built with the workspace) started on a free
//! port and registered through an APIService, a Service and an EndpointSlice
//! pointing at 127.0.0.1, as an add-on author would.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use crate::addon::{free_port, manifests, start_addon, NODE};

pub(crate) const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/// The freshness of `metrics.k8s.io/v1beta1` in aggregated discovery, and
/// the names of its resources.
async fn aggregated_metrics(client: &reqwest::Client, url: &str) -> Option<(String, Vec<String>)> {
    let resp = client.get(url).header("Accept", AGGREGATED).sent().await;
    assert_eq!(
        resp.headers()["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let doc: serde_json::Value = resp.json().await.expect("json");
    let group = doc["items"]
        .as_array()?
        .iter()
        .find(|g| g["metadata"]["name"] == "metrics.k8s.io")?;
    let v = &group["versions"][0];
    let names = v["resources"]
        .as_array()?
        .iter()
        .filter_map(|r| r["resource"].as_str().map(str::to_string))
        .collect();
    Some((v["freshness"].as_str()?.to_string(), names))
}

async fn apiservice_line(tc: &TestCluster) -> String {
    let (_, out, _) = tc
        .kubectl(&[
            "get",
            "apiservice",
            "v1beta1.metrics.k8s.io",
            "--no-headers",
        ])
        .await;
    out
}

#[tokio::test]
async fn local_apiservices_and_validation() {
    let tc = TestCluster::start().await;
    // Readiness waits for auto-registration (`autoregister-completion`).
    let names = tc.kubectl_ok(&["get", "apiservices", "-o", "name"]).await;
    for want in ["v1.", "v1.apiextensions.k8s.io", "v1.discovery.k8s.io"] {
        assert!(
            names
                .lines()
                .any(|l| l == format!("apiservice.apiregistration.k8s.io/{want}")),
            "{want} missing right after start:\n{names}"
        );
    }
    let ready = tc.kubectl_ok(&["get", "--raw", "/readyz?verbose"]).await;
    assert!(ready.contains("[+]autoregister-completion ok"), "{ready}");
    let ok = eventually(Duration::from_secs(30), || async {
        let (_, out, _) = tc.kubectl(&["get", "apiservices"]).await;
        out.lines()
            .any(|l| l.starts_with("v1. ") && l.contains("Local") && l.contains("True"))
            && out.contains("v1.apiregistration.k8s.io")
            && out.contains("v1.apiextensions.k8s.io")
    })
    .await;
    let (_, out, _) = tc.kubectl(&["get", "apiservices"]).await;
    assert!(ok, "local APIServices not registered/available:\n{out}");
    assert!(
        out.starts_with("NAME") && out.contains("SERVICE") && out.contains("AVAILABLE"),
        "{out}"
    );
    let bad = "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1.wrong.io\nspec:\n  group: other.io\n  version: v1\n  groupPriorityMinimum: 30000\n  versionPriority: 10\n  insecureSkipTLSVerify: true\n";
    let (ok, _, err) = tc
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(bad))
        .await;
    assert!(!ok);
    assert!(err.contains("must be v1.other.io"), "{err}");
    assert!(
        err.contains("must be positive and less than 20000"),
        "{err}"
    );
    assert!(
        err.contains("local APIServices may not have insecureSkipTLSVerify"),
        "{err}"
    );
}

#[tokio::test]
async fn external_metrics_server_through_the_aggregator() {
    let tc = TestCluster::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut addon = start_addon(&tc, port, dir.path()).await;
    let ca = std::fs::read(&tc.cluster.pki().ca_cert).expect("ca");
    let (ok, _, err) = tc
        .kubectl_stdin(
            &["apply", "--validate=false", "-f", "-"],
            Some(&manifests(&ca, port)),
        )
        .await;
    assert!(ok, "{err}");
    let ok = eventually(Duration::from_secs(30), || async {
        apiservice_line(&tc).await.contains("True")
    })
    .await;
    assert!(ok, "not available: {}", apiservice_line(&tc).await);
    assert!(apiservice_line(&tc)
        .await
        .contains("kube-system/metrics-server"));

    // Data through the aggregator, as the admin.
    let ok = eventually(Duration::from_secs(20), || async {
        let (_, out, _) = tc
            .kubectl(&["get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"])
            .await;
        out.contains("NodeMetricsList") && out.contains(NODE)
    })
    .await;
    assert!(ok, "no node metrics through the aggregator");
    let top = tc.kubectl_ok(&["top", "node"]).await;
    assert!(top.contains(NODE) && top.contains("CPU"), "{top}");
    let resources = tc.kubectl_ok(&["api-resources"]).await;
    assert!(
        resources
            .lines()
            .any(|l| l.contains("metrics.k8s.io/v1beta1") && l.contains("NodeMetrics")),
        "{resources}"
    );
    let admin = tc.http(Auth::AdminCert);
    let (freshness, names) = aggregated_metrics(&admin, &tc.url("/apis"))
        .await
        .expect("metrics.k8s.io in aggregated discovery");
    assert_eq!(freshness, "Current");
    assert_eq!(names, vec!["nodes", "pods"]);
    // `/openapi/v2` merged: the built-in definitions and the add-on's.
    let merged = eventually(Duration::from_secs(20), || async {
        let Ok(r) = admin.get(tc.url("/openapi/v2")).send().await else {
            return false;
        };
        let doc: serde_json::Value = r.json().await.unwrap_or_default();
        doc["definitions"]["io.k8s.api.core.v1.Pod"].is_object()
            && doc["definitions"]["io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics"].is_object()
            && doc["paths"]["/apis/metrics.k8s.io/v1beta1/nodes"].is_object()
    })
    .await;
    assert!(merged, "/openapi/v2 does not merge the add-on's document");
    let explain = tc.kubectl_ok(&["explain", "pods.spec.containers"]).await;
    assert!(explain.contains("FIELDS"), "{explain}");
    // Its OpenAPI document, proxied from the add-on.
    let doc: serde_json::Value = admin
        .get(tc.url("/openapi/v3/apis/metrics.k8s.io/v1beta1"))
        .fetch_json()
        .await;
    assert!(
        doc["components"]["schemas"]["io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics"]
            .is_object(),
        "{doc}"
    );
    // ETag and 304.
    let resp = admin
        .get(tc.url("/apis"))
        .header("Accept", AGGREGATED)
        .sent()
        .await;
    let etag = resp.headers()["etag"].clone();
    let resp = admin
        .get(tc.url("/apis"))
        .header("Accept", AGGREGATED)
        .header("If-None-Match", etag)
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 304);
    // The add-on saw the caller's identity.
    let log = std::fs::read_to_string(&addon.log).expect("log");
    assert!(
        log.contains("kubernetes-admin") && log.contains("system:masters"),
        "{log}"
    );

    // Forged identity headers without the front-proxy certificate: rejected.
    let direct = tc.http(Auth::None);
    let resp = direct
        .get(format!(
            "https://127.0.0.1:{port}/apis/metrics.k8s.io/v1beta1/nodes"
        ))
        .header("X-Remote-User", "mallory")
        .header("X-Remote-Group", "system:masters")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 401);

    // Authorization, at both ends. bob may not read metrics: the aggregator
    // answers 403 itself (a SubjectAccessReview to kube-core)...
    let (ok, _, err) = tc
        .kubectl(&[
            "get",
            "--raw",
            "/apis/metrics.k8s.io/v1beta1/nodes",
            "--as",
            "bob",
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains("forbidden: User \"bob\" cannot list resource \"nodes\" in API group \"metrics.k8s.io\" at the cluster scope"),
        "{err}"
    );
    // ...and so does the add-on when the front proxy asks for bob (its own
    // SubjectAccessReview, sent with its ServiceAccount token).
    let proxy = tc.http(Auth::FrontProxyCert);
    let as_bob = |c: &reqwest::Client| {
        c.get(format!(
            "https://127.0.0.1:{port}/apis/metrics.k8s.io/v1beta1/nodes"
        ))
        .header("X-Remote-User", "bob")
        .header("X-Remote-Group", "system:authenticated")
    };
    let resp = as_bob(&proxy).sent().await;
    assert_eq!(resp.status().as_u16(), 403);
    // A bearer token at the add-on is checked with a TokenReview: its own
    // token names the ServiceAccount, which may not read metrics either.
    let token = tc
        .kubectl_ok(&["create", "token", "metrics-server", "-n", "kube-system"])
        .await;
    let resp = direct
        .get(format!(
            "https://127.0.0.1:{port}/apis/metrics.k8s.io/v1beta1/nodes"
        ))
        .bearer_auth(token.trim())
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 403);
    let body = resp.text().await.expect("body");
    assert!(
        body.contains("system:serviceaccount:kube-system:metrics-server"),
        "{body}"
    );
    // Granted `view` (which aggregates system:aggregated-metrics-reader),
    // bob reads metrics through both.
    tc.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "bob-view",
        "--clusterrole=view",
        "--user=bob",
    ])
    .await;
    let ok = eventually(Duration::from_secs(40), || async {
        let (ok, out, _) = tc
            .kubectl(&[
                "get",
                "--raw",
                "/apis/metrics.k8s.io/v1beta1/nodes",
                "--as",
                "bob",
            ])
            .await;
        ok && out.contains(NODE)
    })
    .await;
    assert!(ok, "bob still cannot read metrics with view");
    let resp = as_bob(&proxy).sent().await;
    assert_eq!(resp.status().as_u16(), 200);

    // Stop the add-on: unavailable, 503, discovery and core keep working.
    addon.child.kill().await.expect("kill");
    let ok = eventually(Duration::from_secs(60), || async {
        let l = apiservice_line(&tc).await;
        l.contains("False (FailedDiscoveryCheck)") || l.contains("False (MissingEndpoints)")
    })
    .await;
    assert!(ok, "still available: {}", apiservice_line(&tc).await);
    let resp = admin
        .get(tc.url("/apis/metrics.k8s.io/v1beta1/nodes"))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 503);
    let (freshness, names) = aggregated_metrics(&admin, &tc.url("/apis"))
        .await
        .expect("metrics.k8s.io still in aggregated discovery");
    assert_eq!(freshness, "Stale");
    assert_eq!(names, vec!["nodes", "pods"]);
    let resources = tc.kubectl_ok(&["api-resources"]).await;
    assert!(resources.contains("namespaces"), "{resources}");
    assert_eq!(
        resp.text().await.expect("body").trim(),
        "service unavailable"
    );
    let apis = tc.kubectl_ok(&["get", "--raw", "/apis"]).await;
    assert!(apis.contains("\"metrics.k8s.io\""), "{apis}");
    let (ok, _, err) = tc.kubectl(&["get", "pods", "-A"]).await;
    assert!(
        ok,
        "kubectl get pods failed while the add-on is down: {err}"
    );

    // Start it again: it recovers by itself.
    let _addon = start_addon(&tc, port, dir.path()).await;
    let ok = eventually(Duration::from_secs(60), || async {
        apiservice_line(&tc).await.contains("True")
    })
    .await;
    assert!(ok, "did not recover: {}", apiservice_line(&tc).await);

    // Deleting the APIService: 404 and gone from discovery.
    tc.kubectl_ok(&["delete", "apiservice", "v1beta1.metrics.k8s.io"])
        .await;
    let ok = eventually(Duration::from_secs(10), || async {
        let resp = admin
            .get(tc.url("/apis/metrics.k8s.io/v1beta1/nodes"))
            .sent()
            .await;
        resp.status().as_u16() == 404
    })
    .await;
    assert!(ok, "paths of a deleted APIService still served");
    let apis = tc.kubectl_ok(&["get", "--raw", "/apis"]).await;
    assert!(!apis.contains("\"metrics.k8s.io\""), "{apis}");
    assert!(aggregated_metrics(&admin, &tc.url("/apis")).await.is_none());
}

#[tokio::test]
async fn trust_for_external_servers() {
    let tc = TestCluster::start().await;
    let ok = eventually(Duration::from_secs(20), || async {
        tc.kubectl(&[
            "-n",
            "kube-system",
            "get",
            "configmap",
            "extension-apiserver-authentication",
        ])
        .await
        .0
    })
    .await;
    assert!(ok, "extension-apiserver-authentication not published");
    let cm = tc
        .kubectl_ok(&[
            "-n",
            "kube-system",
            "get",
            "configmap",
            "extension-apiserver-authentication",
            "-o",
            "json",
        ])
        .await;
    let cm: serde_json::Value = serde_json::from_str(&cm).expect("json");
    let ca = std::fs::read_to_string(&tc.cluster.pki().ca_cert).expect("ca");
    let fp_ca = std::fs::read_to_string(&tc.cluster.pki().front_proxy_ca_cert).expect("ca");
    assert_eq!(cm["data"]["client-ca-file"], ca.as_str());
    assert_eq!(cm["data"]["requestheader-client-ca-file"], fp_ca.as_str());
    assert_eq!(
        cm["data"]["requestheader-allowed-names"],
        "[\"front-proxy-client\"]"
    );
    assert_eq!(
        cm["data"]["requestheader-username-headers"],
        "[\"X-Remote-User\"]"
    );
    assert_eq!(
        cm["data"]["requestheader-extra-headers-prefix"],
        "[\"X-Remote-Extra-\"]"
    );

    // TokenReview: the admin token authenticates, a made-up one does not.
    let review = |token: &str| {
        format!(
            "{{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenReview\",\"spec\":{{\"token\":\"{token}\"}}}}"
        )
    };
    let token = tc.cluster.pki().admin_token.clone();
    let (ok, out, err) = tc
        .kubectl_stdin(
            &["create", "--validate=false", "-o", "json", "-f", "-"],
            Some(&review(&token)),
        )
        .await;
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["status"]["authenticated"], true, "{out}");
    assert!(v["status"]["user"]["groups"]
        .as_array()
        .is_some_and(|g| g.iter().any(|g| g == "system:masters")));
    let (ok, out, err) = tc
        .kubectl_stdin(
            &["create", "--validate=false", "-o", "json", "-f", "-"],
            Some(&review("not-a-token")),
        )
        .await;
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_ne!(v["status"]["authenticated"], true, "{out}");

    // SubjectAccessReview and `kubectl auth can-i`.
    let sar = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods","namespace":"default"}}}"#;
    let (ok, out, err) = tc
        .kubectl_stdin(
            &["create", "--validate=false", "-o", "json", "-f", "-"],
            Some(sar),
        )
        .await;
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["status"]["allowed"], false,
        "RBAC grants alice nothing: {out}"
    );
    let admins = sar.replace(
        "\"user\":\"alice\"",
        "\"user\":\"root\",\"groups\":[\"system:masters\"]",
    );
    let (ok, out, err) = tc
        .kubectl_stdin(
            &["create", "--validate=false", "-o", "json", "-f", "-"],
            Some(&admins),
        )
        .await;
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["status"]["allowed"], true, "{out}");
    let bad = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"resourceAttributes":{"verb":"get"}}}"#;
    let (ok, _, err) = tc
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(bad))
        .await;
    assert!(!ok);
    assert!(
        err.contains("at least one of user or group must be specified"),
        "{err}"
    );
    let ssar = r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/healthz","verb":"get"}}}"#;
    let (ok, out, err) = tc
        .kubectl_stdin(
            &["create", "--validate=false", "-o", "json", "-f", "-"],
            Some(ssar),
        )
        .await;
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["status"]["allowed"], true, "{out}");

    // The bootstrap RBAC objects external servers are bound to, with
    // upstream's rules and bootstrapping label.
    let role = [
        "-n",
        "kube-system",
        "get",
        "role",
        "extension-apiserver-authentication-reader",
        "-o",
        "json",
    ];
    let cluster_role = ["get", "clusterrole", "system:auth-delegator", "-o", "json"];
    let ok = eventually(Duration::from_secs(20), || async {
        tc.kubectl(&role).await.0 && tc.kubectl(&cluster_role).await.0
    })
    .await;
    assert!(ok, "bootstrap delegation RBAC objects not created");
    let role: serde_json::Value = serde_json::from_str(&tc.kubectl_ok(&role).await).expect("json");
    assert_eq!(
        role["rules"],
        serde_json::json!([{"apiGroups": [""], "resources": ["configmaps"],
            "resourceNames": ["extension-apiserver-authentication"],
            "verbs": ["get", "list", "watch"]}]),
        "{role}"
    );
    assert_eq!(
        role["metadata"]["labels"]["kubernetes.io/bootstrapping"],
        "rbac-defaults"
    );
    let cluster_role: serde_json::Value =
        serde_json::from_str(&tc.kubectl_ok(&cluster_role).await).expect("json");
    assert_eq!(
        cluster_role["rules"],
        serde_json::json!([
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
        ]),
        "{cluster_role}"
    );
    assert_eq!(
        cluster_role["metadata"]["labels"]["kubernetes.io/bootstrapping"],
        "rbac-defaults"
    );
}

/// A remote APIService may not point the aggregator at its own tiers: with
/// an EndpointSlice naming kube-core's port it is unavailable
/// (`EndpointsNotAllowed`) and its group answers 503. Behind a TCP
/// forwarder on another port (the server is then, as far as the aggregator
/// can tell, someone else's; `insecureSkipTLSVerify`), a `kubectl get -w`
/// on its group streams through the aggregator's remote proxy.
#[tokio::test]
async fn watch_streams_through_a_remote_apiservice() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let tc = TestCluster::start().await;
    let core_port = tc.cluster.ports().kube_core;
    // A forwarder to kube-core on a port of its own.
    let forwarder = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the forwarder");
    let forward_port = forwarder.local_addr().expect("addr").port();
    let forwarding = tokio::spawn(async move {
        while let Ok((mut inbound, _)) = forwarder.accept().await {
            tokio::spawn(async move {
                if let Ok(mut outbound) =
                    tokio::net::TcpStream::connect(("127.0.0.1", core_port)).await
                {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    let objs = |port: u16| {
        format!(
            r#"apiVersion: v1
kind: Service
metadata:
  name: core-loop
  namespace: default
spec:
  ports:
  - name: https
    port: 443
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: core-loop-1
  namespace: default
  labels:
    kubernetes.io/service-name: core-loop
addressType: IPv4
ports:
- name: https
  port: {port}
endpoints:
- addresses: ["127.0.0.1"]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.discovery.k8s.io
spec:
  group: discovery.k8s.io
  version: v1
  groupPriorityMinimum: 16200
  versionPriority: 15
  insecureSkipTLSVerify: true
  service:
    namespace: default
    name: core-loop
"#
        )
    };
    // The local APIService is registered first; the remote one replaces it.
    let ok = eventually(Duration::from_secs(20), || async {
        tc.kubectl(&["get", "apiservice", "v1.discovery.k8s.io"])
            .await
            .0
    })
    .await;
    assert!(ok, "v1.discovery.k8s.io not auto-registered");
    let (ok, _, err) = tc
        .kubectl_stdin(
            &["apply", "--validate=false", "-f", "-"],
            Some(&objs(core_port)),
        )
        .await;
    assert!(ok, "{err}");
    // kube-core's own port is refused, whatever the Service says.
    let refused = eventually(Duration::from_secs(30), || async {
        let (_, out, _) = tc
            .kubectl(&[
                "get",
                "apiservice",
                "v1.discovery.k8s.io",
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Available\")].reason}: {.status.conditions[?(@.type==\"Available\")].message}",
            ])
            .await;
        out.starts_with("EndpointsNotAllowed:") && out.contains("is one of the API server's own tiers")
    })
    .await;
    assert!(
        refused,
        "an APIService could point the aggregator at kube-core"
    );
    let admin = tc.http(Auth::AdminCert);
    let unavailable = eventually(Duration::from_secs(30), || async {
        admin
            .get(tc.url("/apis/discovery.k8s.io/v1/endpointslices"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 503)
    })
    .await;
    assert!(
        unavailable,
        "the refused APIService's group did not answer 503"
    );
    // Its group (EndpointSlices among it) is served again once the
    // APIService is gone; then it names the forwarder.
    tc.kubectl_ok(&["delete", "apiservice", "v1.discovery.k8s.io"])
        .await;
    let forwarded = objs(forward_port);
    let applied = eventually(Duration::from_secs(30), || async {
        tc.kubectl_stdin(&["apply", "--validate=false", "-f", "-"], Some(&forwarded))
            .await
            .0
    })
    .await;
    assert!(
        applied,
        "the forwarder's EndpointSlice could not be applied"
    );
    // Wait for the remote check itself (reason Passed), not the Local
    // condition the APIService still carries right after the change.
    let ok = eventually(Duration::from_secs(30), || async {
        let (_, out, _) = tc
            .kubectl(&[
                "get",
                "apiservice",
                "v1.discovery.k8s.io",
                "-o",
                "jsonpath={.spec.service.name} {.status.conditions[?(@.type==\"Available\")].reason}",
            ])
            .await;
        out == "core-loop Passed"
    })
    .await;
    assert!(ok, "remote APIService not available");
    // The route follows the condition within a resync period.
    let admin = tc.http(Auth::AdminCert);
    let routed = eventually(Duration::from_secs(30), || {
        let admin = admin.clone();
        let url = tc.url("/apis/discovery.k8s.io/v1/endpointslices");
        async move { admin.get(url).send().await.is_ok_and(|r| r.status() == 200) }
    })
    .await;
    assert!(routed, "remote APIService not routed");
    // And discovery lists it (kubectl resolves the resource through it).
    let discovered = eventually(Duration::from_secs(30), || async {
        tc.kubectl(&["-n", "default", "get", "endpointslices"])
            .await
            .0
    })
    .await;
    assert!(
        discovered,
        "endpointslices not in discovery through the remote APIService"
    );

    let mut child = tc.kubectl_spawn(&[
        "-n",
        "default",
        "get",
        "endpointslices",
        "-w",
        "--output-watch-events",
    ]);
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let slice = r#"{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"watched","namespace":"default"},"addressType":"IPv4","endpoints":[]}"#;
    let mut seen_lines = Vec::new();
    let read = async {
        let mut created = false;
        while let Ok(Some(line)) = lines.next_line().await {
            seen_lines.push(line.clone());
            let mut words = line.split_whitespace();
            let (event, name) = (words.next(), words.next());
            if !created && event == Some("ADDED") && name == Some("core-loop-1") {
                let (ok, _, err) = tc
                    .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(slice))
                    .await;
                assert!(ok, "{err}");
                created = true;
            }
            if event == Some("ADDED") && name == Some("watched") {
                return true;
            }
        }
        false
    };
    let seen = tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .unwrap_or(false);
    let _ = child.kill().await;
    if !seen {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use tokio::io::AsyncReadExt;
            let _ = tokio::time::timeout(Duration::from_secs(2), e.read_to_string(&mut err)).await;
        }
        let log = std::fs::read_to_string(tc.cluster.log_file("aggregator")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(30).collect();
        panic!(
            "the watch did not stream the new object:\n{}\nstderr: {err}\naggregator log (last lines, newest first):\n{}",
            seen_lines.join("\n"),
            tail.join("\n")
        );
    }

    // The group really is served through the remote route: without its
    // endpoints it answers 503.
    tc.kubectl_ok(&["-n", "default", "delete", "service", "core-loop"])
        .await;
    let admin = tc.http(Auth::AdminCert);
    let ok = eventually(Duration::from_secs(30), || async {
        let resp = admin
            .get(tc.url("/apis/discovery.k8s.io/v1/endpointslices"))
            .sent()
            .await;
        resp.status().as_u16() == 503
    })
    .await;
    assert!(ok, "the remote APIService still served without its Service");
    let mut out = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut ok = false;
    while tokio::time::Instant::now() < deadline {
        out = tc
            .kubectl(&["get", "apiservice", "v1.discovery.k8s.io", "--no-headers"])
            .await
            .1;
        if out.contains("False (ServiceNotFound)") {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(ok, "{out}");
    forwarding.abort();
}
