//! RBAC in kube-core: the authorizer's in-memory index fed from the four
//! RBAC resources, the bootstrap policy, and the ClusterRole aggregation
//! controller (which upstream runs in kube-controller-manager; kube-core
//! runs it so `admin`, `edit` and `view` have their rules on their own).

pub mod aggregation;
pub mod escalation;
pub mod policy;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::authorization::rbac::{RbacAuthorizer, RbacIndex};
use apiserver::registry::catalog::Catalog;
use apiserver::registry::informer::{self, Mirror};
use apiserver::registry::store::WriteContext;
use tokio::sync::watch;

const GROUP: &str = "rbac.authorization.k8s.io";

/// Mirrors of the four RBAC resources.
pub struct RbacMirrors {
    pub cluster_roles: watch::Receiver<Mirror>,
    pub roles: watch::Receiver<Mirror>,
    pub cluster_role_bindings: watch::Receiver<Mirror>,
    pub role_bindings: watch::Receiver<Mirror>,
}

/// Starts mirroring the RBAC resources (`None` when this server does not
/// serve them).
pub fn start_mirrors(groups: &Catalog) -> Option<RbacMirrors> {
    let start = |resource: &str| {
        let store = groups.lookup(GROUP, "v1", resource)?.clone();
        let (tx, rx) = informer::channel();
        tokio::spawn(informer::run((*store).clone(), tx));
        Some(rx)
    };
    Some(RbacMirrors {
        cluster_roles: start("clusterroles")?,
        roles: start("roles")?,
        cluster_role_bindings: start("clusterrolebindings")?,
        role_bindings: start("rolebindings")?,
    })
}

/// Runs forever: rebuilds `authorizer`'s index whenever an RBAC object
/// changes (a burst of changes costs one rebuild).
pub async fn feed(mut m: RbacMirrors, authorizer: Arc<RbacAuthorizer>) {
    loop {
        {
            let (cr, r, crb, rb) = (
                m.cluster_roles.borrow_and_update(),
                m.roles.borrow_and_update(),
                m.cluster_role_bindings.borrow_and_update(),
                m.role_bindings.borrow_and_update(),
            );
            let synced = cr.synced && r.synced && crb.synced && rb.synced;
            let index = RbacIndex::build(
                cr.objects.values(),
                r.objects.values(),
                crb.objects.values(),
                rb.objects.values(),
            );
            authorizer.replace(index, synced);
        }
        let changed = tokio::select! {
            c = m.cluster_roles.changed() => c,
            c = m.roles.changed() => c,
            c = m.cluster_role_bindings.changed() => c,
            c = m.role_bindings.changed() => c,
        };
        if changed.is_err() {
            return;
        }
        // Let a burst (a bootstrap, a `kubectl apply` of many objects) land.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Creates the bootstrap policy objects that do not exist yet, retrying
/// until storage answers, then sets `done`. Existing objects are left as
/// they are.
pub async fn ensure_bootstrap_policy(groups: Arc<Catalog>, done: Arc<AtomicBool>) {
    let ctx = WriteContext::default();
    for (resource, obj) in policy::objects() {
        let Some(store) = groups.lookup(GROUP, "v1", resource).cloned() else {
            continue;
        };
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_string();
        loop {
            match store.create(&ns, obj.clone(), &ctx).await {
                Ok(_) => break,
                Err(e) if e.code == 409 => break,
                Err(e) => {
                    tracing::debug!(error = %e, "bootstrap RBAC not written yet; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }
    done.store(true, Ordering::SeqCst);
    tracing::info!("bootstrap RBAC policy in place");
}
