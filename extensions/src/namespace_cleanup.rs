//! Deleting a namespace deletes its custom resources, as upstream's
//! namespace controller does through discovery: while a namespace is being
//! deleted (it has a `deletionTimestamp`), this tier deletes every custom
//! resource in it through its own stores (so finalizers and admission
//! apply), and kube-core's namespace controller removes the namespace only
//! once none is left. Namespaces are read from the shared etcd.

use std::sync::Arc;
use std::time::Duration;

use apiserver::apimachinery::meta;
use apiserver::registry::store::{DeleteOptions, ListOptions, WriteContext};

use crate::controller::Controller;

/// How often terminating namespaces are swept again while some remain.
const RETRY: Duration = Duration::from_secs(2);

/// Runs forever.
pub async fn run(controller: Arc<Controller>) {
    let (storage, prefix) = controller.storage();
    let mut namespaces = apiserver::registry::etcd_mirror::spawn(
        storage.clone(),
        format!("{}/namespaces", prefix.trim_end_matches('/')),
    );
    loop {
        let terminating: Vec<String> = namespaces
            .borrow_and_update()
            .objects
            .values()
            .filter(|ns| meta::is_deleting(ns))
            .map(|ns| meta::name(ns).to_string())
            .collect();
        for ns in &terminating {
            sweep(&controller, ns).await;
        }
        if terminating.is_empty() {
            if namespaces.changed().await.is_err() {
                return;
            }
        } else {
            let _ = tokio::time::timeout(RETRY, namespaces.changed()).await;
        }
    }
}

/// Deletes every custom resource in `namespace` (immediately: custom
/// resources have no grace period; finalizers still hold them).
async fn sweep(controller: &Controller, namespace: &str) {
    let ctx = WriteContext::default();
    let now = DeleteOptions {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    for store in controller.namespaced_stores() {
        if let Err(e) = store
            .delete_collection(namespace, &ListOptions::default(), &now, &ctx)
            .await
        {
            tracing::warn!(
                namespace,
                resource = %store.def.resource,
                error = %e.message,
                "deleting the custom resources of a terminating namespace"
            );
        }
    }
}
