//! The watch cache: one etcd watch per resource feeds an in-memory copy of
//! every object and a window of recent events, from which LISTs and all
//! WATCHes are served (upstream's `storage/cacher`).
//!
//! Memory: an object is kept as the bytes it is served as (JSON with its
//! `resourceVersion`), plus its key, labels and selectable fields, which is
//! all a selector needs; it is decoded only for shapes that need a value
//! (Tables). Events share those bytes with the object map, and every watcher
//! receives the same `Arc`.
//!
//! Ordering: events are applied under the write lock and broadcast while it
//! is held, so a reader that snapshots under the read lock and subscribes in
//! the same critical section sees every later event exactly once.
//!
//! Freshness without etcd progress notifications (which etcd 3.4 gets wrong):
//! a consistent read first asks etcd, in one transaction, for the current
//! revision, how many keys the resource has and how many were modified after
//! the cache's revision. No modified key and the same key count means no
//! change since the cache's revision, so the cache is current.

mod state;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::broadcast;

use super::{EtcdStorage, KeyValue, StorageError, WatchEventKind};
pub use state::{CacheState, Snapshot};

/// Events kept for watches that resume from a resourceVersion.
pub const DEFAULT_HISTORY: usize = 10_000;
/// Events buffered per watcher before a slow watcher is cut off (it resumes
/// from its last resourceVersion, out of the history window).
const BROADCAST_CAPACITY: usize = 8192;

/// One cached object.
#[derive(Debug)]
pub struct CachedObject {
    /// The etcd key.
    pub key: Box<str>,
    /// The mod revision (the object's resourceVersion).
    pub revision: i64,
    /// The object as served: JSON including `resourceVersion`, `kind` and
    /// `apiVersion`.
    pub bytes: Bytes,
    /// `metadata.namespace`.
    pub namespace: Box<str>,
    /// `metadata.name`.
    pub name: Box<str>,
    /// `metadata.labels`.
    pub labels: Box<[(Box<str>, Box<str>)]>,
    /// Values of the resource's selectable fields (besides name and namespace).
    pub fields: Box<[(Box<str>, Box<str>)]>,
    /// The object in another encoding (protobuf), made on first use and
    /// shared by every watcher and LIST that needs it; empty when the
    /// object cannot be encoded.
    pub encoded: std::sync::OnceLock<Bytes>,
    /// Whether `encoded` is counted in the cache's memory budget; only
    /// changed under the cache's write lock (see [`WatchCache::account_encoded`]).
    pub encoded_counted: std::sync::atomic::AtomicBool,
    /// The object converted to another version of its resource (events.k8s.io
    /// Events from the core/v1 cache, autoscaling/v1 HPAs from the v2 one),
    /// made on first use and shared by every reader at that version.
    pub converted: std::sync::OnceLock<Arc<CachedObject>>,
    /// Whether `converted` is counted in the cache's memory budget (see
    /// [`WatchCache::account_converted`]).
    pub converted_counted: std::sync::atomic::AtomicBool,
}

impl CachedObject {
    /// The value of a label.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    /// The value of a selectable field (`""` when unset, as upstream).
    pub fn field(&self, field: &str) -> String {
        match field {
            "metadata.name" => self.name.to_string(),
            "metadata.namespace" => self.namespace.to_string(),
            other => self
                .fields
                .iter()
                .find(|(k, _)| &**k == other)
                .map(|(_, v)| v.to_string())
                .unwrap_or_default(),
        }
    }

    /// The object in another encoding, made by `encode` from the JSON
    /// bytes on first use and kept.
    pub fn encoded_with(&self, encode: impl FnOnce(&[u8]) -> Bytes) -> Bytes {
        self.encoded.get_or_init(|| encode(&self.bytes)).clone()
    }

