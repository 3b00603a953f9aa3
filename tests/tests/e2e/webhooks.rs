//! Admission webhooks through real kubectl: an HTTPS webhook server started
//! here (trusted through `caBundle`, reached through a Service and its
//! EndpointSlice, or a URL) mutates, denies, sleeps, or answers wrongly;
//! the cluster follows each webhook's rules, selectors, matchConditions,
//! failure policy and reinvocation policy, with upstream's messages, and
//! never stores what a webhook stopped.

use crate::harness::{eventually, SendExt, TestCluster};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use crate::review_server;

/// Calls per path, and per (path, object name).
#[derive(Default)]
struct Calls(Mutex<HashMap<String, usize>>);

impl Calls {
    fn add(&self, key: String) {
        if let Ok(mut m) = self.0.lock() {
            *m.entry(key).or_default() += 1;
        }
    }
    fn get(&self, key: &str) -> usize {
        self.0
            .lock()
            .map(|m| m.get(key).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The answer of one webhook path to one review: the response body
/// (already a full HTTP body) and a delay.
fn answer(path: &str, review: &Value, calls: &Calls) -> (Vec<u8>, Duration) {
    let req = &review["request"];
    let uid = req["uid"].clone();
    let obj = &req["object"];
    let name = obj["metadata"]["name"]
        .as_str()
        .or(req["name"].as_str())
        .unwrap_or("")
        .to_string();
    calls.add(path.to_string());
    calls.add(format!("{path}|{name}"));
    // Which version the object was sent as, and which the client used.
    calls.add(format!(
        "{path}|{name}|{}|{}",
        req["kind"]["version"].as_str().unwrap_or(""),
        req["requestKind"]["version"].as_str().unwrap_or("")
    ));
    calls.add(format!(
        "{path}|{name}|{}/{}|{}",
        req["kind"]["group"].as_str().unwrap_or(""),
        req["kind"]["kind"].as_str().unwrap_or(""),
        req["subResource"].as_str().unwrap_or("")
    ));
    let allow = |patch: Option<Value>| {
        let mut resp = json!({"uid": uid, "allowed": true});
        if let Some(p) = patch {
            resp["patchType"] = json!("JSONPatch");
            resp["patch"] = json!(b64(p.to_string().as_bytes()));
        }
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
    };
    let add_label = |key: &str, value: &str| {
        if obj["metadata"]["labels"].is_object() {
            if obj["metadata"]["labels"][key].is_string() {
                return None;
            }
            Some(json!([{"op": "add", "path": format!("/metadata/labels/{key}"), "value": value}]))
        } else {
            Some(json!([{"op": "add", "path": "/metadata/labels", "value": {key: value}}]))
        }
    };
    let body = match path {
        "/label" => allow(add_label("webhook", "seen")),
        "/warn" => {
            let mut a = allow(None);
            a["response"]["warnings"] = json!(["think twice"]);
            a
        }
        "/deny" if name.starts_with("bad-") => json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": uid, "allowed": false,
                "status": {"code": 403, "reason": "Forbidden", "message": format!("{name} is a bad name")}}}),
        "/deny" => allow(None),
        "/sleep" => return (allow(None).to_string().into_bytes(), Duration::from_secs(4)),
        "/malformed" => return (b"this is not json".to_vec(), Duration::ZERO),
        "/nouid" => json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "not-the-uid", "allowed": true}}),
        "/bigpatch" => allow(Some(json!([{"op": "add", "path": "/data",
            "value": {"big": "x".repeat(4 * 1024 * 1024)}}]))),
        "/reinvoke-a" => allow(add_label("a", "1")),
        "/reinvoke-b" => allow(add_label("b", "1")),
        _ => allow(None),
    };
    (body.to_string().into_bytes(), Duration::ZERO)
}

