//! The cluster: configuration, start/stop of etcd and the tiers.

use crate::kubeconfig::write_kubeconfig;
use crate::pki::{self, Pki};
use crate::ports::{ensure_port_available, Ports};
use crate::process::{self, Managed, READY_TIMEOUT, STOP_GRACE};
use anyhow::Context;
use std::fmt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// One of the three API server processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// `kube-aggregator`: the front door on the aggregator port.
    Aggregator,
    /// `kube-core-apiserver`: built-in kinds, delegates to extensions.
    KubeCore,
    /// `kube-extensions-apiserver`: CRDs and custom resources.
    Extensions,
}

impl Tier {
    /// The order in which the tiers are started (stop order is the reverse).
    pub const START_ORDER: [Tier; 3] = [Tier::Extensions, Tier::KubeCore, Tier::Aggregator];

    /// File name of the tier's binary in the bin dir.
    pub fn binary_name(self) -> &'static str {
        match self {
            Tier::Aggregator => "kube-aggregator",
            Tier::KubeCore => "kube-core-apiserver",
            Tier::Extensions => "kube-extensions-apiserver",
        }
    }

    /// Short name used for log files and messages (`aggregator`, `kube-core`, `extensions`).
    pub fn name(self) -> &'static str {
        match self {
            Tier::Aggregator => "aggregator",
            Tier::KubeCore => "kube-core",
            Tier::Extensions => "extensions",
        }
    }

    /// The tier this one forwards unhandled requests to, if any.
    pub fn delegate(self) -> Option<Tier> {
        match self {
            Tier::Aggregator => Some(Tier::KubeCore),
            Tier::KubeCore => Some(Tier::Extensions),
            Tier::Extensions => None,
        }
    }

    /// The tier's HTTPS port in `ports`.
    pub fn port(self, ports: &Ports) -> u16 {
        match self {
            Tier::Aggregator => ports.aggregator,
            Tier::KubeCore => ports.kube_core,
            Tier::Extensions => ports.extensions,
        }
    }

    /// Serving certificate and key of the tier.
    pub fn serving_pair(self, pki: &Pki) -> (&Path, &Path) {
        match self {
            Tier::Aggregator => (&pki.aggregator_cert, &pki.aggregator_key),
            Tier::KubeCore => (&pki.kube_core_cert, &pki.kube_core_key),
            Tier::Extensions => (&pki.extensions_cert, &pki.extensions_key),
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Additional command-line arguments appended to each tier's flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraArgs {
    /// Extra arguments for `kube-aggregator`.
    pub aggregator: Vec<String>,
    /// Extra arguments for `kube-core-apiserver`.
    pub kube_core: Vec<String>,
    /// Extra arguments for `kube-extensions-apiserver`.
    pub extensions: Vec<String>,
}

impl ExtraArgs {
    /// The extra arguments of `tier`.
    pub fn for_tier(&self, tier: Tier) -> &[String] {
        match tier {
            Tier::Aggregator => &self.aggregator,
            Tier::KubeCore => &self.kube_core,
            Tier::Extensions => &self.extensions,
        }
    }
}

/// How each tier reaches the next one on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TierLink {
    /// HTTPS on loopback with the front-proxy client certificate, as
    /// between hosts.
    Tls,
    /// The next tier's Unix socket in `<state>/run` (`--unix-socket`,
    /// `--delegate-url unix:PATH`): plain HTTP, the front proxy identified
    /// by the kernel's peer credentials, so no TLS and no TCP/IP stack on
    /// the hop. The tiers keep their HTTPS ports.
    #[default]
    UnixSocket,
}

/// The longest Unix socket path the kernel takes (`sun_path`, 108 bytes
/// with its NUL), with room to spare.
const MAX_SOCKET_PATH: usize = 100;

/// Everything needed to run a cluster.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// Root of the state directory (PKI, etcd data, kubeconfig, logs).
    pub state_dir: PathBuf,
    /// Directory containing the three tier binaries.
    pub bin_dir: PathBuf,
    /// Loopback ports to listen on.
    pub ports: Ports,
    /// The etcd binary; a bare name is looked up in `PATH`.
    pub etcd_binary: PathBuf,
    /// Extra flags per tier.
    pub extra_args: ExtraArgs,
    /// Send each process's stdout/stderr to `<state>/logs/<name>.log`
    /// (otherwise they inherit this process's stdout/stderr).
    pub log_to_files: bool,
    /// How each tier reaches the next.
    pub tier_link: TierLink,
}

