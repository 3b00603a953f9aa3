//! State kube-core creates at start: the system namespaces.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use shared::endpoints::discovery::GroupSet;
use shared::registry::store::WriteContext;

/// Namespaces that exist on every cluster.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates the system namespaces, retrying until etcd answers; sets `done`.
pub async fn ensure_system_namespaces(groups: Arc<GroupSet>, done: Arc<AtomicBool>) {
    let Some(namespaces) = groups.lookup("", "v1", "namespaces").cloned() else {
        return;
    };
    let ctx = WriteContext::default();
    loop {
        let mut all_ok = true;
        for ns in SYSTEM_NAMESPACES {
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            match namespaces.create("", obj, &ctx).await {
                Ok(_) => tracing::info!(namespace = ns, "created system namespace"),
                Err(e) if e.code == 409 => {}
                Err(e) => {
                    tracing::warn!(namespace = ns, error = %e, "could not create system namespace; retrying");
                    all_ok = false;
                }
            }
        }
        if all_ok {
            done.store(true, Ordering::SeqCst);
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
