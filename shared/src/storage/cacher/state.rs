//! The cache's state under one lock: objects by key, the event window, and
//! the broadcast of live events.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::broadcast;

use super::{broadcast_capacity, CacheEvent, CachedObject};
use crate::storage::WatchEventKind;

/// Objects at one revision.
pub struct Snapshot {
    pub objects: Vec<Arc<CachedObject>>,
    pub revision: i64,
}

struct Inner {
    ready: bool,
    objects: BTreeMap<Box<str>, Arc<CachedObject>>,
    revision: i64,
    /// Every event with a revision above `oldest` is in `history`.
    history: VecDeque<Arc<CacheEvent>>,
    oldest: i64,
    bytes: usize,
    sender: broadcast::Sender<Arc<CacheEvent>>,
}

/// The lock-protected state; see the module documentation of `cacher` for
/// the ordering guarantee.
pub struct CacheState {
    inner: RwLock<Inner>,
    history_capacity: usize,
    max_bytes: usize,
}

impl CacheState {
    /// An empty, not-ready state.
    pub fn new(history_capacity: usize, max_bytes: usize) -> Self {
        let (sender, _) = broadcast::channel(broadcast_capacity());
        CacheState {
            inner: RwLock::new(Inner {
                ready: false,
                objects: BTreeMap::new(),
                revision: 0,
                history: VecDeque::new(),
                oldest: 0,
                bytes: 0,
                sender,
            }),
            history_capacity: history_capacity.max(1),
            max_bytes,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the state follows etcd.
    pub fn is_ready(&self) -> bool {
        self.read().ready
    }

    /// The revision of the last applied change.
    pub fn revision(&self) -> i64 {
        self.read().revision
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    /// How many objects lie under `prefix`, if the cache is ready and still
    /// at `revision`.
    pub fn count_at(&self, prefix: &str, revision: i64) -> Option<usize> {
        let inner = self.read();
        (inner.ready && inner.revision == revision)
            .then(|| Self::range(&inner, prefix, None).count())
    }

    /// Whether no object is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops everything and ends every subscription (their clients re-watch).
    pub fn reset(&self) {
        let mut inner = self.write();
        inner.ready = false;
        inner.objects.clear();
        inner.history.clear();
        inner.bytes = 0;
        let (sender, _) = broadcast::channel(broadcast_capacity());
        inner.sender = sender;
    }

    /// Replaces the state with a fresh list at `revision`.
    pub fn load(&self, objects: Vec<Arc<CachedObject>>, revision: i64) {
        let mut inner = self.write();
        inner.bytes = objects.iter().map(|o| o.size()).sum();
        inner.objects = objects.into_iter().map(|o| (o.key.clone(), o)).collect();
        inner.revision = revision;
        inner.oldest = revision;
        inner.history.clear();
        inner.ready = inner.bytes <= self.max_bytes;
    }

    /// Applies one change and broadcasts it; false when the resource no
    /// longer fits the memory budget (the cache then steps aside).
    pub fn apply(&self, kind: WatchEventKind, object: Arc<CachedObject>) -> bool {
        let mut inner = self.write();
        let prev = match kind {
            WatchEventKind::Deleted => inner.objects.remove(&object.key),
            _ => inner.objects.insert(object.key.clone(), object.clone()),
        };
        if let Some(p) = &prev {
            inner.bytes = inner.bytes.saturating_sub(p.held());
        }
        if kind != WatchEventKind::Deleted {
            inner.bytes += object.size();
        }
        inner.revision = object.revision;
        let event = Arc::new(CacheEvent { kind, object, prev });
        inner.history.push_back(event.clone());
        while inner.history.len() > self.history_capacity {
            if let Some(old) = inner.history.pop_front() {
                inner.oldest = old.revision();
            }
        }
        // No receivers is fine: nobody is watching.
        let _ = inner.sender.send(event);
        inner.bytes <= self.max_bytes
    }

    fn range<'a>(
        inner: &'a Inner,
        prefix: &'a str,
        start: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Arc<CachedObject>> + 'a {
        let lower = match start {
            Some(s) if s > prefix => Bound::Included(s),
            _ => Bound::Included(prefix),
        };
        inner
            .objects
            .range::<str, _>((lower, Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(_, o)| o)
    }

    /// See [`super::WatchCache::account_encoded`].
    pub fn account_encoded(&self, object: &Arc<CachedObject>) {
        let mut inner = self.write();
        let current = inner
            .objects
            .get(&object.key)
            .is_some_and(|o| Arc::ptr_eq(o, object));
        if current
            && !object
                .encoded_counted
                .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            inner.bytes += object.encoded.get().map_or(0, bytes::Bytes::len);
        }
    }

    /// The budget's count of bytes held (for tests and metrics).
    pub fn bytes(&self) -> usize {
        self.read().bytes
    }

    /// The object at `key` and the cache's revision, if ready; `Ok(None)`
    /// means the cache knows the key does not exist at that revision.
    pub fn get(&self, key: &str) -> Option<(Option<Arc<CachedObject>>, i64)> {
        let inner = self.read();
        if !inner.ready {
            return None;
        }
        Some((inner.objects.get(key).cloned(), inner.revision))
    }

    /// The objects under `prefix` from `start` on, if ready.
    pub fn snapshot(&self, prefix: &str, start: Option<&str>) -> Option<Snapshot> {
        let inner = self.read();
        if !inner.ready {
            return None;
        }
        Some(Snapshot {
            objects: Self::range(&inner, prefix, start).cloned().collect(),
            revision: inner.revision,
        })
    }

    /// The objects under `prefix` and a subscription to every later change.
    pub fn snapshot_and_subscribe(
        &self,
        prefix: &str,
    ) -> Option<(Snapshot, broadcast::Receiver<Arc<CacheEvent>>)> {
        let inner = self.read();
        if !inner.ready {
            return None;
        }
        let snapshot = Snapshot {
            objects: Self::range(&inner, prefix, None).cloned().collect(),
            revision: inner.revision,
        };
        Some((snapshot, inner.sender.subscribe()))
    }

    /// The window's events after `revision` and a subscription to later ones;
    /// `Err(oldest)` when `revision` is older than the window or the cache is
    /// not ready (then `Err(0)`).
    pub fn watch_from(
        &self,
        revision: i64,
    ) -> Result<(Vec<Arc<CacheEvent>>, broadcast::Receiver<Arc<CacheEvent>>), i64> {
        let inner = self.read();
        if !inner.ready {
            return Err(0);
        }
        if revision < inner.oldest {
            return Err(inner.oldest);
        }
        let past = inner
            .history
            .iter()
            .filter(|e| e.revision() > revision)
            .cloned()
            .collect();
        Ok((past, inner.sender.subscribe()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn obj(key: &str, rev: i64) -> Arc<CachedObject> {
        Arc::new(CachedObject {
            key: key.into(),
            revision: rev,
            bytes: Bytes::from_static(b"{}"),
            namespace: "".into(),
            name: key.rsplit('/').next().unwrap_or("").into(),
            labels: Box::new([]),
            fields: Box::new([]),
            encoded: Default::default(),
            encoded_counted: Default::default(),
        })
    }

    #[test]
    fn snapshot_ranges_and_history_window() {
        let s = CacheState::new(3, usize::MAX);
        assert!(s.snapshot("/r/", None).is_none(), "not ready before load");
        s.load(vec![obj("/r/a/x", 5), obj("/r/b/y", 6)], 10);
        assert_eq!(s.snapshot("/r/a/", None).map(|s| s.objects.len()), Some(1));
        assert_eq!(
            s.snapshot("/r/", Some("/r/b/")).map(|s| s.objects.len()),
            Some(1)
        );
        let (_, mut rx) = s.watch_from(10).expect("within window");
        for rev in 11..=15 {
            assert!(s.apply(WatchEventKind::Added, obj(&format!("/r/a/{rev}"), rev)));
        }
        assert_eq!(rx.try_recv().map(|e| e.revision()).ok(), Some(11));
        assert_eq!(
            s.watch_from(10).err(),
            Some(12),
            "events 11 and 12 left the window"
        );
        let (past, _) = s.watch_from(12).expect("in window");
        assert_eq!(
            past.iter().map(|e| e.revision()).collect::<Vec<_>>(),
            vec![13, 14, 15]
        );
        assert!(s.apply(WatchEventKind::Deleted, obj("/r/a/x", 16)));
        assert_eq!(s.len(), 6);
    }

    #[test]
    fn budget_makes_the_cache_step_aside() {
        let s = CacheState::new(10, 1);
        s.load(vec![obj("/r/a", 1)], 1);
        assert!(!s.is_ready(), "over budget at load");
    }

    #[test]
    fn other_encodings_count_in_the_budget_while_current() {
        let s = CacheState::new(10, usize::MAX);
        let a = obj("/r/a", 1);
        s.load(vec![a.clone()], 1);
        let base = s.bytes();
        assert_eq!(base, a.size());
        a.encoded_with(|_| Bytes::from_static(&[0u8; 100]));
        s.account_encoded(&a);
        assert_eq!(s.bytes(), base + 100);
        // Counted once only.
        s.account_encoded(&a);
        assert_eq!(s.bytes(), base + 100);
        // Replacing the object frees both encodings of the old one.
        let b = obj("/r/a", 2);
        assert!(s.apply(WatchEventKind::Modified, b.clone()));
        assert_eq!(s.bytes(), b.size());
        // An object no longer current is not counted.
        let stale = obj("/r/a", 1);
        stale.encoded_with(|_| Bytes::from_static(&[0u8; 50]));
        s.account_encoded(&stale);
        assert_eq!(s.bytes(), b.size());
        assert!(s.apply(WatchEventKind::Deleted, obj("/r/a", 3)));
        assert_eq!(s.bytes(), 0);
    }

    #[test]
    fn counts_under_a_prefix_only_at_the_current_revision() {
        let s = CacheState::new(10, usize::MAX);
        assert_eq!(s.count_at("/r/", 0), None, "not ready");
        s.load(
            vec![obj("/r/a/x", 1), obj("/r/a/y", 2), obj("/r/b/z", 3)],
            7,
        );
        assert_eq!(s.count_at("/r/a/", 7), Some(2));
        assert_eq!(s.count_at("/r/", 7), Some(3));
        assert_eq!(s.count_at("/r/c/", 7), Some(0));
        assert_eq!(s.count_at("/r/a/", 6), None, "the cache moved on");
    }
}
