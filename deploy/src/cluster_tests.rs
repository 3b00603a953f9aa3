//! Tests for the cluster lifecycle. The etcd tests need `etcd` in `PATH`;
//! the full-cluster tests stand in for the tiers with `openssl s_server`
//! (which answers any HTTPS GET with 200) so they do not depend on the real
//! tier binaries being functional.

use super::*;
use crate::process::{probe_etcd, probe_https_ready};
use base64::Engine as _;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            std::fs::metadata(dir.join(bin))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

fn skip_unless(bins: &[&str]) -> bool {
    for bin in bins {
        if !on_path(bin) {
            eprintln!("skipping: {bin} not in PATH");
            return true;
        }
    }
    false
}

fn alive(pid: u32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks for existence.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

/// A fake tier: records its arguments next to itself, then serves HTTPS on
/// --secure-port with the given certificate via `openssl s_server -www`.
const FAKE_TIER: &str = r#"#!/bin/sh
printf '%s\n' "$@" > "$0.args"
while [ $# -gt 0 ]; do
  case "$1" in
    --secure-port) port=$2; shift ;;
    --tls-cert-file) cert=$2; shift ;;
    --tls-private-key-file) key=$2; shift ;;
    --client-ca-file) ca=$2; shift ;;
  esac
  shift
done
exec openssl s_server -www -accept "127.0.0.1:$port" -cert "$cert" -key "$key" \
  -CAfile "$ca" -verify 1 -verify_return_error
"#;

fn fake_bin_dir(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tier in Tier::START_ORDER {
        let path = bin.join(tier.binary_name());
        std::fs::write(&path, FAKE_TIER).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

fn config(dir: &Path, bin_dir: PathBuf) -> ClusterConfig {
    ClusterConfig {
        state_dir: dir.join("state"),
        bin_dir,
        ports: Ports::free().unwrap(),
        etcd_binary: PathBuf::from("etcd"),
        extra_args: ExtraArgs::default(),
        log_to_files: true,
        tier_link: Default::default(),
    }
}

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).map(String::as_str)
}

#[test]
fn tier_flags_follow_the_contract() {
    let pki = Pki::paths(Path::new("/s/pki"));
    let ports = Ports::defaults();
    let extra = vec!["--v=4".to_string()];

    let agg = tier_args(Tier::Aggregator, &pki, &ports, &extra);
    assert_eq!(flag(&agg, "--secure-port"), Some("6443"));
    assert_eq!(flag(&agg, "--bind-address"), Some("127.0.0.1"));
    assert_eq!(flag(&agg, "--tls-cert-file"), Some("/s/pki/aggregator.crt"));
    assert_eq!(
        flag(&agg, "--tls-private-key-file"),
        Some("/s/pki/aggregator.key")
    );
    assert_eq!(flag(&agg, "--client-ca-file"), Some("/s/pki/ca.crt"));
    assert_eq!(flag(&agg, "--token-auth-file"), Some("/s/pki/tokens.csv"));
    assert_eq!(
        flag(&agg, "--requestheader-client-ca-file"),
        Some("/s/pki/front-proxy-ca.crt")
    );
    assert_eq!(
        flag(&agg, "--requestheader-allowed-names"),
        Some("front-proxy-client")
    );
    assert_eq!(
        flag(&agg, "--requestheader-username-headers"),
        Some("X-Remote-User")
    );
    assert_eq!(
        flag(&agg, "--requestheader-group-headers"),
        Some("X-Remote-Group")
    );
    assert_eq!(
        flag(&agg, "--requestheader-extra-headers-prefix"),
        Some("X-Remote-Extra-")
    );
    assert_eq!(flag(&agg, "--delegate-url"), Some("https://127.0.0.1:6444"));
    assert_eq!(flag(&agg, "--delegate-ca-file"), Some("/s/pki/ca.crt"));
    assert_eq!(
        flag(&agg, "--proxy-client-cert-file"),
        Some("/s/pki/front-proxy-client.crt")
    );
    assert_eq!(
        flag(&agg, "--proxy-client-key-file"),
        Some("/s/pki/front-proxy-client.key")
    );
    // The aggregator stores APIServices in etcd.
    assert_eq!(flag(&agg, "--etcd-servers"), Some("https://127.0.0.1:2379"));
    assert_eq!(flag(&agg, "--service-cluster-ip-range"), None);
    assert_eq!(agg.last().map(String::as_str), Some("--v=4"));

    let core = tier_args(Tier::KubeCore, &pki, &ports, &[]);
    assert_eq!(flag(&core, "--secure-port"), Some("6444"));
    assert_eq!(flag(&core, "--tls-cert-file"), Some("/s/pki/kube-core.crt"));
    assert_eq!(
        flag(&core, "--etcd-servers"),
        Some("https://127.0.0.1:2379")
    );
    assert_eq!(
        flag(&core, "--service-cluster-ip-range"),
        Some("10.96.0.0/12")
    );
    assert_eq!(
        flag(&core, "--delegate-url"),
        Some("https://127.0.0.1:6445")
    );

    let ext = tier_args(Tier::Extensions, &pki, &ports, &[]);
    assert_eq!(flag(&ext, "--secure-port"), Some("6445"));
    assert_eq!(flag(&ext, "--tls-cert-file"), Some("/s/pki/extensions.crt"));
    assert_eq!(flag(&ext, "--etcd-servers"), Some("https://127.0.0.1:2379"));
    assert_eq!(flag(&ext, "--etcd-cafile"), Some("/s/pki/etcd/ca.crt"));
    assert_eq!(
        flag(&ext, "--etcd-certfile"),
        Some("/s/pki/apiserver-etcd-client.crt")
    );
    assert_eq!(
        flag(&ext, "--etcd-keyfile"),
        Some("/s/pki/apiserver-etcd-client.key")
    );
    assert_eq!(flag(&ext, "--delegate-url"), None);
    assert_eq!(flag(&ext, "--proxy-client-cert-file"), None);
    assert_eq!(flag(&ext, "--service-cluster-ip-range"), None);
}

