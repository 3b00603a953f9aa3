//! LISTs that etcd has to answer (continue tokens, `resourceVersionMatch=
//! Exact`, a cache that cannot serve), without holding the whole list
//! decoded.
//!
//! [`EtcdListPager`] reads the range from etcd in pages of [`ETCD_PAGE`]
//! keys at one revision, and turns each object into its served bytes (as
//! the watch cache holds them) as soon as it is read, its decoded form
//! dropped at once. A JSON LIST without `limit` is sent page by page as the
//! client reads it, so the server holds one etcd page at a time whatever
//! the size of the collection; other LISTs ([`Store::list_encoded`]) hold
//! the served bytes of their answer, never the decoded objects (several
//! times their size), which is what makes large LISTs spike a server's
//! memory (kubernetes issue 114276).

use std::sync::Arc;

use super::cache_serving::{CachedPage, StoreCodec};
use super::store::{storage_error, ListOptions, Store};
use crate::apimachinery::errors::ApiError;
use crate::storage::cacher::{CachedObject, Codec};
use crate::storage::{ListRequest, StorageError};

/// Keys read per etcd range.
const ETCD_PAGE: i64 = 1000;

/// Where a LIST served by etcd starts: the first key (from a continue
/// token) and the revision to read at (a continue token's, or an `Exact`
/// resourceVersion's; `None` reads the latest).
pub(super) fn list_start(
    prefix: &str,
    opts: &ListOptions,
) -> Result<(Option<String>, Option<i64>), ApiError> {
    if let Some(token) = opts.continue_token.as_deref().filter(|t| !t.is_empty()) {
        let (rv, start) = crate::storage::decode_continue(token, prefix).map_err(|e| match e {
            StorageError::InvalidContinue(m) => {
                ApiError::bad_request(format!("invalid continue token: {m}"))
            }
            other => storage_error(other),
        })?;
        return Ok((Some(start), (rv > 0).then_some(rv)));
    }
    let Some(rv) = opts
        .resource_version
        .as_deref()
        .filter(|rv| !rv.is_empty() && *rv != "0")
    else {
        return Ok((None, None));
    };
    let rv: i64 = rv
        .parse()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
    let exact = opts.resource_version_match.as_deref() == Some("Exact");
    Ok((None, exact.then_some(rv)))
}

/// Maps a failed etcd range of a LIST: an expired revision under a
/// continue token gets upstream's message for that case, with a token that
/// goes on from the same key at the latest revision (`rv: -1`).
pub(super) fn list_range_error(e: StorageError, opts: &ListOptions, prefix: &str) -> ApiError {
    let message = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.";
    match e {
        StorageError::Expired { .. } if opts.continue_token.is_some() => {
            let start = opts
                .continue_token
                .as_deref()
                .and_then(|t| crate::storage::decode_continue(t, prefix).ok())
                .map(|(_, key)| key);
            let normalized = crate::storage::normalize_prefix(prefix);
            match start.as_deref().and_then(|k| k.strip_prefix(normalized.as_str())) {
                Some(suffix) => ApiError::inconsistent_continue(
                    "The provided continue parameter is too old to display a consistent list result. \
                     You can start a new list without the continue parameter, or use the continue token \
                     in this response to retrieve the remainder of the results. Continuing with the \
                     provided token results in an inconsistent list - objects that were created, \
                     modified, or deleted between the time the first chunk was returned and now may \
                     show up in the list.",
                    crate::storage::encode_continue(-1, suffix),
                ),
                None => ApiError::expired(message),
            }
        }
        other => storage_error(other),
    }
}

/// Reads one LIST from etcd page by page, at the revision of its first
/// page, yielding the matching objects in their served form.
///
/// Invariants: every page after the first is read at [`Self::revision`], so
/// the pages together are one consistent snapshot; at most `limit` objects
/// are yielded in all, after which [`Self::continue_token`] says where the
/// next LIST starts.
pub struct EtcdListPager {
    store: Store,
    codec: StoreCodec,
    opts: ListOptions,
    prefix: String,
    start_key: Option<String>,
    revision: Option<i64>,
    limit: Option<usize>,
    /// Narrowed to one key ([`Store::single_key`]): one read of one key.
    single: bool,
    yielded: usize,
    done: bool,
    continue_token: Option<String>,
    remaining_item_count: Option<i64>,
}

