//! Starts etcd and the three tiers on free loopback ports (through the
//! `deploy` library, the same code the operator command uses) and gives tests
//! the clients a user has: kubectl, kube-rs, and raw HTTPS.

use std::path::PathBuf;
use std::time::Duration;

use deploy::{Cluster, ClusterConfig, Ports};

/// How many clusters (etcd + three tiers each) the tests run at once: the
/// machine has 2 cores, and a cluster per test thread starves them all.
/// `E2E_MAX_CLUSTERS` overrides it.
static CLUSTERS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();

fn cluster_slots() -> &'static tokio::sync::Semaphore {
    CLUSTERS.get_or_init(|| {
        let n = std::env::var("E2E_MAX_CLUSTERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3);
        tokio::sync::Semaphore::new(n)
    })
}

/// A running cluster in a temporary directory; everything stops on drop.
pub struct TestCluster {
    pub cluster: Cluster,
    dir: tempfile::TempDir,
    // Dropped last: the slot frees once the cluster is gone.
    _slot: tokio::sync::SemaphorePermit<'static>,
}

/// How a raw HTTPS client authenticates.
#[derive(Clone, Copy, Debug)]
pub enum Auth {
    /// No credentials.
    None,
    /// The admin client certificate (CN=kubernetes-admin, O=system:masters).
    AdminCert,
    /// The admin bearer token from the static token file.
    AdminToken,
    /// The front-proxy client certificate (only the tiers behind the
    /// aggregator trust it, for X-Remote-* headers).
    FrontProxyCert,
}

impl TestCluster {
    /// Starts a fresh cluster.
    pub async fn start() -> TestCluster {
        Self::start_with(deploy::ExtraArgs::default()).await
    }

    /// Starts a fresh cluster whose tiers get `extra` flags (e.g.
    /// `--authorization-mode=Node,RBAC` for kube-core).
    pub async fn start_with(extra: deploy::ExtraArgs) -> TestCluster {
        let slot = cluster_slots()
            .acquire()
            .await
            .expect("cluster slots are never closed");
        // Free ports are found by binding port 0, which the kernel also
        // hands out as source ports of outgoing connections: with many
        // tests connecting at once, one can be taken before the cluster
        // binds it. That is retried with fresh ports; anything else fails.
        let mut attempt = 0;
        loop {
            attempt += 1;
            let dir = tempfile::tempdir().expect("tempdir");
            let mut cfg = ClusterConfig::new(dir.path().join("state"));
            cfg.ports = Ports::free().expect("free ports");
            cfg.extra_args = extra.clone();
            match Cluster::start(cfg).await {
                Ok(cluster) => {
                    return TestCluster {
                        cluster,
                        dir,
                        _slot: slot,
                    }
                }
                Err(e) => {
                    let e = format!("{e:#}");
                    let port_taken =
                        e.contains("is not available") || e.contains("Address already in use");
                    if !port_taken || attempt >= 3 {
                        panic!("starting the cluster: {e}");
                    }
                    eprintln!("a port was taken while starting the cluster, retrying: {e}");
                }
            }
        }
    }

    /// The kubeconfig path.
    pub fn kubeconfig(&self) -> PathBuf {
        self.cluster.kubeconfig().to_path_buf()
    }

    /// Runs kubectl against the aggregator; returns (success, stdout, stderr).
    pub async fn kubectl(&self, args: &[&str]) -> (bool, String, String) {
        self.kubectl_stdin(args, None).await
    }

    /// Runs kubectl with `stdin` as standard input.
    pub async fn kubectl_stdin(
        &self,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (bool, String, String) {
        use tokio::io::AsyncWriteExt;
        let mut cmd = tokio::process::Command::new("kubectl");
        cmd.args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .env("KUBECACHEDIR", self.dir.path().join("kube-cache"))
            .env("HOME", self.dir.path())
            .stdin(if stdin.is_some() {
                std::process::Stdio::piped()
            } else {
                std::process::Stdio::null()
            })
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("kubectl must be on PATH");
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(input.as_bytes())
                .await
                .expect("writing kubectl stdin");
        }
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("kubectl timed out")
            .expect("kubectl failed to run");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs kubectl and returns stdout, failing the test on error.
    pub async fn kubectl_ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl(args).await;
        assert!(ok, "kubectl {args:?} failed:\nstdout: {out}\nstderr: {err}");
        out
    }

