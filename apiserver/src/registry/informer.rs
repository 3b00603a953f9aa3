//! An in-memory mirror of one resource, as an informer's store: a streaming
//! list (`sendInitialEvents`) followed by the watch, relisting whenever the
//! watch ends. Controllers and authorizers inside a server read it instead
//! of storage.
//!
//! The mirror is published through a `tokio::sync::watch` channel: readers
//! `borrow()` the current [`Mirror`] and `changed().await` to hear about
//! the next change. A relist replaces the objects at once when its initial
//! events end, so readers never see a half-listed state.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use super::store::Store;
use super::watch::WatchOptions;
use super::watch_event::{EventType, WatchEvent};
use crate::apimachinery::meta;

/// Pause before relisting after a watch failed or ended.
const RELIST_BACKOFF: Duration = Duration::from_secs(1);

/// The mirrored objects by `namespace/name` (`name` when cluster-scoped).
#[derive(Clone, Debug, Default)]
pub struct Mirror {
    pub objects: BTreeMap<String, Value>,
    /// Whether the first list has completed.
    pub synced: bool,
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

/// A new, empty mirror channel.
pub fn channel() -> (watch::Sender<Mirror>, watch::Receiver<Mirror>) {
    watch::channel(Mirror::default())
}

/// Runs forever: keeps `tx` holding the objects of `store` (all namespaces).
pub async fn run(store: Store, tx: watch::Sender<Mirror>) {
    loop {
        if let Err(e) = mirror_once(&store, &tx).await {
            tracing::debug!(resource = %store.def.resource, error = %e, "mirror: relisting");
        }
        if tx.is_closed() {
            return;
        }
        tokio::time::sleep(RELIST_BACKOFF).await;
    }
}

async fn mirror_once(store: &Store, tx: &watch::Sender<Mirror>) -> Result<(), String> {
    let mut events = store
        .watch("", WatchOptions::streaming_list())
        .await
        .map_err(|e| e.to_string())?;
    let mut initial: Option<BTreeMap<String, Value>> = Some(BTreeMap::new());
    while let Some(ev) = events.recv().await {
        match ev {
            WatchEvent::Error(e) => return Err(e.to_string()),
            WatchEvent::Bookmark {
                initial_events_end, ..
            } => {
                if let (true, Some(objects)) = (initial_events_end, initial.take()) {
                    tx.send_modify(|m| {
                        m.objects = objects;
                        m.synced = true;
                    });
                }
            }
            WatchEvent::Object(type_, obj) => {
                let obj = obj.into_value();
                let key = key_of(&obj);
                let deleted = type_ == EventType::Deleted;
                match &mut initial {
                    Some(objects) if deleted => {
                        objects.remove(&key);
                    }
                    Some(objects) => {
                        objects.insert(key, obj);
                    }
                    None if deleted => tx.send_modify(|m| {
                        m.objects.remove(&key);
                    }),
                    None => tx.send_modify(|m| {
                        m.objects.insert(key, obj);
                    }),
                }
            }
        }
    }
    Err("watch closed".into())
}
