//! State kube-core creates at start: the system namespaces and the
//! ConfigMaps upstream's control-plane controllers publish.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use apiserver::registry::catalog::Catalog;
use apiserver::registry::store::WriteContext;
use serde_json::json;

/// Namespaces that exist on every cluster.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates the system namespaces, retrying until etcd answers; sets `done`.
pub async fn ensure_system_namespaces(groups: Arc<Catalog>, done: Arc<AtomicBool>) {
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

/// The PriorityClasses every cluster has (upstream's
/// `scheduling/bootstrap-system-priority-classes` hook): critical system
/// pods name them, and the Priority admission plugin resolves them.
pub const SYSTEM_PRIORITY_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// Creates the system PriorityClasses, retrying until etcd answers.
pub async fn ensure_system_priority_classes(groups: Arc<Catalog>) {
    let Some(classes) = groups
        .lookup("scheduling.k8s.io", "v1", "priorityclasses")
        .cloned()
    else {
        return;
    };
    let ctx = WriteContext::default();
    loop {
        let mut all_ok = true;
        for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
            let obj = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value, "description": description});
            match classes.create("", obj, &ctx).await {
                Ok(_) => tracing::info!(priority_class = name, "created system priority class"),
                Err(e) if e.code == 409 => {}
                Err(e) => {
                    tracing::warn!(priority_class = name, error = %e, "could not create system priority class; retrying");
                    all_ok = false;
                }
            }
        }
        if all_ok {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Name of the ConfigMap (in `kube-system`) through which aggregated API
/// servers learn whom to trust, as upstream's `clusterauthenticationtrust`
/// controller publishes it.
pub const AUTHENTICATION_CONFIGMAP: &str = "extension-apiserver-authentication";

/// The ConfigMap's data from the authentication flags: the client CA, the
/// request-header CA, allowed names and header names (JSON string arrays).
pub fn authentication_configmap_data(
    opts: &apiserver::server::options::AuthenticationOptions,
) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    let mut data = serde_json::Map::new();
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).map_err(|e| anyhow::anyhow!("reading {}: {e}", p.display()))
    };
    if let Some(p) = &opts.client_ca_file {
        data.insert("client-ca-file".into(), json!(read(p)?));
    }
    if let Some(p) = &opts.requestheader_client_ca_file {
        data.insert("requestheader-client-ca-file".into(), json!(read(p)?));
        let list = |v: &[String]| {
            let v: Vec<&String> = v.iter().filter(|s| !s.is_empty()).collect();
            json!(serde_json::to_string(&v).unwrap_or_else(|_| "[]".into()))
        };
        data.insert(
            "requestheader-allowed-names".into(),
            list(&opts.requestheader_allowed_names),
        );
        data.insert(
            "requestheader-username-headers".into(),
            list(&opts.requestheader_username_headers),
        );
        data.insert(
            "requestheader-uid-headers".into(),
            list(&opts.requestheader_uid_headers),
        );
        data.insert(
            "requestheader-group-headers".into(),
            list(&opts.requestheader_group_headers),
        );
        data.insert(
            "requestheader-extra-headers-prefix".into(),
            list(&opts.requestheader_extra_headers_prefix),
        );
    }
    Ok(data)
}

