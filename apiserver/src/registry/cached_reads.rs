//! The watch cache as a decorator of a store's read path: [`CachedReads`]
//! in front of [`super::read::EtcdReads`], as upstream's `Cacher` in front
//! of its storage.
//!
//! Which reads the cache serves follows upstream: `resourceVersion=0` (any
//! state), `resourceVersionMatch=NotOlderThan` (once the cache has reached
//! the revision), consistent reads (`resourceVersion` unset) once the cache
//! has proved it is current, and every watch. Anything else, and every read
//! while the cache is loading or over its memory budget, is handed to the
//! read path behind it (etcd's).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use super::cache_serving::StoreCodec;
use super::read::{ListForm, ListRead, ReadPath};
use super::store::{ListOptions, Store};
use super::watch::WatchOptions;
use super::watch_event::{EventType, ObjectRead, WatchEvent};
use crate::apimachinery::errors::ApiError;
use crate::storage::cacher::{CacheEvent, CachedObject, WatchCache};
use crate::storage::WatchEventKind;

/// How long a consistent read waits for the cache to catch up before it
/// reads etcd instead.
const FRESHNESS_WAIT: Duration = Duration::from_millis(250);

/// A page of a LIST served from the cache.
pub struct CachedPage {
    pub objects: Vec<Arc<CachedObject>>,
    pub resource_version: i64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

impl ReadPath for CachedReads {
    fn read<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        name: &'a str,
        resource_version: &'a str,
    ) -> BoxFuture<'a, Result<ObjectRead, ApiError>> {
        Box::pin(async move {
            match self.get(store, namespace, name, resource_version).await? {
                Some(obj) => Ok(ObjectRead::Encoded(obj)),
                None => {
                    self.next
                        .read(store, namespace, name, resource_version)
                        .await
                }
            }
        })
    }

    fn read_list<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        opts: &'a ListOptions,
        form: ListForm,
    ) -> BoxFuture<'a, Result<ListRead, ApiError>> {
        Box::pin(async move {
            match self.list(store, namespace, opts).await? {
                Some(page) => Ok(ListRead::Encoded(page)),
                None => self.next.read_list(store, namespace, opts, form).await,
            }
        })
    }

    fn watch<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        opts: WatchOptions,
    ) -> BoxFuture<'a, Result<mpsc::Receiver<WatchEvent>, ApiError>> {
        Box::pin(async move {
            let rv = opts.list.resource_version.clone().unwrap_or_default();
            let send_initial = opts
                .send_initial_events
                .unwrap_or(rv.is_empty() || rv == "0");
            if let Some(rx) = CachedReads::watch(
                self,
                store,
                namespace,
                &opts.list,
                send_initial,
                opts.send_initial_events == Some(true),
                opts.allow_bookmarks,
                opts.timeout,
            )? {
                return Ok(rx);
            }
            self.next.watch(store, namespace, opts).await
        })
    }

    fn cached(&self) -> Option<&CachedReads> {
        Some(self)
    }
}

/// The label a cache holds field `f` under: its storage version's label
/// when `renamed` pairs served labels with stored ones.
fn stored_label<'a>(renamed: Option<&'a [(String, String)]>, f: &'a str) -> &'a str {
    renamed
        .and_then(|labels| labels.iter().find(|(served, _)| served == f))
        .map(|(_, stored)| stored.as_str())
        .unwrap_or(f)
}

/// The watch cache in front of another read path (etcd's): the reads
/// upstream's cacher answers are answered from memory, every other one is
/// handed to `next`.
#[derive(Clone)]
pub struct CachedReads {
    cache: Arc<WatchCache>,
    /// Whether `cache` is the cache of this resource's storage version
    /// (shared with that version's store), holding objects the reading
    /// store converts; see [`Store::share_storage_cache`].
    in_storage_version: bool,
    next: Arc<dyn ReadPath>,
}

impl CachedReads {
    /// `cache` in front of `next`.
    pub(crate) fn new(
        cache: Arc<WatchCache>,
        in_storage_version: bool,
        next: Arc<dyn ReadPath>,
    ) -> Self {
        CachedReads {
            cache,
            in_storage_version,
            next,
        }
    }

