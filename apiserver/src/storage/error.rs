//! [`StorageError`] and the mapping from etcd client failures onto it.
//!
//! The mapping follows what the layers above need to choose an HTTP status:
//! anything that means "etcd cannot be reached or did not answer in time"
//! becomes [`StorageError::Unavailable`] (5xx, retryable), etcd's
//! `ErrCompacted` becomes [`StorageError::Expired`] (410 Gone), and every other
//! failure is [`StorageError::Internal`].

use super::KeyValue;

/// Everything a storage call can fail with.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StorageError {
    /// The key does not exist (get-for-update, delete).
    #[error("key not found")]
    NotFound,
    /// `create` found the key already present.
    #[error("key already exists")]
    AlreadyExists,
    /// A mod-revision precondition failed. `current` is the value etcd held
    /// when the transaction was evaluated (`None` if the key was absent), so
    /// the caller can retry without another round trip.
    #[error("precondition failed: the key was modified concurrently")]
    Conflict {
        /// The key's value at the time of the failed comparison.
        current: Option<KeyValue>,
    },
    /// The requested revision has been compacted away. `compacted` is the
    /// compaction revision when known (always for watches), else the highest
    /// compaction this process has observed, else 0.
    #[error("requested revision {requested} has been compacted (compacted revision {compacted})")]
    Expired {
        /// The revision the caller asked for.
        requested: i64,
        /// The revision etcd has been compacted to, or 0 if unknown.
        compacted: i64,
    },
    /// A malformed or tampered continue token; the message is upstream's
    /// wording (`continue key is not valid: ...`).
    #[error("{0}")]
    InvalidContinue(String),
    /// etcd is unreachable, has no leader, or did not answer in time. Such
    /// calls are safe to retry once etcd is back; the client reconnects by
    /// itself.
    #[error("etcd unavailable: {0}")]
    Unavailable(String),
    /// The write is larger than etcd accepts (`--max-request-bytes`, 1.5 MiB
    /// by default): the object, not etcd, is at fault, so retrying cannot
    /// help.
    #[error("etcdserver: request is too large")]
    TooLarge,
    /// Anything else (unexpected etcd answers, invalid arguments, bugs).
    #[error("internal storage error: {0}")]
    Internal(String),
}

impl StorageError {
    /// Whether this is [`StorageError::Unavailable`].
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StorageError::Unavailable(_))
    }

    /// Fills in `requested` and, if still unknown, `compacted` of an
    /// [`StorageError::Expired`]; other errors are returned unchanged.
    pub(crate) fn with_expired_revisions(self, requested: i64, known_compacted: i64) -> Self {
        match self {
            StorageError::Expired { compacted, .. } => StorageError::Expired {
                requested,
                compacted: if compacted > 0 {
                    compacted
                } else {
                    known_compacted
                },
            },
            other => other,
        }
    }
}

/// The message etcd uses for `ErrCompacted` (gRPC OutOfRange).
const COMPACTED_MESSAGE: &str = "required revision has been compacted";

/// gRPC codes (numeric, to avoid depending on `tonic` directly).
const CODE_CANCELLED: i32 = 1;
const CODE_UNKNOWN: i32 = 2;
const CODE_DEADLINE_EXCEEDED: i32 = 4;
const CODE_RESOURCE_EXHAUSTED: i32 = 8;
const CODE_INTERNAL: i32 = 13;
const CODE_UNAVAILABLE: i32 = 14;

/// etcd server errors that mean "try again later" even when their gRPC code
/// would not say so.
const TRANSIENT_ETCD_MESSAGES: &[&str] = &[
    "timed out",
    "no leader",
    "leader changed",
    "server stopped",
    "not capable",
    "too many requests",
    "unhealthy cluster",
];

