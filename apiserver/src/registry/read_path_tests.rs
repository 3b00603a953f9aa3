//! The read path against a real etcd: the watch cache decorates etcd's
//! reads, answers what it can and hands the rest to the path behind it.

use std::time::Duration;

use serde_json::{json, Value};

use super::list::ListOptions;
use super::read::{ListForm, ListRead, ObjectRead};
use super::resource::ResourceDef;
use super::store::Store;
use crate::registry::admit::AdmitAll;
use crate::storage::test_etcd::TestEtcd;
use crate::storage::{EtcdOptions, EtcdStorage};

fn gadget(name: &str) -> bytes::Bytes {
    let v: Value = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": name, "namespace": "ns"}, "spec": {"size": 1}});
    serde_json::to_vec(&v).expect("json").into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_answers_in_front_of_etcd_and_hands_on_the_rest() {
    let etcd = TestEtcd::start();
    let storage = EtcdStorage::connect(&[etcd.endpoint()], EtcdOptions::default())
        .await
        .expect("etcd");
    storage
        .create("/registry/gadgets/ns/g", gadget("g"))
        .await
        .expect("create");
    let def = ResourceDef::new("example.com", "v1", "Gadget", "gadgets");

    // Without a cache, etcd answers every read.
    let plain = Store::new(def.clone(), storage.clone(), "/registry", AdmitAll);
    assert!(plain.reads().cached().is_none());
    assert!(matches!(
        plain.read("ns", "g", "0").await,
        Ok(ObjectRead::Decoded(_))
    ));
    assert!(plain
        .get_from_cache("ns", "g", "0")
        .await
        .expect("read")
        .is_none());

    // A second cache replaces the first: one decorator, etcd's path behind.
    let cached = Store::new(def, storage.clone(), "/registry", AdmitAll)
        .with_watch_cache(1 << 30)
        .with_watch_cache(1 << 30);
    let layer = cached.reads().cached().expect("cache in front");
    assert!(layer.next().cached().is_none(), "caches stacked");
    for _ in 0..100 {
        if layer.cache().is_ready() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(layer.cache().is_ready(), "cache never loaded");

    // What the cache may answer comes from memory...
    match cached.read("ns", "g", "0").await {
        Ok(ObjectRead::Encoded(obj)) => assert_eq!(obj.name.as_ref(), "g"),
        other => panic!("expected the cached object, got {:?}", other.err()),
    }
    // ...a missing object is a 404 from the cache as from etcd...
    assert_eq!(
        cached.read("ns", "nope", "0").await.err().map(|e| e.code),
        Some(404)
    );
    // ...and an exact-revision LIST, which the cache cannot answer, is
    // handed to etcd.
    let rv = layer.cache().revision().to_string();
    let exact = ListOptions {
        resource_version: Some(rv),
        resource_version_match: Some("Exact".into()),
        ..Default::default()
    };
    match cached.read_list("ns", &exact, ListForm::Decoded).await {
        Ok(ListRead::Decoded(page)) => assert_eq!(page.items.len(), 1),
        Ok(_) => panic!("an exact LIST was answered from the cache"),
        Err(e) => panic!("LIST failed: {e:?}"),
    }
    let any = ListOptions {
        resource_version: Some("0".into()),
        ..Default::default()
    };
    assert!(matches!(
        cached.read_list("ns", &any, ListForm::Decoded).await,
        Ok(ListRead::Encoded(page)) if page.objects.len() == 1
    ));
}