    /// The watch cache.
    pub fn cache(&self) -> &Arc<WatchCache> {
        &self.cache
    }

    /// The read path behind the cache.
    pub(crate) fn next(&self) -> &Arc<dyn ReadPath> {
        &self.next
    }

    /// `obj`, from this store's cache, as this store serves it: itself, or
    /// its conversion when the cache holds the storage version.
    pub fn served(
        &self,
        store: &Store,
        obj: Arc<CachedObject>,
    ) -> Result<Arc<CachedObject>, ApiError> {
        if !self.in_storage_version {
            return Ok(obj);
        }
        if let Some(converted) = obj.converted.get() {
            return Ok(converted.clone());
        }
        let stored: Value = serde_json::from_slice(&obj.bytes)
            .map_err(|e| ApiError::internal(format!("decoding cached {}: {e}", obj.key)))?;
        let codec = StoreCodec {
            def: store.def.clone(),
        };
        let converted = codec
            .cache_value(&obj.key, obj.revision, stored)
            .map_err(|e| ApiError::internal(format!("converting {}: {e}", obj.key)))?;
        let converted = obj.converted.get_or_init(|| Arc::new(converted)).clone();
        self.cache.account_converted(&obj);
        Ok(converted)
    }

    /// Whether an object in the cache matches the selectors (a served
    /// version's field selectors read the storage version's fields).
    pub fn matches(&self, store: &Store, obj: &CachedObject, opts: &ListOptions) -> bool {
        let renamed = self
            .in_storage_version
            .then_some(&store.def.field_labels[..]);
        Self::matches_as_stored(obj, opts, renamed)
    }

    /// Whether `obj` matches the selectors, its fields held under the
    /// stored label `renamed` pairs with their served one (`None`: their
    /// own).
    pub(super) fn matches_as_stored(
        obj: &CachedObject,
        opts: &ListOptions,
        renamed: Option<&[(String, String)]>,
    ) -> bool {
        if let Some(ls) = &opts.label_selector {
            if !ls.matches_with(|k| obj.label(k)) {
                return false;
            }
        }
        if let Some(fs) = &opts.field_selector {
            return fs.matches(|f| Some(obj.field(stored_label(renamed, f))));
        }
        true
    }

