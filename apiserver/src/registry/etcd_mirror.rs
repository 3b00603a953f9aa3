//! An in-memory mirror of a kind that another tier serves, read straight
//! from the etcd that all tiers share: a list of its key prefix followed by
//! a watch from the list's revision, relisting when the watch fails (etcd
//! down, a compacted revision). Admission in every tier reads webhook
//! configurations and policies this way, as upstream's plugins read their
//! informers, without a client of the tier that owns the kind.
//!
//! The mirror is published through the same [`Mirror`] channel as the
//! store-backed [`super::informer`], so readers do not care which one feeds
//! it. A relist replaces the objects at once; readers never see a half-listed
//! state. Values that do not decode are skipped (and logged), never fatal.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::watch;

use super::informer::Mirror;
use crate::apimachinery::meta;
use crate::storage::watch::WatchEventKind;
use crate::storage::{EtcdStorage, ListRequest};

/// Pause before relisting after the watch failed or ended.
const RELIST_BACKOFF: Duration = Duration::from_secs(1);

/// Starts mirroring every object under `prefix` (`/registry/mutatingwebhookconfigurations`)
/// and returns the channel that holds the mirror. The task ends when every
/// receiver is dropped.
pub fn spawn(storage: EtcdStorage, prefix: String) -> watch::Receiver<Mirror> {
    let (tx, rx) = super::informer::channel();
    tokio::spawn(run(storage, prefix, tx));
    rx
}

async fn run(storage: EtcdStorage, prefix: String, tx: watch::Sender<Mirror>) {
    let prefix = if prefix.ends_with('/') {
        prefix
    } else {
        format!("{prefix}/")
    };
    loop {
        if let Err(e) = mirror_once(&storage, &prefix, &tx).await {
            tracing::debug!(%prefix, error = %e, "etcd mirror: relisting");
        }
        if tx.is_closed() {
            return;
        }
        tokio::time::sleep(RELIST_BACKOFF).await;
    }
}

fn key_of(obj: &Value) -> String {
    let ns = meta::namespace(obj);
    let name = meta::name(obj);
    if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    }
}

fn decode(key: &str, bytes: &[u8]) -> Option<Value> {
    match crate::protobuf::decode_from_storage(bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(%key, error = %e, "etcd mirror: skipping an undecodable object");
            None
        }
    }
}

async fn mirror_once(
    storage: &EtcdStorage,
    prefix: &str,
    tx: &watch::Sender<Mirror>,
) -> Result<(), String> {
    let listed = storage
        .list(&ListRequest {
            prefix: prefix.to_string(),
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let mut objects = BTreeMap::new();
    // etcd key -> mirror key, so a delete (whose value is the old object)
    // and a put find the entry even if the stored object is odd.
    let mut keys = BTreeMap::new();
    for kv in &listed.items {
        if let Some(obj) = decode(&kv.key, &kv.value) {
            let k = key_of(&obj);
            keys.insert(kv.key.clone(), k.clone());
            objects.insert(k, obj);
        }
    }
    tx.send_modify(|m| {
        m.objects = objects;
        m.synced = true;
    });
    let mut events = storage
        .watch(prefix, true, listed.revision + 1)
        .await
        .map_err(|e| e.to_string())?;
    while let Some(ev) = events.next().await {
        let ev = ev.map_err(|e| e.to_string())?;
        match ev.kind {
            WatchEventKind::Deleted => {
                if let Some(k) = keys.remove(&ev.kv.key) {
                    tx.send_modify(|m| {
                        m.objects.remove(&k);
                    });
                }
            }
            WatchEventKind::Added | WatchEventKind::Modified => {
                if let Some(obj) = decode(&ev.kv.key, &ev.kv.value) {
                    let k = key_of(&obj);
                    keys.insert(ev.kv.key.clone(), k.clone());
                    tx.send_modify(|m| {
                        m.objects.insert(k, obj);
                    });
                }
            }
        }
        if tx.is_closed() {
            return Ok(());
        }
    }
    Err("watch closed".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mirrors_creates_updates_and_deletes() {
        let etcd = crate::storage::test_etcd::TestEtcd::start();
        let storage = EtcdStorage::connect(&[etcd.endpoint()], Default::default())
            .await
            .expect("etcd");
        let put = |name: &str, label: &str| {
            Bytes::from(
                serde_json::json!({"apiVersion":"v1","kind":"ConfigMap",
                    "metadata":{"name":name,"labels":{"l":label}}})
                .to_string(),
            )
        };
        storage.create("/m/things/a", put("a", "1")).await.unwrap();
        let mut rx = spawn(storage.clone(), "/m/things".into());
        let wait = |rx: &mut watch::Receiver<Mirror>, f: fn(&Mirror) -> bool| {
            let mut rx = rx.clone();
            async move {
                tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|m| f(m)))
                    .await
                    .expect("mirror did not converge")
                    .map(|_| ())
                    .unwrap();
            }
        };
        wait(&mut rx, |m| m.synced && m.objects.contains_key("a")).await;
        storage.create("/m/things/b", put("b", "1")).await.unwrap();
        wait(&mut rx, |m| m.objects.contains_key("b")).await;
        let kv = storage.get("/m/things/a").await.unwrap().unwrap();
        storage
            .update("/m/things/a", kv.mod_revision, put("a", "2"))
            .await
            .unwrap();
        wait(&mut rx, |m| {
            m.objects
                .get("a")
                .and_then(|o| o.pointer("/metadata/labels/l"))
                == Some(&Value::from("2"))
        })
        .await;
        let kv = storage.get("/m/things/b").await.unwrap().unwrap();
        storage
            .delete("/m/things/b", Some(kv.mod_revision))
            .await
            .unwrap();
        wait(&mut rx, |m| !m.objects.contains_key("b")).await;
        // A sibling prefix is not mirrored.
        storage.create("/m/thingsx/c", put("c", "1")).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!rx.borrow().objects.contains_key("c"));
    }
}
