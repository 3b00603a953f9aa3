//! StorageObjectInUseProtection and PersistentVolumeClaimResize
//! (upstream's `plugin/pkg/admission/storage`).
//!
//! - StorageObjectInUseProtection: a new PersistentVolume, claim or
//!   VolumeAttributesClass gets its protection finalizer
//!   (`kubernetes.io/pv-protection`, `kubernetes.io/pvc-protection`,
//!   `kubernetes.io/vac-protection`), so kube-controller-manager can keep it
//!   while it is in use.
//! - PersistentVolumeClaimResize: a claim's storage request may only grow
//!   when the claim is bound and its StorageClass allows volume expansion.

use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::quantity::Quantity;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::forbidden;

/// StorageObjectInUseProtection.
pub struct StorageObjectInUseProtection;

/// The protection finalizer of the kind being created, if it has one.
fn protection_finalizer(attrs: &Attributes<'_>) -> Option<&'static str> {
    if !attrs.subresource.is_empty() || attrs.operation != Operation::Create {
        return None;
    }
    match (
        attrs.resource.group.as_str(),
        attrs.resource.resource.as_str(),
    ) {
        ("", "persistentvolumes") => Some("kubernetes.io/pv-protection"),
        ("", "persistentvolumeclaims") => Some("kubernetes.io/pvc-protection"),
        ("storage.k8s.io", "volumeattributesclasses") => Some("kubernetes.io/vac-protection"),
        _ => None,
    }
}

/// Adds `finalizer` unless present; returns whether it did.
fn add_finalizer(obj: &mut Value, finalizer: &str) -> bool {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return false;
    };
    let list = meta.entry("finalizers").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return false;
    };
    if list.iter().any(|f| f.as_str() == Some(finalizer)) {
        return false;
    }
    list.push(json!(finalizer));
    true
}

impl AdmissionPlugin for StorageObjectInUseProtection {
    fn name(&self) -> &'static str {
        "StorageObjectInUseProtection"
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        let changed = match (protection_finalizer(attrs), obj) {
            (Some(f), Some(obj)) => add_finalizer(obj, f),
            _ => false,
        };
        Box::pin(std::future::ready(Ok(changed)))
    }
}

/// PersistentVolumeClaimResize.
pub struct PersistentVolumeClaimResize {
    pub objects: Arc<ObjectReader>,
}

fn storage_request(pvc: &Value) -> Option<Quantity> {
    pvc.pointer("/spec/resources/requests/storage")
        .and_then(Value::as_str)
        .and_then(|s| Quantity::parse(s).ok())
}

/// The claim's class: `spec.storageClassName`, else the beta annotation.
fn claim_class(pvc: &Value) -> &str {
    pvc.pointer("/spec/storageClassName")
        .and_then(Value::as_str)
        .or_else(|| {
            pvc.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
                .and_then(Value::as_str)
        })
        .unwrap_or("")
}

impl PersistentVolumeClaimResize {
    async fn check(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        if !attrs.is("", "persistentvolumeclaims")
            || !attrs.subresource.is_empty()
            || attrs.operation != Operation::Update
        {
            return Ok(());
        }
        let (Some(new), Some(old)) = (attrs.object, attrs.old_object) else {
            return Ok(());
        };
        let grows = match (storage_request(new), storage_request(old)) {
            (Some(n), Some(o)) => n.cmp(&o) == std::cmp::Ordering::Greater,
            (Some(_), None) => true,
            _ => false,
        };
        if !grows {
            return Ok(());
        }
        if old.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
            return Err(forbidden(
                attrs,
                "Only bound persistent volume claims can be expanded",
            ));
        }
        let (class, old_class) = (claim_class(new), claim_class(old));
        let allowed = if class.is_empty() || class != old_class {
            false
        } else {
            self.objects
                .get("storage.k8s.io", "storageclasses", "", class)
                .await?
                .and_then(|sc| sc.get("allowVolumeExpansion").and_then(Value::as_bool))
                .unwrap_or(false)
        };
        if !allowed {
            return Err(forbidden(
                attrs,
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            ));
        }
        Ok(())
    }
}

impl AdmissionPlugin for PersistentVolumeClaimResize {
    fn name(&self) -> &'static str {
        "PersistentVolumeClaimResize"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(self.check(attrs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_finalizer_once() {
        let mut pvc = json!({"metadata": {"name": "c"}});
        assert!(add_finalizer(&mut pvc, "kubernetes.io/pvc-protection"));
        assert!(!add_finalizer(&mut pvc, "kubernetes.io/pvc-protection"));
        assert_eq!(
            pvc["metadata"]["finalizers"],
            json!(["kubernetes.io/pvc-protection"])
        );
    }

    #[test]
    fn reads_storage_requests_and_classes() {
        let pvc = json!({"spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "2Gi"}}}});
        let smaller = json!({"spec": {"resources": {"requests": {"storage": "1Gi"}}},
            "metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}}});
        let (a, b) = (
            storage_request(&pvc).unwrap(),
            storage_request(&smaller).unwrap(),
        );
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Greater);
        assert_eq!(claim_class(&pvc), "fast");
        assert_eq!(claim_class(&smaller), "slow");
    }
}
