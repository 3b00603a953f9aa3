//! Custom resources served from the extensions tier's watch cache: its
//! answers equal etcd's, it follows a change of the CRD's schema (the old
//! cache's watches end, as upstream ends them when it replaces a CRD's
//! storage), and it is let go when the CRD is deleted.

use crate::harness::{eventually, Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::{json, Value};

use crate::crds::{create_json, wait_established, widget_crd};

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

/// `apiserver_resource_objects` for widgets on the extensions tier: what its
/// watch caches hold (-1 while one loads); `None` when no cache reports.
async fn cached_widgets(c: &TestCluster) -> Option<i64> {
    let base = format!("https://127.0.0.1:{}", c.cluster.ports().extensions);
    let text = crate::harness::metrics_text(&c.http(Auth::AdminCert), &base).await?;
    text.lines()
        .find(|l| {
            l.starts_with("apiserver_resource_objects{") && l.contains("resource=\"widgets\"")
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .map(|v| v as i64)
}

async fn until_cached(c: &TestCluster, n: i64) {
    let cached = eventually(Duration::from_secs(30), || async {
        cached_widgets(c).await == Some(n)
    })
    .await;
    assert!(
        cached,
        "the widget cache never held {n}: {:?}",
        cached_widgets(c).await
    );
}

async fn get_json(c: &TestCluster, path: &str) -> Value {
    let resp = c.http(Auth::AdminCert).get(c.url(path)).sent().await;
    assert_eq!(resp.status(), 200, "GET {path}");
    resp.json().await.expect("json")
}

async fn create_widget(c: &TestCluster, name: &str, size: i64) {
    let resp = c
        .http(Auth::AdminCert)
        .post(c.url(WIDGETS))
        .json(&json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name}, "spec": {"size": size}}))
        .sent()
        .await;
    assert_eq!(
        resp.status(),
        201,
        "{}",
        resp.text().await.unwrap_or_default()
    );
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_are_served_from_a_watch_cache_that_follows_their_crd() {
    let c = TestCluster::start().await;
    create_json(&c, &widget_crd("Namespaced")).await;
    wait_established(&c, "widgets.example.com").await;
    for (i, name) in ["w0", "w1", "w2"].iter().enumerate() {
        create_widget(&c, name, i as i64 + 1).await;
    }
    until_cached(&c, 3).await;

    // From memory (resourceVersion=0) as from etcd (Exact at that revision):
    // the same items, each with its kind and apiVersion.
    let cached = get_json(&c, &format!("{WIDGETS}?resourceVersion=0")).await;
    let rv = crate::harness::resource_version(&cached);
    let exact = get_json(
        &c,
        &format!("{WIDGETS}?resourceVersion={rv}&resourceVersionMatch=Exact"),
    )
    .await;
    assert_eq!(items(&cached).len(), 3);
    assert_eq!(items(&cached), items(&exact));
    for item in items(&cached) {
        assert_eq!(item["kind"], "Widget");
        assert_eq!(item["apiVersion"], "example.com/v1");
        assert_eq!(item["spec"]["color"], "red", "defaulted: {item}");
    }
    let one = get_json(&c, &format!("{WIDGETS}/w1?resourceVersion=0")).await;
    assert_eq!(one, items(&exact)[1]);
    let selected = get_json(
        &c,
        &format!("{WIDGETS}?resourceVersion=0&fieldSelector=spec.color%3Dred"),
    )
    .await;
    assert_eq!(items(&selected).len(), 3);

    // A watch from the list's revision sees a new widget.
    let mut watch = c
        .http(Auth::AdminCert)
        .get(c.url(&format!("{WIDGETS}?watch=1&resourceVersion={rv}")))
        .sent()
        .await;
    assert_eq!(watch.status(), 200);
    create_widget(&c, "w3", 4).await;
    let mut buf = Vec::new();
    let added = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(chunk)) = watch.chunk().await {
            buf.extend_from_slice(&chunk);
            if let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                return serde_json::from_slice::<Value>(&buf[..pos]).ok();
            }
        }
        None
    })
    .await
    .expect("an event in time")
    .expect("an event");
    assert_eq!(added["type"], "ADDED");
    assert_eq!(added["object"]["metadata"]["name"], "w3");
    until_cached(&c, 4).await;

    // A new schema field with a default: the CRD's storage is replaced, the
    // old cache's watch ends, and what the new cache serves carries the
    // default (read-time defaulting with the new schema, not objects cached
    // under the old one).
    let mut crd = get_json(
        &c,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
    )
    .await;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["shape"] = json!({"type": "string", "default": "round"});
    let resp = c
        .http(Auth::AdminCert)
        .put(c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"))
        .json(&crd)
        .sent()
        .await;
    assert_eq!(
        resp.status(),
        200,
        "{}",
        resp.text().await.unwrap_or_default()
    );
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(_)) = watch.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the watch of the replaced cache did not end");
    let defaulted = eventually(Duration::from_secs(30), || async {
        if cached_widgets(&c).await != Some(4) {
            return false;
        }
        let list = get_json(&c, &format!("{WIDGETS}?resourceVersion=0")).await;
        let all = items(&list);
        all.len() == 4 && all.iter().all(|w| w["spec"]["shape"] == "round")
    })
    .await;
    assert!(defaulted, "the cache did not follow the new schema");

    // Deleted: the instances go, then the cache itself.
    let resp = c
        .http(Auth::AdminCert)
        .delete(
            c.url("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"),
        )
        .sent()
        .await;
    assert_eq!(resp.status(), 200);
    let released = eventually(Duration::from_secs(60), || async {
        cached_widgets(&c).await.is_none()
    })
    .await;
    assert!(
        released,
        "the deleted CRD's cache still reports {:?}",
        cached_widgets(&c).await
    );
}
