//! A resource served at two versions keeps one watch cache, its storage
//! version's, against a real etcd.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::resource::ResourceDef;
use super::store::{ListOptions, Store};
use super::watch_event::{EventType, ObjectRead, WatchEvent};
use crate::registry::admit::AdmitAll;
use crate::storage::test_etcd::TestEtcd;
use crate::storage::{EtcdOptions, EtcdStorage};

/// Gadgets stored at v2 (`spec.size`), served at v1 as `size`.
fn gadget_defs() -> (ResourceDef, ResourceDef) {
    let v2 = ResourceDef::new("example.com", "v2", "Gadget", "gadgets");
    let v1 = ResourceDef::served_as(
        &v2,
        "example.com",
        "v1",
        "Gadget",
        Arc::new(|o: &Value| {
            Ok(json!({"apiVersion": "example.com/v2", "kind": "Gadget",
                "metadata": o["metadata"].clone(), "spec": {"size": o["size"].clone()}}))
        }),
        Arc::new(|s: &Value| {
            Ok(json!({"apiVersion": "example.com/v1", "kind": "Gadget",
                "metadata": s["metadata"].clone(), "size": s["spec"]["size"].clone()}))
        }),
    );
    (v2, v1)
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("cached JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_version_reads_its_storage_versions_cache() {
    let etcd = TestEtcd::start();
    let storage = EtcdStorage::connect(&[etcd.endpoint()], EtcdOptions::default())
        .await
        .expect("etcd");
    let stored = json!({"apiVersion": "example.com/v2", "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "ns", "labels": {"team": "a"}}, "spec": {"size": 3}});
    storage
        .create(
            "/registry/gadgets/ns/g",
            serde_json::to_vec(&stored).expect("json").into(),
        )
        .await
        .expect("create");

    let (v2_def, v1_def) = gadget_defs();
    let v2 = Store::new(v2_def, storage.clone(), "/registry", AdmitAll).with_watch_cache(1 << 30);
    let v1 = Store::new(v1_def, storage.clone(), "/registry", AdmitAll).share_storage_cache(&v2);
    let cache = v2.cache().expect("cache").clone();
    assert!(Arc::ptr_eq(v1.cache().expect("shared"), &cache));

    let mut ready = false;
    for _ in 0..100 {
        if cache.is_ready() {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "cache never loaded");

    // Each version reads its own form from the one cache.
    let as_v2 = v2
        .get_from_cache("ns", "g", "0")
        .await
        .expect("get")
        .expect("cached");
    assert_eq!(json_of(&as_v2.bytes)["spec"]["size"], 3);
    let before = cache.bytes_held();
    let as_v1 = v1
        .get_from_cache("ns", "g", "0")
        .await
        .expect("get")
        .expect("cached");
    let v1_obj = json_of(&as_v1.bytes);
    assert_eq!(v1_obj["apiVersion"], "example.com/v1");
    assert_eq!(v1_obj["size"], 3);
    assert_eq!(
        v1_obj["metadata"]["resourceVersion"],
        as_v2.revision.to_string()
    );
    // Converted once, shared by later readers, and counted in the budget.
    let again = v1
        .get_from_cache("ns", "g", "0")
        .await
        .expect("get")
        .expect("cached");
    assert!(Arc::ptr_eq(&as_v1, &again));
    assert_eq!(cache.bytes_held(), before + as_v1.size());

    // LISTs select on the stored form and serve the converted one.
    let opts = ListOptions {
        label_selector: Some("team=a".parse().expect("selector")),
        resource_version: Some("0".into()),
        ..Default::default()
    };
    let page = v1
        .list_from_cache("ns", &opts)
        .await
        .expect("list")
        .expect("cached");
    assert_eq!(page.objects.len(), 1);
    assert!(Arc::ptr_eq(&page.objects[0], &as_v1));

    // A watch at v1 sees a write in the v1 form.
    let watch_opts = ListOptions {
        resource_version: Some(as_v2.revision.to_string()),
        ..Default::default()
    };
    let mut events = v1
        .watch_from_cache(
            "ns",
            &watch_opts,
            false,
            false,
            false,
            Some(Duration::from_secs(30)),
        )
        .expect("watch")
        .expect("from the cache");
    let mut next = stored.clone();
    next["metadata"]["name"] = json!("h");
    next["spec"]["size"] = json!(5);
    storage
        .create(
            "/registry/gadgets/ns/h",
            serde_json::to_vec(&next).expect("json").into(),
        )
        .await
        .expect("create");
    let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("event in time")
        .expect("event");
    let WatchEvent::Object(kind, ObjectRead::Encoded(obj)) = event else {
        panic!("not an object event from the cache");
    };
    assert_eq!(kind, EventType::Added);
    let obj = json_of(&obj.bytes);
    assert_eq!(
        (obj["apiVersion"].as_str(), obj["size"].as_i64()),
        (Some("example.com/v1"), Some(5))
    );
}