/// Linked by Unix sockets, each tier behind another serves one and the tier
/// in front sends to it; the HTTPS ports stay.
#[test]
fn unix_socket_links_name_the_next_tiers_socket() {
    let pki = Pki::paths(Path::new("/s/pki"));
    let ports = Ports::defaults();
    let run = Path::new("/s/run");
    let agg = tier_args_linked(Tier::Aggregator, &pki, &ports, Some(run), &[]);
    assert_eq!(
        flag(&agg, "--delegate-url"),
        Some("unix:/s/run/kube-core.sock")
    );
    assert_eq!(flag(&agg, "--unix-socket"), None);
    assert_eq!(
        flag(&agg, "--tier-addresses"),
        Some("127.0.0.1:6444,127.0.0.1:6445")
    );
    assert_eq!(flag(&agg, "--secure-port"), Some("6443"));
    let core = tier_args_linked(Tier::KubeCore, &pki, &ports, Some(run), &[]);
    assert_eq!(flag(&core, "--unix-socket"), Some("/s/run/kube-core.sock"));
    assert_eq!(
        flag(&core, "--delegate-url"),
        Some("unix:/s/run/extensions.sock")
    );
    assert_eq!(flag(&core, "--secure-port"), Some("6444"));
    let ext = tier_args_linked(Tier::Extensions, &pki, &ports, Some(run), &[]);
    assert_eq!(flag(&ext, "--unix-socket"), Some("/s/run/extensions.sock"));
    assert_eq!(flag(&ext, "--delegate-url"), None);
    // Replicas named by URL are all reached over HTTPS.
    let replica = vec!["--delegate-url=https://127.0.0.1:6454".to_string()];
    let agg = tier_args_linked(Tier::Aggregator, &pki, &ports, Some(run), &replica);
    assert_eq!(flag(&agg, "--delegate-url"), Some("https://127.0.0.1:6444"));
}

#[test]
fn etcd_flags_follow_the_contract() {
    let pki = Pki::paths(Path::new("/s/pki"));
    let args = etcd_args(Path::new("/s/etcd"), &Ports::defaults(), &pki);
    assert_eq!(flag(&args, "--cert-file"), Some("/s/pki/etcd/server.crt"));
    assert_eq!(flag(&args, "--trusted-ca-file"), Some("/s/pki/etcd/ca.crt"));
    assert!(args.iter().any(|a| a == "--client-cert-auth"));
    assert_eq!(flag(&args, "--name"), Some("default"));
    assert_eq!(flag(&args, "--data-dir"), Some("/s/etcd"));
    assert_eq!(
        flag(&args, "--listen-client-urls"),
        Some("https://127.0.0.1:2379")
    );
    assert_eq!(
        flag(&args, "--advertise-client-urls"),
        Some("https://127.0.0.1:2379")
    );
    assert_eq!(
        flag(&args, "--listen-peer-urls"),
        Some("http://127.0.0.1:2380")
    );
    assert_eq!(
        flag(&args, "--initial-advertise-peer-urls"),
        Some("http://127.0.0.1:2380")
    );
    assert_eq!(
        flag(&args, "--initial-cluster"),
        Some("default=http://127.0.0.1:2380")
    );
}

