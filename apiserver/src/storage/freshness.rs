//! How a cache proves it is current without etcd progress notifications:
//! for a LIST, one range over the listed prefix ([`EtcdStorage::changes_since`]);
//! for a GET, the key's current mod revision ([`EtcdStorage::mod_revision_of`]),
//! read without its value and batched with the other GETs in flight into
//! one linearizable transaction.

use std::sync::{Arc, OnceLock, Weak};

use etcd_client::{GetOptions, Txn, TxnOp, TxnOpResponse};
use tokio::sync::{mpsc, oneshot};

use super::etcd::Inner;
use super::{normalize_prefix, prefix_range_end, EtcdStorage, StorageError};

/// The most keys read in one transaction (etcd's `--max-txn-ops` is 128 by
/// default).
const MAX_KEYS_PER_READ: usize = 64;

/// One queued [`EtcdStorage::mod_revision_of`]: the key and where its
/// answer goes.
type RevisionRead = (String, oneshot::Sender<Result<Option<i64>, StorageError>>);

/// The queue of key-revision reads of one [`EtcdStorage`], drained by one
/// task that sends whatever has queued as one transaction, waits for the
/// answer, then takes the next batch. A read therefore always goes to etcd
/// after it was asked for (linearizable), and reads arriving together
/// share one round trip. The task holds the storage weakly and ends with it.
#[derive(Default)]
pub(super) struct RevisionReads {
    queue: OnceLock<mpsc::UnboundedSender<RevisionRead>>,
}

impl EtcdStorage {
    /// For the keys under `prefix`, in one read: how many were modified after
    /// `revision`, and how many there are. Both zero-change and an unchanged
    /// count mean nothing under the prefix changed since `revision` (a
    /// delete lowers the count, a create or update is a modified key).
    pub async fn changes_since(
        &self,
        prefix: &str,
        revision: i64,
    ) -> Result<(i64, i64), StorageError> {
        let prefix = normalize_prefix(prefix);
        let end = prefix_range_end(prefix.as_bytes());
        // Not `count_only`: etcd applies the mod-revision filter to the
        // returned keys only, so a filtered count is the unfiltered total.
        // The keys (without values) of what changed are few or none.
        let changed = GetOptions::new()
            .with_range(end.clone())
            .with_keys_only()
            .with_min_mod_revision(revision + 1);
        let all = GetOptions::new().with_range(end).with_count_only();
        let txn = Txn::new().and_then([
            TxnOp::get(prefix.clone(), Some(changed)),
            TxnOp::get(prefix.clone(), Some(all)),
        ]);
        let resp = self
            .call("count changes", &prefix, move |client, _| async move {
                client.kv_client().txn(txn).await
            })
            .await?;
        let counts: Vec<(i64, i64)> = resp
            .op_responses()
            .into_iter()
            .filter_map(|r| match r {
                TxnOpResponse::Get(g) => Some((g.kvs().len() as i64, g.count())),
                _ => None,
            })
            .collect();
        match counts.as_slice() {
            [(changed, _), (_, all)] => Ok((*changed, *all)),
            _ => Err(StorageError::Internal(
                "unexpected etcd transaction response".into(),
            )),
        }
    }
}

impl EtcdStorage {
    /// The current mod revision of `key` (`None`: absent), read linearizably
    /// without the value, batched with the other calls in flight into one
    /// transaction: what a cache needs to prove its copy of one object is
    /// current.
    pub async fn mod_revision_of(&self, key: &str) -> Result<Option<i64>, StorageError> {
        let queue = self.inner.revision_reads.queue.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(drain_revision_reads(Arc::downgrade(&self.inner), rx));
            tx
        });
        let (answer, answered) = oneshot::channel();
        queue
            .send((key.to_string(), answer))
            .map_err(|_| StorageError::Unavailable("the etcd storage is shutting down".into()))?;
        answered.await.map_err(|_| {
            StorageError::Unavailable("the etcd revision read was dropped".to_string())
        })?
    }

    /// Reads the mod revisions of `keys` in one transaction of key-only ranges.
    async fn read_mod_revisions(
        &self,
        keys: Vec<String>,
    ) -> Result<Vec<Option<i64>>, StorageError> {
        let first = keys.first().cloned().unwrap_or_default();
        let ops: Vec<TxnOp> = keys
            .into_iter()
            .map(|k| TxnOp::get(k, Some(GetOptions::new().with_keys_only())))
            .collect();
        let n = ops.len();
        let txn = Txn::new().and_then(ops);
        let resp = self
            .call("get revisions", &first, move |client, _| async move {
                client.kv_client().txn(txn).await
            })
            .await?;
        let revisions: Vec<Option<i64>> = resp
            .op_responses()
            .into_iter()
            .map(|r| match r {
                TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.mod_revision()),
                _ => None,
            })
            .collect();
        if revisions.len() != n {
            return Err(StorageError::Internal(
                "unexpected etcd transaction response".into(),
            ));
        }
        Ok(revisions)
    }
}

/// The task behind [`RevisionReads`].
async fn drain_revision_reads(
    storage: Weak<Inner>,
    mut queue: mpsc::UnboundedReceiver<RevisionRead>,
) {
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_KEYS_PER_READ {
            match queue.try_recv() {
                Ok(read) => batch.push(read),
                Err(_) => break,
            }
        }
        let Some(inner) = storage.upgrade() else {
            return;
        };
        let storage_now = EtcdStorage { inner };
        let (keys, answers): (Vec<String>, Vec<_>) = batch.into_iter().unzip();
        match storage_now.read_mod_revisions(keys).await {
            Ok(revisions) => {
                for (answer, revision) in answers.into_iter().zip(revisions) {
                    let _ = answer.send(Ok(revision));
                }
            }
            Err(e) => {
                for answer in answers {
                    let _ = answer.send(Err(e.clone()));
                }
            }
        }
    }
}
