//! The audit log as an operator reads it: every tier started with
//! upstream's `--audit-policy-file` and `--audit-log-path` writes one JSON
//! `Event` per line; one request handled by several tiers carries the same
//! `auditID` (the `Audit-Id` response header) in each of their logs; the
//! policy's levels and omitted stages hold; the webhook backend POSTs
//! `EventList`s to a server named by a kubeconfig.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::review_server;

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/openapi*", "/version", "/api", "/apis*", "/metrics"]
- level: None
  users: ["system:apiserver"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Metadata
  omitStages: ["RequestReceived"]
"#;

/// The records of a JSON-lines audit log.
fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {l}", path.display()))
        })
        .collect()
}

fn with_id<'a>(records: &'a [Value], id: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["auditID"] == id).collect()
}

fn stages(records: &[&Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| r["stage"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn one_request_is_audited_under_one_id_by_every_tier_that_handled_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    // The webhook backend's receiver, with a CA of its own.
    let hook_pki = deploy::pki::ensure(&dir.join("hook-pki")).expect("pki");
    let (cert, key) = (dir.join("sink.crt"), dir.join("sink.key"));
    deploy::pki::issue_serving_cert(&hook_pki, &cert, &key, "audit-sink", &["127.0.0.1"])
        .expect("serving cert");
    let received: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let sink = received.clone();
    let port = review_server::serve(
        &std::fs::read(&cert).expect("cert"),
        &std::fs::read(&key).expect("key"),
        move |path, body| {
            sink.lock()
                .expect("lock")
                .push((path.to_string(), body.clone()));
            (b"{}".to_vec(), Duration::ZERO)
        },
    )
    .await;
    let kubeconfig = dir.join("audit-webhook.kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: sink\n\
             clusters:\n- name: sink\n  cluster:\n    server: https://127.0.0.1:{port}/audit\n    certificate-authority: {}\n\
             contexts:\n- name: sink\n  context: {{cluster: sink, user: sink}}\n\
             users:\n- name: sink\n  user: {{token: audit-sink-token}}\n",
            hook_pki.ca_cert.display()
        ),
    )
    .expect("kubeconfig");
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, POLICY).expect("policy");
    let log = |tier: &str| -> PathBuf { dir.join(tier).join("audit.log") };
    let args = |tier: &str| {
        vec![
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", log(tier).display()),
        ]
    };
    let mut kube_core = args("kube-core");
    kube_core.extend([
        format!("--audit-webhook-config-file={}", kubeconfig.display()),
        "--audit-webhook-batch-max-wait=1s".to_string(),
    ]);
    let c = TestCluster::start_with(deploy::ExtraArgs {
        aggregator: args("aggregator"),
        kube_core,
        extensions: args("extensions"),
    })
    .await;

    // A create through the aggregator, answered by kube-core.
    c.kubectl_ok(&["create", "configmap", "audited", "--from-literal=a=b"])
        .await;
    let created = |r: &&Value| {
        r["verb"] == "create"
            && r["objectRef"]["resource"] == "configmaps"
            && r["objectRef"]["name"] == "audited"
            && r["stage"] == "ResponseComplete"
    };
    assert!(
        eventually(Duration::from_secs(10), || async {
            records(&log("kube-core")).iter().any(|r| created(&r))
        })
        .await,
        "kube-core never recorded the create"
    );
    let agg = records(&log("aggregator"));
    let at_agg = agg
        .iter()
        .find(created)
        .expect("the aggregator recorded the create");
    let id = at_agg["auditID"].as_str().expect("auditID").to_string();
    assert!(!id.is_empty());
    let core = records(&log("kube-core"));
    let at_core = with_id(&core, &id);
    assert_eq!(
        stages(&at_core),
        ["RequestReceived", "ResponseComplete"],
        "kube-core's records of {id}: {at_core:#?}"
    );
    let done = at_core[1];
    for r in [at_agg, done] {
        assert_eq!(r["apiVersion"], "audit.k8s.io/v1");
        assert_eq!(r["kind"], "Event");
        assert_eq!(r["level"], "RequestResponse");
        assert_eq!(r["responseStatus"]["code"], 201, "{r:#}");
        assert_eq!(r["objectRef"]["namespace"], "default");
        assert_eq!(r["objectRef"]["apiVersion"], "v1");
        assert_eq!(r["user"]["username"], "kubernetes-admin", "{r:#}");
        assert!(r["user"]["groups"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g == "system:masters")));
        assert!(
            r["userAgent"]
                .as_str()
                .is_some_and(|ua| ua.starts_with("kubectl")),
            "{r:#}"
        );
        assert_eq!(r["requestObject"]["data"]["a"], "b", "{r:#}");
        assert_eq!(r["responseObject"]["metadata"]["name"], "audited", "{r:#}");
        assert!(r["requestReceivedTimestamp"]
            .as_str()
            .is_some_and(|t| t.len() == 27 && t.ends_with('Z')));
        assert_eq!(
            r["annotations"]["authorization.k8s.io/decision"], "allow",
            "{r:#}"
        );
    }
    // The client's address (forwarded by the aggregator, which is on the
    // same address here and so not repeated).
    assert_eq!(
        done["sourceIPs"],
        serde_json::json!(["127.0.0.1"]),
        "{done:#}"
    );
    let uid = done["responseObject"]["metadata"]["uid"].clone();
    assert!(uid.is_string());

    // A request for a group only the last tier could serve passes all
    // three, under the ID the client chose.
    let http = c.http(Auth::AdminCert);
    let resp = http
        .get(c.url("/apis/nothere.example.com/v1/things"))
        .header("Audit-Id", "client-chosen-id")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 404);
    assert_eq!(resp.headers()["audit-id"], "client-chosen-id");
    assert!(
        eventually(Duration::from_secs(10), || async {
            records(&log("extensions"))
                .iter()
                .any(|r| r["auditID"] == "client-chosen-id")
        })
        .await,
        "the extensions tier never recorded the request"
    );
    for tier in ["aggregator", "kube-core", "extensions"] {
        let recs = records(&log(tier));
        let mine = with_id(&recs, "client-chosen-id");
        // Metadata level, RequestReceived omitted by the policy.
        assert_eq!(stages(&mine), ["ResponseComplete"], "{tier}: {mine:#?}");
        let r = mine[0];
        assert_eq!(r["level"], "Metadata");
        assert_eq!(r["verb"], "list");
        assert_eq!(r["requestURI"], "/apis/nothere.example.com/v1/things");
        assert_eq!(r["objectRef"]["apiGroup"], "nothere.example.com");
        assert_eq!(r["responseStatus"]["code"], 404, "{tier}: {r:#}");
        assert_eq!(r["responseStatus"]["reason"], "NotFound", "{tier}: {r:#}");
        assert!(r.get("requestObject").is_none() && r.get("responseObject").is_none());
    }

    // A watch: started and completed.
    let resp = http
        .get(c.url("/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1"))
        .header("Audit-Id", "a-watch")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 200);
    let _ = resp.bytes().await;
    assert!(
        eventually(Duration::from_secs(10), || async {
            stages(&with_id(&records(&log("kube-core")), "a-watch"))
                == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
        })
        .await,
        "kube-core's watch records: {:#?}",
        with_id(&records(&log("kube-core")), "a-watch")
    );

    // Failed authentication is recorded without a user.
    let resp = c
        .http(Auth::None)
        .get(c.url("/api/v1/namespaces"))
        .header("Authorization", "Bearer not-a-token")
        .header("Audit-Id", "bad-token")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 401);
    let recs = records(&log("aggregator"));
    let bad = with_id(&recs, "bad-token");
    assert_eq!(stages(&bad), ["ResponseStarted"], "{bad:#?}");
    assert_eq!(bad[0]["responseStatus"]["code"], 401);
    assert!(bad[0]["user"].as_object().is_some_and(|u| u.is_empty()));

    // The webhook backend got the create in an EventList.
    assert!(
        eventually(Duration::from_secs(15), || async {
            received.lock().expect("lock").iter().any(|(path, list)| {
                path == "/audit"
                    && list["kind"] == "EventList"
                    && list["apiVersion"] == "audit.k8s.io/v1"
                    && list["items"].as_array().is_some_and(|items| {
                        items.iter().any(|e| {
                            e["auditID"] == id.as_str() && e["stage"] == "ResponseComplete"
                        })
                    })
            })
        })
        .await,
        "the audit webhook never received the create"
    );
    // Nothing the policy leaves out was written.
    for tier in ["aggregator", "kube-core", "extensions"] {
        assert!(
            !records(&log(tier)).iter().any(|r| r["requestURI"]
                .as_str()
                .is_some_and(|u| u.starts_with("/readyz") || u.starts_with("/healthz"))),
            "{tier} recorded a health check"
        );
    }
}