    /// Memory counted in the budget: [`CachedObject::size`] plus the other
    /// encoding and the converted object once they are counted.
    pub fn held(&self) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        let encoded = if self.encoded_counted.load(Relaxed) {
            self.encoded.get().map_or(0, Bytes::len)
        } else {
            0
        };
        let converted = if self.converted_counted.load(Relaxed) {
            self.converted.get().map_or(0, |c| c.size())
        } else {
            0
        };
        self.size() + encoded + converted
    }

    /// Memory held, roughly.
    pub fn size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.key.len()
            + self.bytes.len()
            + self.namespace.len()
            + self.name.len()
            + self
                .labels
                .iter()
                .chain(self.fields.iter())
                .map(|(k, v)| k.len() + v.len() + 32)
                .sum::<usize>()
    }
}

/// A change, as watchers receive it.
#[derive(Debug)]
pub struct CacheEvent {
    pub kind: WatchEventKind,
    /// The object after the change (for a delete: its last state, with the
    /// delete's revision).
    pub object: Arc<CachedObject>,
    /// The object before the change, when there was one.
    pub prev: Option<Arc<CachedObject>>,
}

impl CacheEvent {
    /// The revision of the change.
    pub fn revision(&self) -> i64 {
        self.object.revision
    }
}

/// Turns stored values into cached objects (the registry decodes, applies its
/// read-time defaults, fills in `resourceVersion`, extracts labels/fields).
pub trait Codec: Send + Sync {
    /// Builds the cached form of a stored key/value; `revision` overrides the
    /// value's own mod revision (deletes carry the delete's revision).
    fn cache(&self, kv: &KeyValue, revision: i64) -> Result<CachedObject, String>;
}

/// Keys per etcd range while the cache loads.
const LOAD_PAGE_SIZE: i64 = 1000;

/// The watch cache of one resource.
pub struct WatchCache {
    prefix: String,
    storage: EtcdStorage,
    state: CacheState,
    metrics: super::metrics::WatchCacheMetrics,
    /// Set by [`WatchCache::stop`]; the runner ends at its next step.
    stopped: std::sync::atomic::AtomicBool,
    stop: tokio::sync::Notify,
}

impl super::metrics::CountObjects for WatchCache {
    fn count_objects(&self) -> Option<usize> {
        self.state.is_ready().then(|| self.state.len())
    }
}

