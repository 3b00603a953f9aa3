//! End-to-end tests of the `kube-local-cluster` binary: `up` (foreground and
//! `--background`), `status` and `down`, with `openssl s_server` standing in
//! for the tiers. Skipped when `etcd` or `openssl` is not installed.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_kube-local-cluster");

/// Records its pid and arguments, then serves HTTPS via `openssl s_server -www`.
const FAKE_TIER: &str = r#"#!/bin/sh
echo $$ > "$0.pid"
while [ $# -gt 0 ]; do
  case "$1" in
    --secure-port) port=$2; shift ;;
    --tls-cert-file) cert=$2; shift ;;
    --tls-private-key-file) key=$2; shift ;;
  esac
  shift
done
exec openssl s_server -www -accept "127.0.0.1:$port" -cert "$cert" -key "$key"
"#;

const TIERS: [&str; 3] = [
    "kube-aggregator",
    "kube-core-apiserver",
    "kube-extensions-apiserver",
];

fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(bin).is_file()))
}

fn skip() -> bool {
    let missing: Vec<&str> = ["etcd", "openssl"]
        .into_iter()
        .filter(|b| !on_path(b))
        .collect();
    if !missing.is_empty() {
        eprintln!("skipping: {missing:?} not in PATH");
    }
    !missing.is_empty()
}

struct Env {
    _dir: tempfile::TempDir,
    state: PathBuf,
    bin: PathBuf,
    ports: deploy::Ports,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for name in TIERS {
            let path = bin.join(name);
            std::fs::write(&path, FAKE_TIER).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Env {
            state: dir.path().join("state"),
            bin,
            ports: deploy::Ports::free().unwrap(),
            _dir: dir,
        }
    }

    fn state_args(&self) -> Vec<String> {
        vec!["--state-dir".into(), self.state.display().to_string()]
    }

    fn up_args(&self) -> Vec<String> {
        let p = self.ports;
        let mut args = vec!["up".to_string()];
        args.extend(self.state_args());
        args.extend([
            "--bin-dir".to_string(),
            self.bin.display().to_string(),
            "--aggregator-port".into(),
            p.aggregator.to_string(),
            "--kube-core-port".into(),
            p.kube_core.to_string(),
            "--extensions-port".into(),
            p.extensions.to_string(),
            "--etcd-client-port".into(),
            p.etcd_client.to_string(),
            "--etcd-peer-port".into(),
            p.etcd_peer.to_string(),
        ]);
        args
    }

    fn run(&self, cmd: &str, extra: &[&str]) -> Output {
        let mut args = if cmd == "up" {
            self.up_args()
        } else {
            let mut a = vec![cmd.to_string()];
            a.extend(self.state_args());
            a
        };
        args.extend(extra.iter().map(|s| s.to_string()));
        Command::new(BIN).args(&args).output().unwrap()
    }

    fn stderr_log(&self) -> PathBuf {
        self._dir.path().join("stderr.log")
    }

    fn tier_pid(&self, name: &str) -> u32 {
        std::fs::read_to_string(self.bin.join(format!("{name}.pid")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Exists and is not a zombie (a reparented process may stay a zombie
/// until the init process reaps it).
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    let exists = unsafe { libc::kill(pid as libc::pid_t, 0) == 0 };
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    exists && !zombie
}

fn wait_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "pid {pid} still alive");
}

fn ports_free(p: &deploy::Ports) {
    // Processes have exited; their sockets are closed.
    p.ensure_available().unwrap();
}

#[test]
fn background_up_status_down() {
    if skip() {
        return;
    }
    let env = Env::new();
    let out = env.run("status", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not running"));

    let out = env.run("up", &["--background"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let kubeconfig = env.state.join("kubeconfig");
    assert!(
        stdout.contains(&format!("export KUBECONFIG={}", kubeconfig.display())),
        "{stdout}"
    );
    assert!(stdout.contains("kubectl get namespaces"), "{stdout}");
    let pid: u32 = std::fs::read_to_string(env.state.join("cluster.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));

    let out = env.run("status", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("running (supervisor pid"), "{stdout}");
    assert!(stdout.contains(": ready"), "{stdout}");
    assert!(stdout.contains(&kubeconfig.display().to_string()));

    let out = env.run("up", &["--background"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already running"),
        "{}",
        text(&out)
    );

    let tiers: Vec<u32> = TIERS.iter().map(|t| env.tier_pid(t)).collect();
    let out = env.run("down", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cluster stopped"));
    assert!(!alive(pid));
    assert!(!env.state.join("cluster.pid").exists());
    for t in tiers {
        wait_gone(t);
    }
    ports_free(&env.ports);
    let log = std::fs::read_to_string(env.state.join("logs/supervisor.log")).unwrap();
    // "cluster stopped", or "everything stopped" when the signal reached the
    // supervisor while it was still confirming readiness: both are clean stops.
    assert!(
        log.contains("cluster stopped") || log.contains("everything stopped"),
        "{log}"
    );

    let out = env.run("down", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no cluster is running"));
}

/// Starts `up` in the foreground and waits for "Cluster is ready".
/// Its stderr goes to `<tmp>/stderr.log`.
fn foreground(env: &Env) -> (std::process::Child, Vec<String>) {
    let stderr = std::fs::File::create(env.stderr_log()).unwrap();
    let mut child = Command::new(BIN)
        .args(env.up_args())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let done = line.contains("Cluster is ready");
        lines.push(line);
        if done {
            break;
        }
    }
    assert!(
        lines.last().is_some_and(|l| l.contains("Cluster is ready")),
        "{lines:?}"
    );
    (child, lines)
}

fn wait_exit(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "supervisor did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn foreground_stops_on_sigint() {
    if skip() {
        return;
    }
    let env = Env::new();
    let (mut child, _) = foreground(&env);
    let pid_file = env.state.join("cluster.pid");
    assert_eq!(
        std::fs::read_to_string(&pid_file).unwrap().trim(),
        child.id().to_string()
    );
    let tiers: Vec<u32> = TIERS.iter().map(|t| env.tier_pid(t)).collect();
    // SAFETY: plain kill(2).
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status:?}");
    for t in tiers {
        wait_gone(t);
    }
    assert!(!pid_file.exists());
    ports_free(&env.ports);
}

#[test]
fn foreground_reports_a_dead_child() {
    if skip() {
        return;
    }
    let env = Env::new();
    let (mut child, _) = foreground(&env);
    let ext = env.tier_pid("kube-extensions-apiserver");
    // SAFETY: plain kill(2).
    unsafe { libc::kill(ext as libc::pid_t, libc::SIGKILL) };
    let status = wait_exit(&mut child);
    assert_eq!(status.code(), Some(1));
    let stderr = std::fs::read_to_string(env.stderr_log()).unwrap();
    assert!(
        stderr.contains("extensions exited unexpectedly"),
        "{stderr}"
    );
    for name in ["kube-aggregator", "kube-core-apiserver"] {
        wait_gone(env.tier_pid(name));
    }
    ports_free(&env.ports);
}