/// Serves AdmissionReviews over HTTPS on 127.0.0.1 with the given
/// certificate, one request per connection.
async fn start_webhook_server(cert_pem: &[u8], key_pem: &[u8]) -> (u16, Arc<Calls>) {
    let calls = Arc::new(Calls::default());
    let counter = calls.clone();
    let port = review_server::serve(cert_pem, key_pem, move |path, review| {
        answer(path, review, &counter)
    })
    .await;
    (port, calls)
}

/// A webhook server behind the Service `hook` in namespace `webhooks`
/// (its EndpointSlice points at 127.0.0.1), with a certificate for
/// `hook.webhooks.svc` from the cluster CA. Returns the CA (base64) and the
/// server's calls and port.
async fn webhook_service(c: &TestCluster) -> (String, Arc<Calls>, u16) {
    let pki = c.cluster.pki();
    let dir = tempfile::tempdir().expect("tempdir").keep();
    let (cert, key) = (dir.join("hook.crt"), dir.join("hook.key"));
    deploy::pki::issue_serving_cert(
        pki,
        &cert,
        &key,
        "hook",
        &["hook.webhooks.svc", "127.0.0.1"],
    )
    .expect("serving cert");
    let (port, calls) = start_webhook_server(
        &std::fs::read(&cert).expect("cert"),
        &std::fs::read(&key).expect("key"),
    )
    .await;
    c.kubectl_ok(&["create", "namespace", "webhooks"]).await;
    let objects = [
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hook", "namespace": "webhooks"},
         "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}}),
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "hook-1", "namespace": "webhooks",
                      "labels": {"kubernetes.io/service-name": "hook"}},
         "addressType": "IPv4",
         "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
         "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}]}),
    ];
    for o in objects {
        let (ok, out, err) = c
            .kubectl_stdin(&["create", "-f", "-"], Some(&o.to_string()))
            .await;
        assert!(ok, "{out} {err}");
    }
    let ca = b64(&std::fs::read(&pki.ca_cert).expect("ca"));
    (ca, calls, port)
}

/// One webhook entry calling `path` on the Service for configmaps.
fn hook(name: &str, ca: &str, path: &str, extra: Value) -> Value {
    let mut h = json!({
        "name": name,
        "clientConfig": {"service": {"namespace": "webhooks", "name": "hook", "path": path}, "caBundle": ca},
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "namespaceSelector": {"matchLabels": {"webhooks": "on"}},
    });
    if let (Value::Object(h), Value::Object(e)) = (&mut h, extra) {
        h.extend(e);
    }
    h
}

async fn configure(c: &TestCluster, kind: &str, name: &str, hooks: Vec<Value>) {
    let cfg = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name}, "webhooks": hooks});
    let (ok, out, err) = c
        .kubectl_stdin(&["apply", "-f", "-"], Some(&cfg.to_string()))
        .await;
    assert!(ok, "{out} {err}");
}

async fn create_configmap(c: &TestCluster, ns: &str, name: &str, labels: &str) -> (bool, String) {
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns}, "data": {"k": "v"}});
    if !labels.is_empty() {
        let (k, v) = labels.split_once('=').expect("k=v");
        cm["metadata"]["labels"] = json!({k: v});
    }
    let (ok, out, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&cm.to_string()))
        .await;
    (ok, format!("{out}{err}"))
}

async fn labels_of(c: &TestCluster, ns: &str, name: &str) -> Value {
    let out = c
        .kubectl_ok(&["get", "configmap", name, "-n", ns, "-o", "json"])
        .await;
    let v: Value = serde_json::from_str(&out).expect("json");
    v["metadata"]["labels"].clone()
}

async fn exists_pod(c: &TestCluster, ns: &str, name: &str) -> bool {
    c.kubectl(&["get", "pod", name, "-n", ns]).await.0
}

async fn exists(c: &TestCluster, ns: &str, name: &str) -> bool {
    c.kubectl(&["get", "configmap", name, "-n", ns]).await.0
}

