//! The service-account controller: every active namespace has the
//! `default` ServiceAccount, which pods run as unless they name another
//! (upstream runs this in kube-controller-manager; kube-core runs it so a
//! cluster without one can create pods; with one, both create the same
//! account and the second creation is a no-op).

use std::sync::Arc;
use std::time::Duration;

use apiserver::apimachinery::meta;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::store::{ListOptions, Store, WriteContext};
use apiserver::registry::watch::WatchOptions;
use apiserver::registry::watch_event::{EventType, WatchEvent};
use serde_json::json;

use crate::admission::service_account::DEFAULT_SERVICE_ACCOUNT;

/// Runs forever: creates `default` in every namespace that lacks it.
pub async fn run(groups: Arc<Catalog>) {
    let (Some(namespaces), Some(accounts)) = (
        groups.lookup("", "v1", "namespaces").cloned(),
        groups.lookup("", "v1", "serviceaccounts").cloned(),
    ) else {
        return;
    };
    loop {
        if let Err(e) = watch_once(&namespaces, &accounts).await {
            tracing::warn!(error = %e, "service-account controller: watch failed; retrying");
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

async fn watch_once(namespaces: &Store, accounts: &Store) -> Result<(), String> {
    let opts = WatchOptions {
        list: ListOptions::default(),
        ..Default::default()
    };
    let mut events = namespaces
        .watch("", opts)
        .await
        .map_err(|e| e.to_string())?;
    while let Some(ev) = events.recv().await {
        let object = match ev {
            WatchEvent::Error(e) => return Err(e.to_string()),
            WatchEvent::Object(EventType::Added | EventType::Modified, obj) => obj.into_value(),
            _ => continue,
        };
        if !meta::is_deleting(&object) {
            ensure_default(accounts, meta::name(&object)).await;
        }
    }
    Ok(())
}

/// Creates the namespace's `default` account unless it exists.
async fn ensure_default(accounts: &Store, namespace: &str) {
    match accounts.get(namespace, DEFAULT_SERVICE_ACCOUNT).await {
        Ok(_) => return,
        Err(e) if e.code != 404 => {
            tracing::debug!(namespace, error = %e, "reading the default service account");
            return;
        }
        Err(_) => {}
    }
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": namespace}});
    let ctx = WriteContext::default();
    match accounts.create(namespace, sa, &ctx).await {
        Ok(_) => {}
        // Exists already, or the namespace is going away.
        Err(e) if matches!(e.code, 403 | 404 | 409) => {}
        Err(e) => tracing::warn!(namespace, error = %e, "creating the default service account"),
    }
}
