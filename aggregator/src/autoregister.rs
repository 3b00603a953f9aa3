//! Auto-registration: a local APIService for every group/version the tiers
//! behind serve (kube-core's built-in groups and the CRD tier's groups), with
//! upstream's built-in priorities; groups that disappear (a CRD deleted) lose
//! their APIService. Only APIServices carrying the automanaged label are ever
//! removed, as upstream's `autoregister` controller.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use shared::registry::store::{DeleteOptions, WriteContext};

use crate::apiservice::{builtin_priority, AUTOMANAGED_LABEL, GROUP};
use crate::state::State;

/// How many consecutive polls a group/version must be missing before its
/// APIService is deleted (a tier restarting must not drop its groups).
const MISSING_POLLS_BEFORE_DELETE: u32 = 2;

/// The group/versions served behind the aggregator, or `None` when they
/// could not be read (nothing is then deleted).
async fn served(state: &State) -> Option<BTreeSet<(String, String)>> {
    let mut out = BTreeSet::new();
    out.insert((GROUP.to_string(), "v1".to_string()));
    let (code, api) = state.get_json("/api").await.ok()?;
    if code != 200 {
        return None;
    }
    for v in api
        .get("versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(v) = v.as_str() {
            out.insert((String::new(), v.to_string()));
        }
    }
    let (code, apis) = state.get_json("/apis").await.ok()?;
    if code != 200 {
        return None;
    }
    for g in apis
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = g.get("name").and_then(Value::as_str) else {
            continue;
        };
        for v in g
            .get("versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(ver) = v.get("version").and_then(Value::as_str) {
                out.insert((name.to_string(), ver.to_string()));
            }
        }
    }
    Some(out)
}

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
async fn sync(state: &State, missing: &mut BTreeMap<String, u32>) -> bool {
    let Some(want) = served(state).await else {
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
    if created {
        let _ = state.refresh().await;
    }
    let have = state.services();
    want.iter()
        .all(|(g, v)| have.contains_key(&format!("{v}.{g}")))
}

/// Polls the tiers behind every `period` and keeps the local APIServices in
/// step; sets `completed` once every served group/version was registered
/// (upstream's `autoregister-completion` readiness).
pub async fn run(
    state: Arc<State>,
    period: Duration,
    completed: Arc<std::sync::atomic::AtomicBool>,
) {
    let mut missing = BTreeMap::new();
    loop {
        if sync(&state, &mut missing).await {
            completed.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        tokio::time::sleep(period).await;
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
