//! The `up`, `down` and `status` commands: a supervisor that runs the
//! cluster in the foreground, its detached variant, and the pid file.

use crate::UpArgs;
use anyhow::Context;
use deploy::{Cluster, ClusterConfig, ExtraArgs, Ports};
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};
use tokio::signal::unix::{signal, Signal, SignalKind};

/// Prints a line to stdout, ignoring errors (a closed pipe must not stop
/// the supervisor from shutting the cluster down).
macro_rules! say {
    () => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout());
    }};
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Prints a line to stderr, ignoring errors.
macro_rules! warn_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// How long `down` waits for the supervisor to exit before killing it.
const DOWN_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `up --background` waits for the cluster to become ready.
const BACKGROUND_READY_TIMEOUT: Duration = Duration::from_secs(300);
/// How often the supervisor checks its children.
const CHILD_POLL: Duration = Duration::from_millis(500);
/// Exit code of `status` when no cluster is running.
const NOT_RUNNING: u8 = 3;

fn pid_file(state: &Path) -> PathBuf {
    state.join("cluster.pid")
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))
}

/// Creates `dir` (and parents) with mode 0700 if it does not exist yet.
fn private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))
}

fn cluster_config(args: &UpArgs) -> anyhow::Result<ClusterConfig> {
    Ok(ClusterConfig {
        state_dir: absolute(&args.state.state_dir)?,
        bin_dir: absolute(&args.bin_dir.clone().unwrap_or_else(deploy::default_bin_dir))?,
        ports: Ports {
            aggregator: args.aggregator_port,
            kube_core: args.kube_core_port,
            extensions: args.extensions_port,
            etcd_client: args.etcd_client_port,
            etcd_peer: args.etcd_peer_port,
        },
        etcd_binary: args.etcd_binary.clone(),
        extra_args: ExtraArgs::default(),
        log_to_files: !args.no_log_files,
        tier_link: args.tier_link.into(),
    })
}

/// `up` in the foreground: start, print instructions, wait for a signal or
/// a child's death, stop everything in reverse order.
pub(crate) async fn up_foreground(args: &UpArgs) -> anyhow::Result<ExitCode> {
    let cfg = cluster_config(args)?;
    let state = cfg.state_dir.clone();
    let me = std::process::id();
    if let Some(pid) = running_pid(&state) {
        anyhow::ensure!(
            pid == me,
            "a cluster is already running from {} (pid {pid}); stop it with `kube-local-cluster down --state-dir {}`",
            state.display(),
            shell_quote(&state.display().to_string())
        );
    }
    private_dir(&state)?;
    fs::write(pid_file(&state), format!("{me}\n"))
        .with_context(|| format!("writing {}", pid_file(&state).display()))?;
    let result = supervise(cfg, is_session_leader(), args.ha).await;
    if read_pid(&state) == Some(me) {
        let _ = fs::remove_file(pid_file(&state));
    }
    result
}

/// Whether this process leads its own session, i.e. it was started by
/// `up --background` and has no terminal to print to.
fn is_session_leader() -> bool {
    // SAFETY: getsid(0) and getpid() have no preconditions.
    unsafe { libc::getsid(0) == libc::getpid() }
}

/// Termination signals the supervisor reacts to.
struct Signals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl Signals {
    fn new() -> anyhow::Result<Self> {
        Ok(Signals {
            term: signal(SignalKind::terminate()).context("installing SIGTERM handler")?,
            int: signal(SignalKind::interrupt()).context("installing SIGINT handler")?,
            hup: signal(SignalKind::hangup()).context("installing SIGHUP handler")?,
        })
    }

    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}

/// The single or the highly available layout, supervised alike.
enum Supervised {
    Single(Cluster),
    Ha(deploy::ha::HaCluster),
}

impl Supervised {
    fn set_own_process_groups(&mut self, on: bool) {
        match self {
            Supervised::Single(c) => c.set_own_process_groups(on),
            Supervised::Ha(c) => c.set_own_process_groups(on),
        }
    }
    async fn start_all(&mut self) -> anyhow::Result<()> {
        match self {
            Supervised::Single(c) => c.start_all().await,
            Supervised::Ha(c) => c.start_all().await,
        }
    }
    async fn stop(&mut self) -> anyhow::Result<()> {
        match self {
            Supervised::Single(c) => c.stop().await,
            Supervised::Ha(c) => c.stop().await,
        }
    }
    fn poll_exited(&mut self) -> anyhow::Result<Option<deploy::ExitedProcess>> {
        match self {
            Supervised::Single(c) => c.poll_exited(),
            Supervised::Ha(c) => c.poll_exited(),
        }
    }
    fn kubeconfig(&self) -> &Path {
        match self {
            Supervised::Single(c) => c.kubeconfig(),
            Supervised::Ha(c) => c.kubeconfig(),
        }
    }
    fn aggregator_url(&self) -> String {
        match self {
            Supervised::Single(c) => c.aggregator_url(),
            Supervised::Ha(c) => c.url(deploy::ha::Member::Tier(deploy::Tier::Aggregator, 0)),
        }
    }
    fn state_dir(&self) -> &Path {
        match self {
            Supervised::Single(c) => c.state_dir(),
            Supervised::Ha(c) => c.state_dir(),
        }
    }
}