    /// Creates namespace `ns` and waits for the service-account controller
    /// to give it a `default` ServiceAccount, as upstream's e2e framework
    /// does: until then the ServiceAccount admission plugin refuses pods
    /// (403 "error looking up service account"), exactly as upstream's.
    pub async fn create_namespace_for_pods(&self, ns: &str) {
        self.kubectl_ok(&["create", "namespace", ns]).await;
        self.wait_for_default_service_account(ns).await;
    }

    /// Waits until namespace `ns` has its `default` ServiceAccount.
    pub async fn wait_for_default_service_account(&self, ns: &str) {
        let ready = eventually(Duration::from_secs(20), || async {
            self.kubectl(&["get", "serviceaccount", "default", "-n", ns])
                .await
                .0
        })
        .await;
        assert!(ready, "no default service account in namespace {ns}");
    }

    /// Starts a long-running kubectl (e.g. `get -w`).
    pub fn kubectl_spawn(&self, args: &[&str]) -> tokio::process::Child {
        tokio::process::Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .env("KUBECACHEDIR", self.dir.path().join("kube-cache"))
            .env("HOME", self.dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("kubectl must be on PATH")
    }

    /// A kube-rs client from the kubeconfig.
    pub async fn client(&self) -> kube::Client {
        let kc =
            kube::config::Kubeconfig::read_from(self.kubeconfig()).expect("reading kubeconfig");
        let cfg =
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .expect("kube config");
        kube::Client::try_from(cfg).expect("kube client")
    }

    /// A raw HTTPS client trusting the cluster CA.
    pub fn http(&self, auth: Auth) -> reqwest::Client {
        let pki = self.cluster.pki();
        let ca = std::fs::read(&pki.ca_cert).expect("ca");
        let mut b = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("ca pem"))
            .timeout(Duration::from_secs(30));
        let identity = |cert: &PathBuf, key: &PathBuf| {
            let mut pem = std::fs::read(cert).expect("cert");
            pem.extend(std::fs::read(key).expect("key"));
            reqwest::Identity::from_pem(&pem).expect("identity")
        };
        match auth {
            Auth::None => {}
            Auth::AdminCert => b = b.identity(identity(&pki.admin_cert, &pki.admin_key)),
            Auth::FrontProxyCert => {
                b = b.identity(identity(
                    &pki.front_proxy_client_cert,
                    &pki.front_proxy_client_key,
                ))
            }
            Auth::AdminToken => {
                let mut h = reqwest::header::HeaderMap::new();
                h.insert(
                    reqwest::header::AUTHORIZATION,
                    format!("Bearer {}", pki.admin_token)
                        .parse()
                        .expect("token header"),
                );
                b = b.default_headers(h);
            }
        }
        b.build().expect("http client")
    }

    /// Starts one more kube-core against the cluster's etcd, on `port` or a
    /// free one (a second replica, as operators run them).
    pub fn extra_kube_core(&self, port: Option<u16>) -> (tokio::process::Child, u16) {
        self.extra_kube_core_with(port, &[])
    }

    /// [`Self::extra_kube_core`] with `extra` flags.
    pub fn extra_kube_core_with(
        &self,
        port: Option<u16>,
        extra: &[String],
    ) -> (tokio::process::Child, u16) {
        let port = port.unwrap_or_else(|| deploy::free_port().expect("free port"));
        let mut ports = self.cluster.ports();
        ports.kube_core = port;
        let args = deploy::tier_args(deploy::Tier::KubeCore, self.cluster.pki(), &ports, extra);
        let bin = self
            .cluster
            .config()
            .bin_dir
            .join(deploy::Tier::KubeCore.binary_name());
        let child = tokio::process::Command::new(bin)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("starting another kube-core");
        (child, port)
    }

