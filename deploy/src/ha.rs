//! The highly available layout on one machine (`up --ha`): three etcd
//! members (clients and peers over TLS with client certificates) and two
//! replicas of each tier. Each tier replica lists every etcd member and
//! both replicas of the next tier (`--delegate-url a,b`), so losing any one
//! process of each kind loses nothing; the kubeconfig names the first
//! aggregator (in front of a real cluster, a load balancer over both).
//!
//! Processes are named `etcd-0..2`, `aggregator-0/1`, `kube-core-0/1`,
//! `extensions-0/1`; their logs are `<state>/logs/<name>.log`.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cluster::etcd_env;
use crate::ports::ensure_port_available;
use crate::process::{self, Managed, READY_TIMEOUT, STOP_GRACE};
use crate::{free_port, pki, tier_args, write_kubeconfig, Pki, Ports, Tier};

/// The ports of the layout.
#[derive(Clone, Debug)]
pub struct HaPorts {
    /// `(client, peer)` of each etcd member.
    pub etcd: [(u16, u16); 3],
    pub aggregator: [u16; 2],
    pub kube_core: [u16; 2],
    pub extensions: [u16; 2],
}

impl HaPorts {
    /// etcd on 2379–2384, the first replicas on 6443–6445, the second on
    /// 6453–6455.
    pub fn defaults() -> Self {
        HaPorts {
            etcd: [(2379, 2380), (2381, 2382), (2383, 2384)],
            aggregator: [6443, 6453],
            kube_core: [6444, 6454],
            extensions: [6445, 6455],
        }
    }

    /// Free loopback ports for all of them.
    pub fn free() -> std::io::Result<Self> {
        let p = free_port;
        Ok(HaPorts {
            etcd: [(p()?, p()?), (p()?, p()?), (p()?, p()?)],
            aggregator: [p()?, p()?],
            kube_core: [p()?, p()?],
            extensions: [p()?, p()?],
        })
    }

    fn tier(&self, tier: Tier) -> [u16; 2] {
        match tier {
            Tier::Aggregator => self.aggregator,
            Tier::KubeCore => self.kube_core,
            Tier::Extensions => self.extensions,
        }
    }
}

/// One process of the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    Etcd(usize),
    Tier(Tier, usize),
}

impl Member {
    /// Its name (and log file name).
    pub fn name(self) -> &'static str {
        const ETCD: [&str; 3] = ["etcd-0", "etcd-1", "etcd-2"];
        match self {
            Member::Etcd(i) => ETCD[i.min(2)],
            Member::Tier(Tier::Aggregator, 0) => "aggregator-0",
            Member::Tier(Tier::Aggregator, _) => "aggregator-1",
            Member::Tier(Tier::KubeCore, 0) => "kube-core-0",
            Member::Tier(Tier::KubeCore, _) => "kube-core-1",
            Member::Tier(Tier::Extensions, 0) => "extensions-0",
            Member::Tier(Tier::Extensions, _) => "extensions-1",
        }
    }

    /// Every process, in start order.
    pub fn all() -> Vec<Member> {
        let mut all: Vec<Member> = (0..3).map(Member::Etcd).collect();
        for tier in Tier::START_ORDER {
            all.extend((0..2).map(|r| Member::Tier(tier, r)));
        }
        all
    }
}

/// Configuration of the layout.
#[derive(Clone, Debug)]
pub struct HaConfig {
    pub state_dir: PathBuf,
    pub bin_dir: PathBuf,
    pub etcd_binary: PathBuf,
    pub ports: HaPorts,
    pub log_to_files: bool,
    /// Extra flags for every tier replica.
    pub tier_flags: Vec<String>,
    /// Extra flags for the replicas of one tier.
    pub extra_args: crate::ExtraArgs,
}

impl HaConfig {
    /// Defaults for `state_dir` (the default ports, binaries beside this
    /// executable, `--shutdown-delay-duration=2s` on every tier).
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        HaConfig {
            state_dir: state_dir.into(),
            bin_dir: crate::default_bin_dir(),
            etcd_binary: PathBuf::from(crate::DEFAULT_ETCD_BINARY),
            ports: HaPorts::defaults(),
            log_to_files: true,
            tier_flags: vec!["--shutdown-delay-duration=2s".to_string()],
            extra_args: crate::ExtraArgs::default(),
        }
    }
}

/// A running HA layout; dropping it kills its processes.
pub struct HaCluster {
    cfg: HaConfig,
    pki: Pki,
    kubeconfig: PathBuf,
    https: reqwest::Client,
    etcd_http: reqwest::Client,
    procs: Vec<(Member, Option<Managed>)>,
    own_process_groups: bool,
}

