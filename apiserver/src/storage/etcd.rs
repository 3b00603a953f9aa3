//! [`EtcdStorage`]: connection handling, per-call timeouts, the CRUD
//! transactions and paginated lists of upstream's etcd3 store.
//!
//! Connection model: `etcd_client::Client` sits on a lazily connecting tonic
//! channel. Creating it never touches the network, so [`EtcdStorage::connect`]
//! succeeds while etcd is down; each request (re)connects as needed, so when
//! etcd comes back the next request simply works. A request against a down
//! etcd fails fast (connection refused → `Unavailable`); one against a hung
//! etcd is cut by `request_timeout`. After a timeout the client is replaced by
//! a fresh one, so a half-open TCP connection (peer vanished without a reset)
//! cannot wedge the storage: the next call dials anew.

use std::future::Future;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions, Txn, TxnOp,
    TxnOpResponse,
};

use super::{
    normalize_prefix, prefix_range_end, EtcdOptions, KeyValue, ListRequest, ListResponse, Retry,
    StorageError,
};

/// Typed access to one etcd cluster. Cheap to clone (all clones share the
/// connection); safe to use from many tasks at once.
#[derive(Clone)]
pub struct EtcdStorage {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    endpoints: Vec<String>,
    opts: EtcdOptions,
    /// The current client and its generation; replaced after a timeout.
    /// Shared by reference count: cloning a `Client` clones every one of
    /// its service clients, a cost on every call.
    client: RwLock<(u64, Arc<Client>)>,
    next_generation: AtomicU64,
    /// Highest compaction revision this process has seen (its own
    /// compactions, the compactor's key, watch cancellations).
    known_compacted: AtomicI64,
    /// Which group and resource each key prefix holds, for the metrics.
    resources: super::metrics::ResourceNames,
    /// The queue of freshness proofs ([`EtcdStorage::changes_since`],
    /// [`EtcdStorage::mod_revision_of`]), batched into transactions.
    pub(super) freshness_proofs: super::freshness::FreshnessProofs,
}

impl std::fmt::Debug for EtcdStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStorage")
            .field("endpoints", &self.inner.endpoints)
            .field("opts", &self.inner.opts)
            .finish()
    }
}

/// Builds a lazily connecting client; only fails on malformed endpoints.
async fn build_client(endpoints: &[String], opts: &EtcdOptions) -> Result<Client, StorageError> {
    let options = ConnectOptions::new()
        .with_connect_timeout(opts.dial_timeout)
        .with_keep_alive(opts.keepalive_interval, opts.keepalive_timeout)
        // etcd refuses pings on idle connections (PermitWithoutStream=false)
        // and eventually sends GOAWAY, so only ping while streams are open.
        .with_keep_alive_while_idle(false)
        .with_require_leader(opts.require_leader);
    let options = match &opts.tls {
        Some(tls) => {
            let mut t = etcd_client::TlsOptions::new();
            if let Some(ca) = &tls.ca_pem {
                t = t.ca_certificate(etcd_client::Certificate::from_pem(ca));
            }
            if let Some((cert, key)) = &tls.client_cert_key {
                t = t.identity(etcd_client::Identity::from_pem(cert, key));
            }
            options.with_tls(t)
        }
        None => options,
    };
    // Nothing is dialled yet: this only registers the endpoints.
    match tokio::time::timeout(
        opts.request_timeout,
        Client::connect(endpoints, Some(options)),
    )
    .await
    {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(StorageError::Internal(format!(
            "invalid etcd endpoints {endpoints:?}: {e}"
        ))),
        Err(_) => Err(StorageError::Unavailable(
            "timed out creating the etcd client".to_string(),
        )),
    }
}

