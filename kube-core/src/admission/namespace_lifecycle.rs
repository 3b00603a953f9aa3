//! NamespaceLifecycle: no new objects in a namespace that does not exist or is
//! being deleted; the system namespaces cannot be deleted.

use futures_util::future::BoxFuture;
use serde_json::Value;
use shared::admission::{AdmissionPlugin, Attributes, Operation};
use shared::endpoints::status::{ApiError, GroupResource};
use shared::registry::meta;
use shared::registry::store::Store;
use shared::storage::EtcdStorage;
use std::sync::{Arc, OnceLock};

/// Namespaces that can never be deleted.
pub const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// The plugin. As upstream's, it reads namespaces from the namespaces
/// watch cache and falls back to a live etcd read only when the cache does
/// not (yet) know the namespace (one created an instant ago), so a create in
/// an existing namespace costs no extra etcd round trip.
pub struct NamespaceLifecycle {
    pub storage: EtcdStorage,
    pub prefix: String,
    /// The namespaces store, set once the API groups are built.
    pub namespaces: OnceLock<Arc<Store>>,
}

impl NamespaceLifecycle {
    /// The namespace as the watch cache holds it; `None` when the cache
    /// cannot say (not ready, or the namespace is not in it).
    async fn cached_namespace(&self, name: &str) -> Option<Value> {
        let store = self.namespaces.get()?;
        let cached = store.get_from_cache("", name, "0").await.ok()??;
        serde_json::from_slice(&cached.bytes).ok()
    }

    /// The namespace, from the cache or else from etcd.
    async fn namespace(&self, name: &str) -> Result<Option<Value>, ApiError> {
        if let Some(ns) = self.cached_namespace(name).await {
            return Ok(Some(ns));
        }
        let key = format!("{}/namespaces/{}", self.prefix, name);
        let kv = self
            .storage
            .get(&key)
            .await
            .map_err(shared::registry::store::storage_error)?;
        kv.map(|kv| shared::protobuf::decode_from_storage(&kv.value).map_err(ApiError::internal))
            .transpose()
    }
}

impl AdmissionPlugin for NamespaceLifecycle {
    fn admit<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let ns_gr = GroupResource {
                group: "",
                resource: "namespaces",
            };
            if attrs.resource.group.is_empty() && attrs.resource.resource == "namespaces" {
                if attrs.operation == Operation::Delete && IMMORTAL_NAMESPACES.contains(&attrs.name)
                {
                    return Err(ApiError::forbidden(
                        ns_gr,
                        attrs.name,
                        &format!("this namespace may not be deleted"),
                    ));
                }
                return Ok(());
            }
            if attrs.operation != Operation::Create
                || !attrs.resource.namespaced
                || attrs.namespace.is_empty()
            {
                return Ok(());
            }
            let Some(ns) = self.namespace(attrs.namespace).await? else {
                return Err(ApiError::not_found(ns_gr, attrs.namespace));
            };
            if meta::is_deleting(&ns) {
                let gr = attrs.resource.group_resource();
                return Err(ApiError::forbidden(
                    gr,
                    attrs.name,
                    &format!(
                        "unable to create new content in namespace {} because it is being terminated",
                        attrs.namespace
                    ),
                ));
            }
            Ok(())
        })
    }
}
