//! kube-core's admission plugins: upstream's default-on plugins for the
//! built-in kinds, one per file, each under upstream's name. The chain they
//! form (with NamespaceLifecycle from the library) is chosen by
//! `--enable-admission-plugins` / `--disable-admission-plugins`; see
//! [`apiserver::admission::plugins`].

pub mod certificates;
pub mod default_class;
pub mod default_toleration_seconds;
pub mod limit_ranger;
pub mod node_restriction;
pub mod node_taint;
pub mod pod_security;
pub mod priority;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod storage_protection;

use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes};
use apiserver::apimachinery::errors::ApiError;

/// The objects kube-core's plugins read, as `(group, version, resource)`.
pub const READS: &[(&str, &str, &str)] = &[
    ("", "v1", "serviceaccounts"),
    ("", "v1", "limitranges"),
    ("", "v1", "resourcequotas"),
    ("scheduling.k8s.io", "v1", "priorityclasses"),
    ("node.k8s.io", "v1", "runtimeclasses"),
    ("storage.k8s.io", "v1", "storageclasses"),
    ("networking.k8s.io", "v1", "ingressclasses"),
    ("", "v1", "namespaces"),
    ("", "v1", "pods"),
    ("", "v1", "nodes"),
    ("", "v1", "persistentvolumeclaims"),
    ("", "v1", "persistentvolumes"),
    ("storage.k8s.io", "v1", "csidrivers"),
];

/// Upstream's `admission.NewForbidden`: 403 on the object being admitted.
pub fn forbidden(attrs: &Attributes<'_>, why: &str) -> ApiError {
    ApiError::forbidden(attrs.resource.group_resource(), attrs.name, why)
}

/// kube-core's plugins and the reader they share.
pub struct BuiltInPlugins {
    objects: Arc<ObjectReader>,
}

impl BuiltInPlugins {
    /// Plugins reading through one [`ObjectReader`], whose stores are set
    /// with [`BuiltInPlugins::objects`] once the API groups exist.
    pub fn new() -> Self {
        BuiltInPlugins {
            objects: Arc::new(ObjectReader::default()),
        }
    }

    /// The reader the plugins consult.
    pub fn objects(&self) -> &Arc<ObjectReader> {
        &self.objects
    }

    /// Every plugin kube-core implements (order is decided by the chain).
    /// Plugin configurations come from `--admission-control-config-file`
    /// (PodSecurity's defaults and exemptions); a bad one is an error.
    pub fn all(
        &self,
        namespace_lifecycle: Arc<apiserver::admission::namespace_lifecycle::NamespaceLifecycle>,
        authorizer: Arc<dyn apiserver::authorization::Authorizer>,
        options: &apiserver::admission::plugins::AdmissionOptions,
    ) -> Result<Vec<Arc<dyn AdmissionPlugin>>, String> {
        let pod_security = match options.plugin_config("PodSecurity")? {
            Some(c) => pod_security::config::Configuration::from_json(&c)
                .map_err(|e| format!("PodSecurity configuration: {e}"))?,
            None => Default::default(),
        };
        let objects = &self.objects;
        Ok(vec![
            namespace_lifecycle,
            Arc::new(limit_ranger::LimitRanger {
                objects: objects.clone(),
            }),
            Arc::new(service_account::ServiceAccount {
                objects: objects.clone(),
            }),
            Arc::new(pod_security::PodSecurity::with_config(
                objects.clone(),
                pod_security,
            )),
            Arc::new(priority::Priority {
                objects: objects.clone(),
            }),
            Arc::new(default_toleration_seconds::DefaultTolerationSeconds),
            Arc::new(runtime_class::RuntimeClass {
                objects: objects.clone(),
            }),
            Arc::new(default_class::DefaultStorageClass {
                objects: objects.clone(),
            }),
            Arc::new(default_class::DefaultIngressClass {
                objects: objects.clone(),
            }),
            Arc::new(resource_quota::ResourceQuota {
                objects: objects.clone(),
            }),
            Arc::new(storage_protection::StorageObjectInUseProtection),
            Arc::new(storage_protection::PersistentVolumeClaimResize {
                objects: objects.clone(),
            }),
            Arc::new(node_taint::TaintNodesByCondition),
            Arc::new(node_restriction::NodeRestriction::new(
                objects.clone(),
                authorizer.clone(),
            )),
            Arc::new(certificates::CertificateApproval {
                authorizer: authorizer.clone(),
            }),
            Arc::new(certificates::CertificateSigning {
                authorizer: authorizer.clone(),
            }),
            Arc::new(certificates::ClusterTrustBundleAttest { authorizer }),
            Arc::new(certificates::CertificateSubjectRestriction),
        ])
    }
}
