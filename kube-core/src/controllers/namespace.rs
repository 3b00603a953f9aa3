//! The namespace controller: empties a namespace being deleted, then clears
//! its `spec.finalizers` and removes it (upstream runs this in
//! kube-controller-manager; kube-core runs it so `kubectl delete namespace`
//! completes on its own). Custom resources are deleted by the extensions
//! tier, which serves them; the namespace is removed only once the shared
//! etcd holds none of them in it.

use std::sync::Arc;
use std::time::Duration;

use apiserver::apimachinery::meta;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::resource::Subresource;
use apiserver::registry::store::{DeleteOptions, ListOptions, Store, UpdateKind, WriteContext};
use apiserver::registry::watch::WatchOptions;
use apiserver::registry::watch_event::{EventType, WatchEvent};
use apiserver::storage::{EtcdStorage, ListRequest};
use serde_json::{json, Value};

/// What the controller reads besides its own stores: the CRDs (to find the
/// custom resources of a namespace) in the shared etcd.
#[derive(Clone)]
pub struct CustomResources {
    storage: EtcdStorage,
    prefix: String,
    crds: tokio::sync::watch::Receiver<apiserver::registry::informer::Mirror>,
}

impl CustomResources {
    /// Mirrors the CRDs under `prefix`.
    pub fn new(storage: EtcdStorage, prefix: &str) -> Self {
        let prefix = prefix.trim_end_matches('/').to_string();
        CustomResources {
            crds: apiserver::registry::etcd_mirror::spawn(
                storage.clone(),
                format!("{prefix}/apiextensions.k8s.io/customresourcedefinitions"),
            ),
            storage,
            prefix,
        }
    }

    /// How many namespaced custom resource kinds still have objects in
    /// `namespace` (0 when none, or when no CRD is namespaced).
    async fn kinds_left(&self, namespace: &str) -> Result<usize, String> {
        let paths: Vec<String> = self
            .crds
            .borrow()
            .objects
            .values()
            .filter(|crd| crd.pointer("/spec/scope").and_then(Value::as_str) == Some("Namespaced"))
            .filter_map(|crd| {
                let group = crd.pointer("/spec/group")?.as_str()?;
                let plural = crd.pointer("/spec/names/plural")?.as_str()?;
                Some(format!("{}/{group}/{plural}/{namespace}/", self.prefix))
            })
            .collect();
        let mut left = 0;
        for prefix in paths {
            let page = self
                .storage
                .list(&ListRequest {
                    prefix,
                    limit: Some(1),
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?;
            if !page.items.is_empty() {
                left += 1;
            }
        }
        Ok(left)
    }
}

/// Runs forever: reacts to namespaces marked for deletion.
pub async fn run(groups: Arc<Catalog>, custom: CustomResources) {
    let Some(namespaces) = groups.lookup("", "v1", "namespaces").cloned() else {
        return;
    };
    loop {
        if let Err(e) = watch_once(&groups, &namespaces, &custom).await {
            tracing::warn!(error = %e, "namespace controller: watch failed; retrying");
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

async fn watch_once(
    groups: &Catalog,
    namespaces: &Store,
    custom: &CustomResources,
) -> Result<(), String> {
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
        if meta::is_deleting(&object) {
            let name = meta::name(&object).to_string();
            if let Err(e) = finalize(groups, namespaces, custom, &name).await {
                tracing::info!(namespace = %name, error = %e, "namespace cleanup incomplete; will retry");
                let groups = groups.clone();
                let namespaces = namespaces.clone();
                let custom = custom.clone();
                tokio::spawn(async move {
                    // Custom resources go in the extensions tier's own time.
                    for _ in 0..60 {
                        tokio::time::sleep(Duration::from_secs(2)).await;
                        if finalize(&groups, &namespaces, &custom, &name).await.is_ok() {
                            return;
                        }
                    }
                });
            }
        }
    }
    Ok(())
}

/// Deletes everything in the namespace, then the namespace itself.
async fn finalize(
    groups: &Catalog,
    namespaces: &Store,
    custom: &CustomResources,
    name: &str,
) -> Result<(), String> {
    let ctx = WriteContext::default();
    let delete_now = DeleteOptions {
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    let mut remaining = 0;
    for store in groups.stores().filter(|s| s.def.namespaced) {
        let deleted = store
            .delete_collection(name, &ListOptions::default(), &delete_now, &ctx)
            .await
            .map_err(|e| e.to_string())?;
        remaining += deleted
            .iter()
            .filter(|o| meta::is_deleting(o) && !meta::finalizers(o).is_empty())
            .count();
    }
    if remaining > 0 {
        return Err(format!("{remaining} objects still have finalizers"));
    }
    let kinds = custom.kinds_left(name).await?;
    if kinds > 0 {
        return Err(format!("custom resources of {kinds} kinds remain"));
    }
    let clear: &(dyn Fn(&Value) -> Result<Value, apiserver::apimachinery::errors::ApiError>
          + Send
          + Sync) = &|old: &Value| {
        let mut new = old.clone();
        if let Some(Value::Object(spec)) = new.get_mut("spec") {
            spec.insert("finalizers".into(), json!([]));
        }
        Ok(new)
    };
    match namespaces
        .update(
            "",
            name,
            Some(Subresource::Finalize),
            UpdateKind::Patch(clear),
            &ctx,
        )
        .await
    {
        Ok(_) => {}
        Err(e) if e.code == 404 => return Ok(()),
        Err(e) => return Err(e.to_string()),
    }
    match namespaces
        .delete("", name, &DeleteOptions::default(), &ctx)
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}
