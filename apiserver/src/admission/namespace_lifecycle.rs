//! NamespaceLifecycle: no new objects in a namespace that does not exist or is
//! being deleted; the system namespaces cannot be deleted. It runs in every
//! tier that stores namespaced objects (built-ins and custom resources
//! alike), reading the namespace from etcd, which all tiers share.

use futures_util::future::BoxFuture;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

use super::{AdmissionPlugin, Attributes, Operation};
use crate::apimachinery::errors::{ApiError, GroupResource, StatusCause};
use crate::apimachinery::meta;
use crate::registry::store::Store;
use crate::storage::EtcdStorage;

/// Namespaces that can never be deleted.
pub const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// The plugin. As upstream's, it reads namespaces from the namespaces watch
/// cache (where the tier serving namespaces has one) and falls back to a
/// live etcd read when the cache does not know the namespace (one created an
/// instant ago), so a create in an existing namespace costs no extra etcd
/// round trip there.
pub struct NamespaceLifecycle {
    storage: EtcdStorage,
    prefix: String,
    /// The namespaces store, set once the API groups are built (kube-core).
    pub namespaces: OnceLock<Arc<Store>>,
    /// The tier's namespace mirror, for a tier that does not serve them
    /// (extensions), set with [`NamespaceLifecycle::read_namespaces_from`].
    mirror: OnceLock<Arc<super::namespaces::Namespaces>>,
}

impl NamespaceLifecycle {
    /// The plugin reading `<prefix>/namespaces/<name>` from `storage`.
    pub fn new(storage: EtcdStorage, prefix: &str) -> Self {
        NamespaceLifecycle {
            storage,
            prefix: prefix.trim_end_matches('/').to_string(),
            namespaces: OnceLock::new(),
            mirror: OnceLock::new(),
        }
    }

    /// Reads namespaces from the tier's mirror instead of etcd on every
    /// write (a tier without a namespaces store); a namespace the mirror
    /// does not hold yet is read from etcd.
    pub fn read_namespaces_from(&self, namespaces: Arc<super::namespaces::Namespaces>) {
        let _ = self.mirror.set(namespaces);
    }

    /// Whether the namespace is being deleted, as the watch cache holds it;
    /// `None` when the cache cannot say (not ready, or the namespace is not
    /// in it). Only `metadata.deletionTimestamp` is read from the cached
    /// bytes: this runs on every namespaced write.
    async fn cached_namespace(&self, name: &str) -> Option<Terminating> {
        if let Some(mirror) = self.mirror.get() {
            return mirror
                .cached(name)
                .map(|ns| Terminating(meta::is_deleting(&ns)));
        }
        let store = self.namespaces.get()?;
        let cached = store.get_from_cache("", name, "0").await.ok()??;
        let ns: NamespaceDeletion = serde_json::from_slice(&cached.bytes).ok()?;
        Some(Terminating(ns.metadata.deletion_timestamp.is_some()))
    }

    /// Whether the namespace is being deleted (`None`: it does not exist),
    /// from the cache or else from etcd.
    async fn namespace(&self, name: &str) -> Result<Option<Terminating>, ApiError> {
        if let Some(ns) = self.cached_namespace(name).await {
            return Ok(Some(ns));
        }
        let key = format!("{}/namespaces/{}", self.prefix, name);
        let kv = self
            .storage
            .get(&key)
            .await
            .map_err(crate::registry::store::storage_error)?;
        kv.map(|kv| {
            crate::protobuf::decode_from_storage(&kv.value)
                .map(|ns| Terminating(meta::is_deleting(&ns)))
                .map_err(ApiError::internal)
        })
        .transpose()
    }

    async fn admit(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        let ns_gr = GroupResource {
            group: "",
            resource: "namespaces",
        };
        if attrs.is("", "namespaces") {
            if attrs.operation == Operation::Delete && IMMORTAL_NAMESPACES.contains(&attrs.name) {
                return Err(ApiError::forbidden(
                    ns_gr,
                    attrs.name,
                    "this namespace may not be deleted",
                ));
            }
            return Ok(());
        }
        if !attrs.resource.namespaced
            || attrs.namespace.is_empty()
            || attrs.operation == Operation::Delete
            || is_access_review(attrs)
        {
            return Ok(());
        }
        let Some(ns) = self.namespace(attrs.namespace).await? else {
            return Err(ApiError::not_found(ns_gr, attrs.namespace));
        };
        if attrs.operation == Operation::Create && ns.0 {
            let mut err = ApiError::forbidden(
                attrs.resource.group_resource(),
                attrs.name,
                &format!(
                    "unable to create new content in namespace {} because it is being terminated",
                    attrs.namespace
                ),
            );
            if let Some(d) = err.details.as_mut() {
                d.causes.push(StatusCause {
                    reason: "NamespaceTerminating".into(),
                    message: format!("namespace {} is being terminated", attrs.namespace),
                    field: "metadata.namespace".into(),
                });
            }
            return Err(err);
        }
        Ok(())
    }
}

/// Whether a namespace that exists is being deleted.
struct Terminating(bool);

/// The one field of a namespace the plugin reads; everything else in the
/// cached JSON is skipped without being built.
#[derive(serde::Deserialize)]
struct NamespaceDeletion {
    #[serde(default)]
    metadata: DeletionMeta,
}

#[derive(serde::Deserialize, Default)]
struct DeletionMeta {
    /// Present and not null while the namespace is terminating.
    #[serde(rename = "deletionTimestamp", default)]
    deletion_timestamp: Option<serde::de::IgnoredAny>,
}

/// LocalSubjectAccessReviews are answered even in a namespace that is gone.
fn is_access_review(attrs: &Attributes<'_>) -> bool {
    attrs.is("authorization.k8s.io", "localsubjectaccessreviews")
}

impl AdmissionPlugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    fn mutates(&self) -> bool {
        true
    }

    /// Runs first, in the mutating phase as upstream's, so that no webhook
    /// is called for a write that cannot happen.
    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        _obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(async move { self.admit(attrs).await.map(|()| false) })
    }
}
