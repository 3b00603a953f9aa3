//! A real, unmodified third-party admission framework: an operator written
//! with `kopf` (PyPI) registers its own `kopf.on.validate` / `kopf.on.mutate`
//! handlers, runs its own HTTPS webhook server, writes its own webhook
//! configurations (`auto.kopf.dev`), and validates and mutates ConfigMaps
//! created through kubectl.
//!
//! kopf comes from PyPI (`.ci/run` installs it); without it the test is
//! skipped locally and fails under CI.

use std::process::Stdio;
use std::time::Duration;

use crate::harness::{eventually, TestCluster};

const OPERATOR: &str = r#"
import os
import kopf

@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.admission.server = kopf.WebhookServer(
        addr="127.0.0.1", port=int(os.environ["KOPF_WEBHOOK_PORT"]), host="127.0.0.1",
        certfile=os.environ["KOPF_CERT"], pkeyfile=os.environ["KOPF_KEY"],
        cafile=os.environ["KOPF_CA"])
    settings.admission.managed = "auto.kopf.dev"
    settings.posting.enabled = False

@kopf.on.validate("configmaps", id="no-forbidden")
def no_forbidden(body, **_):
    if (body.get("data") or {}).get("forbidden"):
        raise kopf.AdmissionError("forbidden keys are not allowed", code=422)

@kopf.on.mutate("configmaps", id="mark")
def mark(patch, **_):
    patch.metadata.setdefault("labels", {})["kopf-mutated"] = "yes"
"#;

fn kopf_available() -> bool {
    std::process::Command::new("kopf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kopf_operator_validates_and_mutates_through_its_own_webhooks() {
    if !kopf_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "kopf is not installed (pip install kopf)"
        );
        eprintln!("skipping: kopf is not installed (pip install kopf)");
        return;
    }
    let c = TestCluster::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = (dir.path().join("kopf.crt"), dir.path().join("kopf.key"));
    let pki = c.cluster.pki();
    deploy::pki::issue_serving_cert(pki, &cert, &key, "kopf", &["127.0.0.1"]).expect("cert");
    let operator = dir.path().join("operator.py");
    std::fs::write(&operator, OPERATOR).expect("operator");
    let port = deploy::free_port().expect("port");
    let log = std::fs::File::create(dir.path().join("kopf.log")).expect("log");
    let _kopf = tokio::process::Command::new("kopf")
        .args(["run", "--standalone", "--all-namespaces"])
        .arg(&operator)
        .env("KUBECONFIG", c.kubeconfig())
        .env("KOPF_WEBHOOK_PORT", port.to_string())
        .env("KOPF_CERT", &cert)
        .env("KOPF_KEY", &key)
        .env("KOPF_CA", &pki.ca_cert)
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("kopf run");

    // kopf writes its webhook configurations once it has started.
    let mut i = 0;
    let mutated = eventually(Duration::from_secs(60), || {
        i += 1;
        let name = format!("probe-{i}");
        let c = &c;
        async move {
            if !c
                .kubectl(&["create", "configmap", &name, "--from-literal=a=b"])
                .await
                .0
            {
                return false;
            }
            c.kubectl_ok(&["get", "configmap", &name, "--show-labels"])
                .await
                .contains("kopf-mutated=yes")
        }
    })
    .await;
    let log_text = || std::fs::read_to_string(dir.path().join("kopf.log")).unwrap_or_default();
    assert!(
        mutated,
        "kopf's mutating webhook never applied:\n{}",
        log_text()
    );
    let out = c
        .kubectl_ok(&[
            "get",
            "mutatingwebhookconfiguration,validatingwebhookconfiguration",
            "-o",
            "name",
        ])
        .await;
    assert!(
        out.contains("mutatingwebhookconfiguration.admissionregistration.k8s.io/auto.kopf.dev"),
        "{out}"
    );
    assert!(
        out.contains("validatingwebhookconfiguration.admissionregistration.k8s.io/auto.kopf.dev"),
        "{out}"
    );

    let (ok, _, err) = c
        .kubectl(&[
            "create",
            "configmap",
            "refused",
            "--from-literal=forbidden=x",
        ])
        .await;
    assert!(!ok, "kopf's validating webhook let a forbidden key through");
    assert!(
        err.contains(r#"admission webhook "no-forbidden.auto.kopf.dev" denied the request: forbidden keys are not allowed"#),
        "{err}\n{}",
        log_text()
    );
    assert!(!c.kubectl(&["get", "configmap", "refused"]).await.0);
    let (ok, _, err) = c
        .kubectl(&["create", "configmap", "fine", "--from-literal=ok=x"])
        .await;
    assert!(ok, "{err}");
}