    /// Serves a GET from the cache: a GET that names a `resourceVersion`
    /// (`0`: any state; `N`: not older than `N`) as upstream's cacher
    /// does; a consistent GET (none) once etcd's current mod revision of
    /// the key, read without its value, shows the cached copy current
    /// ([`WatchCache::get_consistent`]: the answer is the one an etcd read
    /// would give). `Ok(None)` means read etcd (no cache, still loading,
    /// over budget, or not caught up).
    pub async fn get(
        &self,
        store: &Store,
        namespace: &str,
        name: &str,
        resource_version: &str,
    ) -> Result<Option<Arc<CachedObject>>, ApiError> {
        let cache = &self.cache;
        let key = store.key(namespace, name);
        let fresh = match resource_version {
            "" => {
                return match cache.get_consistent(&key, FRESHNESS_WAIT).await {
                    Some(Some(obj)) => Ok(Some(self.served(store, obj)?)),
                    Some(None) => Err(store.not_found(name)),
                    None => Ok(None),
                }
            }
            "0" => cache.is_ready(),
            n => match n.parse::<i64>() {
                Ok(n) if n > 0 => cache.wait_for_revision(n, Duration::from_secs(3)).await,
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "invalid resource version: {n}"
                    )))
                }
            },
        };
        if !fresh {
            return Ok(None);
        }
        match cache.get(&key) {
            Some(Some(obj)) => Ok(Some(self.served(store, obj)?)),
            Some(None) => Err(store.not_found(name)),
            None => Ok(None),
        }
    }

    /// Serves a LIST from the cache when upstream would; `None` means read etcd.
    pub async fn list(
        &self,
        store: &Store,
        namespace: &str,
        opts: &ListOptions,
    ) -> Result<Option<CachedPage>, ApiError> {
        let cache = &self.cache;
        if !cache.is_ready() || opts.continue_token.is_some() {
            return Ok(None);
        }
        if let Some(fs) = &opts.field_selector {
            store.check_field_selector(fs)?;
        }
        let rv = opts.resource_version.as_deref().unwrap_or("");
        let fresh = match (rv, opts.resource_version_match.as_deref()) {
            ("0", _) => true,
            ("", _) => {
                cache
                    .wait_fresh(&store.list_prefix(namespace), FRESHNESS_WAIT)
                    .await
            }
            (_, Some("Exact")) => false,
            (n, _) => match n.parse::<i64>() {
                Ok(n) => cache.wait_for_revision(n, Duration::from_secs(3)).await,
                Err(_) => {
                    return Err(ApiError::bad_request(format!(
                        "invalid resource version: {n}"
                    )))
                }
            },
        };
        if !fresh {
            return Ok(None);
        }
        let prefix = store.list_prefix(namespace);
        // A selector requiring one value of an indexed field reads the
        // index; anything else scans the resource (or namespace).
        let indexed = opts.field_selector.as_ref().and_then(|fs| {
            store.def.indexed_fields.iter().find_map(|f| {
                let value = fs.requires_exact_match(f)?;
                cache.indexed_snapshot(f, value, &prefix)
            })
        });
        let Some(snapshot) = indexed.or_else(|| cache.snapshot(&prefix, None)) else {
            return Ok(None);
        };
        let limit = opts.limit.filter(|l| *l > 0).map(|l| l as usize);
        let mut objects = Vec::new();
        let mut last_key = None;
        let mut examined = 0;
        for obj in &snapshot.objects {
            examined += 1;
            if self.matches(store, obj, opts) {
                objects.push(self.served(store, obj.clone())?);
                if limit.is_some_and(|l| objects.len() >= l) {
                    last_key = Some(obj.key.clone());
                    break;
                }
            }
        }
        let more = last_key.is_some() && examined < snapshot.objects.len();
        let (continue_token, remaining_item_count) = match (more, last_key) {
            (true, Some(last)) => {
                let next = format!("{last}\u{0}");
                let suffix = next.strip_prefix(&prefix).unwrap_or(&next).to_string();
                let remaining =
                    (!opts.has_selector()).then(|| (snapshot.objects.len() - examined) as i64);
                (
                    Some(crate::storage::encode_continue(snapshot.revision, &suffix)),
                    remaining,
                )
            }
            _ => (None, None),
        };
        Ok(Some(CachedPage {
            objects,
            resource_version: snapshot.revision,
            continue_token,
            remaining_item_count,
        }))
    }

    /// Serves a WATCH from the cache; `None` means the cache cannot (not
    /// ready) and the caller watches etcd.
    #[allow(clippy::too_many_arguments)]
    pub fn watch(
        &self,
        store: &Store,
        namespace: &str,
        opts: &ListOptions,
        send_initial_events: bool,
        initial_events_end_bookmark: bool,
        allow_bookmarks: bool,
        timeout: Option<Duration>,
    ) -> Result<Option<mpsc::Receiver<WatchEvent>>, ApiError> {
        let cache = &self.cache;
        if !cache.is_ready() {
            return Ok(None);
        }
        if let Some(fs) = &opts.field_selector {
            store.check_field_selector(fs)?;
        }
        let prefix = store.list_prefix(namespace);
        let (initial, start_rev, rx) = if send_initial_events {
            let Some((snapshot, rx)) = cache.snapshot_and_subscribe(&prefix) else {
                return Ok(None);
            };
            (snapshot.objects, snapshot.revision, rx)
        } else {
            let rv = opts.resource_version.as_deref().unwrap_or("");
            let n: i64 = rv
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
            match cache.watch_from(n) {
                Ok((past, rx)) => {
                    let (tx, out) = mpsc::channel(256);
                    let (reads, store) = (self.clone(), store.clone());
                    let opts = opts.clone();
                    let prefix = prefix.clone();
                    tokio::spawn(async move {
                        for ev in past {
                            if !reads.forward(&store, &tx, &ev, &opts, &prefix).await {
                                return;
                            }
                        }
                        reads
                            .follow(&store, tx, rx, n, &opts, &prefix, allow_bookmarks, timeout)
                            .await;
                    });
                    return Ok(Some(out));
                }
                // Not ready, or older than the window (e.g. right after a
                // restart): etcd still holds the history until it is
                // compacted, so the caller watches etcd instead of sending
                // every client back to relist.
                Err(_) => return Ok(None),
            }
        };
        let (tx, out) = mpsc::channel(256);
        let (reads, store) = (self.clone(), store.clone());
        let opts = opts.clone();
        tokio::spawn(async move {
            for obj in initial {
                if !reads.matches(&store, &obj, &opts) {
                    continue;
                }
                let event = match reads.served(&store, obj) {
                    Ok(obj) => WatchEvent::Object(EventType::Added, ObjectRead::Encoded(obj)),
                    Err(e) => WatchEvent::Error(e),
                };
                let failed = matches!(event, WatchEvent::Error(_));
                if tx.send(event).await.is_err() || failed {
                    return;
                }
            }
            if initial_events_end_bookmark
                && tx
                    .send(WatchEvent::Bookmark {
                        revision: start_rev,
                        initial_events_end: true,
                    })
                    .await
                    .is_err()
            {
                return;
            }
            reads
                .follow(
                    &store,
                    tx,
                    rx,
                    start_rev,
                    &opts,
                    &prefix,
                    allow_bookmarks,
                    timeout,
                )
                .await;
        });
        Ok(Some(out))
    }

    /// Sends one cache event to a watcher if it concerns it; false when the
    /// watcher is gone.
    async fn forward(
        &self,
        store: &Store,
        tx: &mpsc::Sender<WatchEvent>,
        ev: &CacheEvent,
        opts: &ListOptions,
        prefix: &str,
    ) -> bool {
        if !ev.object.key.starts_with(prefix) {
            return true;
        }
        let now = ev.kind != WatchEventKind::Deleted && self.matches(store, &ev.object, opts);
        let before = ev
            .prev
            .as_ref()
            .is_some_and(|p| self.matches(store, p, opts));
        let out = match (ev.kind, before, now) {
            (WatchEventKind::Deleted, true, _) => Some((EventType::Deleted, ev.object.clone())),
            (WatchEventKind::Deleted, false, _) => None,
            (_, true, true) => Some((EventType::Modified, ev.object.clone())),
            (_, false, true) => Some((EventType::Added, ev.object.clone())),
            (_, true, false) => Some((EventType::Deleted, ev.object.clone())),
            (_, false, false) => None,
        };
        match out.map(|(t, o)| self.served(store, o).map(|o| (t, o))) {
            Some(Ok((t, o))) => tx
                .send(WatchEvent::Object(t, ObjectRead::Encoded(o)))
                .await
                .is_ok(),
            Some(Err(e)) => {
                // The watch ends with the error; the client resumes.
                let _ = tx.send(WatchEvent::Error(e)).await;
                false
            }
            None => true,
        }
    }

    /// Streams live events after `after` until the client leaves, the
    /// timeout (if any) passes, or the watcher falls too far behind.
    #[allow(clippy::too_many_arguments)]
    async fn follow(
        &self,
        store: &Store,
        tx: mpsc::Sender<WatchEvent>,
        mut rx: broadcast::Receiver<Arc<CacheEvent>>,
        after: i64,
        opts: &ListOptions,
        prefix: &str,
        allow_bookmarks: bool,
        timeout: Option<Duration>,
    ) {
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let mut bookmarks = super::watch::BookmarkTimer::new(deadline);
        let mut last = after;
        loop {
            tokio::select! {
                _ = tx.closed() => return,
                _ = super::watch::until_deadline(deadline) => return,
                _ = bookmarks.tick(), if allow_bookmarks => {
                    let revision = self.cache.revision().max(last);
                    if tx.send(WatchEvent::Bookmark { revision, initial_events_end: false }).await.is_err() {
                        return;
                    }
                }
                ev = rx.recv() => match ev {
                    Ok(ev) => {
                        if ev.revision() <= last {
                            continue;
                        }
                        last = ev.revision();
                        if !self.forward(store, &tx, &ev, opts, prefix).await {
                            return;
                        }
                    }
                    // Too slow, or the cache resynced: end the watch; the
                    // client resumes from its last resourceVersion.
                    Err(_) => return,
                },
            }
        }
    }
}