/// Classifies a gRPC status (code + message) from etcd or the transport.
fn classify_status(code: i32, message: &str) -> StorageError {
    // etcd's own limit (InvalidArgument), or its gRPC server's receive
    // limit just above it (ResourceExhausted).
    if message.contains("request is too large")
        || (code == CODE_RESOURCE_EXHAUSTED && message.contains("larger than max"))
    {
        return StorageError::TooLarge;
    }
    if message.contains(COMPACTED_MESSAGE) {
        return StorageError::Expired {
            requested: 0,
            compacted: 0,
        };
    }
    let from_server = message.starts_with("etcdserver:")
        || message.starts_with("mvcc:")
        || message.starts_with("auth:");
    let transient_code = matches!(
        code,
        CODE_CANCELLED | CODE_DEADLINE_EXCEEDED | CODE_RESOURCE_EXHAUSTED | CODE_UNAVAILABLE
    );
    let transient_server =
        from_server && TRANSIENT_ETCD_MESSAGES.iter().any(|m| message.contains(m));
    // Unknown/Internal statuses that etcd did not produce itself come from the
    // client's HTTP/2 transport (connection reset, broken pipe, GOAWAY, ...).
    let transport = !from_server && matches!(code, CODE_UNKNOWN | CODE_INTERNAL);
    if transient_code || transient_server || transport {
        StorageError::Unavailable(message.to_string())
    } else {
        StorageError::Internal(format!("etcd: {message}"))
    }
}

impl From<etcd_client::Error> for StorageError {
    /// See the module docs for the mapping; `Expired` comes out with both
    /// revisions 0 and is completed by the caller.
    fn from(err: etcd_client::Error) -> Self {
        use etcd_client::Error as E;
        match err {
            E::GRpcStatus(status) => classify_status(status.code() as i32, status.message()),
            E::TransportError(e) => StorageError::Unavailable(format!("transport error: {e}")),
            E::IoError(e) => StorageError::Unavailable(format!("io error: {e}")),
            E::WatchError(e) => StorageError::Unavailable(format!("watch error: {e}")),
            other => StorageError::Internal(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_statuses() {
        assert!(matches!(
            classify_status(11, "etcdserver: mvcc: required revision has been compacted"),
            StorageError::Expired { .. }
        ));
        assert!(classify_status(14, "tcp connect error").is_unavailable());
        assert!(classify_status(4, "deadline").is_unavailable());
        assert!(classify_status(14, "etcdserver: request timed out").is_unavailable());
        assert!(classify_status(2, "etcdserver: leader changed").is_unavailable());
        assert!(classify_status(13, "h2 protocol error: broken pipe").is_unavailable());
        assert!(matches!(
            classify_status(3, "etcdserver: request is too large"),
            StorageError::TooLarge
        ));
        assert!(matches!(
            classify_status(
                8,
                "grpc: received message larger than max (2360385 vs. 2097152)"
            ),
            StorageError::TooLarge
        ));
        assert!(matches!(
            classify_status(
                11,
                "etcdserver: mvcc: required revision is a future revision"
            ),
            StorageError::Internal(_)
        ));
        assert!(matches!(
            classify_status(13, "etcdserver: corrupt cluster"),
            StorageError::Internal(_)
        ));
    }

    #[test]
    fn fills_expired_revisions() {
        let e = StorageError::Expired {
            requested: 0,
            compacted: 0,
        };
        match e.with_expired_revisions(5, 9) {
            StorageError::Expired {
                requested,
                compacted,
            } => assert_eq!((requested, compacted), (5, 9)),
            other => panic!("unexpected {other:?}"),
        }
        let e = StorageError::Expired {
            requested: 0,
            compacted: 12,
        };
        match e.with_expired_revisions(5, 9) {
            StorageError::Expired { compacted, .. } => assert_eq!(compacted, 12),
            other => panic!("unexpected {other:?}"),
        }
        assert!(StorageError::NotFound
            .with_expired_revisions(1, 2)
            .to_string()
            .contains("not found"));
    }
}