/// The HA layout's configuration from `up --ha`'s flags.
fn ha_config(cfg: &ClusterConfig) -> deploy::ha::HaConfig {
    let p = &cfg.ports;
    let mut ha = deploy::ha::HaConfig::new(&cfg.state_dir);
    ha.bin_dir = cfg.bin_dir.clone();
    ha.etcd_binary = cfg.etcd_binary.clone();
    ha.log_to_files = cfg.log_to_files;
    ha.ports = deploy::ha::HaPorts {
        etcd: [
            (p.etcd_client, p.etcd_peer),
            (p.etcd_client + 2, p.etcd_peer + 2),
            (p.etcd_client + 4, p.etcd_peer + 4),
        ],
        aggregator: [p.aggregator, p.aggregator + 10],
        kube_core: [p.kube_core, p.kube_core + 10],
        extensions: [p.extensions, p.extensions + 10],
    };
    ha
}

async fn supervise(cfg: ClusterConfig, detached: bool, ha: bool) -> anyhow::Result<ExitCode> {
    let mut signals = Signals::new()?;
    let mut cluster = if ha {
        Supervised::Ha(deploy::ha::HaCluster::prepare(ha_config(&cfg))?)
    } else {
        Supervised::Single(Cluster::prepare(cfg)?)
    };
    cluster.set_own_process_groups(true);
    let started = tokio::select! {
        biased;
        sig = signals.recv() => Err(sig),
        r = cluster.start_all() => Ok(r),
    };
    match started {
        Err(sig) => {
            tracing::info!("received {sig} while starting; stopping");
            cluster.stop().await?;
            say!("cluster start interrupted; everything stopped");
            return Ok(ExitCode::FAILURE);
        }
        Ok(Err(e)) => {
            if let Err(stop_err) = cluster.stop().await {
                tracing::warn!("stopping after a failed start: {stop_err:#}");
            }
            return Err(e);
        }
        Ok(Ok(())) => {}
    }
    print_instructions(
        cluster.kubeconfig(),
        &cluster.aggregator_url(),
        cluster.state_dir(),
        detached,
    );
    loop {
        tokio::select! {
            biased;
            sig = signals.recv() => {
                tracing::info!("received {sig}; stopping the cluster");
                cluster.stop().await?;
                say!("cluster stopped");
                return Ok(ExitCode::SUCCESS);
            }
            _ = tokio::time::sleep(CHILD_POLL) => {
                if let Some(exited) = cluster.poll_exited()? {
                    warn_line!("error: {exited}");
                    warn_line!("stopping the rest of the cluster");
                    if let Err(e) = cluster.stop().await {
                        warn_line!("error while stopping: {e:#}");
                    }
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
    }
}

/// Quotes `s` for a POSIX shell if it contains anything unusual.
pub(crate) fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,=@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn print_instructions(kubeconfig: &Path, url: &str, state: &Path, detached: bool) {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "kube-local-cluster".to_string());
    let kc = shell_quote(&kubeconfig.display().to_string());
    say!("Cluster is ready.");
    say!("  API server:  {url}");
    say!("  kubeconfig:  {}", kubeconfig.display());
    say!("  logs:        {}", state.join("logs").display());
    say!();
    say!("  export KUBECONFIG={kc}");
    say!("  kubectl get namespaces");
    say!();
    let down = format!(
        "{} down --state-dir {}",
        shell_quote(&exe),
        shell_quote(&state.display().to_string())
    );
    if detached {
        say!("Stop it with: {down}");
    } else {
        say!("Press Ctrl-C to stop (or run: {down})");
    }
}

/// `up --background`: re-execute this binary as `up` in a new session,
/// record its pid and wait until the aggregator is ready or the supervisor
/// has died.
pub(crate) async fn up_background(args: &UpArgs) -> anyhow::Result<ExitCode> {
    let cfg = cluster_config(args)?;
    let state = cfg.state_dir.clone();
    if let Some(pid) = running_pid(&state) {
        anyhow::bail!(
            "a cluster is already running from {} (pid {pid})",
            state.display()
        );
    }
    if !args.ha {
        cfg.ports.ensure_available()?;
    }
    let logs = state.join("logs");
    private_dir(&state)?;
    private_dir(&logs)?;
    let log_path = logs.join("supervisor.log");
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("opening {}", log_path.display()))?;
    let log_offset = log.metadata().map(|m| m.len()).unwrap_or(0);
    let log_err = log.try_clone()?;

    let exe = std::env::current_exe().context("locating this executable")?;
    let p = &cfg.ports;
    let mut child_args: Vec<String> = vec![
        "up".into(),
        "--state-dir".into(),
        state.display().to_string(),
        "--bin-dir".into(),
        cfg.bin_dir.display().to_string(),
        "--etcd-binary".into(),
        cfg.etcd_binary.display().to_string(),
    ];
    for (flag, port) in [
        ("--aggregator-port", p.aggregator),
        ("--kube-core-port", p.kube_core),
        ("--extensions-port", p.extensions),
        ("--etcd-client-port", p.etcd_client),
        ("--etcd-peer-port", p.etcd_peer),
    ] {
        child_args.push(flag.into());
        child_args.push(port.to_string());
    }
    child_args.push("--tier-link".into());
    child_args.push(
        match cfg.tier_link {
            deploy::TierLink::UnixSocket => "unix-socket",
            deploy::TierLink::Tls => "tls",
        }
        .into(),
    );
    if args.no_log_files {
        child_args.push("--no-log-files".into());
    }
    if args.ha {
        child_args.push("--ha".into());
    }
    let mut cmd = std::process::Command::new(&exe);
    cmd.args(&child_args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log_err));
    // SAFETY: setsid is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let pid = child.id();
    fs::write(pid_file(&state), format!("{pid}\n"))
        .with_context(|| format!("writing {}", pid_file(&state).display()))?;
    say!(
        "started supervisor (pid {pid}); waiting for the cluster (log: {})",
        log_path.display()
    );

    let ca = state.join("pki").join("ca.crt");
    let url = format!("https://127.0.0.1:{}", p.aggregator);
    let deadline = Instant::now() + BACKGROUND_READY_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait()? {
            if read_pid(&state) == Some(pid) {
                let _ = fs::remove_file(pid_file(&state));
            }
            warn_line!(
                "error: the cluster failed to start ({status}); supervisor output:\n{}",
                tail_from(&log_path, log_offset)
            );
            return Ok(ExitCode::FAILURE);
        }
        if ca.is_file() && deploy::probe_https_ready(&url, &ca).await.is_ok() {
            break;
        }
        if Instant::now() >= deadline {
            warn_line!(
                "error: the cluster was not ready after {}s; stopping it. Supervisor output:\n{}",
                BACKGROUND_READY_TIMEOUT.as_secs(),
                tail_from(&log_path, log_offset)
            );
            stop_pid(&state, pid).await;
            return Ok(ExitCode::FAILURE);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    print_instructions(&state.join("kubeconfig"), &url, &state, true);
    Ok(ExitCode::SUCCESS)
}

/// Output appended to `path` since `offset` (at most the last 8 KiB).
fn tail_from(path: &Path, offset: u64) -> String {
    let read = || -> std::io::Result<String> {
        let mut f = fs::File::open(path)?;
        let len = f.metadata()?.len();
        f.seek(SeekFrom::Start(
            offset.max(len.saturating_sub(8192)).min(len),
        ))?;
        let mut s = String::new();
        f.read_to_string(&mut s)?;
        Ok(s)
    };
    read().unwrap_or_else(|e| format!("(cannot read {}: {e})", path.display()))
}

/// The pid recorded in `<state>/cluster.pid`, if the file holds one.
fn read_pid(state: &Path) -> Option<u32> {
    fs::read_to_string(pid_file(state))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The recorded supervisor pid if that process is alive and is ours.
fn running_pid(state: &Path) -> Option<u32> {
    let pid = read_pid(state)?;
    (alive(pid) && looks_like_supervisor(pid)).then_some(pid)
}

/// Whether `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks whether the process exists.
    let exists = unsafe { libc::kill(raw, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && proc_stat(pid).is_none_or(|s| s.state != 'Z')
}

/// Guards against a recycled pid: the process must be this program (when
/// /proc tells).
fn looks_like_supervisor(pid: u32) -> bool {
    match fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(cmdline) => String::from_utf8_lossy(&cmdline).contains("kube-local-cluster"),
        Err(_) => true,
    }
}

/// The fields of `/proc/<pid>/stat` this program needs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ProcStat {
    state: char,
    session: i64,
}

/// Parses the text of `/proc/<pid>/stat`.
pub(crate) fn parse_proc_stat(text: &str) -> Option<ProcStat> {
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let _pgrp = fields.next()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat { state, session })
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    parse_proc_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// SIGKILLs every process in session `sid` (the detached supervisor and all
/// its children). Returns how many were signalled.
fn kill_session(sid: u32) -> usize {
    let Ok(entries) = fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if proc_stat(pid).is_some_and(|s| s.session == i64::from(sid)) {
            if let Ok(raw) = libc::pid_t::try_from(pid) {
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe { libc::kill(raw, libc::SIGKILL) };
                killed += 1;
            }
        }
    }
    killed
}