impl ClusterConfig {
    /// Defaults for `state_dir`: [`crate::default_bin_dir`], the default
    /// ports, `etcd` from `PATH`, no extra arguments, logs to files.
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        ClusterConfig {
            state_dir: state_dir.into(),
            bin_dir: crate::default_bin_dir(),
            ports: Ports::defaults(),
            etcd_binary: PathBuf::from(crate::DEFAULT_ETCD_BINARY),
            extra_args: ExtraArgs::default(),
            log_to_files: true,
            tier_link: TierLink::default(),
        }
    }
}

/// A process that exited while it was supposed to be running.
#[derive(Debug)]
pub struct ExitedProcess {
    /// `etcd`, `extensions`, `kube-core` or `aggregator`.
    pub name: &'static str,
    /// How it exited.
    pub status: ExitStatus,
    /// The last lines of its log.
    pub log_tail: String,
}

impl fmt::Display for ExitedProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} exited unexpectedly ({}); last output:\n{}",
            self.name, self.status, self.log_tail
        )
    }
}

/// Flags a tier gets when the whole cluster, its add-ons included, runs on
/// this one host: the aggregator may proxy to APIServices whose endpoints
/// are loopback addresses (never to the tiers' own ports).
pub(crate) fn one_host_flags(tier: Tier) -> Vec<String> {
    match tier {
        Tier::Aggregator => vec!["--allow-loopback-apiservice-endpoints=true".into()],
        _ => Vec::new(),
    }
}

/// The command-line flags of `tier` (without the binary), following the
/// flag contract shared with the tier binaries, with `extra` appended; each
/// tier reaches the next over HTTPS.
pub fn tier_args(tier: Tier, pki: &Pki, ports: &Ports, extra: &[String]) -> Vec<String> {
    tier_args_linked(tier, pki, ports, None, extra)
}

/// [`tier_args`], the tiers linked by Unix sockets in `sockets` when given
/// (`<tier>.sock`: each tier behind another serves one, the tier in front
/// sends to it), except a tier whose `extra` flags add `--delegate-url`
/// replicas: it reaches them all over HTTPS.
pub fn tier_args_linked(
    tier: Tier,
    pki: &Pki,
    ports: &Ports,
    sockets: Option<&Path>,
    extra: &[String],
) -> Vec<String> {
    let (cert, key) = tier.serving_pair(pki);
    let path = |p: &Path| p.display().to_string();
    let mut args: Vec<String> = vec![
        "--bind-address".into(),
        "127.0.0.1".into(),
        "--secure-port".into(),
        tier.port(ports).to_string(),
        "--tls-cert-file".into(),
        path(cert),
        "--tls-private-key-file".into(),
        path(key),
        "--client-ca-file".into(),
        path(&pki.ca_cert),
        "--token-auth-file".into(),
        path(&pki.tokens_file),
        "--requestheader-client-ca-file".into(),
        path(&pki.front_proxy_ca_cert),
        "--requestheader-allowed-names".into(),
        pki::FRONT_PROXY_CLIENT_COMMON_NAME.into(),
        "--requestheader-username-headers".into(),
        "X-Remote-User".into(),
        "--requestheader-group-headers".into(),
        "X-Remote-Group".into(),
        "--requestheader-extra-headers-prefix".into(),
        "X-Remote-Extra-".into(),
    ];
    args.extend([
        "--etcd-servers".into(),
        format!("https://127.0.0.1:{}", ports.etcd_client),
        "--etcd-cafile".into(),
        path(&pki.etcd_ca_cert),
        "--etcd-certfile".into(),
        path(&pki.etcd_client_cert),
        "--etcd-keyfile".into(),
        path(&pki.etcd_client_key),
    ]);
    args.push("--service-account-key-file".into());
    args.push(path(&pki.service_account_key));
    if tier == Tier::KubeCore {
        args.push("--service-cluster-ip-range".into());
        args.push("10.96.0.0/12".into());
        args.push("--service-account-signing-key-file".into());
        args.push(path(&pki.service_account_key));
    }
    if tier == Tier::Aggregator {
        // The tiers behind trust the aggregator's front-proxy certificate:
        // no APIService may point it at them, whichever link it uses.
        args.push("--tier-addresses".into());
        args.push(format!(
            "127.0.0.1:{},127.0.0.1:{}",
            ports.kube_core, ports.extensions
        ));
    }
    if let (Some(dir), Tier::KubeCore | Tier::Extensions) = (sockets, tier) {
        args.push("--unix-socket".into());
        args.push(path(&socket_path(dir, tier)));
    }
    // Extra `--delegate-url`s add replicas of the next tier, reached by URL:
    // the first one is then its HTTPS port too.
    let more_delegates = extra
        .iter()
        .any(|a| a == "--delegate-url" || a.starts_with("--delegate-url="));
    if let Some(next) = tier.delegate() {
        let url = match sockets {
            Some(dir) if !more_delegates => format!("unix:{}", socket_path(dir, next).display()),
            _ => format!("https://127.0.0.1:{}", next.port(ports)),
        };
        args.extend([
            "--delegate-url".into(),
            url,
            "--delegate-ca-file".into(),
            path(&pki.ca_cert),
            "--proxy-client-cert-file".into(),
            path(&pki.front_proxy_client_cert),
            "--proxy-client-key-file".into(),
            path(&pki.front_proxy_client_key),
        ]);
    }
    args.extend(extra.iter().cloned());
    args
}

