//! A tier stopped as operators stop it (SIGTERM), with upstream's shutdown
//! sequence: `/readyz` fails first while everything is still served for
//! `--shutdown-delay-duration`; then watches end with a final BOOKMARK at
//! the last revision they sent, cleanly, so the client resumes from it on
//! the restarted tier without relisting; the process exits 0.

use crate::harness::{Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::{json, Value};

/// Reads watch lines from `resp` until one satisfies `want` (or the stream
/// ends: `None`).
async fn next_event(
    resp: &mut reqwest::Response,
    buf: &mut Vec<u8>,
    want: impl Fn(&Value) -> bool,
) -> Option<Value> {
    loop {
        while let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            let ev: Value = serde_json::from_slice(&line).expect("a watch event per line");
            if want(&ev) {
                return Some(ev);
            }
        }
        match tokio::time::timeout(Duration::from_secs(30), resp.chunk()).await {
            Ok(Ok(Some(chunk))) => buf.extend_from_slice(&chunk),
            Ok(Ok(None)) => return None,
            Ok(Err(e)) => panic!("the watch failed instead of ending cleanly: {e}"),
            Err(_) => panic!("no watch event within 30 s"),
        }
    }
}

async fn create_configmap(http: &reqwest::Client, c: &TestCluster, name: &str) -> String {
    let resp = http
        .post(c.url("/api/v1/namespaces/default/configmaps"))
        .json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 201);
    let cm: Value = resp.json().await.expect("json");
    crate::harness::resource_version(&cm)
}

#[tokio::test]
async fn sigterm_fails_readiness_then_ends_watches_with_a_bookmark_and_exits_zero() {
    let mut c = TestCluster::start_with(deploy::ExtraArgs {
        kube_core: vec!["--shutdown-delay-duration=3s".to_string()],
        ..Default::default()
    })
    .await;
    let http = c.http(Auth::AdminCert);
    let start_rv = create_configmap(&http, &c, "before").await;
    let mut watch = http
        .get(c.url(&format!(
            "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion={start_rv}"
        )))
        .timeout(Duration::from_secs(120))
        .sent().await;
    assert_eq!(watch.status().as_u16(), 200);
    let after_rv = create_configmap(&http, &c, "after").await;
    let mut buf = Vec::new();
    let added = next_event(&mut watch, &mut buf, |e| {
        e["type"] == "ADDED" && e["object"]["metadata"]["name"] == "after"
    })
    .await
    .expect("the ADDED event");
    assert_eq!(
        added["object"]["metadata"]["resourceVersion"],
        after_rv.as_str()
    );

    let core = c.cluster.kube_core_url();
    let pid = c
        .cluster
        .tier_pid(deploy::Tier::KubeCore)
        .expect("kube-core runs");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());

    // During the delay: not ready, still live, still serving.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ready = http.get(format!("{core}/readyz?verbose")).sent().await;
    assert_eq!(ready.status().as_u16(), 500);
    let text = ready.text().await.expect("text");
    assert!(text.contains("[-]shutdown failed"), "{text}");
    let live = http.get(format!("{core}/livez")).sent().await;
    assert_eq!(live.status().as_u16(), 200);
    let list = http
        .get(c.url("/api/v1/namespaces/default/configmaps"))
        .sent()
        .await;
    assert_eq!(list.status().as_u16(), 200, "served during the delay");

    // Then the watch ends with a BOOKMARK at the last revision it sent.
    let bookmark = next_event(&mut watch, &mut buf, |_| true)
        .await
        .expect("a final event before the end");
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    assert_eq!(
        bookmark["object"]["metadata"]["resourceVersion"],
        after_rv.as_str()
    );
    assert!(
        next_event(&mut watch, &mut buf, |_| true).await.is_none(),
        "the stream ends cleanly after the bookmark"
    );

    // The process exits 0.
    let mut exited = None;
    for _ in 0..200 {
        if let Some(e) = c.cluster.poll_exited().expect("poll") {
            exited = Some(e);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let exited = exited.expect("kube-core exits within 20 s");
    assert_eq!(exited.name, "kube-core");
    assert!(
        exited.status.success(),
        "{:?}\n{}",
        exited.status,
        exited.log_tail
    );

    // Restarted, the client resumes from the bookmark: no relist, no 410.
    c.cluster
        .start_tier(deploy::Tier::KubeCore)
        .await
        .expect("restart kube-core");
    let mut resumed = http
        .get(c.url(&format!(
            "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion={after_rv}"
        )))
        .timeout(Duration::from_secs(60))
        .sent().await;
    assert_eq!(resumed.status().as_u16(), 200);
    create_configmap(&http, &c, "resumed").await;
    let mut buf = Vec::new();
    let ev = next_event(&mut resumed, &mut buf, |e| e["type"] != "BOOKMARK")
        .await
        .expect("an event after resuming");
    assert_eq!(ev["type"], "ADDED", "{ev}");
    assert_eq!(
        ev["object"]["metadata"]["name"], "resumed",
        "nothing replayed: {ev}"
    );
}