impl EtcdListPager {
    /// The revision every page is read at; known once the first page has
    /// been read.
    pub fn revision(&self) -> Option<i64> {
        self.revision
    }

    /// The next page of matching objects (possibly empty, when a selector
    /// matched nothing in it), or `None` after the last.
    pub async fn next_page(&mut self) -> Result<Option<Vec<Arc<CachedObject>>>, ApiError> {
        if self.done {
            return Ok(None);
        }
        let selecting = self.opts.has_selector();
        let page_size = match self.limit {
            _ if self.single => 1,
            Some(l) if !selecting => (l - self.yielded).clamp(1, ETCD_PAGE as usize) as i64,
            _ => ETCD_PAGE,
        };
        let req = ListRequest {
            prefix: self.prefix.clone(),
            start_key: self.start_key.clone(),
            revision: self.revision,
            limit: Some(page_size),
        };
        let resp = match self.store.storage().list(&req).await {
            Ok(resp) => resp,
            Err(e) => {
                self.done = true;
                return Err(list_range_error(e, &self.opts, &self.prefix));
            }
        };
        self.revision = Some(resp.revision);
        let mut objects = Vec::new();
        let (mut last_key, mut examined) = (None, 0);
        for kv in &resp.items {
            examined += 1;
            last_key = Some(kv.key.as_str());
            let obj = self.codec.cache(kv, kv.mod_revision).map_err(|e| {
                self.done = true;
                ApiError::internal(format!("decoding {}: {e}", kv.key))
            })?;
            if self.store.cached_matches(&obj, &self.opts) {
                objects.push(Arc::new(obj));
                if self
                    .limit
                    .is_some_and(|l| self.yielded + objects.len() >= l)
                {
                    break;
                }
            }
        }
        self.yielded += objects.len();
        let more = !self.single && (resp.more || examined < resp.items.len());
        let Some(last) = last_key.filter(|_| more) else {
            self.done = true;
            return Ok(Some(objects));
        };
        let next = format!("{last}\u{0}");
        if self.limit.is_some_and(|l| self.yielded >= l) {
            let suffix = next.strip_prefix(&self.prefix).unwrap_or(&next);
            self.continue_token = Some(crate::storage::encode_continue(resp.revision, suffix));
            self.remaining_item_count = (!selecting)
                .then(|| resp.remaining + (resp.items.len() - examined) as i64)
                .filter(|r| *r > 0);
            self.done = true;
        }
        self.start_key = Some(next);
        Ok(Some(objects))
    }
}

impl Store {
    /// A pager over a LIST from etcd with selectors and `limit`/`continue`,
    /// as [`Store::list`], yielding the matching objects in their served
    /// form.
    pub fn list_pager(
        &self,
        namespace: &str,
        opts: &ListOptions,
    ) -> Result<EtcdListPager, ApiError> {
        if let Some(fs) = &opts.field_selector {
            self.check_field_selector(fs)?;
        }
        let prefix = self.list_prefix(namespace);
        let (start_key, revision) = list_start(&prefix, opts)?;
        let single_key = self.single_key(namespace, opts);
        Ok(EtcdListPager {
            single: single_key.is_some(),
            start_key: single_key.or(start_key),
            store: self.clone(),
            codec: StoreCodec {
                def: self.def.clone(),
            },
            opts: opts.clone(),
            prefix,
            revision,
            limit: opts.limit.filter(|l| *l > 0).map(|l| l as usize),
            yielded: 0,
            done: false,
            continue_token: None,
            remaining_item_count: None,
        })
    }

    /// LIST from etcd with selectors and `limit`/`continue`, as
    /// [`Store::list`], returning the matching objects in their served form.
    pub async fn list_encoded(
        &self,
        namespace: &str,
        opts: &ListOptions,
    ) -> Result<CachedPage, ApiError> {
        let mut pager = self.list_pager(namespace, opts)?;
        let mut objects = Vec::new();
        while let Some(page) = pager.next_page().await? {
            objects.extend(page);
        }
        Ok(CachedPage {
            objects,
            resource_version: pager.revision.unwrap_or_default(),
            continue_token: pager.continue_token,
            remaining_item_count: pager.remaining_item_count,
        })
    }
}
