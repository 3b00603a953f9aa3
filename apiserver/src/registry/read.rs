//! The read path of the generic store: one interface ([`ReadPath`]) for
//! GET, LIST and WATCH, with two implementations, as upstream's `Cacher`
//! wraps its `storage.Interface`:
//!
//! - [`EtcdReads`] reads etcd (and decodes, defaults and converts what it
//!   read, the store's read path);
//! - [`CachedReads`] (`registry/cached_reads.rs`) is a decorator in front of
//!   another read path: it answers from the watch cache when upstream's
//!   cacher would (the `resourceVersion` rules of GET, LIST and WATCH, a
//!   cache that is ready and caught up) and hands every other read to the
//!   path it wraps.
//!
//! A [`Store`] holds one `Arc<dyn ReadPath>` (etcd's, wrapped by the cache
//! when one is started: [`Store::with_watch_cache`]). Callers (the handlers)
//! receive what was read in the form it is in (served bytes from the cache
//! or an encoded etcd read, decoded values otherwise) and only choose how to
//! encode it; they never ask whether a cache is on. Writes do not pass
//! through the read path: they go through the store's one compare-and-swap
//! loop to etcd, whose watch feeds the cache (upstream's `Cacher` also hands
//! every write to the storage it wraps).

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::cached_reads::{CachedPage, CachedReads};
use super::list::{ListOptions, ListPage};
use super::list_encoded::EtcdListPager;
use super::store::Store;
use super::watch::WatchOptions;
pub use super::watch_event::ObjectRead;
use super::watch_event::WatchEvent;
use crate::apimachinery::errors::ApiError;

/// How the caller can take a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListForm {
    /// Decoded objects (Tables, YAML, partial metadata, custom resources).
    Decoded,
    /// Objects in their served bytes, one page.
    Encoded,
    /// Objects in their served bytes, streamed page by page from etcd when
    /// the cache cannot answer (a JSON list without `limit`).
    Streamed,
}

/// A list as read.
pub enum ListRead {
    /// One page of objects in their served bytes.
    Encoded(CachedPage),
    /// One page of decoded objects.
    Decoded(ListPage),
    /// All matching objects, page by page from etcd, in their served bytes.
    Streamed(EtcdListPager),
}

/// What GET, LIST and WATCH of one resource are answered from. `store` is
/// the resource being read (its definition, keys and codec); an
/// implementation holds only what it reads from.
pub trait ReadPath: Send + Sync {
    /// GET of one object. `resource_version`: `""` (consistent), `"0"` (any
    /// state) or `"N"` (not older than `N`).
    fn read<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        name: &'a str,
        resource_version: &'a str,
    ) -> BoxFuture<'a, Result<ObjectRead, ApiError>>;

    /// LIST, in a form the caller can take.
    fn read_list<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        opts: &'a ListOptions,
        form: ListForm,
    ) -> BoxFuture<'a, Result<ListRead, ApiError>>;

    /// WATCH: one stream of [`WatchEvent`]s, ending at `opts.timeout`
    /// (never when `None`).
    fn watch<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        opts: WatchOptions,
    ) -> BoxFuture<'a, Result<mpsc::Receiver<WatchEvent>, ApiError>>;

    /// The watch cache in front of this path, if one is.
    fn cached(&self) -> Option<&CachedReads> {
        None
    }
}

/// Reads straight from etcd, every one through the store's read path
/// (decoding, `on_read` defaulting, conversion).
pub struct EtcdReads;

impl ReadPath for EtcdReads {
    fn read<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        name: &'a str,
        _resource_version: &'a str,
    ) -> BoxFuture<'a, Result<ObjectRead, ApiError>> {
        // etcd's answer is current, which satisfies every resourceVersion
        // a GET may name.
        Box::pin(async move { Ok(ObjectRead::Decoded(store.get(namespace, name).await?)) })
    }

    /// Built-in kinds come encoded from etcd; custom resources are
    /// decoded, their conversion takes a list at a time.
    fn read_list<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        opts: &'a ListOptions,
        form: ListForm,
    ) -> BoxFuture<'a, Result<ListRead, ApiError>> {
        Box::pin(async move {
            let encodable = crate::protobuf::is_known(&store.def.api_version(), &store.def.kind);
            match form {
                ListForm::Streamed if encodable && opts.limit.filter(|l| *l > 0).is_none() => {
                    Ok(ListRead::Streamed(store.list_pager(namespace, opts)?))
                }
                ListForm::Streamed | ListForm::Encoded if encodable => Ok(ListRead::Encoded(
                    store.list_encoded(namespace, opts).await?,
                )),
                _ => Ok(ListRead::Decoded(store.list(namespace, opts).await?)),
            }
        })
    }

    fn watch<'a>(
        &'a self,
        store: &'a Store,
        namespace: &'a str,
        opts: WatchOptions,
    ) -> BoxFuture<'a, Result<mpsc::Receiver<WatchEvent>, ApiError>> {
        Box::pin(store.watch_etcd(namespace, opts))
    }
}

impl Store {
    /// GET: from the cache when `resource_version` allows it (`0`: any
    /// state; `N`: not older than `N`; none: once the cached copy is shown
    /// current), else from etcd.
    pub async fn read(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
    ) -> Result<ObjectRead, ApiError> {
        self.reads()
            .read(self, namespace, name, resource_version)
            .await
    }

    /// LIST: from the cache when it can answer, else from etcd in the form
    /// the caller can take.
    pub async fn read_list(
        &self,
        namespace: &str,
        opts: &ListOptions,
        form: ListForm,
    ) -> Result<ListRead, ApiError> {
        self.reads().read_list(self, namespace, opts, form).await
    }

    /// WATCH: from the cache once it is ready (initial events and resumed
    /// windows as upstream's cacher serves them), else from etcd; either
    /// way one stream of [`WatchEvent`]s, ending at `opts.timeout` (never
    /// when `None`: the controllers and informers inside a server).
    ///
    /// This is the only watch the layers above the registry see: the
    /// handlers and the in-process consumers alike are served from memory
    /// once the cache is ready, as upstream's informers are by its cacher.
    pub async fn watch(
        &self,
        namespace: &str,
        opts: WatchOptions,
    ) -> Result<mpsc::Receiver<WatchEvent>, ApiError> {
        self.reads().watch(self, namespace, opts).await
    }
}
