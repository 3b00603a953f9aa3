//! The namespaces admission consults (namespace selectors of webhooks and
//! policies, `namespaceObject`, NamespaceLifecycle in a tier that does not
//! serve namespaces): a mirror of them from the shared etcd, one per tier,
//! as upstream's plugins share one namespace informer. A namespace the
//! mirror does not hold yet (created an instant ago) is read from etcd.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;

use crate::apimachinery::errors::ApiError;
use crate::registry::informer::Mirror;
use crate::storage::EtcdStorage;

/// The tier's view of the namespaces.
pub struct Namespaces {
    storage: EtcdStorage,
    prefix: String,
    mirror: watch::Receiver<Mirror>,
}

impl Namespaces {
    /// Starts mirroring `<prefix>/namespaces`.
    pub fn start(storage: EtcdStorage, prefix: &str) -> Arc<Namespaces> {
        let prefix = prefix.trim_end_matches('/').to_string();
        Arc::new(Namespaces {
            mirror: crate::registry::etcd_mirror::spawn(
                storage.clone(),
                format!("{prefix}/namespaces"),
            ),
            storage,
            prefix,
        })
    }

    /// The namespace as the mirror holds it, without reading etcd.
    pub fn cached(&self, name: &str) -> Option<Value> {
        self.mirror.borrow().objects.get(name).cloned()
    }

    /// The namespace; `None` when it does not exist.
    pub async fn get(&self, name: &str) -> Result<Option<Value>, ApiError> {
        if let Some(ns) = self.cached(name) {
            return Ok(Some(ns));
        }
        let kv = self
            .storage
            .get(&format!("{}/namespaces/{name}", self.prefix))
            .await
            .map_err(crate::registry::store::storage_error)?;
        kv.map(|kv| crate::protobuf::decode_from_storage(&kv.value).map_err(ApiError::internal))
            .transpose()
    }
}