impl WatchCache {
    /// Creates the cache for keys under `prefix` and starts filling it in the
    /// background; until it has loaded, [`WatchCache::is_ready`] is false and
    /// callers read from etcd.
    pub fn start(
        prefix: String,
        storage: EtcdStorage,
        codec: Arc<dyn Codec>,
        max_bytes: usize,
        indexed_fields: &[String],
    ) -> Arc<Self> {
        let names = storage.resource_of(&prefix);
        let cache = Arc::new(WatchCache {
            prefix,
            storage,
            state: CacheState::with_indexes(DEFAULT_HISTORY, max_bytes, indexed_fields),
            metrics: super::metrics::WatchCacheMetrics::of(&names),
            stopped: std::sync::atomic::AtomicBool::new(false),
            stop: tokio::sync::Notify::new(),
        });
        if !names.resource.is_empty() {
            let counted: Arc<dyn super::metrics::CountObjects> = cache.clone();
            super::metrics::count_objects(names, Arc::downgrade(&counted));
        }
        let runner = cache.clone();
        tokio::spawn(async move { runner.run(codec).await });
        cache
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether the cache holds the resource's state and follows etcd.
    pub fn is_ready(&self) -> bool {
        self.state.is_ready()
    }

    /// The revision up to which every change is applied.
    pub fn revision(&self) -> i64 {
        self.state.revision()
    }

    /// Stops following etcd for good: the cache empties, every watch it
    /// serves ends (clients re-watch, as after any cache reset) and reads go
    /// to etcd. For a resource that stops being served in this form (a
    /// CRD deleted or changed); the cache's memory is freed once the last
    /// store holding it is dropped.
    pub fn stop(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // A stored permit: the runner sees it even if it is not waiting yet.
        self.stop.notify_one();
    }

    /// Whether [`WatchCache::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Keeps the cache in sync with etcd until it is stopped, reloading
    /// after any failure of the watch.
    async fn run(self: Arc<Self>, codec: Arc<dyn Codec>) {
        while !self.is_stopped() {
            tokio::select! {
                _ = self.stop.notified() => break,
                result = self.load_and_follow(codec.as_ref()) => {
                    if let Err(e) = result {
                        tracing::info!(prefix = %self.prefix, error = %e, "watch cache resyncing")
                    }
                }
            }
            self.state.reset();
            tokio::select! {
                _ = self.stop.notified() => break,
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
        self.state.reset();
        tracing::debug!(prefix = %self.prefix, "watch cache stopped");
    }

    async fn load_and_follow(&self, codec: &dyn Codec) -> Result<(), StorageError> {
        // Paged at one revision, so the load never holds more than a page
        // of etcd's encoding beside the cached objects (no spike of the
        // whole resource's size after a restart).
        let mut objects = Vec::new();
        let mut start_key = None;
        let mut revision = None;
        loop {
            let page = self
                .storage
                .list(&super::ListRequest {
                    prefix: self.prefix.clone(),
                    start_key: start_key.take(),
                    revision,
                    limit: Some(LOAD_PAGE_SIZE),
                })
                .await?;
            revision = Some(page.revision);
            for kv in &page.items {
                match codec.cache(kv, kv.mod_revision) {
                    Ok(o) => objects.push(Arc::new(o)),
                    Err(e) => {
                        tracing::warn!(key = %kv.key, error = %e, "skipping undecodable object")
                    }
                }
            }
            match page.items.last() {
                Some(last) if page.more => start_key = Some(format!("{}\u{0}", last.key)),
                _ => break,
            }
        }
        let revision = revision.unwrap_or_default();
        self.state.load(objects, revision);
        self.metrics.initializations.inc();
        self.metrics.resource_version.set(revision);
        tracing::debug!(prefix = %self.prefix, revision, "watch cache loaded");
        let mut stream = self.storage.watch(&self.prefix, true, revision + 1).await?;
        while let Some(ev) = stream.next().await {
            let ev = ev?;
            let object = match codec.cache(&ev.kv, ev.kv.mod_revision) {
                Ok(o) => Arc::new(o),
                Err(e) => {
                    tracing::warn!(key = %ev.kv.key, error = %e, "skipping undecodable object");
                    continue;
                }
            };
            let revision = object.revision;
            self.metrics.events_received.inc();
            if !self.state.apply(ev.kind, object) {
                return Err(StorageError::Internal(
                    "watch cache over its memory budget".into(),
                ));
            }
            self.metrics.events_dispatched.inc();
            self.metrics.resource_version.set(revision);
        }
        Err(StorageError::Unavailable("etcd watch ended".into()))
    }

    /// Waits until the cache reflects etcd's current state under `prefix`
    /// (the cache's own prefix, or a namespace's within it), for a
    /// consistent read; false if it cannot tell within `wait` (read from
    /// etcd then). The proof is one etcd range over `prefix` only: no key
    /// changed after the cache's revision, and as many keys as the cache
    /// holds there, so a namespaced LIST costs its namespace, not the
    /// whole resource.
    pub async fn wait_fresh(&self, prefix: &str, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        let prefix = if prefix.starts_with(&self.prefix) {
            prefix
        } else {
            &self.prefix
        };
        loop {
            if !self.is_ready() {
                return false;
            }
            let rev = self.state.revision();
            match self.storage.changes_since(prefix, rev).await {
                Ok((changed, count)) if changed == 0 => {
                    if self.state.count_at(prefix, rev) == Some(count as usize) {
                        return true;
                    }
                }
                Ok(_) => {}
                Err(_) => return false,
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The object at `key` for a consistent GET, from memory: etcd is asked
    /// only for the key's current mod revision (batched, without the
    /// value; [`EtcdStorage::mod_revision_of`]), and the cached copy is
    /// served once it is that revision or newer, or the key is absent in
    /// both; a cache that trails is waited for up to `wait`. `None`: read
    /// etcd (not ready, still trailing, or etcd unreachable). A state newer
    /// than etcd's answer was committed after the request arrived, so it
    /// is as linearizable as the state etcd reported.
    pub async fn get_consistent(
        &self,
        key: &str,
        wait: Duration,
    ) -> Option<Option<Arc<CachedObject>>> {
        let (at_start, _) = self.state.get(key)?;
        let current = self.storage.mod_revision_of(key).await.ok()?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let (cached, _) = self.state.get(key)?;
            let served = match (&cached, current) {
                (Some(obj), Some(rev)) => obj.revision >= rev,
                (None, None) => true,
                // Deleted in etcd: the cache must show the delete, or a
                // later re-creation (newer than what it held at the start).
                (Some(obj), None) => at_start
                    .as_ref()
                    .is_some_and(|old| obj.revision > old.revision),
                (None, Some(_)) => false,
            };
            if served {
                return Some(cached);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Waits until the cache has applied `revision` (for NotOlderThan reads).
    pub async fn wait_for_revision(&self, revision: i64, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        while self.state.revision() < revision {
            if !self.is_ready() || tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.is_ready()
    }

    /// Counts `object`'s other encoding, made just now, in the memory budget
    /// if the object is still the cache's current one (an object already
    /// replaced or deleted is freed with its last watcher). Beyond the
    /// budget, the next change makes the cache step aside.
    pub fn account_encoded(&self, object: &Arc<CachedObject>) {
        self.state.account_encoded(object);
    }

    /// Bytes counted against the memory budget.
    pub fn bytes_held(&self) -> usize {
        self.state.bytes()
    }

    /// Counts `object`'s converted form in the budget, once, if `object`
    /// is still the current state of its key.
    pub fn account_converted(&self, object: &Arc<CachedObject>) {
        self.state.account_converted(object);
    }

    /// The object at `key` as the cache holds it (`Some(None)`: known
    /// absent); `None` while the cache is not ready.
    pub fn get(&self, key: &str) -> Option<Option<Arc<CachedObject>>> {
        self.state.get(key).map(|(obj, _)| obj)
    }

    /// The objects under `prefix` whose indexed `field` is `value`; `None`
    /// when not ready or `field` is not indexed.
    pub fn indexed_snapshot(&self, field: &str, value: &str, prefix: &str) -> Option<Snapshot> {
        self.state.indexed_snapshot(field, value, prefix)
    }

    /// The objects under `prefix` (a namespace's, or all) at the cache's
    /// revision, in key order, starting at `start_key`.
    pub fn snapshot(&self, prefix: &str, start_key: Option<&str>) -> Option<Snapshot> {
        self.state.snapshot(prefix, start_key)
    }

    /// Subscribes to changes after `revision`: the history events after it,
    /// then live events. `Err(oldest)` when `revision` is older than the
    /// window (410 Expired for the client).
    pub fn watch_from(
        &self,
        revision: i64,
    ) -> Result<(Vec<Arc<CacheEvent>>, broadcast::Receiver<Arc<CacheEvent>>), i64> {
        self.state.watch_from(revision)
    }

    /// The current objects and a subscription to every later change.
    pub fn snapshot_and_subscribe(
        &self,
        prefix: &str,
    ) -> Option<(Snapshot, broadcast::Receiver<Arc<CacheEvent>>)> {
        self.state.snapshot_and_subscribe(prefix)
    }
}

/// Capacity of the broadcast channel of live events.
pub(crate) fn broadcast_capacity() -> usize {
    BROADCAST_CAPACITY
}