/// SIGTERM the supervisor `pid`, wait up to 30 s, then kill its session.
/// Returns true if it stopped on its own.
async fn stop_pid(state: &Path, pid: u32) -> bool {
    let session_leader = proc_stat(pid).is_some_and(|s| s.session == i64::from(pid));
    if let Ok(raw) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe { libc::kill(raw, libc::SIGTERM) };
    }
    let deadline = Instant::now() + DOWN_TIMEOUT;
    let mut clean = true;
    while alive(pid) {
        if Instant::now() >= deadline {
            clean = false;
            if session_leader {
                let n = kill_session(pid);
                say!(
                    "supervisor did not exit within {}s; killed {n} process(es) of its session",
                    DOWN_TIMEOUT.as_secs()
                );
            } else {
                if let Ok(raw) = libc::pid_t::try_from(pid) {
                    // SAFETY: as above.
                    unsafe { libc::kill(raw, libc::SIGKILL) };
                }
                say!(
                    "supervisor did not exit within {}s; killed it (its children may remain)",
                    DOWN_TIMEOUT.as_secs()
                );
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if read_pid(state) == Some(pid) {
        let _ = fs::remove_file(pid_file(state));
    }
    clean
}

/// `down`: stop the supervisor recorded in the pid file.
pub(crate) async fn down(state_dir: &Path) -> anyhow::Result<ExitCode> {
    let state = absolute(state_dir)?;
    let file = pid_file(&state);
    let Some(pid) = read_pid(&state) else {
        say!("no cluster is running (no pid file at {})", file.display());
        return Ok(ExitCode::SUCCESS);
    };
    if !alive(pid) || !looks_like_supervisor(pid) {
        let _ = fs::remove_file(&file);
        say!("no cluster is running (removed stale pid file for pid {pid})");
        return Ok(ExitCode::SUCCESS);
    }
    say!("stopping the cluster (supervisor pid {pid})...");
    if stop_pid(&state, pid).await {
        say!("cluster stopped");
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}

/// `status`: running or not, kubeconfig path, API server readiness.
pub(crate) async fn status(state_dir: &Path) -> anyhow::Result<ExitCode> {
    let state = absolute(state_dir)?;
    let kubeconfig = state.join("kubeconfig");
    let running = running_pid(&state);
    match running {
        Some(pid) => say!("running (supervisor pid {pid}, state {})", state.display()),
        None => say!("not running (state {})", state.display()),
    }
    if kubeconfig.is_file() {
        say!("kubeconfig: {}", kubeconfig.display());
        if running.is_some() {
            if let Ok(server) = deploy::kubeconfig::read_server(&kubeconfig) {
                let ca = state.join("pki").join("ca.crt");
                match deploy::probe_https_ready(&server, &ca).await {
                    Ok(()) => say!("API server {server}: ready"),
                    Err(e) => say!("API server {server}: not ready ({e:#})"),
                }
            }
        }
    } else {
        say!("kubeconfig: none yet ({} missing)", kubeconfig.display());
    }
    Ok(if running.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(NOT_RUNNING)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/a/b.c/kubeconfig"), "/a/b.c/kubeconfig");
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn proc_stat_parsing() {
        let text = "1234 (weird) name)) S 1 1234 1234 0 -1 4194560 100 0";
        assert_eq!(
            parse_proc_stat(text),
            Some(ProcStat {
                state: 'S',
                session: 1234
            })
        );
        assert_eq!(parse_proc_stat("garbage"), None);
        let own = proc_stat(std::process::id()).unwrap();
        assert_ne!(own.state, 'Z');
    }

    #[test]
    fn pid_file_handling() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_pid(dir.path()), None);
        fs::write(pid_file(dir.path()), "not a pid").unwrap();
        assert_eq!(read_pid(dir.path()), None);
        // Our own pid is alive, but this test binary is not the supervisor
        // unless its name says so.
        fs::write(pid_file(dir.path()), format!("{}\n", std::process::id())).unwrap();
        assert_eq!(read_pid(dir.path()), Some(std::process::id()));
        assert!(alive(std::process::id()));
        assert!(!alive(u32::MAX));
    }
}
