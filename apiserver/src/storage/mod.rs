//! The storage layer: a thin, typed wrapper over etcd v3 with the semantics of
//! upstream `k8s.io/apiserver/pkg/storage/etcd3`.
//!
//! Values are opaque bytes (the registry above encodes objects); keys are full
//! etcd keys built by the registry (e.g. `/registry/configmaps/default/c`).
//! The `resourceVersion` the API exposes is the etcd *mod revision* of a key,
//! and the revision a list or watch is read at is an etcd store revision.
//!
//! Split:
//! - [`error`]: [`StorageError`] and how etcd/gRPC failures map onto it.
//! - [`etcd`]: [`EtcdStorage`] — connection handling, per-call timeouts, CRUD
//!   transactions and paginated lists.
//! - [`watch`]: [`WatchStream`] — etcd watches turned into typed events.
//! - [`continue_token`]: the upstream list continue-token format.
//! - [`compactor`]: the upstream multi-apiserver compaction protocol.

pub mod cacher;
pub mod compactor;
pub mod continue_token;
pub mod error;
pub mod etcd;
mod freshness;
pub mod metrics;
pub mod watch;

#[cfg(test)]
pub(crate) mod test_etcd;
#[cfg(test)]
mod tests;

use bytes::Bytes;
use std::time::Duration;

pub use continue_token::{decode_continue, encode_continue, encode_continue_after};
pub use error::StorageError;
pub use etcd::EtcdStorage;
pub use watch::{WatchEvent, WatchEventKind, WatchStream};

/// One key as stored in etcd.
///
/// `mod_revision` is what the API calls the object's `resourceVersion`;
/// `create_revision` is the revision at which the key was (last) created.
/// Both are always `> 0` for a key that exists, because etcd revisions start
/// at 1 and every write increments the store revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// The full etcd key (always valid UTF-8: non-UTF-8 keys are reported as
    /// [`StorageError::Internal`] instead of being mangled).
    pub key: String,
    /// The opaque stored bytes.
    pub value: Bytes,
    /// Revision of the last modification of this key (the resourceVersion).
    pub mod_revision: i64,
    /// Revision at which this key was created.
    pub create_revision: i64,
}

/// How [`EtcdStorage`] talks to etcd.
///
/// Every unary call is bounded by `request_timeout` so a hung or unreachable
/// etcd surfaces as [`StorageError::Unavailable`] instead of blocking the
/// request forever. Watches are long-lived and are not bounded by it; dead
/// connections under a watch are detected by HTTP/2 keep-alive pings.
#[derive(Clone, Debug)]
pub struct EtcdOptions {
    /// Upper bound on each unary call (and on establishing a watch).
    pub request_timeout: Duration,
    /// Upper bound on opening a TCP connection to an endpoint.
    pub dial_timeout: Duration,
    /// HTTP/2 ping interval while streams (watches) are open.
    pub keepalive_interval: Duration,
    /// How long to wait for a ping acknowledgement before the connection is
    /// considered dead (which fails the watches on it with `Unavailable`).
    pub keepalive_timeout: Duration,
    /// Ask etcd to refuse requests while the member has no raft leader
    /// (upstream sets this for watches so they fail instead of hanging on a
    /// partitioned member).
    pub require_leader: bool,
    /// Largest gRPC response accepted (large unpaginated lists need this to be
    /// big; upstream uses `math.MaxInt32`).
    pub max_response_bytes: usize,
    /// TLS to etcd (`https://` endpoints), with a client certificate when
    /// etcd asks for one.
    pub tls: Option<EtcdTls>,
}

/// How to reach etcd over TLS (`--etcd-cafile`, `--etcd-certfile`,
/// `--etcd-keyfile`).
#[derive(Clone)]
pub struct EtcdTls {
    /// PEM CA bundle verifying etcd's serving certificate (the system roots
    /// when `None`).
    pub ca_pem: Option<Vec<u8>>,
    /// PEM client certificate and key.
    pub client_cert_key: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for EtcdTls {
    // Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdTls")
            .field("ca", &self.ca_pem.is_some())
            .field("client_certificate", &self.client_cert_key.is_some())
            .finish()
    }
}

impl Default for EtcdOptions {
    /// Defaults mirror upstream kube-apiserver: 30 s keep-alive pings with a
    /// 10 s ack timeout, a 10 s request timeout, a 5 s dial timeout.
    fn default() -> Self {
        EtcdOptions {
            request_timeout: Duration::from_secs(10),
            dial_timeout: Duration::from_secs(5),
            keepalive_interval: Duration::from_secs(30),
            keepalive_timeout: Duration::from_secs(10),
            require_leader: true,
            max_response_bytes: i32::MAX as usize,
            tls: None,
        }
    }
}

/// A (page of a) range read over all keys below a prefix.
#[derive(Clone, Debug, Default)]
pub struct ListRequest {
    /// The key prefix; a missing trailing `/` is added (as upstream does) so
    /// `/registry/pods` never matches `/registry/podsecuritypolicies/...`.
    pub prefix: String,
    /// Inclusive first key, normally from [`decode_continue`]. Must lie under
    /// `prefix`, otherwise the call fails with [`StorageError::Internal`].
    pub start_key: Option<String>,
    /// `None` (or `Some(0)`): read at the latest revision (quorum read).
    /// `Some(rv)`: read at exactly `rv`; fails with [`StorageError::Expired`]
    /// if `rv` has been compacted.
    pub revision: Option<i64>,
    /// Page size; `None` (or a value `<= 0`) returns everything.
    pub limit: Option<i64>,
}

/// The result of [`EtcdStorage::list`].
#[derive(Clone, Debug, Default)]
pub struct ListResponse {
    /// The keys in the page, in ascending key order.
    pub items: Vec<KeyValue>,
    /// The revision the list was read at: the requested one, or etcd's
    /// header revision for a latest read. Later pages must be read at it.
    pub revision: i64,
    /// Whether keys remain in the range after the returned ones.
    pub more: bool,
    /// How many keys remain in the range after the returned ones (0 when
    /// `more` is false).
    pub remaining: i64,
}

impl ListResponse {
    /// The continue token for the next page, or `None` when this was the last
    /// page. The token carries `self.revision` and starts right after the last
    /// returned key (`lastKey + "\x00"`, as upstream).
    pub fn continue_token(&self, list_prefix: &str) -> Result<Option<String>, StorageError> {
        match (self.more, self.items.last()) {
            (true, Some(last)) => {
                encode_continue_after(list_prefix, &last.key, self.revision).map(Some)
            }
            _ => Ok(None),
        }
    }
}

/// Appends the `/` upstream requires at the end of a list/watch prefix.
pub(crate) fn normalize_prefix(prefix: &str) -> String {
    if prefix.ends_with('/') {
        prefix.to_string()
    } else {
        format!("{prefix}/")
    }
}

/// The exclusive end of the etcd range covering every key that starts with
/// `prefix`: the prefix with its last byte below 0xff incremented (trailing
/// 0xff bytes dropped). An empty/all-0xff prefix yields `[0]`, which etcd
/// reads as "to the end of the keyspace".
pub(crate) fn prefix_range_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// How one attempt of [`EtcdStorage::guaranteed_update`] ended without
/// finishing.
#[derive(Debug)]
pub enum Retry<E> {
    /// A concurrent write won the comparison: run again on the newer object
    /// (`Some`: the value the failed comparison read; `None`: read again).
    Conflict(Option<KeyValue>),
    /// Give up with this error.
    Fail(E),
}

impl<E> From<E> for Retry<E> {
    fn from(e: E) -> Self {
        Retry::Fail(e)
    }
}
