//! Watches: etcd watch responses turned into typed, ordered events, with
//! upstream's semantics (`k8s.io/apiserver/pkg/storage/etcd3/watcher.go`).
//!
//! - Events come in etcd revision order, each exactly once.
//! - A PUT whose `create_revision == mod_revision` is `Added`, other PUTs are
//!   `Modified`; a DELETE is `Deleted` and carries the previous value with the
//!   deletion revision as its `mod_revision` (a deleted object's
//!   resourceVersion is the deletion revision upstream).
//! - A compacted start revision yields one `Err(Expired)` and ends the stream;
//!   losing etcd yields one `Err(Unavailable)` and ends it. There is no
//!   transparent re-watch: callers end the HTTP watch and clients re-watch.
//! - [`WatchStream::last_revision`] tracks progress (events and etcd progress
//!   notifications) so the HTTP layer can send BOOKMARKs.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use etcd_client::{EventType, WatchOptions};
use futures_util::Stream;

use super::etcd::convert_kv_ref;
use super::{prefix_range_end, EtcdStorage, KeyValue, StorageError};

/// What happened to a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEventKind {
    /// The key was created (`create_revision == mod_revision`).
    Added,
    /// The key existed and was overwritten.
    Modified,
    /// The key was deleted.
    Deleted,
}

/// One change to one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchEvent {
    /// What happened.
    pub kind: WatchEventKind,
    /// The key after the change. For `Deleted`: the last value before the
    /// delete, with `mod_revision` set to the revision of the delete (so the
    /// event's revision is always `kv.mod_revision`).
    pub kv: KeyValue,
    /// The key before the change (with its own `mod_revision`): `None` for
    /// `Added`; for `Modified` it may be `None` only if etcd could not provide
    /// it; always present for `Deleted`.
    pub prev: Option<KeyValue>,
}

/// A live etcd watch. Implements `Stream<Item = Result<WatchEvent,
/// StorageError>>`; after an `Err` item the stream ends. Dropping it cancels
/// the etcd watch (the gRPC stream is reset).
pub struct WatchStream {
    inner: etcd_client::WatchStream,
    requested: i64,
    buffer: VecDeque<WatchEvent>,
    terminal: Option<StorageError>,
    done: bool,
    last_revision: i64,
    storage: EtcdStorage,
}

impl std::fmt::Debug for WatchStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchStream")
            .field("requested", &self.requested)
            .field("last_revision", &self.last_revision)
            .field("buffered", &self.buffer.len())
            .field("done", &self.done)
            .finish()
    }
}

impl WatchStream {
    /// The newest revision up to which this watch is known to have delivered
    /// every event: the revision of the last event yielded, or of the last
    /// etcd progress notification (etcd only sends those once the watcher is
    /// caught up). Starts at `start_revision - 1`, or 0 ("unknown") for a
    /// watch started at "now". Suitable as a BOOKMARK resourceVersion when > 0.
    pub fn last_revision(&self) -> i64 {
        self.last_revision
    }

    /// Asks etcd for a progress notification; when it arrives (while the
    /// stream is being polled) [`Self::last_revision`] advances to etcd's
    /// current revision if the watcher is caught up. Useful right before
    /// sending a BOOKMARK.
    pub async fn request_progress(&mut self) -> Result<(), StorageError> {
        self.inner
            .request_progress()
            .await
            .map_err(StorageError::from)
    }

    /// Converts one etcd event; a DELETE without its previous value is an
    /// error (as upstream: the object could not be reported).
    fn convert_event(event: &etcd_client::Event) -> Result<WatchEvent, StorageError> {
        let kv = event
            .kv()
            .ok_or_else(|| StorageError::Internal("etcd watch event without kv".to_string()))?;
        let prev = event.prev_kv().map(convert_kv_ref).transpose()?;
        match event.event_type() {
            EventType::Put => {
                let kv = convert_kv_ref(kv)?;
                let kind = if kv.create_revision == kv.mod_revision {
                    WatchEventKind::Added
                } else {
                    WatchEventKind::Modified
                };
                let prev = if kind == WatchEventKind::Added {
                    None
                } else {
                    prev
                };
                Ok(WatchEvent { kind, kv, prev })
            }
            EventType::Delete => {
                let Some(prev) = prev else {
                    return Err(StorageError::Internal(format!(
                        "etcd event received with PrevKv=nil (key={:?}, modRevision={}, type=DELETE)",
                        String::from_utf8_lossy(kv.key()),
                        kv.mod_revision()
                    )));
                };
                let deleted = KeyValue {
                    key: prev.key.clone(),
                    value: prev.value.clone(),
                    mod_revision: kv.mod_revision(),
                    create_revision: prev.create_revision,
                };
                Ok(WatchEvent {
                    kind: WatchEventKind::Deleted,
                    kv: deleted,
                    prev: Some(prev),
                })
            }
        }
    }

