//! Auto-registration: a local APIService for every group/version the tiers
//! behind serve (as the discovery manager last read them) (kube-core's built-in groups and the CRD tier's groups), with
//! upstream's built-in priorities; groups that disappear (a CRD deleted) lose
//! their APIService. Only APIServices carrying the automanaged label are ever
//! removed, as upstream's `autoregister` controller.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use apiserver::registry::store::{DeleteOptions, WriteContext};
use serde_json::{json, Value};

use crate::apiservice::{builtin_priority, AUTOMANAGED_LABEL};
use crate::discovery::Discovery;
use crate::state::State;

/// How many consecutive polls a group/version must be missing before its
/// APIService is deleted (a tier restarting must not drop its groups).
const MISSING_POLLS_BEFORE_DELETE: u32 = 2;

/// The local APIService for `group`/`version`.
pub fn local_apiservice(group: &str, version: &str) -> Value {
    let (gpm, vp) = builtin_priority(group, version);
    json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {
            "name": format!("{version}.{group}"),
            "labels": {AUTOMANAGED_LABEL: "true"},
        },
        "spec": {
            "group": group,
            "version": version,
            "groupPriorityMinimum": gpm,
            "versionPriority": vp,
        },
    })
}

/// One reconciliation pass; `missing` counts polls each automanaged
/// APIService was not served.
/// Returns whether the tiers behind could be read (and every group/version
/// they serve now has an APIService).
async fn sync(state: &State, discovery: &Discovery, missing: &mut BTreeMap<String, u32>) -> bool {
    let Some(want) = discovery.local_group_versions() else {
        return false;
    };
    let have = state.services();
    let ctx = WriteContext {
        user: Some(crate::state::internal_user()),
        dry_run: false,
        ..Default::default()
    };
    let mut created = false;
    for (g, v) in &want {
        let name = format!("{v}.{g}");
        missing.remove(&name);
        if have.contains_key(&name) {
            continue;
        }
        match state.store.create("", local_apiservice(g, v), &ctx).await {
            Ok(_) => {
                tracing::info!(apiservice = %name, "registered local APIService");
                created = true;
            }
            Err(e) if e.code == 409 => {}
            Err(e) => tracing::warn!(apiservice = %name, error = %e, "could not register"),
        }
    }
    let wanted: BTreeSet<String> = want.iter().map(|(g, v)| format!("{v}.{g}")).collect();
    for (name, obj) in have.iter() {
        let managed = obj
            .pointer(&format!(
                "/metadata/labels/{}",
                AUTOMANAGED_LABEL.replace('/', "~1")
            ))
            .and_then(Value::as_str)
            == Some("true");
        let local = obj.pointer("/spec/service").is_none_or(Value::is_null);
        if !managed || !local || wanted.contains(name) {
            continue;
        }
        let count = missing.entry(name.clone()).or_insert(0);
        *count += 1;
        if *count < MISSING_POLLS_BEFORE_DELETE {
            continue;
        }
        match state
            .store
            .delete("", name, &DeleteOptions::default(), &ctx)
            .await
        {
            Ok(_) => tracing::info!(apiservice = %name, "removed local APIService"),
            Err(e) if e.code == 404 => {}
            Err(e) => tracing::warn!(apiservice = %name, error = %e, "could not remove"),
        }
        missing.remove(name);
        created = true;
    }
    !created
        && want
            .iter()
            .all(|(g, v)| have.contains_key(&format!("{v}.{g}")))
}

/// Keeps the local APIServices in step with what the local chain serves
/// (as cached by the discovery manager: no requests of its own), on every
/// change of either and every `period`; sets `completed` once every served
/// group/version was registered (upstream's `autoregister-completion`
/// readiness).
pub async fn run(
    state: Arc<State>,
    discovery: Arc<Discovery>,
    period: Duration,
    completed: Arc<std::sync::atomic::AtomicBool>,
) {
    let mut missing = BTreeMap::new();
    let mut services = state.subscribe();
    let mut local = discovery.subscribe_local();
    loop {
        services.borrow_and_update();
        local.borrow_and_update();
        if sync(&state, &discovery, &mut missing).await {
            completed.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        tokio::select! {
            _ = services.changed() => {}
            _ = local.changed() => {}
            _ = tokio::time::sleep(period) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_apiservices_are_valid_and_labelled() {
        for (g, v) in [("", "v1"), ("apps", "v1"), ("stable.example.com", "v1")] {
            let obj = local_apiservice(g, v);
            assert!(crate::apiservice::validate(&obj).is_empty(), "{obj}");
            assert_eq!(obj["metadata"]["labels"][AUTOMANAGED_LABEL], "true");
        }
        assert_eq!(local_apiservice("", "v1")["metadata"]["name"], "v1.");
        assert_eq!(
            local_apiservice("stable.example.com", "v1")["spec"]["groupPriorityMinimum"],
            1000
        );
        assert_eq!(
            local_apiservice("apps", "v1")["spec"]["groupPriorityMinimum"],
            17800
        );
    }
}