impl HaCluster {
    /// Prepares the state directory, PKI and kubeconfig; starts nothing.
    pub fn prepare(mut cfg: HaConfig) -> anyhow::Result<Self> {
        cfg.state_dir = std::path::absolute(&cfg.state_dir)?;
        cfg.bin_dir = std::path::absolute(&cfg.bin_dir)?;
        for d in ["", "logs", "etcd-0", "etcd-1", "etcd-2"] {
            let dir = cfg.state_dir.join(d);
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .with_context(|| format!("creating {}", dir.display()))?;
        }
        let pki = pki::ensure(&cfg.state_dir.join("pki"))?;
        let kubeconfig = cfg.state_dir.join("kubeconfig");
        write_kubeconfig(
            &kubeconfig,
            &pki,
            &format!("https://127.0.0.1:{}", cfg.ports.aggregator[0]),
        )?;
        Ok(HaCluster {
            https: process::https_probe_client(&pki.ca_cert)?,
            etcd_http: process::etcd_http_client(&pki)?,
            procs: Member::all().into_iter().map(|m| (m, None)).collect(),
            cfg,
            pki,
            kubeconfig,
            own_process_groups: false,
        })
    }

    /// Prepares and starts everything; on failure stops what was started.
    pub async fn start(cfg: HaConfig) -> anyhow::Result<Self> {
        let mut c = Self::prepare(cfg)?;
        if let Err(e) = c.start_all().await {
            let _ = c.stop().await;
            return Err(e);
        }
        Ok(c)
    }

    /// Puts each process in its own process group (see `Cluster`).
    pub fn set_own_process_groups(&mut self, on: bool) {
        self.own_process_groups = on;
    }

    /// The kubeconfig (naming the first aggregator).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The PKI.
    pub fn pki(&self) -> &Pki {
        &self.pki
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.cfg.state_dir
    }

    /// The URL of a member (an etcd member's client URL).
    pub fn url(&self, m: Member) -> String {
        let port = match m {
            Member::Etcd(i) => self.cfg.ports.etcd[i].0,
            Member::Tier(t, r) => self.cfg.ports.tier(t)[r],
        };
        format!("https://127.0.0.1:{port}")
    }

    /// The etcd members' client URLs.
    pub fn etcd_urls(&self) -> Vec<String> {
        (0..3).map(|i| self.url(Member::Etcd(i))).collect()
    }

    /// The process id of a member, if it runs.
    pub fn pid(&self, m: Member) -> Option<u32> {
        self.procs
            .iter()
            .find(|(p, _)| *p == m)
            .and_then(|(_, c)| c.as_ref())
            .and_then(Managed::pid)
    }

    /// A client of etcd's HTTP endpoints with the etcd client certificate.
    pub fn etcd_http_client(&self) -> reqwest::Client {
        self.etcd_http.clone()
    }

    fn etcd_args(&self, i: usize) -> Vec<String> {
        let p = &self.cfg.ports.etcd;
        let pki = &self.pki;
        let peer = |j: usize| format!("https://127.0.0.1:{}", p[j].1);
        let client = format!("https://127.0.0.1:{}", p[i].0);
        let initial: Vec<String> = (0..3).map(|j| format!("etcd-{j}={}", peer(j))).collect();
        let path = |p: &Path| p.display().to_string();
        vec![
            format!("--name=etcd-{i}"),
            format!(
                "--data-dir={}",
                self.cfg.state_dir.join(format!("etcd-{i}")).display()
            ),
            format!("--listen-client-urls={client}"),
            format!("--advertise-client-urls={client}"),
            format!("--listen-peer-urls={}", peer(i)),
            format!("--initial-advertise-peer-urls={}", peer(i)),
            format!("--initial-cluster={}", initial.join(",")),
            "--initial-cluster-state=new".into(),
            "--initial-cluster-token=kube-local-ha".into(),
            format!("--cert-file={}", path(&pki.etcd_server_cert)),
            format!("--key-file={}", path(&pki.etcd_server_key)),
            format!("--trusted-ca-file={}", path(&pki.etcd_ca_cert)),
            "--client-cert-auth".into(),
            format!("--peer-cert-file={}", path(&pki.etcd_server_cert)),
            format!("--peer-key-file={}", path(&pki.etcd_server_key)),
            format!("--peer-trusted-ca-file={}", path(&pki.etcd_ca_cert)),
            "--peer-client-cert-auth".into(),
        ]
    }

    fn tier_args(&self, tier: Tier, replica: usize) -> Vec<String> {
        let hp = &self.cfg.ports;
        let ports = Ports {
            aggregator: hp.aggregator[replica],
            kube_core: hp.kube_core[replica],
            extensions: hp.extensions[replica],
            etcd_client: hp.etcd[0].0,
            etcd_peer: hp.etcd[0].1,
        };
        let mut extra = vec![format!(
            "--etcd-servers={}",
            self.etcd_urls()[1..].join(",")
        )];
        if let Some(next) = tier.delegate() {
            let other = hp.tier(next)[1 - replica];
            extra.push(format!("--delegate-url=https://127.0.0.1:{other}"));
        }
        extra.extend(crate::cluster::one_host_flags(tier));
        extra.extend(self.cfg.tier_flags.iter().cloned());
        extra.extend(self.cfg.extra_args.for_tier(tier).iter().cloned());
        tier_args(tier, &self.pki, &ports, &extra)
    }

