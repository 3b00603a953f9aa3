//! `storage.k8s.io/v1`: CSIDrivers, CSINodes, CSIStorageCapacities,
//! StorageClasses, VolumeAttachments, VolumeAttributesClasses.

use apiserver::apimachinery::validation::FieldError;
use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::Strategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::storage::v1;
use serde_json::{json, Value};

use super::columns::{array_at, str_or};
use super::kind;

/// storage.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        kind::<v1::CSIDriver>()
            .returns_deleted_object()
            .columns(vec![
                Column::func("AttachRequired", "boolean", |o| {
                    bool_or(o, "spec.attachRequired", true)
                }),
                Column::func("PodInfoOnMount", "boolean", |o| {
                    bool_or(o, "spec.podInfoOnMount", false)
                }),
                Column::func("StorageCapacity", "boolean", |o| {
                    bool_or(o, "spec.storageCapacity", false)
                }),
                Column::func("TokenRequests", "string", |o| {
                    let a: Vec<String> = array_at(o, "spec.tokenRequests")
                        .iter()
                        .map(|t| str_or(t, "audience", ""))
                        .collect();
                    json!(if a.is_empty() {
                        "<unset>".to_string()
                    } else {
                        a.join(",")
                    })
                }),
                Column::func("RequiresRepublish", "boolean", |o| {
                    bool_or(o, "spec.requiresRepublish", false)
                }),
                Column::func("Modes", "string", |o| {
                    let m: Vec<&str> = array_at(o, "spec.volumeLifecycleModes")
                        .iter()
                        .filter_map(Value::as_str)
                        .collect();
                    json!(if m.is_empty() {
                        "<none>".to_string()
                    } else {
                        m.join(",")
                    })
                }),
                Column::age(),
            ])
            .strategy(CsiDriverStrategy),
        kind::<v1::CSINode>().returns_deleted_object().columns(vec![
            Column::func("Drivers", "integer", |o| {
                json!(array_at(o, "spec.drivers").len())
            }),
            Column::age(),
        ]),
        kind::<v1::CSIStorageCapacity>().columns(vec![
            Column::path("StorageClassName", "storageClassName"),
            Column::func("Capacity", "string", |o| {
                json!(str_or(o, "capacity", "<unset>"))
            }),
        ]),
        kind::<v1::StorageClass>()
            .returns_deleted_object()
            .short_names(&["sc"])
            .columns(vec![
                Column::path("Provisioner", "provisioner"),
                Column::func("ReclaimPolicy", "string", |o| {
                    json!(str_or(o, "reclaimPolicy", "Delete"))
                }),
                Column::func("VolumeBindingMode", "string", |o| {
                    json!(str_or(o, "volumeBindingMode", "Immediate"))
                }),
                Column::func("AllowVolumeExpansion", "boolean", |o| {
                    bool_or(o, "allowVolumeExpansion", false)
                }),
                Column::age(),
            ])
            .strategy(StorageClassStrategy),
        kind::<v1::VolumeAttributesClass>()
            .returns_deleted_object()
            .short_names(&["vac"])
            .columns(vec![
                Column::path("DriverName", "driverName"),
                Column::age(),
            ])
            .strategy(VolumeAttributesClassStrategy),
        kind::<v1::VolumeAttachment>()
            .returns_deleted_object()
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
            .columns(vec![
                Column::path("Attacher", "spec.attacher"),
                Column::path("PV", "spec.source.persistentVolumeName"),
                Column::path("Node", "spec.nodeName"),
                Column::func("Attached", "boolean", |o| {
                    bool_or(o, "status.attached", false)
                }),
                Column::age(),
            ]),
    ]
}

/// VolumeAttributesClasses: `driverName` required; `driverName` and
/// `parameters` immutable (upstream's `ValidateVolumeAttributesClass*`).
pub struct VolumeAttributesClassStrategy;

impl Strategy for VolumeAttributesClassStrategy {
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if lookup(obj, "driverName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            errs.push(FieldError::required("driverName", ""));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        for field in ["driverName", "parameters"] {
            if new.get(field) != old.get(field) {
                errs.push(FieldError::invalid(
                    field,
                    new.get(field).cloned().unwrap_or(Value::Null),
                    "field is immutable",
                ));
            }
        }
        errs
    }
}

fn bool_or(o: &Value, path: &str, default: bool) -> Value {
    json!(lookup(o, path).and_then(Value::as_bool).unwrap_or(default))
}

/// StorageClasses: `reclaimPolicy: Delete`, `volumeBindingMode: Immediate`;
/// `provisioner` required and immutable, `parameters` immutable.
pub struct StorageClassStrategy;

impl Strategy for StorageClassStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            m.entry("reclaimPolicy").or_insert_with(|| json!("Delete"));
            m.entry("volumeBindingMode")
                .or_insert_with(|| json!("Immediate"));
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if str_or(obj, "provisioner", "").is_empty() {
            errs.push(FieldError::required("provisioner", ""));
        }
        match obj.get("reclaimPolicy").and_then(Value::as_str) {
            None | Some("Delete") | Some("Retain") => {}
            Some(o) => errs.push(FieldError::not_supported(
                "reclaimPolicy",
                json!(o),
                &["Delete", "Retain"],
            )),
        }
        match obj.get("volumeBindingMode").and_then(Value::as_str) {
            None | Some("Immediate") | Some("WaitForFirstConsumer") => {}
            Some(o) => errs.push(FieldError::not_supported(
                "volumeBindingMode",
                json!(o),
                &["Immediate", "WaitForFirstConsumer"],
            )),
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        for f in [
            "parameters",
            "provisioner",
            "reclaimPolicy",
            "volumeBindingMode",
        ] {
            if new.get(f) != old.get(f) {
                errs.push(FieldError::forbidden(
                    f,
                    "updates to ".to_string() + f + " are forbidden.",
                ));
            }
        }
        errs
    }
}

/// CSIDrivers: upstream's spec defaults.
pub struct CsiDriverStrategy;

impl Strategy for CsiDriverStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            let spec = m.entry("spec").or_insert_with(|| json!({}));
            if let Value::Object(s) = spec {
                s.entry("attachRequired").or_insert(json!(true));
                s.entry("podInfoOnMount").or_insert(json!(false));
                s.entry("storageCapacity").or_insert(json!(false));
                s.entry("requiresRepublish").or_insert(json!(false));
                s.entry("seLinuxMount").or_insert(json!(false));
                s.entry("fsGroupPolicy")
                    .or_insert(json!("ReadWriteOnceWithFSType"));
                s.entry("volumeLifecycleModes")
                    .or_insert(json!(["Persistent"]));
            }
        }
    }
}
