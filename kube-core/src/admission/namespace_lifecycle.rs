//! NamespaceLifecycle: no new objects in a namespace that does not exist or is
//! being deleted; the system namespaces cannot be deleted.

use futures_util::future::BoxFuture;
use serde_json::Value;
use shared::admission::{AdmissionPlugin, Attributes, Operation};
use shared::endpoints::status::{ApiError, GroupResource};
use shared::registry::meta;
use shared::storage::EtcdStorage;

/// Namespaces that can never be deleted.
pub const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// The plugin; reads namespaces straight from storage.
pub struct NamespaceLifecycle {
    pub storage: EtcdStorage,
    pub prefix: String,
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
            let key = format!("{}/namespaces/{}", self.prefix, attrs.namespace);
            let kv = self
                .storage
                .get(&key)
                .await
                .map_err(shared::registry::store::storage_error)?;
            let Some(kv) = kv else {
                return Err(ApiError::not_found(ns_gr, attrs.namespace));
            };
            let ns: Value =
                shared::protobuf::decode_from_storage(&kv.value).map_err(ApiError::internal)?;
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