/// Converts an etcd key-value, failing on a non-UTF-8 key.
pub(crate) fn convert_kv(kv: etcd_client::KeyValue) -> Result<KeyValue, StorageError> {
    let mod_revision = kv.mod_revision();
    let create_revision = kv.create_revision();
    let (key, value) = kv.into_key_value();
    let key = String::from_utf8(key)
        .map_err(|e| StorageError::Internal(format!("etcd key is not UTF-8: {e}")))?;
    Ok(KeyValue {
        key,
        value: Bytes::from(value),
        mod_revision,
        create_revision,
    })
}

/// Like [`convert_kv`] for a borrowed key-value (watch events).
pub(crate) fn convert_kv_ref(kv: &etcd_client::KeyValue) -> Result<KeyValue, StorageError> {
    let key = std::str::from_utf8(kv.key())
        .map_err(|e| StorageError::Internal(format!("etcd key is not UTF-8: {e}")))?;
    Ok(KeyValue {
        key: key.to_string(),
        value: Bytes::copy_from_slice(kv.value()),
        mod_revision: kv.mod_revision(),
        create_revision: kv.create_revision(),
    })
}

fn header_revision(header: Option<&etcd_client::ResponseHeader>) -> Result<i64, StorageError> {
    header
        .map(|h| h.revision())
        .ok_or_else(|| StorageError::Internal("etcd response without header".to_string()))
}

/// The first key-value of the `index`-th op response if it is a range (get).
fn txn_get_first(
    ops: &[TxnOpResponse],
    index: usize,
) -> Result<Option<etcd_client::KeyValue>, StorageError> {
    match ops.get(index) {
        Some(TxnOpResponse::Get(get)) => Ok(get.kvs().first().cloned()),
        _ => Err(StorageError::Internal(
            "unexpected etcd transaction response (expected a range)".to_string(),
        )),
    }
}

impl EtcdStorage {
    /// Creates the storage for `endpoints` (`http://host:port` or
    /// `host:port`). Does not contact etcd, so it succeeds while etcd is down;
    /// connections are made (and remade) on demand. Fails only for an empty or
    /// malformed endpoint list ([`StorageError::Internal`]).
    pub async fn connect(endpoints: &[String], opts: EtcdOptions) -> Result<Self, StorageError> {
        if endpoints.is_empty() {
            return Err(StorageError::Internal(
                "no etcd endpoints configured".to_string(),
            ));
        }
        let client = build_client(endpoints, &opts).await?;
        Ok(EtcdStorage {
            inner: Arc::new(Inner {
                endpoints: endpoints.to_vec(),
                opts,
                client: RwLock::new((0, Arc::new(client))),
                next_generation: AtomicU64::new(1),
                known_compacted: AtomicI64::new(0),
                resources: Default::default(),
                freshness_proofs: Default::default(),
            }),
        })
    }

    /// The options this storage was created with.
    pub fn options(&self) -> &EtcdOptions {
        &self.inner.opts
    }

    /// The highest compaction revision this process has observed (0 if none);
    /// a lower bound of etcd's real compaction revision.
    pub fn known_compacted_revision(&self) -> i64 {
        self.inner.known_compacted.load(Ordering::Relaxed)
    }

    pub(crate) fn note_compacted(&self, revision: i64) {
        self.inner
            .known_compacted
            .fetch_max(revision, Ordering::Relaxed);
    }

    fn current_client(&self) -> (u64, Arc<Client>) {
        let guard = self
            .inner
            .client
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        (guard.0, guard.1.clone())
    }

