//! Watches proxied by the aggregator share a few HTTP/2 connections to
//! kube-core (at most 100 streams each) instead of one connection per
//! watch, and every one of them still receives every event.

use crate::harness::{Auth, SendExt, TestCluster};
use std::time::Duration;

/// Established TCP connections on this machine to `port` (client sides).
fn tcp_connections_to(port: u16) -> usize {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter(|line| {
                    let cols: Vec<&str> = line.split_whitespace().collect();
                    let remote_port = cols
                        .get(2)
                        .and_then(|a| a.rsplit(':').next())
                        .and_then(|p| u16::from_str_radix(p, 16).ok());
                    // State 01: ESTABLISHED.
                    remote_port == Some(port) && cols.get(3) == Some(&"01")
                })
                .map(|_| ())
                .collect::<Vec<_>>()
        })
        .count()
}

/// Connections accepted on the Unix socket at `path` (its server sides:
/// connected, state 03, bound to the path).
fn unix_connections_to(path: &std::path::Path) -> usize {
    let path = path.display().to_string();
    std::fs::read_to_string("/proc/net/unix")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            cols.get(5) == Some(&"03") && cols.get(7) == Some(&path.as_str())
        })
        .count()
}

/// The aggregator's connections to kube-core, over the link the cluster uses.
fn connections_to_kube_core(c: &TestCluster) -> usize {
    match c.cluster.config().tier_link {
        deploy::TierLink::UnixSocket => unix_connections_to(&deploy::socket_path(
            &c.cluster.config().state_dir.join("run"),
            deploy::Tier::KubeCore,
        )),
        deploy::TierLink::Tls => tcp_connections_to(c.cluster.ports().kube_core),
    }
}

#[tokio::test]
async fn proxied_watches_share_connections_to_kube_core() {
    let c = TestCluster::start().await;
    let http = c.http(Auth::AdminCert);
    let before = connections_to_kube_core(&c);

    const WATCHES: usize = 150;
    let mut watches = Vec::new();
    for _ in 0..WATCHES {
        let resp = http
            .get(c.url(
                "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=120",
            ))
            .sent().await;
        assert_eq!(resp.status().as_u16(), 200);
        watches.push(resp);
    }
    let during = connections_to_kube_core(&c);
    // The count sees the aggregator's connections at all (the watches'
    // HTTP/2 ones at least), so the bound below means something.
    assert!(during > 0, "no connection to kube-core counted");
    assert!(
        during < before + 10,
        "{WATCHES} watches through the aggregator opened {} connections to kube-core \
         (before: {before}, during: {during})",
        during.saturating_sub(before)
    );

    // Every stream gets the event.
    c.kubectl_ok(&["create", "configmap", "multiplexed", "--from-literal=a=b"])
        .await;
    let deliveries = watches.into_iter().map(|mut resp| async move {
        let mut seen = Vec::new();
        let found = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(chunk)) = resp.chunk().await {
                seen.extend_from_slice(&chunk);
                if String::from_utf8_lossy(&seen).contains(r#""name":"multiplexed""#) {
                    return true;
                }
            }
            false
        })
        .await;
        matches!(found, Ok(true))
    });
    let got = futures_util::future::join_all(deliveries)
        .await
        .into_iter()
        .filter(|ok| *ok)
        .count();
    assert_eq!(got, WATCHES, "every watch receives the ADDED event");
}
