//! Tiers on one host reach each other over Unix sockets (kube-local-cluster's
//! default link, `--delegate-url unix:PATH` to the next tier's
//! `--unix-socket`): the tier behind trusts the `X-Remote-*` identity of a
//! client on its socket because the kernel says that client runs as the
//! server's own user (or root), and turns away any other user.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn socket_of(c: &TestCluster, tier: deploy::Tier) -> PathBuf {
    deploy::socket_path(&c.cluster.config().state_dir.join("run"), tier)
}

/// One HTTP/1.1 GET on the Unix socket; the status code and the whole
/// answer (headers and body).
async fn get_on_socket(socket: &Path, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut conn = tokio::net::UnixStream::connect(socket)
        .await
        .expect("connecting to the tier's socket");
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    conn.write_all(request.as_bytes()).await.expect("request");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut answer))
        .await
        .expect("an answer within 10 s")
        .expect("reading the answer");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let code = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"));
    (code, answer)
}

#[tokio::test]
async fn the_next_tier_trusts_the_identity_sent_on_its_socket() {
    let c = TestCluster::start().await;
    let socket = socket_of(&c, deploy::Tier::KubeCore);
    let mode = std::fs::metadata(&socket)
        .expect("kube-core's socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "only the tiers' user may connect");

    let path = "/api/v1/namespaces/default";
    // Naming nobody is being nobody: the socket vouches for the proxy, not
    // for a caller.
    let (code, answer) = get_on_socket(&socket, path, &[]).await;
    assert_eq!(code, 401, "{answer}");
    let (code, answer) = get_on_socket(&socket, path, &[("X-Remote-User", "alice")]).await;
    assert_eq!(code, 403, "{answer}");
    assert!(answer.contains("User \\\"alice\\\" cannot get"), "{answer}");
    let admin = [
        ("X-Remote-User", "alice"),
        ("X-Remote-Group", "system:masters"),
    ];
    let (code, answer) = get_on_socket(&socket, path, &admin).await;
    assert_eq!(code, 200, "{answer}");
    assert!(answer.contains("\"name\":\"default\""), "{answer}");

    // The aggregator sends to that socket, watches included (HTTP/2 on it).
    let pid = c
        .cluster
        .tier_pid(deploy::Tier::Aggregator)
        .expect("the aggregator runs");
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).expect("cmdline");
    assert!(
        cmdline.contains(&format!("unix:{}", socket.display())),
        "{cmdline:?}"
    );
    let http = c.http(Auth::AdminCert);
    let created = http
        .post(c.url("/api/v1/namespaces/default/configmaps"))
        .json(&serde_json::json!({"metadata": {"name": "linked"}, "data": {"a": "1"}}))
        .sent()
        .await;
    assert_eq!(created.status(), 201);
    let watch = http
        .get(c.url(
            "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=2",
        ))
        .sent()
        .await;
    assert_eq!(watch.status(), 200);
    let events = watch.text().await.expect("watch body");
    assert!(events.contains("\"name\":\"linked\""), "{events}");
}

#[tokio::test]
async fn another_user_is_refused_on_the_socket() {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .unwrap_or_default();
    if euid != "0" {
        eprintln!("skipped: connecting as another user needs root (CI runs as root)");
        return;
    }
    let c = TestCluster::start().await;
    let socket = socket_of(&c, deploy::Tier::KubeCore);
    // Open the path and the socket to everyone, so that only the server's
    // own check of the client's user stands in the way.
    let mut dir = socket.parent();
    while let Some(d) = dir {
        let mode = std::fs::metadata(d).expect("dir").permissions().mode();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode | 0o711)).expect("chmod");
        dir = d.parent();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).expect("chmod");

    let curl = |as_nobody: bool| {
        let mut cmd = if as_nobody {
            let mut c = tokio::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "curl"]);
            c
        } else {
            tokio::process::Command::new("curl")
        };
        cmd.args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--unix-socket",
        ])
        .arg(&socket)
        .args([
            "-H",
            "X-Remote-User: mallory",
            "-H",
            "X-Remote-Group: system:masters",
            "http://localhost/api/v1/namespaces/default",
        ]);
        cmd.output()
    };
    let nobody = curl(true).await.expect("running setpriv curl");
    assert!(!nobody.status.success(), "{nobody:?}");
    assert_eq!(
        String::from_utf8_lossy(&nobody.stdout),
        "000",
        "no answer at all"
    );
    let log = c.cluster.config().state_dir.join("logs/kube-core.log");
    assert!(
        eventually(Duration::from_secs(5), || async {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .contains("refused a Unix socket client running as another user")
        })
        .await,
        "kube-core logs the refused client"
    );
    // The same request as the tiers' user (root) is served.
    let root = curl(false).await.expect("running curl");
    assert_eq!(String::from_utf8_lossy(&root.stdout), "200", "{root:?}");
}
