//! How a cache proves it is current without etcd progress notifications:
//! for a LIST, one range over the listed prefix ([`EtcdStorage::changes_since`]);
//! for a GET, the key's current mod revision ([`EtcdStorage::mod_revision_of`]),
//! read without its value. Both are queued and sent together with the other
//! proofs in flight as one linearizable transaction, identical ones once
//! (sixteen creates in one namespace check its ResourceQuotas with one
//! range, not sixteen).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

use etcd_client::{GetOptions, Txn, TxnOp, TxnOpResponse};
use tokio::sync::{mpsc, oneshot};

use super::etcd::Inner;
use super::{normalize_prefix, prefix_range_end, EtcdStorage, StorageError};

/// The most etcd operations in one transaction (etcd's `--max-txn-ops` is
/// 128 by default).
const MAX_OPS_PER_READ: usize = 64;

/// One read a cache needs to prove it is current.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Proof {
    /// The mod revision of one key.
    ModRevision(String),
    /// Keys under a normalized prefix changed after a revision, and all of them.
    ChangesSince(String, i64),
}

impl Proof {
    /// How many transaction operations answer it (what [`Proof::ops`]
    /// makes, without making them).
    fn op_count(&self) -> usize {
        match self {
            Proof::ModRevision(_) => 1,
            Proof::ChangesSince(..) => 2,
        }
    }

    /// The transaction operations that answer it.
    fn ops(&self) -> Vec<TxnOp> {
        match self {
            Proof::ModRevision(key) => vec![TxnOp::get(
                key.clone(),
                Some(GetOptions::new().with_keys_only()),
            )],
            Proof::ChangesSince(prefix, revision) => {
                let end = prefix_range_end(prefix.as_bytes());
                // Not `count_only`: etcd applies the mod-revision filter to
                // the returned keys only, so a filtered count is the
                // unfiltered total. The keys (without values) of what
                // changed are few or none.
                let changed = GetOptions::new()
                    .with_range(end.clone())
                    .with_keys_only()
                    .with_min_mod_revision(revision + 1);
                let all = GetOptions::new().with_range(end).with_count_only();
                vec![
                    TxnOp::get(prefix.clone(), Some(changed)),
                    TxnOp::get(prefix.clone(), Some(all)),
                ]
            }
        }
    }

    /// Its answer from the responses of its operations.
    fn answer(&self, responses: &[TxnOpResponse]) -> Result<Answer, StorageError> {
        let get = |i: usize| match responses.get(i) {
            Some(TxnOpResponse::Get(g)) => Ok(g),
            _ => Err(StorageError::Internal(
                "unexpected etcd transaction response".into(),
            )),
        };
        Ok(match self {
            Proof::ModRevision(_) => {
                Answer::ModRevision(get(0)?.kvs().first().map(|kv| kv.mod_revision()))
            }
            Proof::ChangesSince(..) => {
                Answer::ChangesSince(get(0)?.kvs().len() as i64, get(1)?.count())
            }
        })
    }
}

/// What a [`Proof`] found.
#[derive(Clone, Copy, Debug)]
enum Answer {
    ModRevision(Option<i64>),
    ChangesSince(i64, i64),
}

/// One queued proof and where its answer goes.
type QueuedProof = (Proof, oneshot::Sender<Result<Answer, StorageError>>);

