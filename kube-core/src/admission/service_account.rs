//! ServiceAccount: a new pod runs as a service account that exists
//! (`default` unless it names one), gets that account's image pull secrets,
//! and, unless it or the account opts out, the projected token volume
//! `kube-api-access-<random>` mounted in every container at
//! `/var/run/secrets/kubernetes.io/serviceaccount` (upstream's
//! `plugin/pkg/admission/serviceaccount`).

use std::sync::Arc;
use std::time::Duration;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::forbidden;

/// The account a pod that names none runs as.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// Where the token volume is mounted.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The prefix of the token volume's name.
const VOLUME_PREFIX: &str = "kube-api-access-";
/// The token lifetime the volume asks for (upstream's warn-only bound
/// token expiry, one hour and seven seconds).
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// The plugin.
pub struct ServiceAccount {
    pub objects: Arc<ObjectReader>,
}

impl ServiceAccount {
    /// The account, looked up in the cache, then in etcd; the `default`
    /// account is waited for a little, as the controller that creates it
    /// may be an instant behind a new namespace.
    async fn account(&self, namespace: &str, name: &str) -> Result<Option<Value>, ApiError> {
        let attempts = if name == DEFAULT_SERVICE_ACCOUNT {
            10
        } else {
            1
        };
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            if let Some(sa) = self
                .objects
                .get("", "serviceaccounts", namespace, name)
                .await?
            {
                return Ok(Some(sa));
            }
        }
        Ok(None)
    }

    async fn admit(&self, attrs: &Attributes<'_>, pod: &mut Value) -> Result<bool, ApiError> {
        if is_mirror_pod(pod) {
            return check_mirror_pod(attrs, pod).map(|()| false);
        }
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(false);
        };
        let name = spec
            .get("serviceAccountName")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or(DEFAULT_SERVICE_ACCOUNT)
            .to_string();
        spec.insert("serviceAccountName".into(), json!(name));
        let Some(sa) = self.account(attrs.namespace, &name).await? else {
            return Err(forbidden(
                attrs,
                &format!(
                    "error looking up service account {}/{name}: serviceaccount \"{name}\" not found",
                    attrs.namespace
                ),
            ));
        };
        if should_automount(&sa, spec) {
            mount_token(spec);
        }
        let has_pull_secrets = spec
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if !has_pull_secrets {
            if let Some(secrets) = sa.get("imagePullSecrets").and_then(Value::as_array) {
                let refs: Vec<Value> = secrets
                    .iter()
                    .filter_map(|s| s.get("name").and_then(Value::as_str))
                    .map(|n| json!({ "name": n }))
                    .collect();
                if !refs.is_empty() {
                    spec.insert("imagePullSecrets".into(), Value::Array(refs));
                }
            }
        }
        if enforces_mountable_secrets(&sa) {
            limit_secret_references(&sa, spec).map_err(|m| forbidden(attrs, &m))?;
        }
        Ok(true)
    }
}

fn is_mirror_pod(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION))
}

/// A kubelet's static pod may use no account and no secrets.
fn check_mirror_pod(attrs: &Attributes<'_>, pod: &Value) -> Result<(), ApiError> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    if spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty())
    {
        return Err(forbidden(
            attrs,
            "a mirror pod may not reference service accounts",
        ));
    }
    let volumes = spec.get("volumes").and_then(Value::as_array);
    let secret_volume = volumes
        .into_iter()
        .flatten()
        .any(|v| v.get("secret").is_some());
    let env_secret = containers(spec).any(|c| !secret_refs(c).is_empty());
    if secret_volume || env_secret {
        return Err(forbidden(attrs, "a mirror pod may not reference secrets"));
    }
    let token_projection = volumes.into_iter().flatten().any(|v| {
        v.pointer("/projected/sources")
            .and_then(Value::as_array)
            .is_some_and(|s| s.iter().any(|p| p.get("serviceAccountToken").is_some()))
    });
    if token_projection {
        return Err(forbidden(
            attrs,
            "a mirror pod may not use ServiceAccountToken volume projections",
        ));
    }
    Ok(())
}

/// The pod's choice wins, then the account's; mounting is the default.
fn should_automount(sa: &Value, spec: &serde_json::Map<String, Value>) -> bool {
    spec.get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| {
            sa.get("automountServiceAccountToken")
                .and_then(Value::as_bool)
        })
        .unwrap_or(true)
}

fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers"]
        .into_iter()
        .filter_map(move |k| spec.get(k).and_then(Value::as_array))
        .flatten()
}

/// The token volume (reusing a `kube-api-access-*` volume the pod already
/// has) and its mount in every container that has nothing mounted there.
fn mount_token(spec: &mut serde_json::Map<String, Value>) {
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .and_then(|vs| {
            vs.iter()
                .filter_map(|v| v.get("name").and_then(Value::as_str))
                .find(|n| n.starts_with(VOLUME_PREFIX))
                .map(str::to_string)
        });
    let volume_name = existing.clone().unwrap_or_else(|| {
        format!(
            "{VOLUME_PREFIX}{}",
            apiserver::registry::store::random_suffix()
        )
    });
    let mut needs_volume = false;
    for key in ["initContainers", "containers"] {
        let Some(list) = spec.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in list.iter_mut().filter_map(Value::as_object_mut) {
            let mounts = c.entry("volumeMounts").or_insert_with(|| json!([]));
            let Some(mounts) = mounts.as_array_mut() else {
                continue;
            };
            let mounted = mounts
                .iter()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT_PATH));
            if !mounted {
                mounts.push(json!({
                    "name": volume_name,
                    "readOnly": true,
                    "mountPath": TOKEN_MOUNT_PATH,
                }));
                needs_volume = true;
            }
        }
    }
    if existing.is_none() && needs_volume {
        let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
        if let Some(volumes) = volumes.as_array_mut() {
            volumes.push(json!({"name": volume_name, "projected": token_volume_source()}));
        }
    }
}