    fn spawn(&mut self, m: Member) -> anyhow::Result<()> {
        let (program, args, env, port) = match m {
            Member::Etcd(i) => (
                self.cfg.etcd_binary.clone(),
                self.etcd_args(i),
                etcd_env(),
                self.cfg.ports.etcd[i].0,
            ),
            Member::Tier(t, r) => (
                self.cfg.bin_dir.join(t.binary_name()),
                self.tier_args(t, r),
                Vec::new(),
                self.cfg.ports.tier(t)[r],
            ),
        };
        ensure_port_available(m.name(), port)?;
        if let Member::Etcd(i) = m {
            ensure_port_available(m.name(), self.cfg.ports.etcd[i].1)?;
        }
        let log = self.cfg.log_to_files.then(|| {
            self.cfg
                .state_dir
                .join("logs")
                .join(format!("{}.log", m.name()))
        });
        let child = Managed::spawn(
            m.name(),
            &program,
            &args,
            &env,
            log.as_deref(),
            self.own_process_groups,
        )?;
        if let Some(slot) = self.procs.iter_mut().find(|(p, _)| *p == m) {
            slot.1 = Some(child);
        }
        Ok(())
    }

    async fn wait_ready(&mut self, m: Member) -> anyhow::Result<()> {
        let url = self.url(m);
        let (https, etcd) = (self.https.clone(), self.etcd_http.clone());
        let Some(child) = self
            .procs
            .iter_mut()
            .find(|(p, _)| *p == m)
            .and_then(|(_, c)| c.as_mut())
        else {
            anyhow::bail!("{} is not running", m.name());
        };
        match m {
            Member::Etcd(_) => {
                child
                    .wait_ready(READY_TIMEOUT, || process::etcd_health(&etcd, &url))
                    .await
            }
            Member::Tier(..) => {
                child
                    .wait_ready(READY_TIMEOUT, || process::readyz(&https, &url))
                    .await
            }
        }
    }

    /// Starts the three etcd members together (they need a quorum), then
    /// both replicas of extensions, kube-core and the aggregator.
    pub async fn start_all(&mut self) -> anyhow::Result<()> {
        for i in 0..3 {
            self.spawn(Member::Etcd(i))?;
        }
        for i in 0..3 {
            self.wait_ready(Member::Etcd(i)).await?;
        }
        for tier in Tier::START_ORDER {
            for r in 0..2 {
                self.spawn(Member::Tier(tier, r))?;
            }
            for r in 0..2 {
                self.wait_ready(Member::Tier(tier, r)).await?;
            }
        }
        Ok(())
    }

    /// Starts one member again (after [`Self::kill`]) and waits until it is
    /// ready (an etcd member: until the cluster is healthy through it).
    pub async fn start_member(&mut self, m: Member) -> anyhow::Result<()> {
        self.spawn(m)?;
        self.wait_ready(m).await
    }

    /// Stops one member as operators do (SIGTERM, then SIGKILL after 10 s):
    /// a tier goes through its shutdown sequence.
    pub async fn stop_member(&mut self, m: Member) -> anyhow::Result<()> {
        if let Some((_, slot)) = self.procs.iter_mut().find(|(p, _)| *p == m) {
            if let Some(mut child) = slot.take() {
                child.stop(STOP_GRACE).await?;
            }
        }
        Ok(())
    }

    /// SIGKILLs one member (no shutdown sequence: a crash).
    pub async fn kill(&mut self, m: Member) {
        if let Some((_, slot)) = self.procs.iter_mut().find(|(p, _)| *p == m) {
            if let Some(mut child) = slot.take() {
                child.kill_now();
            }
        }
    }

    /// A member that exited on its own, if any (reported once).
    pub fn poll_exited(&mut self) -> anyhow::Result<Option<crate::ExitedProcess>> {
        for (_, slot) in self.procs.iter_mut() {
            let Some(child) = slot else { continue };
            if let Some(status) = child.try_wait()? {
                let exited = crate::ExitedProcess {
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

    /// Stops everything, tiers first (aggregators, kube-cores,
    /// extensions), then etcd.
    pub async fn stop(&mut self) -> anyhow::Result<()> {
        let mut first = None;
        for (_, slot) in self.procs.iter_mut().rev() {
            if let Some(mut child) = slot.take() {
                if let Err(e) = child.stop(STOP_GRACE).await {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}