/// The queue of freshness proofs of one [`EtcdStorage`], drained by one
/// task that sends whatever has queued as one transaction, waits for the
/// answer, then takes the next batch. A proof therefore always reaches etcd
/// after it was asked for (linearizable), and proofs asked together share
/// one round trip. The task holds the storage weakly and ends with it.
#[derive(Default)]
pub(super) struct FreshnessProofs {
    queue: OnceLock<mpsc::UnboundedSender<QueuedProof>>,
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
        let proof = Proof::ChangesSince(normalize_prefix(prefix), revision);
        match self.prove(proof).await? {
            Answer::ChangesSince(changed, all) => Ok((changed, all)),
            Answer::ModRevision(_) => Err(StorageError::Internal("mismatched proof".into())),
        }
    }

    /// The current mod revision of `key` (`None`: absent), read linearizably
    /// without the value: what a cache needs to prove its copy of one object
    /// is current.
    pub async fn mod_revision_of(&self, key: &str) -> Result<Option<i64>, StorageError> {
        match self.prove(Proof::ModRevision(key.to_string())).await? {
            Answer::ModRevision(revision) => Ok(revision),
            Answer::ChangesSince(..) => Err(StorageError::Internal("mismatched proof".into())),
        }
    }

    async fn prove(&self, proof: Proof) -> Result<Answer, StorageError> {
        let queue = self.inner.freshness_proofs.queue.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(drain_proofs(Arc::downgrade(&self.inner), rx));
            tx
        });
        let (answer, answered) = oneshot::channel();
        queue
            .send((proof, answer))
            .map_err(|_| StorageError::Unavailable("the etcd storage is shutting down".into()))?;
        answered.await.map_err(|_| {
            StorageError::Unavailable("the etcd freshness read was dropped".to_string())
        })?
    }

    /// Sends `proofs` (distinct) as one transaction and answers each.
    async fn read_proofs(&self, proofs: &[Proof]) -> Result<Vec<Answer>, StorageError> {
        let key = match proofs.first() {
            Some(Proof::ModRevision(k)) | Some(Proof::ChangesSince(k, _)) => k.clone(),
            None => return Ok(Vec::new()),
        };
        let mut ops = Vec::new();
        let mut starts = Vec::with_capacity(proofs.len());
        for p in proofs {
            starts.push(ops.len());
            ops.extend(p.ops());
        }
        let txn = Txn::new().and_then(ops);
        let resp = self
            .call("prove freshness", &key, move |client, _| async move {
                client.kv_client().txn(txn).await
            })
            .await?;
        let responses = resp.op_responses();
        proofs
            .iter()
            .zip(starts)
            .map(|(p, at)| p.answer(responses.get(at..).unwrap_or(&[])))
            .collect()
    }
}

/// The task behind [`FreshnessProofs`].
async fn drain_proofs(storage: Weak<Inner>, mut queue: mpsc::UnboundedReceiver<QueuedProof>) {
    while let Some(first) = queue.recv().await {
        let mut ops = first.0.op_count();
        let mut distinct: Vec<Proof> = Vec::new();
        let mut index: HashMap<Proof, usize> = HashMap::new();
        let mut waiting: Vec<(usize, oneshot::Sender<Result<Answer, StorageError>>)> = Vec::new();
        let mut add =
            |(proof, answer): QueuedProof, distinct: &mut Vec<Proof>, waiting: &mut Vec<_>| {
                let at = match index.get(&proof) {
                    Some(&at) => at,
                    None => {
                        distinct.push(proof.clone());
                        index.insert(proof, distinct.len() - 1);
                        distinct.len() - 1
                    }
                };
                waiting.push((at, answer));
            };
        add(first, &mut distinct, &mut waiting);
        while ops < MAX_OPS_PER_READ {
            match queue.try_recv() {
                Ok(queued) => {
                    ops += queued.0.op_count();
                    add(queued, &mut distinct, &mut waiting);
                }
                Err(_) => break,
            }
        }
        let Some(inner) = storage.upgrade() else {
            return;
        };
        let result = EtcdStorage { inner }.read_proofs(&distinct).await;
        for (at, answer) in waiting {
            let _ = answer.send(match &result {
                Ok(answers) => answers.get(at).copied().ok_or_else(|| {
                    StorageError::Internal("unexpected etcd transaction response".into())
                }),
                Err(e) => Err(e.clone()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Proof;

    #[test]
    fn a_proof_counts_the_operations_it_makes() {
        for proof in [
            Proof::ModRevision("/registry/configmaps/ns/a".into()),
            Proof::ChangesSince("/registry/configmaps/ns/".into(), 7),
        ] {
            assert_eq!(proof.op_count(), proof.ops().len(), "{proof:?}");
        }
    }
}
