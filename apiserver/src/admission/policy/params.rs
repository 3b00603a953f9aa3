//! Where a policy's `paramKind` objects live: the kinds the tier serves
//! (learnt once its API groups are built) and every custom resource kind,
//! from the CustomResourceDefinitions in the shared etcd (stored under
//! `<group>/<plural>`). Params are read from etcd when a write is admitted.

use std::sync::OnceLock;

use serde_json::Value;
use tokio::sync::watch;

use crate::registry::informer::Mirror;
use crate::storage::EtcdStorage;

/// Where the objects of one kind are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLocation {
    /// The key path under the storage prefix (`configmaps`, `example.com/limits`).
    pub storage_path: String,
    pub namespaced: bool,
}

/// Finds the storage of param kinds.
pub struct ParamKinds {
    built_in: OnceLock<Vec<(String, String, ParamLocation)>>,
    crds: watch::Receiver<Mirror>,
}

impl ParamKinds {
    /// Mirrors the CRDs under `prefix`.
    pub fn new(storage: EtcdStorage, prefix: &str) -> Self {
        ParamKinds {
            built_in: OnceLock::new(),
            crds: crate::registry::etcd_mirror::spawn(
                storage,
                format!(
                    "{}/apiextensions.k8s.io/customresourcedefinitions",
                    prefix.trim_end_matches('/')
                ),
            ),
        }
    }

    /// Learns the tier's own kinds (`apiVersion`, `kind`, location). Later
    /// calls are ignored.
    pub fn set_built_in(&self, kinds: Vec<(String, String, ParamLocation)>) {
        let _ = self.built_in.set(kinds);
    }

    /// The storage of `api_version`/`kind`, if known.
    pub fn locate(&self, api_version: &str, kind: &str) -> Option<ParamLocation> {
        if let Some(found) = self
            .built_in
            .get()
            .into_iter()
            .flatten()
            .find(|(v, k, _)| v == api_version && k == kind)
        {
            return Some(found.2.clone());
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let crds = self.crds.borrow();
        crds.objects.values().find_map(|crd| {
            let spec = crd.get("spec")?;
            let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
            if s(spec, "group")? != group || s(spec.get("names")?, "kind")? != kind {
                return None;
            }
            let served = spec
                .get("versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|v| {
                    s(v, "name").as_deref() == Some(version)
                        && v.get("served").and_then(Value::as_bool) == Some(true)
                });
            if !served {
                return None;
            }
            let plural = s(spec.get("names")?, "plural")?;
            Some(ParamLocation {
                storage_path: format!("{group}/{plural}"),
                namespaced: s(spec, "scope").as_deref() == Some("Namespaced"),
            })
        })
    }
}
