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

/// A fresh etcd holding the Gadget `ns/a`, a client of it, and the
/// Gadgets' definition.
async fn etcd_with_gadget_a() -> (TestEtcd, EtcdStorage, ResourceDef) {
    let etcd = TestEtcd::start();
    let storage = EtcdStorage::connect(&[etcd.endpoint()], EtcdOptions::default())
        .await
        .expect("etcd");
    storage
        .create("/registry/gadgets/ns/a", gadget("a"))
        .await
        .expect("create");
    let def = ResourceDef::new("example.com", "v1", "Gadget", "gadgets");
    (etcd, storage, def)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_cache_ends_its_watches_and_reads_go_to_etcd() {
    let (_etcd, storage, def) = etcd_with_gadget_a().await;
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

/// What the informer and the controllers inside a server call: one
/// `Store::watch`, served from memory once the cache is ready (initial
/// events included), from etcd before; without a timeout it outlives any
/// client deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_watchers_are_served_by_the_cache_once_it_is_ready() {
    use super::watch::WatchOptions;
    use super::watch_event::{EventType, WatchEvent};
    let (_etcd, storage, def) = etcd_with_gadget_a().await;

    // No cache: etcd's events, decoded.
    let plain = Store::new(def.clone(), storage.clone(), "/registry", AdmitAll);
    let mut events = plain
        .watch("", WatchOptions::streaming_list())
        .await
        .expect("watch");
    match events.recv().await {
        Some(WatchEvent::Object(EventType::Added, ObjectRead::Decoded(v))) => {
            assert_eq!(v["metadata"]["name"], "a")
        }
        _ => panic!("expected the initial object from etcd"),
    }

    // A ready cache: the same call is answered from memory.
    let store = Store::new(def, storage.clone(), "/registry", AdmitAll).with_watch_cache(1 << 30);
    until_ready(store.cache().expect("cache")).await;
    let mut events = store
        .watch("", WatchOptions::streaming_list())
        .await
        .expect("watch");
    assert!(matches!(
        events.recv().await,
        Some(WatchEvent::Object(EventType::Added, ObjectRead::Encoded(_)))
    ));
    assert!(matches!(
        events.recv().await,
        Some(WatchEvent::Bookmark {
            initial_events_end: true,
            ..
        })
    ));
    storage
        .create("/registry/gadgets/ns/b", gadget("b"))
        .await
        .expect("create");
    match tokio::time::timeout(Duration::from_secs(5), events.recv()).await {
        Ok(Some(WatchEvent::Object(EventType::Added, ObjectRead::Encoded(obj)))) => {
            assert_eq!(&*obj.name, "b")
        }
        _ => panic!("expected the new object from the cache"),
    }
}
