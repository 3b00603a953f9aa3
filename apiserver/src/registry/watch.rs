//! WATCH on the generic store: initial state, then every change in order.
//!
//! - `resourceVersion` unset or `0`: synthetic ADDED events for the current
//!   state, then changes after it ("get state and start at most recent").
//! - `resourceVersion=N`: changes after N; a compacted N ends the stream with
//!   an in-stream ERROR 410, as upstream's watch cache answers.
//! - `sendInitialEvents=true`: the current state, then a BOOKMARK annotated
//!   `k8s.io/initial-events-end: "true"` (streaming lists).
//! - `allowWatchBookmarks`: a BOOKMARK about once a minute.
//! - Selectors apply to both sides of a change, so an object that stops
//!   matching is reported DELETED and one that starts matching ADDED.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::store::{storage_error, ListOptions, Store};
use super::watch_event::{EventType, ObjectRead, WatchEvent};
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::meta;
use crate::storage::{StorageError, WatchEventKind};

/// Upstream's bookmark period.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// How long before a watch's deadline its last BOOKMARK is sent.
const BOOKMARK_BEFORE_DEADLINE: Duration = Duration::from_secs(2);

/// Resolves at a watch's `deadline` (never, for a watch without one).
pub(crate) async fn until_deadline(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// When a watch with `allowWatchBookmarks` sends its BOOKMARKs, as
/// upstream's cacher schedules them (`nextBookmarkTime`): about once a
/// minute, and once 2 s before the watch's deadline, so that a client whose
/// watch times out resumes from the newest resourceVersion even when no
/// event matched.
pub(crate) struct BookmarkTimer {
    next: Option<tokio::time::Instant>,
    deadline: Option<tokio::time::Instant>,
}

impl BookmarkTimer {
    /// A timer for a watch ending at `deadline` (none: runs until closed).
    pub(crate) fn new(deadline: Option<tokio::time::Instant>) -> Self {
        let mut timer = BookmarkTimer {
            next: None,
            deadline,
        };
        timer.schedule(tokio::time::Instant::now());
        timer
    }

    fn schedule(&mut self, now: tokio::time::Instant) {
        let mut next = now + BOOKMARK_INTERVAL;
        if let Some(d) = self.deadline {
            let before = d.checked_sub(BOOKMARK_BEFORE_DEADLINE).unwrap_or(d);
            next = next.min(before);
        }
        self.next = (next > now).then_some(next);
    }

    /// Resolves when the next BOOKMARK is due (never, when none is left),
    /// and schedules the one after it.
    pub(crate) async fn tick(&mut self) {
        match self.next {
            Some(at) => {
                tokio::time::sleep_until(at).await;
                self.schedule(tokio::time::Instant::now());
            }
            None => std::future::pending().await,
        }
    }
}
/// Events buffered per watcher before the producer waits for the client.
const WATCH_BUFFER: usize = 256;

/// Options of a watch.
#[derive(Clone, Default)]
pub struct WatchOptions {
    pub list: ListOptions,
    pub allow_bookmarks: bool,
    pub send_initial_events: Option<bool>,
    pub timeout: Option<Duration>,
}

impl WatchOptions {
    /// What an informer asks for (a streaming list): the current state, its
    /// end marked by a BOOKMARK, then every change, without a deadline.
    pub fn streaming_list() -> Self {
        WatchOptions {
            list: ListOptions {
                resource_version_match: Some("NotOlderThan".into()),
                ..Default::default()
            },
            allow_bookmarks: true,
            send_initial_events: Some(true),
            timeout: None,
        }
    }
}

/// Upstream's validation of streaming-list options: `sendInitialEvents`
/// needs `resourceVersionMatch=NotOlderThan` and `allowWatchBookmarks`.
pub fn validate_watch_options(opts: &WatchOptions) -> Result<(), ApiError> {
    if opts.send_initial_events.is_some() {
        let mut errors = Vec::new();
        if opts.list.resource_version_match.as_deref() != Some("NotOlderThan") {
            errors.push(crate::apimachinery::validation::FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !opts.allow_bookmarks {
            errors.push(crate::apimachinery::validation::FieldError::forbidden(
                "allowWatchBookmarks",
                "sendInitialEvents requires setting allowWatchBookmarks to true",
            ));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", &errors));
        }
    }
    Ok(())
}

impl Store {
    /// Starts a watch of etcd; events (objects decoded) arrive on the
    /// returned channel until it closes. [`Store::watch`] serves from the
    /// cache when it can and comes here otherwise.
    pub(crate) async fn watch_etcd(
        &self,
        namespace: &str,
        opts: WatchOptions,
    ) -> Result<mpsc::Receiver<WatchEvent>, ApiError> {
        if let Some(fs) = &opts.list.field_selector {
            self.check_field_selector(fs)?;
        }
        let rv = opts.list.resource_version.clone().unwrap_or_default();
        let send_initial = opts
            .send_initial_events
            .unwrap_or(rv.is_empty() || rv == "0");
        validate_watch_options(&opts)?;
        let prefix = self.list_prefix(namespace);
        let mut initial = Vec::new();
        let start = if send_initial {
            let list = ListOptions {
                limit: None,
                continue_token: None,
                resource_version: None,
                ..opts.list.clone()
            };
            let page = self.list(namespace, &list).await?;
            initial = page.items;
            page.resource_version + 1
        } else {
            let n: i64 = rv
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
            n + 1
        };
        let mut stream = self
            .storage()
            .watch(&prefix, true, start)
            .await
            .map_err(storage_error)?;
        let (tx, rx) = mpsc::channel(WATCH_BUFFER);
        let store = self.clone();
        tokio::spawn(async move {
            let initial_rv = start - 1;
            for mut obj in initial {
                if let Value::Object(m) = &mut obj {
                    m.insert("apiVersion".into(), Value::String(store.def.api_version()));
                    m.insert("kind".into(), Value::String(store.def.kind.clone()));
                }
                let event = WatchEvent::Object(EventType::Added, ObjectRead::Decoded(obj));
                if tx.send(event).await.is_err() {
                    return;
                }
            }
            if opts.send_initial_events == Some(true) {
                let end = WatchEvent::Bookmark {
                    revision: initial_rv,
                    initial_events_end: true,
                };
                if tx.send(end).await.is_err() {
                    return;
                }
            }
            let deadline = opts.timeout.map(|t| tokio::time::Instant::now() + t);
            let mut bookmarks = BookmarkTimer::new(deadline);
            let mut last_rv = initial_rv;
            loop {
                tokio::select! {
                    _ = tx.closed() => return,
                    _ = until_deadline(deadline) => return,
                    _ = bookmarks.tick(), if opts.allow_bookmarks => {
                        let rv = last_rv.max(stream.last_revision());
                        let bookmark = WatchEvent::Bookmark { revision: rv, initial_events_end: false };
                        if rv > 0 && tx.send(bookmark).await.is_err() {
                            return;
                        }
                    }
                    next = stream.next() => {
                        match next {
                            None => return,
                            Some(Ok(ev)) => {
                                last_rv = ev.kv.mod_revision;
                                if let Some(event) = store.translate(&ev, &opts.list) {
                                    if tx.send(event).await.is_err() {
                                        return;
                                    }
                                }
                            }
                            // etcd went away: the stream ends without an
                            // ERROR event, as upstream's cacher ends its
                            // watchers, so that clients resume from their last
                            // resourceVersion instead of relisting.
                            Some(Err(StorageError::Unavailable(e))) => {
                                tracing::debug!(error = %e, "watch ended: etcd unavailable");
                                return;
                            }
                            Some(Err(e)) => {
                                let status = match e {
                                    StorageError::Expired { requested, compacted } => ApiError::expired(
                                        format!("too old resource version: {} ({})", requested - 1, compacted),
                                    ),
                                    other => storage_error(other),
                                };
                                let _ = tx.send(WatchEvent::Error(status)).await;
                                return;
                            }
                        }
                    }
                }
            }
        });
        Ok(rx)
    }

    /// Turns a storage event into an API event, applying the selectors to the
    /// old and new state.
    fn translate(&self, ev: &crate::storage::WatchEvent, opts: &ListOptions) -> Option<WatchEvent> {
        let decode = |kv: &crate::storage::KeyValue| self.decode(kv).ok();
        let with_type = |mut obj: Value| {
            if let Value::Object(m) = &mut obj {
                m.insert("apiVersion".into(), Value::String(self.def.api_version()));
                m.insert("kind".into(), Value::String(self.def.kind.clone()));
            }
            obj
        };
        let event = |type_, obj| WatchEvent::Object(type_, ObjectRead::Decoded(with_type(obj)));
        match ev.kind {
            WatchEventKind::Added => {
                let obj = decode(&ev.kv)?;
                self.matches(&obj, opts)
                    .then(|| event(EventType::Added, obj))
            }
            WatchEventKind::Modified => {
                let obj = decode(&ev.kv)?;
                let now = self.matches(&obj, opts);
                let before = match ev.prev.as_ref().and_then(decode) {
                    Some(prev) => self.matches(&prev, opts),
                    None => now,
                };
                match (before, now) {
                    (true, true) => Some(event(EventType::Modified, obj)),
                    (false, true) => Some(event(EventType::Added, obj)),
                    (true, false) => {
                        let mut prev = ev.prev.as_ref().and_then(decode).unwrap_or(obj);
                        meta::set(
                            &mut prev,
                            "resourceVersion",
                            Value::String(ev.kv.mod_revision.to_string()),
                        );
                        Some(event(EventType::Deleted, prev))
                    }
                    (false, false) => None,
                }
            }
            WatchEventKind::Deleted => {
                let obj = decode(&ev.kv)?;
                self.matches(&obj, opts)
                    .then(|| event(EventType::Deleted, obj))
            }
        }
    }
}

#[cfg(test)]
mod bookmark_timer_tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn last_bookmark_comes_two_seconds_before_the_deadline() {
        let start = tokio::time::Instant::now();
        let mut timer = BookmarkTimer::new(Some(start + Duration::from_secs(5)));
        timer.tick().await;
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        // None left before the deadline.
        let more = tokio::time::timeout(Duration::from_secs(60), timer.tick()).await;
        assert!(more.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn long_watches_get_one_a_minute_then_one_before_the_deadline() {
        let start = tokio::time::Instant::now();
        let mut timer = BookmarkTimer::new(Some(start + Duration::from_secs(150)));
        timer.tick().await;
        assert_eq!(start.elapsed(), Duration::from_secs(60));
        timer.tick().await;
        assert_eq!(start.elapsed(), Duration::from_secs(120));
        timer.tick().await;
        assert_eq!(start.elapsed(), Duration::from_secs(148));
        let mut endless = BookmarkTimer::new(None);
        endless.tick().await;
        assert_eq!(start.elapsed(), Duration::from_secs(208));
    }
}
