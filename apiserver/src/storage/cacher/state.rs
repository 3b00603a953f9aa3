//! The cache's state under one lock: objects by key, the event window, and
//! the broadcast of live events.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
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

/// The keys of the objects by the value of one field.
struct Index {
    field: Box<str>,
    keys: HashMap<Box<str>, BTreeSet<Box<str>>>,
}

impl Index {
    fn insert(&mut self, o: &CachedObject) {
        self.keys
            .entry(o.field(&self.field).into())
            .or_default()
            .insert(o.key.clone());
    }

    fn remove(&mut self, o: &CachedObject) {
        let value = o.field(&self.field);
        if let Some(set) = self.keys.get_mut(value.as_str()) {
            set.remove(&o.key);
            if set.is_empty() {
                self.keys.remove(value.as_str());
            }
        }
    }
}

struct Inner {
    ready: bool,
    objects: BTreeMap<Box<str>, Arc<CachedObject>>,
    indexes: Vec<Index>,
    revision: i64,
    /// Every event with a revision above `oldest` is in `history`.
    history: VecDeque<Arc<CacheEvent>>,
    oldest: i64,
    bytes: usize,
    /// The live events' channel, made when the first watcher subscribes: a
    /// channel preallocates its whole ring (8,192 slots of about 40 bytes), which
    /// a resource nobody watches (most of a server's, or a thousand CRDs')
    /// should not pay for. Subscriptions are taken under the read lock and
    /// events sent under the write lock, so a subscriber misses nothing
    /// applied after its snapshot.
    sender: std::sync::OnceLock<broadcast::Sender<Arc<CacheEvent>>>,
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
        Self::with_indexes(history_capacity, max_bytes, &[])
    }

    /// An empty, not-ready state indexing objects by `indexed_fields`.
    pub fn with_indexes(
        history_capacity: usize,
        max_bytes: usize,
        indexed_fields: &[String],
    ) -> Self {
        CacheState {
            inner: RwLock::new(Inner {
                ready: false,
                objects: BTreeMap::new(),
                indexes: indexed_fields
                    .iter()
                    .map(|f| Index {
                        field: f.as_str().into(),
                        keys: HashMap::new(),
                    })
                    .collect(),
                revision: 0,
                history: VecDeque::new(),
                oldest: 0,
                bytes: 0,
                sender: std::sync::OnceLock::new(),
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
        for index in &mut inner.indexes {
            index.keys.clear();
        }
        inner.history.clear();
        inner.bytes = 0;
        // Dropping the sender closes every subscription.
        inner.sender = std::sync::OnceLock::new();
    }

    /// Replaces the state with a fresh list at `revision`.
    pub fn load(&self, objects: Vec<Arc<CachedObject>>, revision: i64) {
        let mut inner = self.write();
        inner.bytes = objects.iter().map(|o| o.size()).sum();
        inner.objects = objects.into_iter().map(|o| (o.key.clone(), o)).collect();
        let Inner {
            objects, indexes, ..
        } = &mut *inner;
        for index in indexes.iter_mut() {
            index.keys.clear();
            for o in objects.values() {
                index.insert(o);
            }
        }
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
        for index in &mut inner.indexes {
            if let Some(p) = &prev {
                index.remove(p);
            }
            if kind != WatchEventKind::Deleted {
                index.insert(&object);
            }
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
        // No channel or no receivers is fine: nobody is watching.
        if let Some(sender) = inner.sender.get() {
            let _ = sender.send(event);
        }
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
        self.account_once(object, &object.encoded_counted, || {
            object.encoded.get().map_or(0, bytes::Bytes::len)
        });
    }

    /// See [`super::WatchCache::account_converted`].
    pub fn account_converted(&self, object: &Arc<CachedObject>) {
        self.account_once(object, &object.converted_counted, || {
            object.converted.get().map_or(0, |c| c.size())
        });
    }

    /// Adds `len()` bytes made for `object` after it was cached to the
    /// budget, once (`counted` remembers it), and only while `object` is
    /// the current state of its key: a replaced object's bytes left the
    /// budget with it, by [`CachedObject::held`].
    fn account_once(
        &self,
        object: &Arc<CachedObject>,
        counted: &std::sync::atomic::AtomicBool,
        len: impl FnOnce() -> usize,
    ) {
        let mut inner = self.write();
        let current = inner
            .objects
            .get(&object.key)
            .is_some_and(|o| Arc::ptr_eq(o, object));
        if current && !counted.swap(true, std::sync::atomic::Ordering::Relaxed) {
            inner.bytes += len();
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

    /// The objects under `prefix` whose `field` is `value`, if ready and
    /// `field` is indexed (`None` otherwise: scan a full snapshot).
    pub fn indexed_snapshot(&self, field: &str, value: &str, prefix: &str) -> Option<Snapshot> {
        let inner = self.read();
        if !inner.ready {
            return None;
        }
        let index = inner.indexes.iter().find(|i| &*i.field == field)?;
        let objects = index
            .keys
            .get(value)
            .into_iter()
            .flat_map(|keys| {
                keys.range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
                    .take_while(|k| k.starts_with(prefix))
            })
            .filter_map(|k| inner.objects.get(k).cloned())
            .collect();
        Some(Snapshot {
            objects,
            revision: inner.revision,
        })
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

    fn subscribe(inner: &Inner) -> broadcast::Receiver<Arc<CacheEvent>> {
        inner
            .sender
            .get_or_init(|| broadcast::channel(broadcast_capacity()).0)
            .subscribe()
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
        Some((snapshot, Self::subscribe(&inner)))
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
        Ok((past, Self::subscribe(&inner)))
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
            converted: Default::default(),
            converted_counted: Default::default(),
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

    #[test]
    fn index_follows_every_change() {
        let on = |key: &str, rev: i64, node: &str| {
            Arc::new(CachedObject {
                fields: Box::new([("spec.nodeName".into(), node.into())]),
                ..Arc::try_unwrap(obj(key, rev)).expect("fresh")
            })
        };
        let s = CacheState::with_indexes(10, usize::MAX, &["spec.nodeName".to_string()]);
        s.load(
            vec![
                on("/p/a/x", 1, "n1"),
                on("/p/b/y", 2, "n1"),
                on("/p/a/z", 3, ""),
            ],
            3,
        );
        let keys = |field: &str, value: &str, prefix: &str| {
            s.indexed_snapshot(field, value, prefix).map(|snap| {
                snap.objects
                    .iter()
                    .map(|o| o.key.to_string())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            keys("spec.nodeName", "n1", "/p/"),
            Some(vec!["/p/a/x".into(), "/p/b/y".into()])
        );
        assert_eq!(
            keys("spec.nodeName", "n1", "/p/b/"),
            Some(vec!["/p/b/y".into()])
        );
        assert_eq!(
            keys("spec.nodeName", "", "/p/"),
            Some(vec!["/p/a/z".into()])
        );
        assert_eq!(keys("status.phase", "x", "/p/"), None, "not indexed");
        // Binding the unscheduled pod moves it between values.
        assert!(s.apply(WatchEventKind::Modified, on("/p/a/z", 4, "n2")));
        assert_eq!(keys("spec.nodeName", "", "/p/"), Some(vec![]));
        assert_eq!(
            keys("spec.nodeName", "n2", "/p/"),
            Some(vec!["/p/a/z".into()])
        );
        assert!(s.apply(WatchEventKind::Deleted, on("/p/a/x", 5, "n1")));
        assert_eq!(
            keys("spec.nodeName", "n1", "/p/"),
            Some(vec!["/p/b/y".into()])
        );
    }
}
