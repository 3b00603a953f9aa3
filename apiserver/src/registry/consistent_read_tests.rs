//! Consistent GETs served from the watch cache against a real etcd: every
//! write acknowledged by etcd before the GET began is in its answer, even
//! when the cache has not yet seen the write.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::read::ObjectRead;
use super::resource::ResourceDef;
use super::store::Store;
use crate::registry::admit::AdmitAll;
use crate::storage::test_etcd::TestEtcd;
use crate::storage::{EtcdOptions, EtcdStorage};

fn gadget(name: &str, size: i64) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": name, "namespace": "ns"}, "spec": {"size": size}})
}

fn bytes_of(v: &Value) -> bytes::Bytes {
    serde_json::to_vec(v).expect("json").into()
}

/// `(size, resourceVersion)` of a consistent GET, `None` for 404; also
/// whether it came from the cache.
async fn consistent_get(store: &Store, name: &str) -> (Option<(i64, String)>, bool) {
    match store.read("ns", name, "").await {
        Ok(ObjectRead::Encoded(obj)) => {
            let v: Value = serde_json::from_slice(&obj.bytes).expect("cached JSON");
            let rv = v["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or("")
                .to_string();
            assert_eq!(rv, obj.revision.to_string());
            (Some((v["spec"]["size"].as_i64().unwrap_or(-1), rv)), true)
        }
        Ok(ObjectRead::Decoded(v)) => {
            let rv = v["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or("")
                .to_string();
            (Some((v["spec"]["size"].as_i64().unwrap_or(-1), rv)), false)
        }
        Err(e) if e.code == 404 => (None, true),
        Err(e) => panic!("GET failed: {e:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consistent_gets_from_the_cache_see_every_acknowledged_write() {
    let etcd = TestEtcd::start();
    let storage = EtcdStorage::connect(&[etcd.endpoint()], EtcdOptions::default())
        .await
        .expect("etcd");
    let def = ResourceDef::new("example.com", "v1", "Gadget", "gadgets");
    let store = Store::new(def, storage.clone(), "/registry", AdmitAll).with_watch_cache(1 << 30);
    let cache = store.cache().expect("cache").clone();
    for _ in 0..100 {
        if cache.is_ready() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(cache.is_ready(), "cache never loaded");

    let key = "/registry/gadgets/ns/g";
    let mut rev = storage
        .create(key, bytes_of(&gadget("g", 0)))
        .await
        .expect("create");
    let mut from_cache = 0;
    // Writes straight to etcd, each read back at once: the cache may trail
    // by a few milliseconds, the answer may not.
    for size in 1..=200 {
        rev = storage
            .update(key, rev, bytes_of(&gadget("g", size)))
            .await
            .expect("update");
        let (got, cached) = consistent_get(&store, "g").await;
        assert_eq!(got, Some((size, rev.to_string())), "write {size} not seen");
        from_cache += cached as usize;
    }
    // Deleted, then absent; re-created, then present again.
    storage.delete(key, None).await.expect("delete");
    assert_eq!(consistent_get(&store, "g").await.0, None);
    let created = storage
        .create(key, bytes_of(&gadget("g", 7)))
        .await
        .expect("create");
    assert_eq!(
        consistent_get(&store, "g").await.0,
        Some((7, created.to_string()))
    );
    assert_eq!(consistent_get(&store, "never").await.0, None);
    // Nearly all answers came from memory (a cache trailing for longer
    // than the wait falls back to etcd, which this test allows).
    assert!(from_cache >= 150, "only {from_cache} of 200 from the cache");

    // Many GETs at once share etcd round trips and all see the last write.
    let rev = storage
        .update(key, created, bytes_of(&gadget("g", 8)))
        .await
        .expect("update");
    let store = Arc::new(store);
    let gets = (0..100).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { consistent_get(&store, "g").await.0 })
    });
    for got in futures_util::future::join_all(gets).await {
        assert_eq!(got.expect("task"), Some((8, rev.to_string())));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mod_revisions_are_read_in_batches_and_report_absence() {
    let etcd = TestEtcd::start();
    let storage = EtcdStorage::connect(&[etcd.endpoint()], EtcdOptions::default())
        .await
        .expect("etcd");
    let mut revisions = Vec::new();
    for i in 0..150 {
        let rev = storage
            .create(
                &format!("/registry/things/k{i}"),
                bytes_of(&json!({"i": i})),
            )
            .await
            .expect("create");
        revisions.push(rev);
    }
    // More concurrent reads than one transaction may hold.
    let reads = (0..200).map(|i| {
        let storage = storage.clone();
        async move {
            storage
                .mod_revision_of(&format!("/registry/things/k{i}"))
                .await
        }
    });
    let got = futures_util::future::join_all(reads).await;
    for (i, r) in got.into_iter().enumerate() {
        let want = revisions.get(i).copied();
        assert_eq!(r.expect("read"), want, "key k{i}");
    }
    // Prefix proofs queued with key reads: identical ones share one range.
    let last = *revisions.last().expect("revisions");
    let mixed = (0..60).map(|i| {
        let storage = storage.clone();
        async move {
            match i % 3 {
                0 => storage.changes_since("/registry/things", 0).await,
                1 => storage.changes_since("/registry/things/", last).await,
                _ => storage
                    .mod_revision_of("/registry/things/k0")
                    .await
                    .map(|r| (r.unwrap_or(-1), -1)),
            }
        }
    });
    for (i, got) in futures_util::future::join_all(mixed)
        .await
        .into_iter()
        .enumerate()
    {
        let want = match i % 3 {
            0 => (150, 150),
            1 => (0, 150),
            _ => (revisions[0], -1),
        };
        assert_eq!(got.expect("proof"), want, "proof {i}");
    }
    drop(etcd);
    // etcd gone: an error, not a hang.
    let down = tokio::time::timeout(
        Duration::from_secs(30),
        storage.mod_revision_of("/registry/things/k1"),
    )
    .await
    .expect("answered");
    assert!(down.is_err());
}