/// The Unix socket `tier` serves its front proxy on, in `dir`.
pub fn socket_path(dir: &Path, tier: Tier) -> PathBuf {
    dir.join(format!("{}.sock", tier.name()))
}

/// The command-line flags of etcd for `data_dir` and `ports`: clients over
/// TLS with client-certificate authentication (as kubeadm runs it), peers
/// on loopback.
pub(crate) fn etcd_args(data_dir: &Path, ports: &Ports, pki: &Pki) -> Vec<String> {
    let client = format!("https://127.0.0.1:{}", ports.etcd_client);
    let peer = format!("http://127.0.0.1:{}", ports.etcd_peer);
    vec![
        "--name".into(),
        "default".into(),
        "--data-dir".into(),
        data_dir.display().to_string(),
        "--listen-client-urls".into(),
        client.clone(),
        "--advertise-client-urls".into(),
        client,
        "--listen-peer-urls".into(),
        peer.clone(),
        "--initial-advertise-peer-urls".into(),
        peer.clone(),
        "--initial-cluster".into(),
        format!("default={peer}"),
        "--cert-file".into(),
        pki.etcd_server_cert.display().to_string(),
        "--key-file".into(),
        pki.etcd_server_key.display().to_string(),
        "--trusted-ca-file".into(),
        pki.etcd_ca_cert.display().to_string(),
        "--client-cert-auth".into(),
    ]
}

/// etcd refuses to start on architectures it does not officially support
/// unless `ETCD_UNSUPPORTED_ARCH` names the architecture.
pub(crate) fn etcd_env() -> Vec<(String, String)> {
    if std::env::var_os("ETCD_UNSUPPORTED_ARCH").is_some() {
        return Vec::new();
    }
    let goarch = match std::env::consts::ARCH {
        "x86_64" => return Vec::new(),
        "aarch64" => "arm64",
        "powerpc64" if cfg!(target_endian = "little") => "ppc64le",
        "riscv64" => "riscv64",
        "s390x" => "s390x",
        "x86" => "386",
        "arm" => "arm",
        other => other,
    };
    vec![("ETCD_UNSUPPORTED_ARCH".into(), goarch.into())]
}

/// A running local cluster. Dropping it kills all its processes.
pub struct Cluster {
    cfg: ClusterConfig,
    pki: Pki,
    kubeconfig: PathBuf,
    https: reqwest::Client,
    /// etcd's HTTP endpoints, with the etcd client certificate.
    etcd_http: reqwest::Client,
    etcd: Option<Managed>,
    aggregator: Option<Managed>,
    kube_core: Option<Managed>,
    extensions: Option<Managed>,
    own_process_groups: bool,
}

