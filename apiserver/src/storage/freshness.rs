//! How a cache proves it is current without etcd progress notifications.

use etcd_client::{GetOptions, Txn, TxnOp, TxnOpResponse};

use super::{normalize_prefix, prefix_range_end, EtcdStorage, StorageError};

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
