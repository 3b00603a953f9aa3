//! Test helper: a real single-member etcd (`/usr/bin/etcd`, or `$ETCD_BIN`) on
//! free loopback ports with a temporary data directory. It can be stopped
//! (SIGKILL, like a crash) and restarted on the same ports and data; it is
//! killed and its directory removed on drop.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A free loopback port below the kernel's ephemeral range (15000-32767),
/// so no outgoing connection can take it between this check and etcd's
/// bind; a process-wide cursor from a random start keeps parallel tests
/// apart. (`deploy::free_port` does the same for the cluster's tests.)
pub(crate) fn free_port() -> u16 {
    const LOWEST: u32 = 15000;
    const SPAN: u32 = 32768 - LOWEST;
    static CURSOR: std::sync::OnceLock<AtomicU64> = std::sync::OnceLock::new();
    let cursor = CURSOR.get_or_init(|| {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
            ^ std::process::id();
        AtomicU64::new(u64::from(seed))
    });
    for _ in 0..SPAN {
        let port =
            (LOWEST + (cursor.fetch_add(1, Ordering::Relaxed) % u64::from(SPAN)) as u32) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port below the ephemeral range");
}

pub(crate) struct TestEtcd {
    child: Option<Child>,
    base: PathBuf,
    client_port: u16,
    peer_port: u16,
}

impl TestEtcd {
    /// Starts etcd on fresh ports and waits until it is healthy.
    pub(crate) fn start() -> Self {
        Self::start_on(free_port())
    }

    /// Starts etcd serving clients on `client_port`.
    pub(crate) fn start_on(client_port: u16) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let base = std::env::temp_dir().join(format!(
            "storage-test-etcd-{}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            nanos
        ));
        std::fs::create_dir_all(&base).expect("create etcd temp dir");
        let mut etcd = TestEtcd {
            child: None,
            base,
            client_port,
            peer_port: free_port(),
        };
        etcd.spawn();
        etcd
    }

    /// The client endpoint, `http://127.0.0.1:<port>`.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    /// Kills etcd (SIGKILL) and waits for it to exit. Data stays.
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts etcd again on the same ports and data directory.
    pub(crate) fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// Freezes etcd (SIGSTOP): connections stay open but nothing answers,
    /// like a hung server or a silent network partition.
    pub(crate) fn pause(&self) {
        self.signal("-STOP");
    }

    /// Resumes a paused etcd (SIGCONT).
    pub(crate) fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.as_ref().expect("etcd is running").id();
        let status = Command::new("kill")
            .arg(sig)
            .arg(pid.to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {sig} {pid} failed");
    }

    fn spawn(&mut self) {
        let bin = std::env::var("ETCD_BIN").unwrap_or_else(|_| "/usr/bin/etcd".to_string());
        let client = self.endpoint();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.base.join("etcd.log"))
            .expect("open etcd log");
        let log_err = log.try_clone().expect("clone etcd log");
        let child = Command::new(bin)
            .arg("--name=test")
            .arg(format!("--data-dir={}", self.base.join("data").display()))
            .arg(format!("--listen-client-urls={client}"))
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=test={peer}"))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err))
            .spawn()
            .expect("spawn etcd");
        self.child = Some(child);
        self.wait_healthy(Duration::from_secs(30));
    }

    fn wait_healthy(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!(
                        "etcd exited early with {status}; log:\n{}",
                        std::fs::read_to_string(self.base.join("etcd.log")).unwrap_or_default()
                    );
                }
            }
            if self.healthy() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("etcd on port {} did not become healthy", self.client_port);
    }

    /// The value of an unlabelled metric from etcd's `/metrics`.
    pub(crate) fn metric(&self, name: &str) -> Option<f64> {
        let body = self.http_get("/metrics")?;
        body.lines()
            .filter(|line| !line.starts_with('#'))
            .find_map(|line| {
                let (metric, value) = line.split_once(' ')?;
                (metric == name).then(|| value.trim().parse().ok())?
            })
    }

    fn healthy(&self) -> bool {
        self.http_get("/health")
            .is_some_and(|body| body.contains("\"health\":\"true\""))
    }

    fn http_get(&self, path: &str) -> Option<String> {
        let addr = ([127, 0, 0, 1], self.client_port).into();
        let mut conn = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
        conn.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        let req = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
        conn.write_all(req.as_bytes()).ok()?;
        let mut body = String::new();
        let _ = conn.read_to_string(&mut body);
        Some(body)
    }
}

impl Drop for TestEtcd {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}
