//! PodSecurity in kube-core, through kubectl: the namespace labels
//! `pod-security.kubernetes.io/enforce|warn` refuse or warn about pods with
//! upstream's messages, pod controllers are only warned about, a pod update
//! that changes only metadata is not evaluated, invalid labels are refused,
//! and labelling a namespace warns about the pods already in it.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{eventually, TestCluster};

async fn create(c: &TestCluster, v: &Value) -> (bool, String, String) {
    c.kubectl_stdin(&["create", "-f", "-"], Some(&v.to_string()))
        .await
}

/// A namespace with `labels`, once its `default` ServiceAccount exists
/// (the ServiceAccount plugin needs it for pods).
async fn namespace(c: &TestCluster, name: &str, labels: Value) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labels}});
    let (ok, out, err) = create(c, &ns).await;
    assert!(ok, "{out} {err}");
    let ready = eventually(Duration::from_secs(10), || async {
        c.kubectl(&["get", "serviceaccount", "default", "-n", name])
            .await
            .0
    })
    .await;
    assert!(ready, "no default service account in {name}");
}

fn pod(ns: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns}, "spec": spec})
}

fn privileged_spec() -> Value {
    json!({"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
        "securityContext": {"privileged": true}}]})
}

fn host_network_spec() -> Value {
    json!({"hostNetwork": true,
        "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]})
}

fn restricted_spec() -> Value {
    json!({"securityContext": {"runAsNonRoot": true, "runAsUser": 1000,
            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
            "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}}}]})
}

const RESTRICTED_VIOLATIONS: &str = "privileged (container \"app\" must not set securityContext.privileged=true), \
    allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), \
    unrestricted capabilities (container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]), \
    runAsNonRoot != true (pod or container \"app\" must set securityContext.runAsNonRoot=true), \
    seccompProfile (pod or container \"app\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enforce_warn_controllers_and_namespace_labels() {
    let c = TestCluster::start().await;

    // enforce=restricted refuses a privileged pod with upstream's message.
    namespace(
        &c,
        "psa-restricted",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    let (ok, out, err) = create(&c, &pod("psa-restricted", "priv", privileged_spec())).await;
    assert!(!ok, "{out} {err}");
    let expected = format!(
        "Error from server (Forbidden): error when creating \"STDIN\": pods \"priv\" is forbidden: violates PodSecurity \"restricted:latest\": {RESTRICTED_VIOLATIONS}"
    );
    assert!(err.contains(&expected), "{err}");
    // Refused, so no warning on top.
    assert!(!err.contains("Warning:"), "{err}");

    // A restricted pod is admitted, without warnings.
    let (ok, out, err) = create(&c, &pod("psa-restricted", "good", restricted_spec())).await;
    assert!(ok, "{out} {err}");
    assert!(!err.contains("Warning:"), "{err}");

    // A Deployment with the same violations is created, with a warning
    // (warn defaults to the enforce level).
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "psa-restricted"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": privileged_spec()}}});
    let (ok, out, err) = create(&c, &deployment).await;
    assert!(ok, "{out} {err}");
    assert!(
        err.contains(&format!(
            "Warning: would violate PodSecurity \"restricted:latest\": {RESTRICTED_VIOLATIONS}"
        )),
        "{err}"
    );
    c.kubectl_ok(&["get", "deployment", "web", "-n", "psa-restricted"])
        .await;

    // warn=baseline: a hostNetwork pod is created with a warning.
    namespace(
        &c,
        "psa-warn",
        json!({"pod-security.kubernetes.io/warn": "baseline"}),
    )
    .await;
    let (ok, out, err) = create(&c, &pod("psa-warn", "hostnet", host_network_spec())).await;
    assert!(ok, "{out} {err}");
    assert!(
        err.contains(
            "Warning: would violate PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)"
        ),
        "{err}"
    );

    // Labelling a namespace with violating pods warns about them.
    namespace(&c, "psa-label", json!({})).await;
    for name in ["hostnet-b", "hostnet-a"] {
        let (ok, out, err) = create(&c, &pod("psa-label", name, host_network_spec())).await;
        assert!(ok, "{out} {err}");
    }
    let (ok, out, err) = create(&c, &pod("psa-label", "priv", privileged_spec())).await;
    assert!(ok, "{out} {err}");
    let (ok, out, err) = c
        .kubectl(&[
            "label",
            "namespace",
            "psa-label",
            "pod-security.kubernetes.io/enforce=baseline",
        ])
        .await;
    assert!(ok, "{out} {err}");
    for line in [
        "Warning: existing pods in namespace \"psa-label\" violate the new PodSecurity enforce level \"baseline:latest\"",
        "Warning: hostnet-a (and 1 other pod): host namespaces",
        "Warning: priv: privileged",
    ] {
        assert!(err.contains(line), "{line} not in {err}");
    }
    // Relaxing the level checks nothing.
    let (ok, _, err) = c
        .kubectl(&[
            "label",
            "--overwrite",
            "namespace",
            "psa-label",
            "pod-security.kubernetes.io/enforce=privileged",
        ])
        .await;
    assert!(ok && !err.contains("Warning:"), "{err}");
    c.kubectl_ok(&[
        "label",
        "--overwrite",
        "namespace",
        "psa-label",
        "pod-security.kubernetes.io/enforce=baseline",
    ])
    .await;

    // Now enforced: a metadata-only update of a violating pod is allowed,
    // an image change is not.
    c.kubectl_ok(&["label", "pod", "priv", "-n", "psa-label", "tier=x"])
        .await;
    let (ok, _, err) = c
        .kubectl(&[
            "set",
            "image",
            "pod/priv",
            "-n",
            "psa-label",
            "app=registry.k8s.io/pause:3.9",
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains(
            "pods \"priv\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"app\" must not set securityContext.privileged=true)"
        ),
        "{err}"
    );

    // An invalid level is refused with upstream's Invalid error.
    let (ok, _, err) = c
        .kubectl(&[
            "label",
            "--overwrite",
            "namespace",
            "psa-label",
            "pod-security.kubernetes.io/enforce=strict",
        ])
        .await;
    assert!(!ok);
    assert!(
        err.contains(
            "Namespace \"psa-label\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted"
        ),
        "{err}"
    );
}

/// `--admission-control-config-file` with a `PodSecurityConfiguration`:
/// its defaults apply to namespaces without labels, and an exempt
/// namespace is not evaluated whatever its labels say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_defaults_and_exemptions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("admission.yaml");
    std::fs::write(
        &file,
        r#"apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      enforce-version: latest
    exemptions:
      namespaces: [exempt]
"#,
    )
    .expect("write");
    let c = TestCluster::start_with(deploy::ExtraArgs {
        kube_core: vec![format!(
            "--admission-control-config-file={}",
            file.display()
        )],
        ..Default::default()
    })
    .await;
    namespace(&c, "plain", json!({})).await;
    namespace(
        &c,
        "exempt",
        json!({"pod-security.kubernetes.io/enforce": "restricted"}),
    )
    .await;
    let (ok, _, err) = create(&c, &pod("plain", "priv", privileged_spec())).await;
    assert!(!ok);
    assert!(
        err.contains(r#"pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)"#),
        "{err}"
    );
    let (ok, out, err) = create(&c, &pod("exempt", "priv", privileged_spec())).await;
    assert!(ok, "{out} {err}");
}