/// Creates or updates `kube-system/extension-apiserver-authentication` with
/// `data`, retrying until it is written; then sets `published`.
pub async fn ensure_authentication_configmap(
    groups: Arc<Catalog>,
    data: serde_json::Map<String, serde_json::Value>,
    published: Arc<AtomicBool>,
) {
    let Some(configmaps) = groups.lookup("", "v1", "configmaps").cloned() else {
        published.store(true, std::sync::atomic::Ordering::SeqCst);
        return;
    };
    let ctx = WriteContext::default();
    let ns = "kube-system";
    loop {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": AUTHENTICATION_CONFIGMAP, "namespace": ns}, "data": data});
        let done = match configmaps.create(ns, obj, &ctx).await {
            Ok(_) => true,
            Err(e) if e.code == 409 => {
                let replace = |cur: &serde_json::Value| {
                    let mut cur = cur.clone();
                    cur["data"] = serde_json::Value::Object(data.clone());
                    Ok(cur)
                };
                configmaps
                    .update(
                        ns,
                        AUTHENTICATION_CONFIGMAP,
                        None,
                        apiserver::registry::store::UpdateKind::Patch(&replace),
                        &ctx,
                    )
                    .await
                    .is_ok()
            }
            Err(_) => false,
        };
        if done {
            tracing::info!("published kube-system/{AUTHENTICATION_CONFIGMAP}");
            published.store(true, std::sync::atomic::Ordering::SeqCst);
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Name of the ConfigMap (in `kube-system`) that records since when this
/// cluster tracks the use of legacy service account tokens, as upstream's
/// `legacytokentracking` controller writes it; the controller manager's
/// legacy token cleaner reads it.
pub const LEGACY_TOKEN_TRACKING_CONFIGMAP: &str =
    "kube-apiserver-legacy-service-account-token-tracking";

/// Creates `kube-system/kube-apiserver-legacy-service-account-token-tracking`
/// with `since: <today, UTC, YYYY-MM-DD>` when it is missing, and rewrites a
/// `since` that is not such a date; retries until etcd answers.
pub async fn ensure_legacy_token_tracking_configmap(groups: Arc<Catalog>) {
    let Some(configmaps) = groups.lookup("", "v1", "configmaps").cloned() else {
        return;
    };
    let ctx = WriteContext::default();
    let ns = "kube-system";
    let today = || jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    loop {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": LEGACY_TOKEN_TRACKING_CONFIGMAP, "namespace": ns},
            "data": {"since": today()}});
        let done = match configmaps.create(ns, obj, &ctx).await {
            Ok(_) => true,
            Err(e) if e.code == 409 => {
                let fix = |cur: &serde_json::Value| {
                    let mut cur = cur.clone();
                    let since = cur["data"]["since"].as_str().unwrap_or("");
                    if jiff::civil::Date::strptime("%Y-%m-%d", since).is_err() {
                        cur["data"]["since"] = json!(today());
                    }
                    Ok(cur)
                };
                configmaps
                    .update(
                        ns,
                        LEGACY_TOKEN_TRACKING_CONFIGMAP,
                        None,
                        apiserver::registry::store::UpdateKind::Patch(&fix),
                        &ctx,
                    )
                    .await
                    .is_ok()
            }
            Err(_) => false,
        };
        if done {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configmap_data_lists_headers_as_json_arrays() {
        let dir = tempfile_dir();
        let ca = dir.join("ca.crt");
        std::fs::write(&ca, "PEM").unwrap();
        let opts = apiserver::server::options::AuthenticationOptions {
            client_ca_file: Some(ca.clone()),
            token_auth_file: None,
            anonymous_auth: true,
            requestheader_client_ca_file: Some(ca),
            requestheader_allowed_names: vec!["front-proxy-client".into()],
            requestheader_username_headers: vec!["X-Remote-User".into()],
            requestheader_uid_headers: vec![],
            requestheader_group_headers: vec!["X-Remote-Group".into()],
            requestheader_extra_headers_prefix: vec!["X-Remote-Extra-".into()],
            service_account_key_file: vec![],
            service_account_issuer: vec![],
            api_audiences: vec![],
            client_ca_pem: None,
            requestheader_client_ca_pem: None,
        };
        let data = authentication_configmap_data(&opts).unwrap();
        assert_eq!(data["client-ca-file"], "PEM");
        assert_eq!(
            data["requestheader-allowed-names"],
            "[\"front-proxy-client\"]"
        );
        assert_eq!(data["requestheader-uid-headers"], "[]");
        assert_eq!(data["requestheader-group-headers"], "[\"X-Remote-Group\"]");
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("kube-core-bootstrap-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
