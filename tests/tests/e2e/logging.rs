//! Logs as upstream's components write them: `--logging-format=json` gives
//! one JSON object per line with upstream's keys, and from `-v=3` each
//! request a tier answers gets its httplog `HTTP` line.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::Value;

#[tokio::test]
async fn json_logs_with_one_http_line_per_request_at_v3() {
    let c = TestCluster::start_with(deploy::ExtraArgs {
        kube_core: vec!["--logging-format=json".into(), "-v=3".into()],
        ..Default::default()
    })
    .await;
    let resp = c
        .http(Auth::AdminCert)
        .get(c.url("/api/v1/namespaces?limit=1"))
        .header("Audit-Id", "logged-request")
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 200);
    let log = c.cluster.log_file("kube-core");
    let http_line = || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            // The harness heads each start with a `==== <time> <command>` line.
            .filter(|l| !l.starts_with("===="))
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {l}"))
            })
            .collect();
        lines
            .into_iter()
            .find(|l| l["msg"] == "HTTP" && l["audit-ID"] == "logged-request")
    };
    assert!(
        eventually(Duration::from_secs(10), || async { http_line().is_some() }).await,
        "no HTTP line for the request in {}",
        log.display()
    );
    let line = http_line().expect("line");
    assert_eq!(line["verb"], "LIST", "{line}");
    assert_eq!(line["URI"], "/api/v1/namespaces?limit=1");
    assert_eq!(line["resp"], 200);
    assert_eq!(line["v"], 0);
    assert!(line["ts"].as_f64().is_some());
    assert!(line["userAgent"].as_str().is_some());
    // kube-core's client is the aggregator: on its Unix socket (no address,
    // `@` as Go logs it), or over TCP on loopback.
    let src = line["srcIP"].as_str().unwrap_or_default();
    match c.cluster.config().tier_link {
        deploy::TierLink::UnixSocket => assert_eq!(src, "@", "{line}"),
        deploy::TierLink::Tls => assert!(src.starts_with("127.0.0.1:"), "{line}"),
    }
}
