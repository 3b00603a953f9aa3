//! Child processes: spawning with log files, readiness probes, graceful stop.

use anyhow::Context;
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// How long a process may take to become ready.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a process gets between SIGTERM and SIGKILL.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);
/// Pause between readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(100);
/// Timeout of one probe request.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Lines of log shown when a process fails.
const TAIL_LINES: usize = 40;

/// A running child process together with where its output goes.
pub(crate) struct Managed {
    /// Human-readable name (`etcd`, `aggregator`, ...).
    pub(crate) name: &'static str,
    child: Child,
    log: Option<PathBuf>,
    /// Length of the log file when this process was started: the tail shown
    /// on failure starts here so older runs do not get in the way.
    log_offset: u64,
}

impl Managed {
    /// Spawns `program args...` with stdin closed and stdout/stderr appended
    /// to `log` (or inherited when `log` is `None`). With `own_group` the
    /// child gets its own process group, so a terminal's Ctrl-C reaches only
    /// this process, which can then stop the children in order.
    pub(crate) fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        envs: &[(String, String)],
        log: Option<&Path>,
        own_group: bool,
    ) -> anyhow::Result<Managed> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .kill_on_drop(true);
        // A start-up error reads as one line (anyhow captures no backtrace)
        // even where RUST_BACKTRACE is set for panics.
        if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
            cmd.env("RUST_LIB_BACKTRACE", "0");
        }
        if own_group {
            cmd.process_group(0);
        }
        let mut log_offset = 0;
        if let Some(log) = log {
            let mut file = fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .with_context(|| format!("opening {}", log.display()))?;
            log_offset = file.metadata().map(|m| m.len()).unwrap_or(0);
            writeln!(
                file,
                "==== {} {} {}",
                time::OffsetDateTime::now_utc(),
                program.display(),
                args.join(" ")
            )
            .with_context(|| format!("writing {}", log.display()))?;
            let err = file
                .try_clone()
                .with_context(|| format!("opening {}", log.display()))?;
            cmd.stdout(Stdio::from(file)).stderr(Stdio::from(err));
        } else {
            cmd.stdout(Stdio::inherit()).stderr(Stdio::inherit());
        }
        let child = cmd.spawn().with_context(|| {
            format!(
                "starting {name} ({}): is it installed/built?",
                program.display()
            )
        })?;
        tracing::info!(pid = child.id(), "started {name}");
        Ok(Managed {
            name,
            child,
            log: log.map(Path::to_path_buf),
            log_offset,
        })
    }

    /// The process id, while the process has not been reaped.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Returns the exit status if the process has exited (non-blocking).
    pub(crate) fn try_wait(&mut self) -> anyhow::Result<Option<ExitStatus>> {
        Ok(self.child.try_wait()?)
    }

    /// The output this process wrote since it started (last lines only).
    pub(crate) fn log_tail(&self) -> String {
        match &self.log {
            Some(path) => tail_file(path, self.log_offset, TAIL_LINES),
            None => "(output was not captured; see the terminal)".to_string(),
        }
    }

    /// Polls `probe` until it succeeds, failing if the process exits or the
    /// timeout elapses. Errors carry the tail of the log.
    pub(crate) async fn wait_ready<F, Fut>(
        &mut self,
        timeout: Duration,
        probe: F,
    ) -> anyhow::Result<()>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<()>>,
    {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait()? {
                anyhow::bail!(
                    "{} exited before becoming ready ({status}); last output:\n{}",
                    self.name,
                    self.log_tail()
                );
            }
            let last_error = match probe().await {
                Ok(()) => {
                    tracing::info!("{} is ready", self.name);
                    return Ok(());
                }
                Err(e) => format!("{e:#}"),
            };
            if Instant::now() >= deadline {
                anyhow::bail!(
                    "{} did not become ready within {}s (last probe: {last_error}); last output:\n{}",
                    self.name,
                    timeout.as_secs(),
                    self.log_tail()
                );
            }
            tokio::time::sleep(PROBE_INTERVAL).await;
        }
    }

    /// SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status.
    pub(crate) async fn stop(&mut self, grace: Duration) -> anyhow::Result<ExitStatus> {
        if let Some(status) = self.try_wait()? {
            return Ok(status);
        }
        if let Some(pid) = self.pid() {
            send_signal(pid, libc::SIGTERM);
        }
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(status) => {
                let status = status?;
                tracing::info!("{} stopped ({status})", self.name);
                Ok(status)
            }
            Err(_) => {
                tracing::warn!(
                    "{} did not stop within {}s; killing it",
                    self.name,
                    grace.as_secs()
                );
                self.child.kill().await?;
                Ok(self.child.wait().await?)
            }
        }
    }

    /// SIGKILL and reap synchronously (bounded), for use in `Drop`.
    pub(crate) fn kill_now(&mut self) {
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let _ = self.child.start_kill();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                _ => return,
            }
        }
    }
}