    /// Folds one etcd response into the buffer / terminal state.
    fn handle_response(&mut self, resp: etcd_client::WatchResponse) {
        if resp.canceled() || resp.compact_revision() > 0 {
            let compacted = resp.compact_revision();
            self.terminal = Some(if compacted > 0 {
                self.storage.note_compacted(compacted);
                StorageError::Expired {
                    requested: self.requested,
                    compacted,
                }
            } else if resp.cancel_reason().contains("no leader") {
                StorageError::Unavailable(format!(
                    "etcd cancelled the watch: {}",
                    resp.cancel_reason()
                ))
            } else {
                StorageError::Internal(format!(
                    "etcd cancelled the watch: {}",
                    resp.cancel_reason()
                ))
            });
            return;
        }
        if resp.events().is_empty() {
            // Progress notification (also the reply to request_progress). The
            // "created" reply carries the revision at creation time, which says
            // nothing about delivery of older events, so it is ignored.
            if !resp.created() {
                if let Some(header) = resp.header() {
                    self.last_revision = self.last_revision.max(header.revision());
                }
            }
            return;
        }
        for event in resp.events() {
            match Self::convert_event(event) {
                Ok(ev) => self.buffer.push_back(ev),
                Err(e) => {
                    self.terminal = Some(e);
                    return;
                }
            }
        }
    }
}

impl Stream for WatchStream {
    type Item = Result<WatchEvent, StorageError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(ev) = this.buffer.pop_front() {
                this.last_revision = this.last_revision.max(ev.kv.mod_revision);
                return Poll::Ready(Some(Ok(ev)));
            }
            if let Some(err) = this.terminal.take() {
                this.done = true;
                return Poll::Ready(Some(Err(err)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(resp))) => this.handle_response(resp),
                Poll::Ready(Some(Err(e))) => {
                    let err = match StorageError::from(e) {
                        StorageError::Expired { .. } => StorageError::Expired {
                            requested: this.requested,
                            compacted: this.storage.known_compacted_revision(),
                        },
                        // Any other failure of an established watch stream
                        // means the connection to etcd is gone.
                        other => StorageError::Unavailable(other.to_string()),
                    };
                    this.terminal = Some(err);
                }
                Poll::Ready(None) => {
                    this.terminal = Some(StorageError::Unavailable(
                        "etcd closed the watch stream".to_string(),
                    ));
                }
            }
        }
    }
}

impl EtcdStorage {
    /// Watches `key_or_prefix` (every key under it when `recursive`; a
    /// trailing `/` is added as upstream does) and delivers every change with
    /// `mod_revision >= start_revision`, in order. `start_revision <= 0` means
    /// "changes after now". To continue from a list at revision `rv`, pass
    /// `rv + 1`.
    ///
    /// Fails with [`StorageError::Unavailable`] if etcd cannot be reached
    /// within `request_timeout`. A compacted `start_revision` is reported on
    /// the stream (one `Err(Expired)` item), not here.
    pub async fn watch(
        &self,
        key_or_prefix: &str,
        recursive: bool,
        start_revision: i64,
    ) -> Result<WatchStream, StorageError> {
        let key = if recursive && !key_or_prefix.ends_with('/') {
            format!("{key_or_prefix}/")
        } else {
            key_or_prefix.to_string()
        };
        let mut options = WatchOptions::new().with_prev_key().with_progress_notify();
        if recursive {
            options = options.with_range(prefix_range_end(key.as_bytes()));
        }
        if start_revision > 0 {
            options = options.with_start_revision(start_revision);
        }
        // Open the stream and wait for etcd's "created" reply so that an
        // unreachable etcd is reported here, within the request timeout.
        let (inner, first) = self
            .call("watch", key_or_prefix, move |client, max| async move {
                let mut stream = client
                    .watch_client()
                    .max_decoding_message_size(max)
                    .watch(key, Some(options))
                    .await?;
                let first = stream.message().await?;
                Ok((stream, first))
            })
            .await?;
        let Some(first) = first else {
            return Err(StorageError::Unavailable(
                "etcd closed the watch stream before it was created".to_string(),
            ));
        };
        let mut stream = WatchStream {
            inner,
            requested: start_revision,
            buffer: VecDeque::new(),
            terminal: None,
            done: false,
            last_revision: (start_revision - 1).max(0),
            storage: self.clone(),
        };
        stream.handle_response(first);
        Ok(stream)
    }
}
