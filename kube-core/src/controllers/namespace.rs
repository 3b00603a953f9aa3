//! The namespace controller: empties a namespace being deleted, then clears
//! its `spec.finalizers` and removes it (upstream runs this in
//! kube-controller-manager; kube-core runs it so `kubectl delete namespace`
//! completes on its own).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use shared::endpoints::discovery::GroupSet;
use shared::registry::meta;
use shared::registry::resource::Subresource;
use shared::registry::store::{DeleteOptions, ListOptions, Store, UpdateKind, WriteContext};
use shared::registry::watch::WatchOptions;

/// Runs forever: reacts to namespaces marked for deletion.
pub async fn run(groups: Arc<GroupSet>) {
    let Some(namespaces) = groups.lookup("", "v1", "namespaces").cloned() else {
        return;
    };
    loop {
        if let Err(e) = watch_once(&groups, &namespaces).await {
            tracing::warn!(error = %e, "namespace controller: watch failed; retrying");
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

async fn watch_once(groups: &GroupSet, namespaces: &Store) -> Result<(), String> {
    let opts = WatchOptions {
        list: ListOptions::default(),
        ..Default::default()
    };
    let mut events = namespaces
        .watch("", opts)
        .await
        .map_err(|e| e.to_string())?;
    while let Some(ev) = events.recv().await {
        if ev.type_ == "ERROR" {
            return Err(ev.object.to_string());
        }
        if (ev.type_ == "ADDED" || ev.type_ == "MODIFIED") && meta::is_deleting(&ev.object) {
            let name = meta::name(&ev.object).to_string();
            if let Err(e) = finalize(groups, namespaces, &name).await {
                tracing::warn!(namespace = %name, error = %e, "namespace cleanup incomplete; will retry");
                let groups = groups.clone();
                let namespaces = namespaces.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    let _ = finalize(&groups, &namespaces, &name).await;
                });
            }
        }
    }
    Ok(())
}

/// Deletes everything in the namespace, then the namespace itself.
async fn finalize(groups: &GroupSet, namespaces: &Store, name: &str) -> Result<(), String> {
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
    let clear: &(dyn Fn(&Value) -> Result<Value, shared::endpoints::status::ApiError>
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