    /// A client of the cluster's etcd, over TLS with the tiers' etcd client
    /// certificate (etcd requires one, as kubeadm runs it).
    pub async fn etcd(&self) -> etcd_client::Client {
        let pki = self.cluster.pki();
        let read = |p: &std::path::Path| std::fs::read(p).expect("etcd PKI");
        let tls = etcd_client::TlsOptions::new()
            .ca_certificate(etcd_client::Certificate::from_pem(read(&pki.etcd_ca_cert)))
            .identity(etcd_client::Identity::from_pem(
                read(&pki.etcd_client_cert),
                read(&pki.etcd_client_key),
            ));
        etcd_client::Client::connect(
            [self.cluster.etcd_url()],
            Some(etcd_client::ConnectOptions::new().with_tls(tls)),
        )
        .await
        .expect("etcd")
    }

    /// The aggregator's URL joined with `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.cluster.aggregator_url(), path)
    }
}

/// The text of `<base>/metrics`; `None` when it cannot be read.
pub async fn metrics_text(http: &reqwest::Client, base: &str) -> Option<String> {
    http.get(format!("{base}/metrics"))
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()
}

/// Asserts a response is a Status with the given code and reason, returning it.
pub async fn expect_status(resp: reqwest::Response, code: u16, reason: &str) -> serde_json::Value {
    let got = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({got}): {text}"));
    assert_eq!(got, code, "status code; body: {text}");
    assert_eq!(v["kind"], "Status", "{text}");
    assert_eq!(v["apiVersion"], "v1", "{text}");
    assert_eq!(v["status"], "Failure", "{text}");
    assert_eq!(v["code"], code, "{text}");
    assert_eq!(v["reason"], reason, "{text}");
    v
}

/// Retries `f` until it returns true or `timeout` passes.
pub async fn eventually<F, Fut>(timeout: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if f().await {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Sending a raw HTTPS request in a test. A transport failure fails the test
/// with the error, so call sites read as the request they make.
pub trait SendExt {
    /// Sends the request and returns the response, whatever its status.
    fn sent(self) -> impl std::future::Future<Output = reqwest::Response> + Send;

    /// Sends the request and decodes the response body as JSON (any status).
    fn fetch_json<T: serde::de::DeserializeOwned>(
        self,
    ) -> impl std::future::Future<Output = T> + Send;
}

impl SendExt for reqwest::RequestBuilder {
    async fn sent(self) -> reqwest::Response {
        match self.send().await {
            Ok(resp) => resp,
            Err(err) => panic!("request failed: {err}"),
        }
    }

    async fn fetch_json<T: serde::de::DeserializeOwned>(self) -> T {
        let resp = self.sent().await;
        let url = resp.url().clone();
        match resp.json().await {
            Ok(body) => body,
            Err(err) => panic!("the body of {url} is not the JSON expected: {err}"),
        }
    }
}

/// Asserts a response has status `code`, naming its body when it has not;
/// returns the body.
pub async fn expect_code(resp: reqwest::Response, code: u16) -> String {
    let got = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    assert_eq!(got, code, "{text}");
    text
}

/// The column names of a table `kubectl get` printed.
pub fn table_header(table: &str) -> Vec<&str> {
    table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect()
}

/// Asserts a response has status `code` and returns its body as JSON.
pub async fn expect_json(resp: reqwest::Response, code: u16) -> serde_json::Value {
    let text = expect_code(resp, code).await;
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("not JSON ({err}): {text}"))
}

/// `metadata.resourceVersion` of an object or list; fails the test when it
/// has none.
pub fn resource_version(object: &serde_json::Value) -> String {
    match object["metadata"]["resourceVersion"].as_str() {
        Some(rv) => rv.to_string(),
        None => panic!("no metadata.resourceVersion in {object}"),
    }
}
