//! Reads of the generic store, decided here and nowhere else: the watch
//! cache answers when upstream's cacher would (the `resourceVersion` rules
//! of GET, LIST and WATCH, a cache that is ready and caught up), etcd
//! otherwise. Callers (the handlers) receive what was read in the form it
//! is in (served bytes from the cache or an encoded etcd read, decoded
//! values otherwise) and only choose how to encode it; they never ask
//! whether a cache is on.

use tokio::sync::mpsc;

use super::cache_serving::CachedPage;
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

impl Store {
    /// GET: from the cache when `resource_version` allows it (`0`: any
    /// state; `N`: not older than `N`), else from etcd.
    pub async fn read(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
    ) -> Result<ObjectRead, ApiError> {
        if let Some(obj) = self
            .get_from_cache(namespace, name, resource_version)
            .await?
        {
            return Ok(ObjectRead::Encoded(obj));
        }
        Ok(ObjectRead::Decoded(self.get(namespace, name).await?))
    }

    /// LIST: from the cache when it can answer, else from etcd in the form
    /// the caller can take (built-in kinds only come encoded from etcd;
    /// custom resources are decoded, their conversion takes a list at a
    /// time).
    pub async fn read_list(
        &self,
        namespace: &str,
        opts: &ListOptions,
        form: ListForm,
    ) -> Result<ListRead, ApiError> {
        if let Some(page) = self.list_from_cache(namespace, opts).await? {
            return Ok(ListRead::Encoded(page));
        }
        let encodable = crate::protobuf::is_known(&self.def.api_version(), &self.def.kind);
        match form {
            ListForm::Streamed if encodable && opts.limit.filter(|l| *l > 0).is_none() => {
                Ok(ListRead::Streamed(self.list_pager(namespace, opts)?))
            }
            ListForm::Streamed | ListForm::Encoded if encodable => {
                Ok(ListRead::Encoded(self.list_encoded(namespace, opts).await?))
            }
            _ => Ok(ListRead::Decoded(self.list(namespace, opts).await?)),
        }
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
        let rv = opts.list.resource_version.clone().unwrap_or_default();
        let send_initial = opts
            .send_initial_events
            .unwrap_or(rv.is_empty() || rv == "0");
        if let Some(rx) = self.watch_from_cache(
            namespace,
            &opts.list,
            send_initial,
            opts.send_initial_events == Some(true),
            opts.allow_bookmarks,
            opts.timeout,
        )? {
            return Ok(rx);
        }
        self.watch_etcd(namespace, opts).await
    }
}
