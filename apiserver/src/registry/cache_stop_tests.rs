//! A stopped watch cache, against a real etcd: it ends its watches, stops
//! answering (reads go to etcd) and does not come back.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::read::ObjectRead;
use super::resource::ResourceDef;
use super::store::{ListOptions, Store};
use crate::registry::admit::AdmitAll;
use crate::storage::test_etcd::TestEtcd;
use crate::storage::{EtcdOptions, EtcdStorage};

fn gadget(name: &str) -> bytes::Bytes {
    let v = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": name, "namespace": "ns"}, "spec": {"size": 1}});
    serde_json::to_vec(&v).expect("json").into()
}

async fn until_ready(cache: &crate::storage::cacher::WatchCache) {
    for _ in 0..200 {
        if cache.is_ready() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the watch cache did not load");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_cache_ends_its_watches_and_reads_go_to_etcd() {
    let etcd = TestEtcd::start();
    let storage = EtcdStorage::connect(&[etcd.endpoint()], EtcdOptions::default())
        .await
        .expect("etcd");
    storage
        .create("/registry/gadgets/ns/a", gadget("a"))
        .await
        .expect("create");
    let def = ResourceDef::new("example.com", "v1", "Gadget", "gadgets");
    let store = Store::new(def, storage.clone(), "/registry", AdmitAll).with_watch_cache(1 << 30);
    let cache = store.cache().expect("cache").clone();
    until_ready(&cache).await;
    assert!(matches!(
        store.read("ns", "a", "0").await,
        Ok(ObjectRead::Encoded(_))
    ));

    // A watch from the cache sees a write, then ends when the cache stops.
    let opts = ListOptions {
        resource_version: Some(cache.revision().to_string()),
        ..Default::default()
    };
    let mut events = store
        .watch_from_cache(
            "ns",
            &opts,
            false,
            false,
            false,
            Some(Duration::from_secs(60)),
        )
        .expect("watch")
        .expect("from the cache");
    storage
        .create("/registry/gadgets/ns/b", gadget("b"))
        .await
        .expect("create");
    let first = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("an event in time");
    assert!(matches!(
        first,
        Some(super::watch_event::WatchEvent::Object(
            super::watch_event::EventType::Added,
            super::watch_event::ObjectRead::Encoded(_)
        ))
    ));

    cache.stop();
    assert!(cache.is_stopped());
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(ev) = events.recv().await {
            if let super::watch_event::WatchEvent::Object(kind, obj) = ev {
                panic!("an event after stop: {kind:?} {:?}", obj.revision());
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the watch did not end when its cache stopped"
    );

    // The cache stays down (no reload after its usual one-second pause);
    // reads are answered from etcd, current.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!cache.is_ready());
    storage
        .create("/registry/gadgets/ns/c", gadget("c"))
        .await
        .expect("create");
    match store.read("ns", "c", "0").await {
        Ok(ObjectRead::Decoded(v)) => assert_eq!(v["metadata"]["name"], Value::from("c")),
        Ok(ObjectRead::Encoded(_)) => panic!("served from a stopped cache"),
        Err(e) => panic!("GET failed: {e:?}"),
    }
    assert!(store
        .watch_from_cache(
            "ns",
            &opts,
            false,
            false,
            false,
            Some(Duration::from_secs(60))
        )
        .expect("watch")
        .is_none());

    // Once the last store lets go, the cache itself is freed (its runner
    // holds it no longer).
    let weak = Arc::downgrade(&cache);
    drop(cache);
    drop(store);
    for _ in 0..100 {
        if weak.upgrade().is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("a stopped cache is still alive");
}