/// Sends `signal` to `pid`; errors (e.g. already gone) are ignored.
pub(crate) fn send_signal(pid: u32, signal: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// The last `lines` lines of `path`, reading from `offset` on (and at most
/// the last 64 KiB).
pub(crate) fn tail_file(path: &Path, offset: u64, lines: usize) -> String {
    const MAX: u64 = 64 * 1024;
    let read = || -> std::io::Result<String> {
        let mut file = fs::File::open(path)?;
        let len = file.metadata()?.len();
        let start = offset.max(len.saturating_sub(MAX)).min(len);
        file.seek(SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    match read() {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            let from = all.len().saturating_sub(lines);
            let tail = all[from..].join("\n");
            if tail.trim().is_empty() {
                format!("(no output in {})", path.display())
            } else {
                format!("{tail}\n(full log: {})", path.display())
            }
        }
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

fn http_client(ca_pem: Option<&[u8]>) -> anyhow::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(PROBE_TIMEOUT);
    if let Some(pem) = ca_pem {
        let ca = reqwest::Certificate::from_pem(pem).context("parsing CA certificate")?;
        builder = builder
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca);
    }
    builder.build().context("building HTTP client")
}

/// An HTTPS client for readiness probes that trusts only `ca_cert`.
pub(crate) fn https_probe_client(ca_cert: &Path) -> anyhow::Result<reqwest::Client> {
    let pem = fs::read(ca_cert).with_context(|| format!("reading {}", ca_cert.display()))?;
    http_client(Some(&pem))
}

/// A client of etcd's HTTP endpoints (`/health`, the gRPC gateway) over
/// TLS: it trusts etcd's CA and presents the tiers' etcd client certificate,
/// which etcd (`--client-cert-auth`) requires.
pub fn etcd_http_client(pki: &crate::Pki) -> anyhow::Result<reqwest::Client> {
    let read = |p: &Path| fs::read(p).with_context(|| format!("reading {}", p.display()));
    let ca =
        reqwest::Certificate::from_pem(&read(&pki.etcd_ca_cert)?).context("parsing etcd's CA")?;
    let mut identity = read(&pki.etcd_client_cert)?;
    identity.extend(read(&pki.etcd_client_key)?);
    reqwest::Client::builder()
        .no_proxy()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(PROBE_TIMEOUT)
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(ca)
        .identity(
            reqwest::Identity::from_pem(&identity)
                .context("parsing the etcd client certificate")?,
        )
        .build()
        .context("building the etcd HTTP client")
}

/// Succeeds when `GET <base_url>/readyz` answers 200, with the server
/// certificate verified against `ca_cert`.
pub async fn probe_https_ready(base_url: &str, ca_cert: &Path) -> anyhow::Result<()> {
    let client = https_probe_client(ca_cert)?;
    readyz(&client, base_url).await
}

pub(crate) async fn readyz(client: &reqwest::Client, base_url: &str) -> anyhow::Result<()> {
    let url = format!("{}/readyz", base_url.trim_end_matches('/'));
    let resp = client.get(&url).send().await?;
    let status = resp.status();
    if status.is_success() {
        Ok(())
    } else {
        let body = resp.text().await.unwrap_or_default();
        anyhow::bail!("GET {url}: {status}: {}", body.trim())
    }
}

/// Succeeds when `GET <client_url>/health` answers `{"health":"true"}`.
pub async fn probe_etcd(client_url: &str, pki: &crate::Pki) -> anyhow::Result<()> {
    let client = etcd_http_client(pki)?;
    etcd_health(&client, client_url).await
}

pub(crate) async fn etcd_health(client: &reqwest::Client, client_url: &str) -> anyhow::Result<()> {
    let url = format!("{}/health", client_url.trim_end_matches('/'));
    let resp = client.get(&url).send().await?;
    let status = resp.status();
    let body = resp.text().await?;
    let healthy = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| {
            v.get("health")
                .and_then(|h| h.as_str().map(|s| s == "true"))
        })
        .unwrap_or(false);
    anyhow::ensure!(
        status.is_success() && healthy,
        "GET {url}: {status}: {}",
        body.trim()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_starts_at_offset_and_keeps_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.log");
        fs::write(&path, "old run\n").unwrap();
        let offset = fs::metadata(&path).unwrap().len();
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!("line {i}\n"));
        }
        fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let tail = tail_file(&path, offset, 3);
        assert!(tail.starts_with("line 97\nline 98\nline 99\n"), "{tail}");
        assert!(!tail_file(&path, offset, 1000).contains("old run"));
        assert!(tail_file(&path, 0, 1000).contains("old run"));
        assert!(tail_file(&dir.path().join("missing"), 0, 3).contains("cannot read"));
    }

    #[tokio::test]
    async fn exited_process_fails_readiness_with_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sh.log");
        let args = vec!["-c".to_string(), "echo boom-from-child; exit 3".to_string()];
        let mut p = Managed::spawn("sh", Path::new("sh"), &args, &[], Some(&log), false).unwrap();
        let err = p
            .wait_ready(Duration::from_secs(10), || async {
                anyhow::bail!("not yet")
            })
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("exited before becoming ready"), "{err}");
        assert!(err.contains("boom-from-child"), "{err}");
    }

    #[tokio::test]
    async fn stop_escalates_to_sigkill() {
        let args = vec![
            "-c".to_string(),
            "trap '' TERM; while true; do sleep 0.05; done".to_string(),
        ];
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sh.log");
        let mut p = Managed::spawn("sh", Path::new("sh"), &args, &[], Some(&log), false).unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let started = Instant::now();
        let status = p.stop(Duration::from_millis(300)).await.unwrap();
        assert!(!status.success());
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn stop_uses_sigterm() {
        let args = vec!["-c".to_string(), "sleep 30".to_string()];
        let mut p = Managed::spawn("sh", Path::new("sh"), &args, &[], None, true).unwrap();
        let status = p.stop(Duration::from_secs(5)).await.unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }

    #[tokio::test]
    async fn timeout_is_reported() {
        let args = vec!["-c".to_string(), "sleep 30".to_string()];
        let mut p = Managed::spawn("sh", Path::new("sh"), &args, &[], None, true).unwrap();
        let err = p
            .wait_ready(Duration::from_millis(300), || async {
                anyhow::bail!("still starting")
            })
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not become ready"), "{err}");
        assert!(err.contains("still starting"), "{err}");
        p.kill_now();
        assert!(p.try_wait().unwrap().is_some());
    }

    #[tokio::test]
    async fn etcd_probe_fails_on_closed_port() {
        let port = crate::Ports::free().unwrap().etcd_client;
        let dir = tempfile::tempdir().unwrap();
        let pki = crate::pki::ensure(dir.path()).unwrap();
        assert!(probe_etcd(&format!("https://127.0.0.1:{port}"), &pki)
            .await
            .is_err());
    }
}