/// The projected source: a bound token, the cluster CA and the namespace.
pub fn token_volume_source() -> Value {
    json!({
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": TOKEN_EXPIRATION_SECONDS}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]
    })
}

/// The annotation that makes an account restrict the secrets its pods use.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

fn enforces_mountable_secrets(sa: &Value) -> bool {
    sa.pointer("/metadata/annotations")
        .and_then(|a| a.get(ENFORCE_MOUNTABLE_SECRETS))
        .and_then(Value::as_str)
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Secret names a container references in `env` and `envFrom`, each with
/// the message fragment upstream names it by.
fn secret_refs(c: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in c.get("env").and_then(Value::as_array).into_iter().flatten() {
        if let Some(n) = e
            .pointer("/valueFrom/secretKeyRef/name")
            .and_then(Value::as_str)
        {
            let env = e.get("name").and_then(Value::as_str).unwrap_or("");
            out.push((n.to_string(), format!("envVar {env}")));
        }
    }
    for e in c
        .get("envFrom")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(n) = e.pointer("/secretRef/name").and_then(Value::as_str) {
            out.push((n.to_string(), "envFrom".to_string()));
        }
    }
    out
}

/// With `kubernetes.io/enforce-mountable-secrets`, a pod may only use the
/// secrets its account lists.
fn limit_secret_references(
    sa: &Value,
    spec: &serde_json::Map<String, Value>,
) -> Result<(), String> {
    let sa_name = sa
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let names = |key: &str| -> Vec<String> {
        sa.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect()
    };
    let mountable = names("secrets");
    for v in spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(secret) = v.pointer("/secret/secretName").and_then(Value::as_str) {
            if !mountable.iter().any(|m| m == secret) {
                return Err(format!(
                    "volume with secret.secretName=\"{secret}\" is not allowed because service account {sa_name} does not reference that secret"
                ));
            }
        }
    }
    for (key, label) in [
        ("initContainers", "init container"),
        ("containers", "container"),
    ] {
        for c in spec
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let cname = c.get("name").and_then(Value::as_str).unwrap_or("");
            for (secret, via) in secret_refs(c) {
                if !mountable.contains(&secret) {
                    return Err(format!(
                        "{label} {cname} with {via} referencing secret.secretName=\"{secret}\" is not allowed because service account {sa_name} does not reference that secret"
                    ));
                }
            }
        }
    }
    let pull = names("imagePullSecrets");
    for (i, r) in spec
        .get("imagePullSecrets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let n = r.get("name").and_then(Value::as_str).unwrap_or("");
        if !pull.iter().any(|p| p == n) {
            return Err(format!(
                "imagePullSecrets[{i}].name=\"{n}\" is not allowed because service account {sa_name} does not reference that imagePullSecret"
            ));
        }
    }
    Ok(())
}

impl AdmissionPlugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(async move {
            match obj {
                Some(pod)
                    if attrs.operation == Operation::Create
                        && attrs.is("", "pods")
                        && attrs.subresource.is_empty() =>
                {
                    self.admit(attrs, pod).await
                }
                _ => Ok(false),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_mounted_once_in_every_container() {
        let mut pod = json!({"containers": [{"name": "a"}, {"name": "b", "volumeMounts": [
            {"name": "x", "mountPath": TOKEN_MOUNT_PATH}]}], "initContainers": [{"name": "i"}]});
        let spec = pod.as_object_mut().unwrap();
        mount_token(spec);
        let vols = spec["volumes"].as_array().unwrap();
        assert_eq!(vols.len(), 1);
        let vname = vols[0]["name"].as_str().unwrap().to_string();
        assert!(
            vname.starts_with("kube-api-access-") && vname.len() == 21,
            "{vname}"
        );
        assert_eq!(
            spec["containers"][0]["volumeMounts"][0]["name"],
            json!(vname)
        );
        assert_eq!(
            spec["containers"][1]["volumeMounts"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            spec["initContainers"][0]["volumeMounts"][0]["readOnly"],
            json!(true)
        );
        // A second pass (reinvocation) adds nothing.
        mount_token(spec);
        assert_eq!(spec["volumes"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn automount_opt_outs() {
        let sa_off = json!({"automountServiceAccountToken": false});
        let spec_on = json!({"automountServiceAccountToken": true});
        assert!(!should_automount(&sa_off, json!({}).as_object().unwrap()));
        assert!(should_automount(&sa_off, spec_on.as_object().unwrap()));
        assert!(should_automount(&json!({}), json!({}).as_object().unwrap()));
    }

    #[test]
    fn mountable_secrets_are_enforced() {
        let sa = json!({"metadata": {"name": "sa"}, "secrets": [{"name": "ok"}]});
        let spec = json!({"volumes": [{"name": "v", "secret": {"secretName": "nope"}}]});
        let err = limit_secret_references(&sa, spec.as_object().unwrap()).unwrap_err();
        assert!(
            err.contains("secret.secretName=\"nope\" is not allowed"),
            "{err}"
        );
        let spec = json!({"containers": [{"name": "c", "env": [{"name": "E",
            "valueFrom": {"secretKeyRef": {"name": "ok", "key": "k"}}}]}]});
        assert!(limit_secret_references(&sa, spec.as_object().unwrap()).is_ok());
    }
}