    /// Replaces the client of generation `generation` with a fresh one (no-op
    /// if another caller already did).
    async fn reset_client(&self, generation: u64) {
        let fresh = match build_client(&self.inner.endpoints, &self.inner.opts).await {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!(error = %e, "could not rebuild the etcd client");
                return;
            }
        };
        let mut guard = self
            .inner
            .client
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.0 == generation {
            let next = self.inner.next_generation.fetch_add(1, Ordering::Relaxed);
            *guard = (next, Arc::new(fresh));
            tracing::info!("etcd request timed out; replaced the etcd connection");
        }
    }

    /// Names the group and resource of the keys under `prefix`, for the
    /// `etcd_request_*` metrics of calls on them.
    pub fn name_resource(&self, prefix: &str, group: &str, resource: &str) {
        self.inner.resources.name(prefix, group, resource);
    }

    /// The group and resource a store named for `key`'s prefix.
    pub fn resource_of(&self, key: &str) -> super::metrics::GroupResource {
        self.inner.resources.of(key)
    }

    /// Runs one etcd call about `key` (empty for calls about no key) bounded
    /// by `request_timeout`, mapping failures, and records it in the
    /// `etcd_request_*` metrics as operation `what`.
    pub(crate) async fn call<T, F, Fut>(
        &self,
        what: &str,
        key: &str,
        f: F,
    ) -> Result<T, StorageError>
    where
        F: FnOnce(Arc<Client>, usize) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let start = std::time::Instant::now();
        let result = self.call_unrecorded(what, f).await;
        super::metrics::etcd_request(
            what,
            &self.resource_of(key),
            result.is_ok(),
            start.elapsed(),
        );
        result
    }

    async fn call_unrecorded<T, F, Fut>(&self, what: &str, f: F) -> Result<T, StorageError>
    where
        F: FnOnce(Arc<Client>, usize) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let (generation, client) = self.current_client();
        let timeout = self.inner.opts.request_timeout;
        match tokio::time::timeout(timeout, f(client, self.inner.opts.max_response_bytes)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                let err = StorageError::from(e);
                if err.is_unavailable() {
                    tracing::debug!(error = %err, "etcd {what} failed");
                }
                Err(err)
            }
            Err(_) => {
                self.reset_client(generation).await;
                Err(StorageError::Unavailable(format!(
                    "etcd {what} timed out after {timeout:?}"
                )))
            }
        }
    }

    async fn txn(
        &self,
        what: &str,
        key: &str,
        txn: Txn,
    ) -> Result<etcd_client::TxnResponse, StorageError> {
        self.call(what, key, move |client, max| async move {
            client
                .kv_client()
                .max_decoding_message_size(max)
                .txn(txn)
                .await
        })
        .await
    }

    /// Creates `key` only if it does not exist (`mod_revision == 0`), as
    /// upstream's `Create`. Returns the revision of the write, which is the
    /// new object's resourceVersion. [`StorageError::AlreadyExists`] if the
    /// key is present.
    pub async fn create(&self, key: &str, value: Bytes) -> Result<i64, StorageError> {
        let txn = Txn::new()
            .when([Compare::mod_revision(key, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key, Vec::from(value), None)]);
        let resp = self.txn("create", key, txn).await?;
        if !resp.succeeded() {
            return Err(StorageError::AlreadyExists);
        }
        header_revision(resp.header())
    }

    /// Reads `key` with a linearizable (quorum) read; `None` if absent.
    pub async fn get(&self, key: &str) -> Result<Option<KeyValue>, StorageError> {
        let owned = key.to_string();
        let mut resp = self
            .call("get", key, move |client, max| async move {
                client
                    .kv_client()
                    .max_decoding_message_size(max)
                    .get(owned, None)
                    .await
            })
            .await?;
        resp.take_kvs()
            .into_iter()
            .next()
            .map(convert_kv)
            .transpose()
    }

    /// Replaces `key`'s value if its mod revision is still
    /// `expected_mod_revision` (optimistic concurrency, as upstream's
    /// `GuaranteedUpdate`). Returns the revision of the write. On mismatch
    /// fails with [`StorageError::Conflict`] carrying the current value
    /// (`None` if the key no longer exists), read in the same transaction.
    /// `expected_mod_revision == 0` means "only if absent".
    pub async fn update(
        &self,
        key: &str,
        expected_mod_revision: i64,
        value: Bytes,
    ) -> Result<i64, StorageError> {
        let txn = Txn::new()
            .when([Compare::mod_revision(
                key,
                CompareOp::Equal,
                expected_mod_revision,
            )])
            .and_then([TxnOp::put(key, Vec::from(value), None)])
            .or_else([TxnOp::get(key, None)]);
        let resp = self.txn("update", key, txn).await?;
        if resp.succeeded() {
            return header_revision(resp.header());
        }
        let current = txn_get_first(&resp.op_responses(), 0)?
            .map(convert_kv)
            .transpose()?;
        Err(StorageError::Conflict { current })
    }

    /// Upstream's `GuaranteedUpdate`, and the one compare-and-swap loop of
    /// the server: reads `key` and runs `attempt` on what is stored (`None`
    /// when nothing is). The attempt decides and writes (with [`Self::update`],
    /// [`Self::delete`] or [`Self::create`], compared against the revision it
    /// was given); when a concurrent writer won, it returns
    /// [`Retry::Conflict`] and runs again on the newer object (the one the
    /// failed comparison returned, or a fresh read), at most `attempts`
    /// times, after which `exhausted` is the error. Every read-modify-write
    /// of the server goes through here: the generic store's update and
    /// delete, subresources, allocators.
    pub async fn guaranteed_update<T, E, F>(
        &self,
        key: &str,
        attempts: usize,
        mut attempt: impl FnMut(Option<KeyValue>) -> F,
        storage_error: impl Fn(StorageError) -> E,
        exhausted: impl FnOnce() -> E,
    ) -> Result<T, E>
    where
        F: Future<Output = Result<T, Retry<E>>>,
    {
        let mut current = self.get(key).await.map_err(&storage_error)?;
        for _ in 0..attempts {
            match attempt(current).await {
                Ok(done) => return Ok(done),
                Err(Retry::Fail(e)) => return Err(e),
                Err(Retry::Conflict(Some(newer))) => current = Some(newer),
                Err(Retry::Conflict(None)) => {
                    current = self.get(key).await.map_err(&storage_error)?
                }
            }
        }
        Err(exhausted())
    }

    /// Deletes `key`, optionally only if its mod revision equals
    /// `expected_mod_revision`. Returns the deleted value (with its own last
    /// mod revision) and the revision of the delete. [`StorageError::NotFound`]
    /// if the key is absent; [`StorageError::Conflict`] with the current value
    /// if the precondition fails.
    pub async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<i64>,
    ) -> Result<(KeyValue, i64), StorageError> {
        let delete = TxnOp::delete(key, Some(DeleteOptions::new().with_prev_key()));
        let txn = match expected_mod_revision {
            Some(rev) => Txn::new()
                .when([Compare::mod_revision(key, CompareOp::Equal, rev)])
                .and_then([delete])
                .or_else([TxnOp::get(key, None)]),
            None => Txn::new().and_then([delete]),
        };
        let resp = self.txn("delete", key, txn).await?;
        let ops = resp.op_responses();
        if !resp.succeeded() {
            return match txn_get_first(&ops, 0)? {
                Some(current) => Err(StorageError::Conflict {
                    current: Some(convert_kv(current)?),
                }),
                None => Err(StorageError::NotFound),
            };
        }
        let revision = header_revision(resp.header())?;
        let deleted = match ops.into_iter().next() {
            Some(TxnOpResponse::Delete(mut del)) => del.take_prev_kvs().into_iter().next(),
            _ => {
                return Err(StorageError::Internal(
                    "unexpected etcd transaction response (expected a delete)".to_string(),
                ))
            }
        };
        match deleted {
            Some(kv) => Ok((convert_kv(kv)?, revision)),
            None => Err(StorageError::NotFound),
        }
    }

    /// The keys below `prefix` (no values), at the latest revision: how an
    /// allocator learns what is taken in one read however large the range.
    pub async fn list_keys(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        let prefix = normalize_prefix(prefix);
        let options = GetOptions::new()
            .with_range(prefix_range_end(prefix.as_bytes()))
            .with_keys_only();
        let label_key = prefix.clone();
        let resp = self
            .call("list", &label_key, move |client, max| {
                let prefix = prefix.clone();
                let options = options.clone();
                async move {
                    client
                        .kv_client()
                        .max_decoding_message_size(max)
                        .get(prefix, Some(options))
                        .await
                }
            })
            .await?;
        Ok(resp
            .kvs()
            .iter()
            .filter_map(|kv| kv.key_str().ok().map(str::to_string))
            .collect())
    }

    /// Reads one page of the keys under `req.prefix` (see [`ListRequest`]).
    ///
    /// The page holds at most `limit` keys from `start_key` (or the prefix) in
    /// key order. `revision` in the response is the revision read at; pass it
    /// (via the continue token) for the following pages so all pages come
    /// from one consistent snapshot. [`StorageError::Expired`] if the
    /// requested revision has been compacted.
    pub async fn list(&self, req: &ListRequest) -> Result<ListResponse, StorageError> {
        let prefix = normalize_prefix(&req.prefix);
        let start = match &req.start_key {
            Some(start) if !start.starts_with(prefix.as_str()) => {
                return Err(StorageError::Internal(format!(
                    "list start key {start:?} is outside the prefix {prefix:?}"
                )))
            }
            Some(start) => start.clone(),
            None => prefix.clone(),
        };
        let requested = req.revision.filter(|rv| *rv > 0);
        let mut options = GetOptions::new().with_range(prefix_range_end(prefix.as_bytes()));
        if let Some(rv) = requested {
            options = options.with_revision(rv);
        }
        if let Some(limit) = req.limit.filter(|l| *l > 0) {
            options = options.with_limit(limit);
        }
        let result = self
            .call("list", &prefix, move |client, max| async move {
                client
                    .kv_client()
                    .max_decoding_message_size(max)
                    .get(start, Some(options))
                    .await
            })
            .await;
        let mut resp = result.map_err(|e| {
            e.with_expired_revisions(requested.unwrap_or(0), self.known_compacted_revision())
        })?;
        let revision = match requested {
            Some(rv) => rv,
            None => header_revision(resp.header())?,
        };
        let more = resp.more();
        let count = resp.count();
        let items = resp
            .take_kvs()
            .into_iter()
            .map(convert_kv)
            .collect::<Result<Vec<_>, _>>()?;
        let remaining = if more {
            (count - items.len() as i64).max(0)
        } else {
            0
        };
        Ok(ListResponse {
            items,
            revision,
            more,
            remaining,
        })
    }

    /// The current store revision (a quorum read, as upstream's
    /// `GetCurrentResourceVersionFromStorage`).
    pub async fn current_revision(&self) -> Result<i64, StorageError> {
        let resp = self
            .call("get revision", "", |client, _| async move {
                client
                    .kv_client()
                    .get(
                        super::compactor::COMPACT_REV_KEY,
                        Some(GetOptions::new().with_count_only()),
                    )
                    .await
            })
            .await?;
        header_revision(resp.header())
    }

    /// Compacts etcd's history up to `revision`: reads and watches below it
    /// then fail with [`StorageError::Expired`]. Compacting to a revision at or
    /// below the current compaction point succeeds (nothing to do); a
    /// revision in the future fails with [`StorageError::Internal`].
    pub async fn compact(&self, revision: i64) -> Result<(), StorageError> {
        let result = self
            .call("compact", "", move |client, _| async move {
                client.kv_client().compact(revision, None).await
            })
            .await;
        match result {
            Ok(_) | Err(StorageError::Expired { .. }) => {
                self.note_compacted(revision);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::prefix_range_end;

    #[test]
    fn range_end() {
        assert_eq!(
            prefix_range_end(b"/registry/pods/"),
            b"/registry/pods0".to_vec()
        );
        assert_eq!(prefix_range_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_range_end(b"\xff\xff"), vec![0]);
        assert_eq!(prefix_range_end(b""), vec![0]);
    }
}