impl Cluster {
    /// Prepares the state directory (PKI if missing, etcd data dir, log dir,
    /// kubeconfig), starts etcd and the tiers and waits until all are ready.
    /// On failure everything started so far is stopped again.
    pub async fn start(cfg: ClusterConfig) -> anyhow::Result<Cluster> {
        let mut cluster = Cluster::prepare(cfg)?;
        if let Err(e) = cluster.start_all().await {
            if let Err(stop_err) = cluster.stop().await {
                tracing::warn!("stopping after a failed start: {stop_err:#}");
            }
            return Err(e);
        }
        Ok(cluster)
    }

    /// Prepares the state directory and kubeconfig without starting any
    /// process; follow with [`Cluster::start_all`].
    pub fn prepare(mut cfg: ClusterConfig) -> anyhow::Result<Cluster> {
        cfg.state_dir = std::path::absolute(&cfg.state_dir)
            .with_context(|| format!("resolving {}", cfg.state_dir.display()))?;
        cfg.bin_dir = std::path::absolute(&cfg.bin_dir)
            .with_context(|| format!("resolving {}", cfg.bin_dir.display()))?;
        let private_dir = |p: &Path| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(p)
                .with_context(|| format!("creating {}", p.display()))
        };
        private_dir(&cfg.state_dir)?;
        private_dir(&cfg.state_dir.join("etcd"))?;
        private_dir(&cfg.state_dir.join("logs"))?;
        private_dir(&cfg.state_dir.join("run"))?;
        let pki = pki::ensure(&cfg.state_dir.join("pki"))?;
        let kubeconfig = cfg.state_dir.join("kubeconfig");
        let server = format!("https://127.0.0.1:{}", cfg.ports.aggregator);
        write_kubeconfig(&kubeconfig, &pki, &server)?;
        Ok(Cluster {
            https: process::https_probe_client(&pki.ca_cert)?,
            etcd_http: process::etcd_http_client(&pki)?,
            cfg,
            pki,
            kubeconfig,
            etcd: None,
            aggregator: None,
            kube_core: None,
            extensions: None,
            own_process_groups: false,
        })
    }

    /// Starts etcd, then extensions, kube-core and the aggregator, each once
    /// the previous one is ready. Already running processes are left alone.
    pub async fn start_all(&mut self) -> anyhow::Result<()> {
        for tier in Tier::START_ORDER {
            let bin = self.binary(tier);
            anyhow::ensure!(
                bin.is_file(),
                "{} not found in {}; build the tiers first (cargo build --bins)",
                tier.binary_name(),
                self.cfg.bin_dir.display()
            );
        }
        self.start_etcd().await?;
        for tier in Tier::START_ORDER {
            self.start_tier(tier).await?;
        }
        tracing::info!("cluster is ready at {}", self.aggregator_url());
        Ok(())
    }

    /// Start processes started from now on in their own process groups
    /// (default: off). The supervisor binary turns this on so that Ctrl-C in
    /// a terminal reaches only the supervisor, which then stops everything
    /// in reverse order; tests leave it off so that interrupting the test
    /// run also interrupts the cluster.
    pub fn set_own_process_groups(&mut self, on: bool) {
        self.own_process_groups = on;
    }

    /// The configuration (with absolute `state_dir` and `bin_dir`).
    pub fn config(&self) -> &ClusterConfig {
        &self.cfg
    }

    /// The state directory (absolute).
    pub fn state_dir(&self) -> &Path {
        &self.cfg.state_dir
    }

    /// Path of the admin kubeconfig (absolute).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Paths of the PKI files and the admin token.
    pub fn pki(&self) -> &Pki {
        &self.pki
    }

    /// The ports in use.
    pub fn ports(&self) -> Ports {
        self.cfg.ports
    }

    /// `https://127.0.0.1:<aggregator port>`: the cluster's API endpoint.
    pub fn aggregator_url(&self) -> String {
        self.tier_url(Tier::Aggregator)
    }

    /// `https://127.0.0.1:<kube-core port>`.
    pub fn kube_core_url(&self) -> String {
        self.tier_url(Tier::KubeCore)
    }

    /// `https://127.0.0.1:<extensions port>`.
    pub fn extensions_url(&self) -> String {
        self.tier_url(Tier::Extensions)
    }

    /// The HTTPS base URL of `tier`.
    pub fn tier_url(&self, tier: Tier) -> String {
        format!("https://127.0.0.1:{}", tier.port(&self.cfg.ports))
    }

    /// `https://127.0.0.1:<etcd client port>`.
    pub fn etcd_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.cfg.ports.etcd_client)
    }

    /// A client of etcd's HTTP endpoints (health, the gRPC gateway) holding
    /// the etcd client certificate.
    pub fn etcd_http_client(&self) -> reqwest::Client {
        self.etcd_http.clone()
    }

    /// The log file of `name` (`etcd`, `aggregator`, `kube-core`, `extensions`).
    pub fn log_file(&self, name: &str) -> PathBuf {
        self.cfg.state_dir.join("logs").join(format!("{name}.log"))
    }

    /// The process id of etcd, if it is running.
    pub fn etcd_pid(&self) -> Option<u32> {
        self.etcd.as_ref().and_then(Managed::pid)
    }

    /// The process id of `tier`, if it is running.
    pub fn tier_pid(&self, tier: Tier) -> Option<u32> {
        self.tier_ref(tier).as_ref().and_then(Managed::pid)
    }

    /// Starts etcd (same data dir and ports as before) and waits until it
    /// is healthy. Does nothing if it is already running.
    pub async fn start_etcd(&mut self) -> anyhow::Result<()> {
        if Self::is_alive(&mut self.etcd)? {
            return Ok(());
        }
        ensure_port_available("etcd client", self.cfg.ports.etcd_client)?;
        ensure_port_available("etcd peer", self.cfg.ports.etcd_peer)?;
        let args = etcd_args(&self.cfg.state_dir.join("etcd"), &self.cfg.ports, &self.pki);
        let log = self.log_path("etcd");
        let child = Managed::spawn(
            "etcd",
            &self.cfg.etcd_binary,
            &args,
            &etcd_env(),
            log.as_deref(),
            self.own_process_groups,
        )?;
        let client = self.etcd_http.clone();
        let url = self.etcd_url();
        let slot = &mut self.etcd;
        let child = slot.insert(child);
        let ready = child
            .wait_ready(READY_TIMEOUT, || process::etcd_health(&client, &url))
            .await;
        Self::abandon_on_error(slot, ready).await
    }

    /// Stops etcd (SIGTERM, then SIGKILL after 10 s). Does nothing if it is
    /// not running.
    pub async fn stop_etcd(&mut self) -> anyhow::Result<()> {
        Self::stop_slot(&mut self.etcd).await
    }

    /// Where the tiers' Unix sockets are (`<state>/run`) when they are linked
    /// by them; `None` for HTTPS links, or when the state directory's path
    /// is too long for a socket's (HTTPS then, with a warning).
    fn socket_dir(&self) -> Option<PathBuf> {
        if self.cfg.tier_link != TierLink::UnixSocket {
            return None;
        }
        let dir = self.cfg.state_dir.join("run");
        let longest = socket_path(&dir, Tier::Extensions);
        if longest.as_os_str().len() > MAX_SOCKET_PATH {
            tracing::warn!(
                path = %longest.display(),
                "the state directory's path is too long for Unix sockets: the tiers are linked over HTTPS"
            );
            return None;
        }
        Some(dir)
    }

    /// Starts `tier` and waits until its `/readyz` answers 200. Does nothing
    /// if it is already running.
    pub async fn start_tier(&mut self, tier: Tier) -> anyhow::Result<()> {
        if Self::is_alive(self.tier_slot(tier))? {
            return Ok(());
        }
        ensure_port_available(tier.name(), tier.port(&self.cfg.ports))?;
        let mut extra = one_host_flags(tier);
        extra.extend(self.cfg.extra_args.for_tier(tier).iter().cloned());
        let sockets = self.socket_dir();
        let args = tier_args_linked(tier, &self.pki, &self.cfg.ports, sockets.as_deref(), &extra);
        let log = self.log_path(tier.name());
        let child = Managed::spawn(
            tier.name(),
            &self.binary(tier),
            &args,
            &[],
            log.as_deref(),
            self.own_process_groups,
        )?;
        let client = self.https.clone();
        let url = self.tier_url(tier);
        let slot = self.tier_slot(tier);
        let child = slot.insert(child);
        let ready = child
            .wait_ready(READY_TIMEOUT, || process::readyz(&client, &url))
            .await;
        Self::abandon_on_error(slot, ready).await
    }

    /// Stops `tier` (SIGTERM, then SIGKILL after 10 s). Does nothing if it
    /// is not running.
    pub async fn stop_tier(&mut self, tier: Tier) -> anyhow::Result<()> {
        Self::stop_slot(self.tier_slot(tier)).await
    }

    /// Kills `tier` with SIGKILL (no graceful shutdown: a crash) and reaps
    /// it. Does nothing if it is not running.
    pub fn kill_tier(&mut self, tier: Tier) {
        if let Some(mut child) = self.tier_slot(tier).take() {
            child.kill_now();
        }
    }

    /// Kills etcd with SIGKILL and reaps it. Does nothing if it is not
    /// running.
    pub fn kill_etcd(&mut self) {
        if let Some(mut child) = self.etcd.take() {
            child.kill_now();
        }
    }

    /// Stops everything in reverse start order: aggregator, kube-core,
    /// extensions, etcd. All are attempted; the first error is returned.
    pub async fn stop(&mut self) -> anyhow::Result<()> {
        let mut first_error = None;
        for slot in [
            &mut self.aggregator,
            &mut self.kube_core,
            &mut self.extensions,
            &mut self.etcd,
        ] {
            if let Err(e) = Self::stop_slot(slot).await {
                tracing::warn!("{e:#}");
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Checks (without blocking) whether a process that should be running
    /// has exited. An exited process is forgotten and reported once.
    pub fn poll_exited(&mut self) -> anyhow::Result<Option<ExitedProcess>> {
        for slot in [
            &mut self.etcd,
            &mut self.extensions,
            &mut self.kube_core,
            &mut self.aggregator,
        ] {
            let Some(child) = slot else { continue };
            if let Some(status) = child.try_wait()? {
                let exited = ExitedProcess {
                    name: child.name,
                    status,
                    log_tail: child.log_tail(),
                };
                *slot = None;
                return Ok(Some(exited));
            }
        }
        Ok(None)
    }

    fn binary(&self, tier: Tier) -> PathBuf {
        self.cfg.bin_dir.join(tier.binary_name())
    }

    fn log_path(&self, name: &str) -> Option<PathBuf> {
        self.cfg.log_to_files.then(|| self.log_file(name))
    }

    fn tier_ref(&self, tier: Tier) -> &Option<Managed> {
        match tier {
            Tier::Aggregator => &self.aggregator,
            Tier::KubeCore => &self.kube_core,
            Tier::Extensions => &self.extensions,
        }
    }

    fn tier_slot(&mut self, tier: Tier) -> &mut Option<Managed> {
        match tier {
            Tier::Aggregator => &mut self.aggregator,
            Tier::KubeCore => &mut self.kube_core,
            Tier::Extensions => &mut self.extensions,
        }
    }

    /// Whether the process in `slot` is running; forgets it if it exited.
    fn is_alive(slot: &mut Option<Managed>) -> anyhow::Result<bool> {
        let Some(child) = slot else { return Ok(false) };
        if let Some(status) = child.try_wait()? {
            tracing::warn!("{} had exited ({status})", child.name);
            *slot = None;
            return Ok(false);
        }
        Ok(true)
    }

    async fn stop_slot(slot: &mut Option<Managed>) -> anyhow::Result<()> {
        if let Some(child) = slot {
            child
                .stop(STOP_GRACE)
                .await
                .with_context(|| format!("stopping {}", child.name))?;
            *slot = None;
        }
        Ok(())
    }

    /// After a failed readiness wait, stop the process and forget it.
    async fn abandon_on_error(
        slot: &mut Option<Managed>,
        ready: anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if ready.is_err() {
            if let Some(mut child) = slot.take() {
                let _ = child.stop(std::time::Duration::from_secs(2)).await;
            }
        }
        ready
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for slot in [
            &mut self.aggregator,
            &mut self.kube_core,
            &mut self.extensions,
            &mut self.etcd,
        ] {
            if let Some(mut child) = slot.take() {
                child.kill_now();
            }
        }
    }
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
