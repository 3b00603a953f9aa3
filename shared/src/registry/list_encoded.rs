//! LISTs that etcd has to answer (continue tokens, `resourceVersionMatch=
//! Exact`, a cache that cannot serve), without holding the whole list
//! decoded.
//!
//! The range is read from etcd in pages of [`ETCD_PAGE`] keys at one
//! revision, and each object is turned into its served bytes (as the watch
//! cache holds them) as soon as it is read, its decoded form dropped at
//! once. The response is then streamed from those bytes exactly as a LIST
//! from the cache is. Memory at the peak is one etcd page plus the served
//! bytes of the matching objects, instead of the whole etcd answer plus
//! every object decoded (several times its size), which is what makes large
//! LISTs spike a server's memory (kubernetes issue 114276).

use std::sync::Arc;

use super::cached::{CachedPage, StoreCodec};
use super::store::{storage_error, ListOptions, Store};
use crate::endpoints::status::ApiError;
use crate::storage::cacher::Codec;
use crate::storage::{ListRequest, StorageError};

/// Keys read per etcd range.
const ETCD_PAGE: i64 = 1000;

impl Store {
    /// LIST from etcd with selectors and `limit`/`continue`, as
    /// [`Store::list`], returning the matching objects in their served form.
    pub async fn list_encoded(
        &self,
        namespace: &str,
        opts: &ListOptions,
    ) -> Result<CachedPage, ApiError> {
        if let Some(fs) = &opts.field_selector {
            self.check_field_selector(fs)?;
        }
        let codec = StoreCodec {
            def: self.def.clone(),
        };
        let prefix = self.list_prefix(namespace);
        let (mut start_key, mut revision) = (None, None);
        if let Some(token) = opts.continue_token.as_deref().filter(|t| !t.is_empty()) {
            let (rv, start) =
                crate::storage::decode_continue(token, &prefix).map_err(|e| match e {
                    StorageError::InvalidContinue(m) => {
                        ApiError::bad_request(format!("invalid continue token: {m}"))
                    }
                    other => storage_error(other),
                })?;
            start_key = Some(start);
            revision = Some(rv);
        } else if let Some(rv) = opts
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty() && *rv != "0")
        {
            let rv: i64 = rv
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
            if opts.resource_version_match.as_deref() == Some("Exact") {
                revision = Some(rv);
            }
        }
        let limit = opts.limit.filter(|l| *l > 0).map(|l| l as usize);
        let selecting = opts.has_selector();
        let mut objects = Vec::new();
        loop {
            let page_size = match limit {
                Some(l) if !selecting => (l - objects.len()).clamp(1, ETCD_PAGE as usize) as i64,
                _ => ETCD_PAGE,
            };
            let req = ListRequest {
                prefix: prefix.clone(),
                start_key: start_key.clone(),
                revision,
                limit: Some(page_size),
            };
            let resp = self.storage().list(&req).await.map_err(|e| match e {
                StorageError::Expired { .. } if opts.continue_token.is_some() => ApiError::expired(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                ),
                other => storage_error(other),
            })?;
            revision = Some(resp.revision);
            let mut last_key = None;
            let mut examined = 0;
            for kv in &resp.items {
                examined += 1;
                last_key = Some(kv.key.clone());
                let obj = codec
                    .cache(kv, kv.mod_revision)
                    .map_err(|e| ApiError::internal(format!("decoding {}: {e}", kv.key)))?;
                if self.cached_matches(&obj, opts) {
                    objects.push(Arc::new(obj));
                    if limit.is_some_and(|l| objects.len() >= l) {
                        break;
                    }
                }
            }
            let rv = resp.revision;
            let more = resp.more || examined < resp.items.len();
            let full = limit.is_some_and(|l| objects.len() >= l);
            let done = |objects, continue_token, remaining_item_count| CachedPage {
                objects,
                resource_version: rv,
                continue_token,
                remaining_item_count,
            };
            let Some(last) = last_key.filter(|_| more) else {
                return Ok(done(objects, None, None));
            };
            let next = format!("{last}\u{0}");
            if full {
                let suffix = next.strip_prefix(&prefix).unwrap_or(&next);
                let remaining = (!selecting)
                    .then(|| resp.remaining + (resp.items.len() - examined) as i64)
                    .filter(|r| *r > 0);
                return Ok(done(
                    objects,
                    Some(crate::storage::encode_continue(rv, suffix)),
                    remaining,
                ));
            }
            start_key = Some(next);
        }
    }
}
