//! DefaultStorageClass and DefaultIngressClass: a new PersistentVolumeClaim
//! or Ingress that names no class gets the cluster's default one, the class
//! annotated as default (the newest when several are, by name when created
//! at the same instant), as upstream's `plugin/pkg/admission/storage/
//! storageclass/setdefault` and `plugin/pkg/admission/network/
//! defaultingressclass`.

use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

/// The default among `classes`: annotated with one of `annotations` =
/// `"true"`, newest first, then by name.
fn default_class<'a>(classes: &'a [Value], annotations: &[&str]) -> Option<&'a str> {
    let mut defaults: Vec<&Value> = classes
        .iter()
        .filter(|c| {
            annotations.iter().any(|a| {
                c.pointer("/metadata/annotations")
                    .and_then(|m| m.get(*a))
                    .and_then(Value::as_str)
                    == Some("true")
            })
        })
        .collect();
    let key = |c: &&Value| {
        (
            c.pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            c.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        )
    };
    // Newest timestamp first; equal timestamps by ascending name.
    defaults.sort_by(|a, b| {
        let (ta, na) = key(a);
        let (tb, nb) = key(b);
        tb.cmp(&ta).then(na.cmp(&nb))
    });
    defaults
        .first()
        .and_then(|c| c.pointer("/metadata/name"))
        .and_then(Value::as_str)
}

fn creating(attrs: &Attributes<'_>, group: &str, resource: &str) -> bool {
    attrs.operation == Operation::Create
        && attrs.is(group, resource)
        && attrs.subresource.is_empty()
}

/// DefaultStorageClass.
pub struct DefaultStorageClass {
    pub objects: Arc<ObjectReader>,
}

impl AdmissionPlugin for DefaultStorageClass {
    fn name(&self) -> &'static str {
        "DefaultStorageClass"
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
            let Some(pvc) = obj.filter(|_| creating(attrs, "", "persistentvolumeclaims")) else {
                return Ok(false);
            };
            // A class named, or explicitly none (""), or the beta annotation.
            let named = pvc
                .pointer("/spec/storageClassName")
                .is_some_and(|v| !v.is_null());
            let annotated = pvc
                .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
                .is_some();
            if named || annotated {
                return Ok(false);
            }
            let classes = self
                .objects
                .list("storage.k8s.io", "storageclasses", "")
                .await?;
            let Some(name) = default_class(
                &classes,
                &[
                    "storageclass.kubernetes.io/is-default-class",
                    "storageclass.beta.kubernetes.io/is-default-class",
                ],
            ) else {
                return Ok(false);
            };
            let name = name.to_string();
            match pvc.get_mut("spec").and_then(Value::as_object_mut) {
                Some(spec) => {
                    spec.insert("storageClassName".into(), json!(name));
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }
}

/// DefaultIngressClass.
pub struct DefaultIngressClass {
    pub objects: Arc<ObjectReader>,
}

impl AdmissionPlugin for DefaultIngressClass {
    fn name(&self) -> &'static str {
        "DefaultIngressClass"
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
            let Some(ing) = obj.filter(|_| creating(attrs, "networking.k8s.io", "ingresses"))
            else {
                return Ok(false);
            };
            let named = ing
                .pointer("/spec/ingressClassName")
                .is_some_and(|v| !v.is_null());
            let annotated = ing
                .pointer("/metadata/annotations/kubernetes.io~1ingress.class")
                .is_some();
            if named || annotated {
                return Ok(false);
            }
            let classes = self
                .objects
                .list("networking.k8s.io", "ingressclasses", "")
                .await?;
            let Some(name) =
                default_class(&classes, &["ingressclass.kubernetes.io/is-default-class"])
            else {
                return Ok(false);
            };
            let name = name.to_string();
            let spec = ing
                .as_object_mut()
                .map(|m| m.entry("spec").or_insert_with(|| json!({})));
            match spec.and_then(Value::as_object_mut) {
                Some(spec) => {
                    spec.insert("ingressClassName".into(), json!(name));
                    Ok(true)
                }
                None => Ok(false),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, created: &str, default: bool) -> Value {
        let ann = if default {
            json!({"storageclass.kubernetes.io/is-default-class": "true"})
        } else {
            json!({})
        };
        json!({"metadata": {"name": name, "creationTimestamp": created, "annotations": ann}})
    }

    #[test]
    fn newest_default_wins_then_name() {
        let a = ["storageclass.kubernetes.io/is-default-class"];
        let classes = vec![
            class("old", "2026-01-01T00:00:00Z", true),
            class("new", "2026-06-01T00:00:00Z", true),
            class("plain", "2026-12-01T00:00:00Z", false),
        ];
        assert_eq!(default_class(&classes, &a), Some("new"));
        let tied = vec![
            class("b", "2026-01-01T00:00:00Z", true),
            class("a", "2026-01-01T00:00:00Z", true),
        ];
        assert_eq!(default_class(&tied, &a), Some("a"));
        assert_eq!(default_class(&[class("x", "", false)], &a), None);
    }
}