/// Waits until a configuration is in effect: probe creates until `check`
/// holds for one of them.
async fn wait_in_effect(
    c: &TestCluster,
    ns: &str,
    probe: &str,
    check: impl Fn(bool, &str) -> bool,
) {
    let mut i = 0;
    let ok = eventually(Duration::from_secs(15), || {
        i += 1;
        let name = format!("{probe}-{i}");
        let check = &check;
        async move {
            let (ok, out) = create_configmap(c, ns, &name, "").await;
            check(ok, &out)
        }
    })
    .await;
    assert!(ok, "the webhook configuration never took effect ({probe})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_mutate_deny_and_skip_what_they_should() {
    let c = TestCluster::start().await;
    let (ca, calls, _) = webhook_service(&c).await;
    c.create_namespace_for_pods("wh").await;
    c.kubectl_ok(&["label", "namespace", "wh", "webhooks=on"])
        .await;
    c.kubectl_ok(&["create", "namespace", "wh-off"]).await;
    configure(
        &c,
        "MutatingWebhookConfiguration",
        "label",
        vec![hook(
            "label.webhooks.example.com",
            &ca,
            "/label",
            json!({
                "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
                "matchConditions": [{"name": "not-skip-me", "expression": "object.metadata.name != 'skip-me'"}],
            }),
        )],
    )
    .await;
    configure(
        &c,
        "ValidatingWebhookConfiguration",
        "deny",
        vec![
            hook("deny.webhooks.example.com", &ca, "/deny", json!({})),
            hook("warn.webhooks.example.com", &ca, "/warn", json!({})),
        ],
    )
    .await;
    // Defaults as upstream, shown by kubectl.
    let cfg: Value = serde_json::from_str(
        &c.kubectl_ok(&["get", "mutatingwebhookconfiguration", "label", "-o", "json"])
            .await,
    )
    .expect("json");
    let h = &cfg["webhooks"][0];
    assert_eq!(
        (
            &h["failurePolicy"],
            &h["matchPolicy"],
            &h["timeoutSeconds"],
            &h["reinvocationPolicy"]
        ),
        (
            &json!("Fail"),
            &json!("Equivalent"),
            &json!(10),
            &json!("Never")
        ),
        "{h}"
    );
    assert_eq!(h["clientConfig"]["service"]["port"], 443, "{h}");

    wait_in_effect(&c, "wh", "probe", |ok, _| ok).await;
    let (ok, out) = create_configmap(&c, "wh", "labelled", "").await;
    assert!(ok, "{out}");
    assert_eq!(labels_of(&c, "wh", "labelled").await["webhook"], "seen");
    let out = c
        .kubectl_ok(&["get", "configmap", "labelled", "-n", "wh", "--show-labels"])
        .await;
    assert!(out.contains("webhook=seen"), "{out}");

    // The validating webhook denies with upstream's message; nothing is stored.
    let (ok, out) = create_configmap(&c, "wh", "bad-one", "").await;
    assert!(!ok);
    assert!(
        out.contains(
            r#"admission webhook "deny.webhooks.example.com" denied the request: bad-one is a bad name"#
        ),
        "{out}"
    );
    assert!(!exists(&c, "wh", "bad-one").await);
    // Warnings reach kubectl.
    let (ok, out) = create_configmap(&c, "wh", "warned", "").await;
    assert!(ok && out.contains("Warning: think twice"), "{out}");

    // Selectors and matchConditions skip what they should.
    let (ok, out) = create_configmap(&c, "wh-off", "bad-elsewhere", "").await;
    assert!(ok, "namespaceSelector should skip wh-off: {out}");
    assert!(labels_of(&c, "wh-off", "bad-elsewhere").await.is_null());
    let (ok, out) = create_configmap(&c, "wh", "opted-out", "skip=yes").await;
    assert!(ok, "{out}");
    assert!(labels_of(&c, "wh", "opted-out")
        .await
        .get("webhook")
        .is_none());
    let (ok, out) = create_configmap(&c, "wh", "skip-me", "").await;
    assert!(ok, "{out}");
    assert!(labels_of(&c, "wh", "skip-me").await.is_null());
    assert_eq!(calls.get("/label|skip-me"), 0);
    assert_eq!(calls.get("/label|opted-out"), 0);

    // A dry run reaches webhooks with sideEffects None, and stores nothing.
    let (ok, out, err) = c
        .kubectl(&[
            "create",
            "configmap",
            "bad-dry",
            "-n",
            "wh",
            "--dry-run=server",
        ])
        .await;
    assert!(!ok && err.contains("bad-dry is a bad name"), "{out} {err}");

    // An update goes through the webhooks too.
    let (ok, _, err) = c
        .kubectl(&[
            "label",
            "configmap",
            "labelled",
            "-n",
            "wh",
            "webhook-",
            "other=x",
        ])
        .await;
    assert!(ok, "{err}");
    assert_eq!(labels_of(&c, "wh", "labelled").await["webhook"], "seen");

    // matchPolicy Equivalent: webhooks asking for autoscaling/v1 see an
    // autoscaling/v2 write converted to v1 (and their patch converted back).
    let hpa_rules = json!({"rules": [{"operations": ["CREATE"], "apiGroups": ["autoscaling"],
        "apiVersions": ["v1"], "resources": ["horizontalpodautoscalers"]}]});
    configure(
        &c,
        "MutatingWebhookConfiguration",
        "hpa-label",
        vec![hook(
            "hpa-label.webhooks.example.com",
            &ca,
            "/label",
            hpa_rules.clone(),
        )],
    )
    .await;
    configure(
        &c,
        "ValidatingWebhookConfiguration",
        "hpa-deny",
        vec![hook(
            "hpa-deny.webhooks.example.com",
            &ca,
            "/deny",
            hpa_rules,
        )],
    )
    .await;
    let hpa = |name: &str| {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "namespace": "wh"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 3}})
    };
    let denied = eventually(Duration::from_secs(15), || async {
        let (ok, _, _) = c
            .kubectl_stdin(&["create", "-f", "-"], Some(&hpa("bad-hpa").to_string()))
            .await;
        !ok
    })
    .await;
    assert!(
        denied,
        "the autoscaling/v1 webhook never saw the autoscaling/v2 write"
    );
    assert!(
        calls.get("/deny|bad-hpa|v1|v2") > 0,
        "not sent as v1 with requestKind v2"
    );
    let (ok, out, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&hpa("good-hpa").to_string()))
        .await;
    assert!(ok, "{out} {err}");
    let got: Value = serde_json::from_str(
        &c.kubectl_ok(&[
            "get",
            "hpa.v2.autoscaling",
            "good-hpa",
            "-n",
            "wh",
            "-o",
            "json",
        ])
        .await,
    )
    .expect("json");
    assert_eq!(got["metadata"]["labels"]["webhook"], "seen", "{got}");
    assert_eq!(got["spec"]["maxReplicas"], 3, "{got}");
    assert_eq!(calls.get("/label|good-hpa|v1|v2"), 1);

    // Subresources with their own handlers are admitted too: an eviction is
    // a CREATE of pods/eviction whose object is the policy/v1 Eviction.
    configure(
        &c,
        "ValidatingWebhookConfiguration",
        "evictions",
        vec![hook(
            "evictions.webhooks.example.com",
            &ca,
            "/deny",
            json!({"rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                              "resources": ["pods/eviction"]}]}),
        )],
    )
    .await;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad-pod", "namespace": "wh"},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}});
    let (ok, out, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&pod.to_string()))
        .await;
    assert!(ok, "{out} {err}");
    let http = c.http(crate::harness::Auth::AdminCert);
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "bad-pod", "namespace": "wh"}});
    let refused = eventually(Duration::from_secs(15), || async {
        let r = http
            .post(c.url("/api/v1/namespaces/wh/pods/bad-pod/eviction"))
            .json(&eviction)
            .sent()
            .await;
        r.status().as_u16() == 403
    })
    .await;
    assert!(refused, "the eviction webhook never refused");
    assert!(calls.get("/deny|bad-pod|policy/Eviction|eviction") > 0);
    assert!(exists_pod(&c, "wh", "bad-pod").await);

    // Each webhook's calls, latency and rejections are on kube-core's
    // /metrics under upstream's names.
    let port = c.cluster.ports().kube_core;
    let metrics = c
        .http(crate::harness::Auth::FrontProxyCert)
        .get(format!("https://127.0.0.1:{port}/metrics"))
        .header("X-Remote-User", "prometheus")
        .header("X-Remote-Group", "system:monitoring")
        .sent()
        .await;
    assert_eq!(metrics.status().as_u16(), 200);
    let text = metrics.text().await.expect("text");
    for expected in [
        r#"apiserver_admission_webhook_request_total{code="403",name="deny.webhooks.example.com",operation="CREATE",rejected="true",type="validating"}"#,
        r#"apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.webhooks.example.com",operation="CREATE",rejection_code="403",type="validating"}"#,
        r#"apiserver_admission_webhook_admission_duration_seconds_bucket{name="label.webhooks.example.com",operation="CREATE",rejected="false",type="admit",le="0.005"}"#,
    ] {
        assert!(text.contains(expected), "{expected} not in:\n{text}");
    }

    // The configurations themselves never go to webhooks: a webhook on
    // everything that fails closed can still be deleted.
    configure(
        &c,
        "ValidatingWebhookConfiguration",
        "broken",
        vec![hook(
            "broken.webhooks.example.com",
            &ca,
            "/malformed",
            json!({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}],
                   "namespaceSelector": {}}),
        )],
    )
    .await;
    wait_in_effect(&c, "wh", "broken", |ok, _| !ok).await;
    let (ok, _, err) = c
        .kubectl(&["delete", "validatingwebhookconfiguration", "broken"])
        .await;
    assert!(ok, "{err}");
    wait_in_effect(&c, "wh", "healed", |ok, _| ok).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failure_policy_timeouts_and_bad_answers() {
    let c = TestCluster::start().await;
    let (ca, _calls, port) = webhook_service(&c).await;
    c.kubectl_ok(&["create", "namespace", "wh"]).await;
    c.kubectl_ok(&["label", "namespace", "wh", "webhooks=on"])
        .await;
    let only = |prefix: &str| {
        json!({"timeoutSeconds": 1, "matchConditions": [{"name": "only",
            "expression": format!("object.metadata.name.startsWith('{prefix}')")}]})
    };
    let with = |base: Value, extra: Value| {
        let mut b = base;
        if let (Value::Object(b), Value::Object(e)) = (&mut b, extra) {
            b.extend(e);
        }
        b
    };
    configure(
        &c,
        "ValidatingWebhookConfiguration",
        "failures",
        vec![
            hook("sleep-ignore.webhooks.example.com", &ca, "/sleep",
                 with(only("slow-ignore"), json!({"failurePolicy": "Ignore"}))),
            hook("sleep-fail.webhooks.example.com", &ca, "/sleep", only("slow-fail")),
            hook("malformed.webhooks.example.com", &ca, "/malformed", only("malformed")),
            hook("nouid.webhooks.example.com", &ca, "/nouid", only("nouid")),
            with(
                hook("badca.webhooks.example.com", &b64(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), "/deny", only("badca")),
                json!({}),
            ),
            with(
                hook("wrongca.webhooks.example.com", &b64(b""), "/deny", only("wrongca")),
                json!({"clientConfig": {"url": format!("https://127.0.0.1:{port}/deny")}}),
            ),
            with(
                hook("noendpoints.webhooks.example.com", &ca, "/deny", only("noendpoints")),
                json!({"clientConfig": {"service": {"namespace": "webhooks", "name": "nobody"}, "caBundle": ca}}),
            ),
        ],
    )
    .await;
    configure(
        &c,
        "MutatingWebhookConfiguration",
        "bigpatch",
        vec![hook(
            "bigpatch.webhooks.example.com",
            &ca,
            "/bigpatch",
            only("bigpatch"),
        )],
    )
    .await;
    c.kubectl_ok(&[
        "create",
        "service",
        "clusterip",
        "nobody",
        "-n",
        "webhooks",
        "--tcp=443:443",
    ])
    .await;
    wait_in_effect(&c, "wh", "malformed", |ok, _| !ok).await;

    // Ignore: a webhook sleeping past its timeout lets the write through
    // within the timeout.
    let started = Instant::now();
    let (ok, out) = create_configmap(&c, "wh", "slow-ignore", "").await;
    assert!(ok, "{out}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    // Fail: it is rejected, with upstream's message.
    let (ok, out) = create_configmap(&c, "wh", "slow-fail", "").await;
    assert!(!ok);
    assert!(
        out.contains(r#"Internal error occurred: failed calling webhook "sleep-fail.webhooks.example.com": failed to call webhook: Post "https://hook.webhooks.svc:443/sleep?timeout=1s": context deadline exceeded"#),
        "{out}"
    );
    for (name, expected) in [
        (
            "malformed",
            "failed to call webhook: couldn't get version/kind; json parse error",
        ),
        ("nouid", r#"expected response.uid="#),
        ("badca", "invalid caBundle"),
        ("wrongca", "failed to call webhook"),
        (
            "noendpoints",
            r#"no endpoints available for service \"nobody\""#,
        ),
        ("bigpatch", "bigpatch.webhooks.example.com"),
    ] {
        let started = Instant::now();
        let (ok, out) = create_configmap(&c, "wh", name, "").await;
        assert!(!ok, "{name} was admitted");
        let out = out.replace('\\', "");
        assert!(out.contains(&expected.replace('\\', "")), "{name}: {out}");
        assert!(!exists(&c, "wh", name).await, "{name} was stored");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_if_needed_webhook_is_reinvoked_once() {
    let c = TestCluster::start().await;
    let (ca, calls, _) = webhook_service(&c).await;
    c.kubectl_ok(&["create", "namespace", "wh"]).await;
    c.kubectl_ok(&["label", "namespace", "wh", "webhooks=on"])
        .await;
    // Configurations run in name order: a (IfNeeded) before b.
    configure(
        &c,
        "MutatingWebhookConfiguration",
        "a",
        vec![hook(
            "a.webhooks.example.com",
            &ca,
            "/reinvoke-a",
            json!({"reinvocationPolicy": "IfNeeded"}),
        )],
    )
    .await;
    configure(
        &c,
        "MutatingWebhookConfiguration",
        "b",
        vec![hook(
            "b.webhooks.example.com",
            &ca,
            "/reinvoke-b",
            json!({}),
        )],
    )
    .await;
    wait_in_effect(&c, "wh", "probe", |ok, _| ok).await;
    let ready = eventually(Duration::from_secs(10), || async {
        let name = format!("probe-b-{}", calls.get("/reinvoke-b"));
        create_configmap(&c, "wh", &name, "").await;
        labels_of(&c, "wh", &name).await["b"] == "1" && labels_of(&c, "wh", &name).await["a"] == "1"
    })
    .await;
    assert!(ready, "both webhooks never applied");
    let (ok, out) = create_configmap(&c, "wh", "twice", "").await;
    assert!(ok, "{out}");
    let labels = labels_of(&c, "wh", "twice").await;
    assert_eq!(
        (&labels["a"], &labels["b"]),
        (&json!("1"), &json!("1")),
        "{labels}"
    );
    assert_eq!(
        calls.get("/reinvoke-a|twice"),
        2,
        "a is called again after b changed the object"
    );
    assert_eq!(
        calls.get("/reinvoke-b|twice"),
        1,
        "b (Never) is not reinvoked"
    );
}
