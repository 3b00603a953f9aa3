//! The example metrics server (`example-metrics-server`, built with the
//! workspace) as an add-on: its own identity (ServiceAccount, RBAC,
//! kubeconfig), its process on a free port, and the manifests registering it
//! through an APIService, a Service and an EndpointSlice pointing at
//! 127.0.0.1, as an add-on author would.

use std::path::PathBuf;

use base64::Engine;

use crate::harness::TestCluster;

pub(crate) const NODE: &str = "test-node";

pub(crate) struct AddOn {
    pub(crate) child: tokio::process::Child,
    pub(crate) log: PathBuf,
}

pub(crate) fn free_port() -> u16 {
    deploy::free_port().expect("a free loopback port")
}

/// The add-on's own identity, as deploy/manifests/metrics-server.yaml
/// grants it: the ServiceAccount `kube-system/metrics-server`, allowed to
/// create TokenReviews and SubjectAccessReviews and to read the trust
/// ConfigMap, plus the ClusterRole that lets `view` read metrics.
const ADDON_RBAC: &str = r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: metrics-server
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: metrics-server:system:auth-delegator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
- kind: ServiceAccount
  name: metrics-server
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: metrics-server-auth-reader
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: extension-apiserver-authentication-reader
subjects:
- kind: ServiceAccount
  name: metrics-server
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:aggregated-metrics-reader
  labels:
    rbac.authorization.k8s.io/aggregate-to-view: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: ["metrics.k8s.io"]
  resources: ["pods", "nodes"]
  verbs: ["get", "list", "watch"]
"#;

/// Gives the add-on its identity and writes a kubeconfig with its token
/// (for `--authentication-kubeconfig` and `--authorization-kubeconfig`).
async fn addon_kubeconfig(tc: &TestCluster, dir: &std::path::Path) -> PathBuf {
    let path = dir.join("addon.kubeconfig");
    if path.exists() {
        return path;
    }
    let (ok, _, err) = tc
        .kubectl_stdin(&["apply", "-f", "-"], Some(ADDON_RBAC))
        .await;
    assert!(ok, "{err}");
    let token = tc
        .kubectl_ok(&[
            "create",
            "token",
            "metrics-server",
            "-n",
            "kube-system",
            "--duration",
            "1h",
        ])
        .await;
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n\
         contexts:\n- name: c\n  context: {{cluster: c, user: u}}\n\
         clusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\n\
         users:\n- name: u\n  user:\n    token: {}\n",
        tc.cluster.aggregator_url(),
        tc.cluster.pki().ca_cert.display(),
        token.trim()
    );
    std::fs::write(&path, kubeconfig).expect("kubeconfig");
    path
}

/// Starts the example metrics server on `port` with a serving certificate
/// for `metrics-server.kube-system.svc` from the cluster CA, authenticating
/// tokens and authorizing requests through the cluster as its own
/// ServiceAccount. It is given no CA flags: it reads the front proxy's
/// trust from the cluster's extension-apiserver-authentication ConfigMap.
pub(crate) async fn start_addon(tc: &TestCluster, port: u16, dir: &std::path::Path) -> AddOn {
    let kubeconfig = addon_kubeconfig(tc, dir).await;
    let pki = tc.cluster.pki();
    let (cert, key) = (dir.join("metrics.crt"), dir.join("metrics.key"));
    if !cert.exists() {
        deploy::pki::issue_serving_cert(
            pki,
            &cert,
            &key,
            "metrics-server",
            &["metrics-server.kube-system.svc", "127.0.0.1"],
        )
        .expect("serving cert");
    }
    let log = dir.join(format!("metrics-{port}.log"));
    let out = std::fs::File::create(&log).expect("log file");
    let bin = tc.cluster.config().bin_dir.join("example-metrics-server");
    let child = tokio::process::Command::new(bin)
        .args([
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            &port.to_string(),
            "--tls-cert-file",
            &cert.display().to_string(),
            "--tls-private-key-file",
            &key.display().to_string(),
            "--node-name",
            NODE,
            "--metric-resolution",
            "1s",
            "--authentication-kubeconfig",
            &kubeconfig.display().to_string(),
            "--authorization-kubeconfig",
            &kubeconfig.display().to_string(),
        ])
        .stdout(out.try_clone().expect("log fd"))
        .stderr(out)
        .kill_on_drop(true)
        .spawn()
        .expect("example-metrics-server must be built (cargo build --workspace --bins)");
    AddOn { child, log }
}

pub(crate) fn manifests(ca_pem: &[u8], port: u16) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        r#"apiVersion: v1
kind: Node
metadata:
  name: {NODE}
---
apiVersion: v1
kind: Service
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  ports:
  - name: https
    port: 443
    targetPort: {port}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: metrics-server-1
  namespace: kube-system
  labels:
    kubernetes.io/service-name: metrics-server
addressType: IPv4
ports:
- name: https
  port: {port}
endpoints:
- addresses: ["127.0.0.1"]
  conditions:
    ready: true
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  caBundle: {ca}
  service:
    namespace: kube-system
    name: metrics-server
"#
    )
}
