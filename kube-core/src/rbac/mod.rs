//! RBAC in kube-core: the authorizer's in-memory index fed from the four
//! RBAC resources, the bootstrap policy, and the ClusterRole aggregation
//! controller (which upstream runs in kube-controller-manager; kube-core
//! runs it so `admin`, `edit` and `view` have their rules on their own).

pub mod aggregation;
pub mod escalation;
pub mod policy;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::authorization::rbac::{RbacAuthorizer, RbacChanges, RbacIndex, RbacObjects};
use apiserver::registry::catalog::Catalog;
use apiserver::registry::informer::{self, Mirror};
use apiserver::registry::store::WriteContext;
use serde_json::Value;
use tokio::sync::watch;

const GROUP: &str = "rbac.authorization.k8s.io";

/// Bursts of more changed RBAC objects than this are indexed whole, outside
/// the authorizer's lock (about a millisecond per thousand objects), and
/// swapped in, instead of object by object under it (about a microsecond
/// each).
const REINDEX_ASIDE_ABOVE: usize = 1000;

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

/// The resourceVersion of each object of one kind the index was last built
/// from.
#[derive(Default)]
struct Seen(HashMap<String, String>);

impl Seen {
    /// Records `objects` (a mirror: keyed by name, or `<namespace>/<name>`)
    /// and returns the keys of the objects added, changed or removed since
    /// the last call.
    fn update(&mut self, objects: &BTreeMap<String, Value>) -> BTreeSet<String> {
        let mut changed = BTreeSet::new();
        for (key, obj) in objects {
            let rv = obj
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            if self.0.get(key).map(String::as_str) != Some(rv) {
                changed.insert(key.clone());
                self.0.insert(key.clone(), rv.to_string());
            }
        }
        // Every current key is recorded now: more recorded keys than
        // objects means some were removed.
        if self.0.len() > objects.len() {
            self.0.retain(|key, _| {
                let kept = objects.contains_key(key);
                if !kept {
                    changed.insert(key.clone());
                }
                kept
            });
        }
        changed
    }
}

/// Runs forever: updates `authorizer`'s index whenever an RBAC object
/// changes (a burst of changes costs one update), re-indexing only the
/// objects that changed: a RoleBinding written among ten thousand in its
/// namespace costs one RoleBinding.
pub async fn feed(mut m: RbacMirrors, authorizer: Arc<RbacAuthorizer>) {
    let (mut cr_seen, mut r_seen, mut crb_seen, mut rb_seen) = (
        Seen::default(),
        Seen::default(),
        Seen::default(),
        Seen::default(),
    );
    loop {
        {
            let (cr, r, crb, rb) = (
                m.cluster_roles.borrow_and_update(),
                m.roles.borrow_and_update(),
                m.cluster_role_bindings.borrow_and_update(),
                m.role_bindings.borrow_and_update(),
            );
            let synced = cr.synced && r.synced && crb.synced && rb.synced;
            let changes = RbacChanges {
                cluster_roles: cr_seen.update(&cr.objects),
                roles: r_seen.update(&r.objects),
                cluster_role_bindings: crb_seen.update(&crb.objects),
                role_bindings: rb_seen.update(&rb.objects),
            };
            let objects = RbacObjects {
                cluster_roles: &cr.objects,
                roles: &r.objects,
                cluster_role_bindings: &crb.objects,
                role_bindings: &rb.objects,
            };
            // A large burst (the first pass finds every object new) is
            // indexed aside and swapped in, so decisions never wait on the
            // lock for more than about a thousand objects' worth of updates.
            if changes.len() > REINDEX_ASIDE_ABOVE {
                authorizer.replace(RbacIndex::of(&objects), synced);
            } else {
                authorizer.apply(&changes, &objects, synced);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(rv: &str) -> Value {
        json!({"metadata": {"resourceVersion": rv}})
    }

    #[test]
    fn seen_reports_the_keys_of_added_changed_and_removed_objects() {
        let mut seen = Seen::default();
        let mut objects: BTreeMap<String, Value> = [
            ("a/x".to_string(), obj("1")),
            ("a/y".to_string(), obj("2")),
            ("b/x".to_string(), obj("3")),
        ]
        .into();
        let keys = |k: &[&str]| k.iter().map(|k| k.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(seen.update(&objects), keys(&["a/x", "a/y", "b/x"]));
        assert!(seen.update(&objects).is_empty(), "nothing changed");

        objects.insert("a/y".into(), obj("4"));
        assert_eq!(seen.update(&objects), keys(&["a/y"]));
        // One removed and one added in the same burst (equal counts).
        objects.remove("b/x");
        objects.insert("c/x".into(), obj("5"));
        assert_eq!(seen.update(&objects), keys(&["b/x", "c/x"]));

        // Cluster-scoped objects are keyed by name.
        let mut cluster = Seen::default();
        let roles: BTreeMap<String, Value> = [("admin".to_string(), obj("1"))].into();
        assert_eq!(cluster.update(&roles), keys(&["admin"]));
        assert_eq!(cluster.update(&BTreeMap::new()), keys(&["admin"]));
    }
}
