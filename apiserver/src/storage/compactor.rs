//! Periodic compaction of etcd history, with upstream's protocol
//! (`k8s.io/apiserver/pkg/storage/etcd3/compact.go`).
//!
//! Several apiservers may share one etcd; only one of them should compact per
//! interval. They coordinate through the key [`COMPACT_REV_KEY`]: its etcd
//! *version* is a logical clock ("compact time") and its value the revision
//! last compacted to. Each tick a compactor does
//! `Txn If(version(key) == local_time) Then Put(key, rev) Else Get(key)`:
//! - success: it "holds the lease" for this tick, increments its local time
//!   and compacts to `rev`, the store revision it saw at its *previous* tick
//!   (so history of at least one interval is kept);
//! - failure: someone else compacted; it adopts the remote version as its
//!   local time and tries again next tick.
//!
//! Either way it remembers the current store revision for the next tick. If
//! the holder dies, another compactor's CAS succeeds one tick later.

use std::time::Duration;

use etcd_client::{Compare, CompareOp, Txn, TxnOp, TxnOpResponse};

use super::{EtcdStorage, StorageError};

/// The coordination key shared with upstream kube-apiservers.
pub const COMPACT_REV_KEY: &str = "compact_rev_key";

/// A compactor's local view: its logical compact time and the store revision
/// seen at its previous tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CompactorState {
    /// Expected etcd version of [`COMPACT_REV_KEY`].
    pub(crate) compact_time: i64,
    /// Store revision at the previous tick (0 before the first tick).
    pub(crate) revision: i64,
}

impl EtcdStorage {
    /// Starts the background compactor: every `interval` it runs one round of
    /// the protocol above. Errors are logged and retried next tick; the task
    /// never panics and runs until aborted (or forever). An `interval` of zero
    /// disables compaction (the task ends at once), like upstream.
    pub fn spawn_compactor(&self, interval: Duration) -> tokio::task::JoinHandle<()> {
        let storage = self.clone();
        tokio::spawn(async move {
            if interval.is_zero() {
                return;
            }
            let mut state = CompactorState::default();
            loop {
                tokio::time::sleep(interval).await;
                match storage.compact_tick(&mut state).await {
                    Ok(Some(rev)) => tracing::debug!(revision = rev, "etcd: compacted"),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "etcd: compaction failed"),
                }
            }
        })
    }

    /// One round of the protocol. Returns the revision this process compacted
    /// to, if it did. `state` is updated even on failure of the compaction
    /// itself (as upstream), so a failed round does not stall the clock.
    pub(crate) async fn compact_tick(
        &self,
        state: &mut CompactorState,
    ) -> Result<Option<i64>, StorageError> {
        let txn = Txn::new()
            .when([Compare::version(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                state.compact_time,
            )])
            .and_then([TxnOp::put(
                COMPACT_REV_KEY,
                state.revision.to_string(),
                None,
            )])
            .or_else([TxnOp::get(COMPACT_REV_KEY, None)]);
        let resp = self
            .call("compaction txn", "", move |client, _| async move {
                client.kv_client().txn(txn).await
            })
            .await?;
        let current_revision = resp
            .header()
            .map(|h| h.revision())
            .ok_or_else(|| StorageError::Internal("etcd response without header".to_string()))?;

        if !resp.succeeded() {
            // Another apiserver compacted (or the key vanished): follow it.
            let remote = match resp.op_responses().into_iter().next() {
                Some(TxnOpResponse::Get(get)) => get.kvs().first().cloned(),
                _ => None,
            };
            state.revision = current_revision;
            match remote {
                Some(kv) => {
                    state.compact_time = kv.version();
                    if let Some(rev) = std::str::from_utf8(kv.value())
                        .ok()
                        .and_then(|v| v.parse::<i64>().ok())
                    {
                        self.note_compacted(rev);
                    }
                }
                None => state.compact_time = 0,
            }
            return Ok(None);
        }

        state.compact_time += 1;
        let to = state.revision;
        state.revision = current_revision;
        if to == 0 {
            // Nothing to compact on the first round.
            return Ok(None);
        }
        self.compact(to).await?;
        Ok(Some(to))
    }
}