#[tokio::test]
async fn missing_tier_binaries_fail_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), dir.path().join("no-such-bin"));
    let err = match Cluster::start(cfg).await {
        Ok(_) => panic!("start must fail"),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.contains("kube-extensions-apiserver not found"), "{err}");
    // PKI and kubeconfig were still prepared.
    assert!(dir.path().join("state/pki/ca.crt").is_file());
    assert!(dir.path().join("state/kubeconfig").is_file());
}

async fn etcd_put(client: &reqwest::Client, url: &str, key: &str, value: &str) {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let resp = client
        .post(format!("{url}/v3/kv/put"))
        .body(format!(
            r#"{{"key":"{}","value":"{}"}}"#,
            b64(key),
            b64(value)
        ))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success());
}

async fn etcd_get(client: &reqwest::Client, url: &str, key: &str) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    client
        .post(format!("{url}/v3/kv/range"))
        .body(format!(r#"{{"key":"{}"}}"#, b64(key)))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn etcd_starts_stops_and_keeps_its_data() {
    if skip_unless(&["etcd"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = Cluster::prepare(config(dir.path(), dir.path().into())).unwrap();
    cluster.start_etcd().await.unwrap();
    let url = cluster.etcd_url();
    probe_etcd(&url, cluster.pki()).await.unwrap();
    let pid = cluster.etcd_pid().unwrap();
    let data_dir_mode = std::fs::metadata(cluster.state_dir().join("etcd"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(data_dir_mode & 0o777, 0o700);

    let client = cluster.etcd_http_client();
    etcd_put(&client, &url, "/deploy-test", "kept").await;
    // Starting again while running is a no-op.
    cluster.start_etcd().await.unwrap();
    assert_eq!(cluster.etcd_pid(), Some(pid));

    cluster.stop_etcd().await.unwrap();
    assert!(!alive(pid));
    assert!(cluster.etcd_pid().is_none());
    assert!(probe_etcd(&url, cluster.pki()).await.is_err());
    cluster.stop_etcd().await.unwrap(); // idempotent

    cluster.start_etcd().await.unwrap();
    let b64_value = base64::engine::general_purpose::STANDARD.encode("kept");
    let got = etcd_get(&client, &url, "/deploy-test").await;
    assert!(got.contains(&b64_value), "{got}");

    // An unexpected exit is reported once by poll_exited.
    let pid = cluster.etcd_pid().unwrap();
    crate::process::send_signal(pid, libc::SIGKILL);
    let exited = loop {
        if let Some(e) = cluster.poll_exited().unwrap() {
            break e;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(exited.name, "etcd");
    assert!(exited.to_string().contains("exited unexpectedly"));
    assert!(cluster.poll_exited().unwrap().is_none());
    cluster.stop().await.unwrap();
    assert!(std::fs::read_to_string(cluster.log_file("etcd"))
        .unwrap()
        .contains("===="));
}

#[tokio::test]
async fn etcd_port_in_use_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), dir.path().into());
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    cfg.ports.etcd_client = busy.local_addr().unwrap().port();
    let mut cluster = Cluster::prepare(cfg).unwrap();
    let err = cluster.start_etcd().await.unwrap_err().to_string();
    assert!(err.contains("etcd client"), "{err}");
}

#[tokio::test]
async fn full_cluster_with_fake_tiers() {
    if skip_unless(&["etcd", "openssl"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_bin_dir(dir.path());
    let mut cfg = config(dir.path(), bin.clone());
    cfg.extra_args.kube_core = vec!["--extra-core-flag".into()];
    let ports = cfg.ports;
    let mut cluster = Cluster::start(cfg).await.unwrap();

    // Every tier got the contract flags; the chain points at the next tier.
    let args = |tier: Tier| -> Vec<String> {
        std::fs::read_to_string(bin.join(format!("{}.args", tier.binary_name())))
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let agg = args(Tier::Aggregator);
    let run = cluster.config().state_dir.join("run");
    let delegate = format!("unix:{}", run.join("kube-core.sock").display());
    assert_eq!(flag(&agg, "--delegate-url"), Some(delegate.as_str()));
    let tiers = format!(
        "127.0.0.1:{},127.0.0.1:{}",
        ports.kube_core, ports.extensions
    );
    assert_eq!(flag(&agg, "--tier-addresses"), Some(tiers.as_str()));
    let core = args(Tier::KubeCore);
    assert_eq!(core.last().map(String::as_str), Some("--extra-core-flag"));
    assert_eq!(
        flag(&core, "--etcd-servers"),
        Some(cluster.etcd_url().as_str())
    );

    let ca = cluster.pki().ca_cert.clone();
    for url in [
        cluster.aggregator_url(),
        cluster.kube_core_url(),
        cluster.extensions_url(),
    ] {
        probe_https_ready(&url, &ca).await.unwrap();
    }
    // The serving certificate must not verify against the front-proxy CA.
    let wrong_ca = cluster.pki().front_proxy_ca_cert.clone();
    assert!(probe_https_ready(&cluster.aggregator_url(), &wrong_ca)
        .await
        .is_err());

    // kubectl accepts the kubeconfig: CA, client certificate and key.
    if on_path("kubectl") {
        let out = tokio::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(cluster.kubeconfig())
            .args(["get", "--raw", "/readyz"])
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "kubectl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // Restart a tier.
    let old = cluster.tier_pid(Tier::KubeCore).unwrap();
    cluster.stop_tier(Tier::KubeCore).await.unwrap();
    assert!(!alive(old));
    assert!(probe_https_ready(&cluster.kube_core_url(), &ca)
        .await
        .is_err());
    assert!(cluster.poll_exited().unwrap().is_none());
    cluster.start_tier(Tier::KubeCore).await.unwrap();
    probe_https_ready(&cluster.kube_core_url(), &ca)
        .await
        .unwrap();

    // An unexpected exit is noticed.
    let ext = cluster.tier_pid(Tier::Extensions).unwrap();
    crate::process::send_signal(ext, libc::SIGKILL);
    let exited = loop {
        if let Some(e) = cluster.poll_exited().unwrap() {
            break e;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(exited.name, "extensions");

    let pids: Vec<u32> = [Tier::Aggregator, Tier::KubeCore]
        .iter()
        .filter_map(|t| cluster.tier_pid(*t))
        .chain(cluster.etcd_pid())
        .collect();
    assert_eq!(pids.len(), 3);
    cluster.stop().await.unwrap();
    for pid in pids {
        assert!(!alive(pid), "pid {pid} still alive");
    }

    // Restart on the same state dir reuses the PKI; dropping kills everything.
    let ca_before = std::fs::read(&ca).unwrap();
    let cfg = cluster.config().clone();
    drop(cluster);
    let cluster = Cluster::start(cfg).await.unwrap();
    assert_eq!(ca_before, std::fs::read(&cluster.pki().ca_cert).unwrap());
    let pids: Vec<u32> = Tier::START_ORDER
        .iter()
        .filter_map(|t| cluster.tier_pid(*t))
        .chain(cluster.etcd_pid())
        .collect();
    assert_eq!(pids.len(), 4);
    drop(cluster);
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived Drop");
    }
}

#[tokio::test]
async fn failing_tier_stops_what_was_started() {
    if skip_unless(&["etcd"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tier in Tier::START_ORDER {
        let path = bin.join(tier.binary_name());
        std::fs::write(&path, "#!/bin/sh\necho cannot-serve-$1 >&2\nexit 7\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let cfg = config(dir.path(), bin);
    let etcd_url = format!("https://127.0.0.1:{}", cfg.ports.etcd_client);
    let probe_pki = crate::pki::ensure(&dir.path().join("probe-pki")).unwrap();
    let err = match Cluster::start(cfg).await {
        Ok(_) => panic!("start must fail"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        err.contains("extensions exited before becoming ready"),
        "{err}"
    );
    assert!(err.contains("cannot-serve---bind-address"), "{err}");
    // etcd was stopped again.
    assert!(probe_etcd(&etcd_url, &probe_pki).await.is_err());
}
