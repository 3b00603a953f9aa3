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

/// Name of the ConfigMap (in `kube-system`) through which aggregated API
/// servers learn whom to trust, as upstream's `clusterauthenticationtrust`
/// controller publishes it.
pub const AUTHENTICATION_CONFIGMAP: &str = "extension-apiserver-authentication";

/// The ConfigMap's data from the authentication flags: the client CA, the
/// request-header CA, allowed names and header names (JSON string arrays).
pub fn authentication_configmap_data(
    opts: &shared::server::options::AuthenticationOptions,
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
/// `data`, retrying until it is written.
pub async fn ensure_authentication_configmap(
    groups: Arc<GroupSet>,
    data: serde_json::Map<String, serde_json::Value>,
) {
    let Some(configmaps) = groups.lookup("", "v1", "configmaps").cloned() else {
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
                        shared::registry::store::UpdateKind::Patch(&replace),
                        &ctx,
                    )
                    .await
                    .is_ok()
            }
            Err(_) => false,
        };
        if done {
            tracing::info!("published kube-system/{AUTHENTICATION_CONFIGMAP}");
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The bootstrap RBAC objects aggregated API servers are bound to: the Role
/// `kube-system/extension-apiserver-authentication-reader` (read the trust
/// ConfigMap) and the ClusterRole `system:auth-delegator` (create
/// TokenReviews and SubjectAccessReviews), as upstream's bootstrap policy.
pub fn delegation_rbac_objects() -> Vec<(&'static str, serde_json::Value)> {
    let meta = |name: &str, ns: Option<&str>| {
        let mut m = json!({
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
        });
        if let Some(ns) = ns {
            m["namespace"] = json!(ns);
        }
        m
    };
    vec![
        (
            "roles",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": meta("extension-apiserver-authentication-reader", Some("kube-system")),
                "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                    "resourceNames": [AUTHENTICATION_CONFIGMAP], "verbs": ["get", "list", "watch"]}],
            }),
        ),
        (
            "clusterroles",
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": meta("system:auth-delegator", None),
                "rules": [
                    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
                    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
                ],
            }),
        ),
    ]
}

/// Creates [`delegation_rbac_objects`] once RBAC is served by this tier
/// (nothing happens while `rbac.authorization.k8s.io` is not registered).
pub async fn ensure_delegation_rbac(groups: Arc<GroupSet>) {
    let ctx = WriteContext::default();
    for (resource, obj) in delegation_rbac_objects() {
        let Some(store) = groups
            .lookup("rbac.authorization.k8s.io", "v1", resource)
            .cloned()
        else {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delegation_roles_grant_what_aggregated_servers_need() {
        let objs = delegation_rbac_objects();
        let reader = &objs[0].1;
        assert_eq!(
            reader["metadata"]["name"],
            "extension-apiserver-authentication-reader"
        );
        assert_eq!(reader["metadata"]["namespace"], "kube-system");
        assert_eq!(
            reader["rules"][0]["resourceNames"][0],
            AUTHENTICATION_CONFIGMAP
        );
        let delegator = &objs[1].1;
        assert_eq!(delegator["metadata"]["name"], "system:auth-delegator");
        assert_eq!(
            delegator["rules"][1]["resources"][0],
            "subjectaccessreviews"
        );
    }

    #[test]
    fn configmap_data_lists_headers_as_json_arrays() {
        let dir = tempfile_dir();
        let ca = dir.join("ca.crt");
        std::fs::write(&ca, "PEM").unwrap();
        let opts = shared::server::options::AuthenticationOptions {
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
