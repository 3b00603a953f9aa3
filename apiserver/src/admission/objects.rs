//! The objects admission plugins consult (LimitRanges, ResourceQuotas,
//! ServiceAccounts, classes, namespaces), read through the stores of the
//! tier: from their watch caches when those are ready, as upstream's
//! plugins read their informers, and from etcd otherwise.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::apimachinery::errors::ApiError;
use crate::registry::catalog::Catalog;
use crate::registry::store::{ListOptions, Store};

/// Stores by `(group, resource)`, set once when the tier's API groups are
/// built (the stores themselves take the admission chain, so the chain is
/// made first and learns the stores afterwards).
#[derive(Default)]
pub struct ObjectReader {
    stores: OnceLock<HashMap<(String, String), Arc<Store>>>,
}

impl ObjectReader {
    /// Learns the stores of `wanted` (`(group, version, resource)`) from the
    /// tier's groups. Later calls are ignored.
    pub fn set_stores(&self, groups: &Catalog, wanted: &[(&str, &str, &str)]) {
        let stores = wanted
            .iter()
            .filter_map(|(g, v, r)| {
                let store = groups.lookup(g, v, r)?;
                Some(((g.to_string(), r.to_string()), store.clone()))
            })
            .collect();
        let _ = self.stores.set(stores);
    }

    fn store(&self, group: &str, resource: &str) -> Result<&Arc<Store>, ApiError> {
        self.stores
            .get()
            .and_then(|s| s.get(&(group.to_string(), resource.to_string())))
            .ok_or_else(|| {
                ApiError::internal(format!(
                    "admission: no store for {resource}.{group} (not yet ready)"
                ))
            })
    }

    /// One object, `None` when it does not exist.
    pub async fn get(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let store = self.store(group, resource)?;
        match store.get_from_cache(namespace, name, "0").await {
            Ok(Some(cached)) => {
                return serde_json::from_slice(&cached.bytes)
                    .map(Some)
                    .map_err(ApiError::internal)
            }
            Ok(None) => {}
            Err(e) if e.code == 404 => {
                // The cache may lag a create an instant ago: ask etcd.
            }
            Err(e) => return Err(e),
        }
        match store.get(namespace, name).await {
            Ok(obj) => Ok(Some(obj)),
            Err(e) if e.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every object of a namespace (all of a cluster-scoped resource when
    /// `namespace` is empty), as a consistent read: from the watch cache
    /// once it is proven current (one etcd count over the prefix), so a
    /// LimitRange, quota or default class created an instant before applies
    /// (upstream's informers may still miss it).
    pub async fn list(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let store = self.store(group, resource)?;
        let opts = ListOptions::default();
        if let Some(page) = store.list_from_cache(namespace, &opts).await? {
            return page
                .objects
                .iter()
                .map(|o| serde_json::from_slice(&o.bytes).map_err(ApiError::internal))
                .collect();
        }
        Ok(store.list(namespace, &ListOptions::default()).await?.items)
    }

    /// The store of `group`/`resource`, for plugins that write (quota).
    pub fn writer(&self, group: &str, resource: &str) -> Result<&Arc<Store>, ApiError> {
        self.store(group, resource)
    }
}
