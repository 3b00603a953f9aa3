//! Subresources whose writes change one part of the object and leave the
//! rest as stored (`pods/ephemeralcontainers`, `pods/resize`, CSR
//! `approval`): the sent object (a PUT body, or a merge patch applied to
//! the current object) contributes only that part.

use std::sync::Arc;

use apiserver::apimachinery::errors::{ApiError, GroupResource};
use apiserver::registry::resource::{CustomSubresource, SubresourceCall};
use serde_json::{json, Value};

/// A tiny RFC 7386 JSON merge patch.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// A subresource whose writes copy one part (`take`) of the sent object
/// into the stored one; GET returns the whole object.
pub(super) fn part_subresource(
    name: &'static str,
    kind: (&'static str, &'static str, &'static str),
    take: fn(&Value, &mut Value),
) -> CustomSubresource {
    CustomSubresource {
        name,
        verbs: &["get", "patch", "update"],
        kind,
        handler: Arc::new(move |call: SubresourceCall<'_>| {
            Box::pin(async move {
                if call.verb == "get" {
                    return Ok((200, call.store.get(call.namespace, call.name).await?));
                }
                let body = call.body;
                let verb = call.verb.to_string();
                let updated = call
                    .store
                    .guaranteed_update(call.namespace, call.name, call.ctx.dry_run, |obj| {
                        let rv = body
                            .pointer("/metadata/resourceVersion")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        let cur = obj
                            .pointer("/metadata/resourceVersion")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        if verb == "update" && !rv.is_empty() && rv != cur {
                            let name = obj
                                .pointer("/metadata/name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string();
                            return Err(ApiError::conflict(
                                GroupResource {
                                    group: "",
                                    resource: name.as_str(),
                                },
                                &name,
                                ApiError::OPTIMISTIC_LOCK_MSG,
                            ));
                        }
                        let sent = if verb == "update" {
                            body.clone()
                        } else {
                            let mut v = obj.clone();
                            merge_patch(&mut v, &body);
                            v
                        };
                        take(&sent, obj);
                        Ok(())
                    })
                    .await?;
                Ok((200, updated))
            })
        }),
    }
}

pub(super) fn take_ephemeral_containers(sent: &Value, obj: &mut Value) {
    let v = sent.pointer("/spec/ephemeralContainers").cloned();
    if let Some(Value::Object(spec)) = obj.get_mut("spec") {
        match v {
            Some(v) => spec.insert("ephemeralContainers".into(), v),
            None => spec.remove("ephemeralContainers"),
        };
    }
}

/// The approval subresource (upstream's `csrApprovalStrategy`): the sent
/// conditions and metadata; spec and the rest of the status stay.
fn take_approval(sent: &Value, obj: &mut Value) {
    take_conditions(sent, obj);
    if let (Some(Value::Object(from)), Some(Value::Object(to))) =
        (sent.get("metadata"), obj.get_mut("metadata"))
    {
        for k in ["labels", "annotations", "finalizers", "ownerReferences"] {
            match from.get(k) {
                Some(v) => {
                    to.insert(k.into(), v.clone());
                }
                None => {
                    to.remove(k);
                }
            }
        }
    }
}

fn take_conditions(sent: &Value, obj: &mut Value) {
    let v = sent.pointer("/status/conditions").cloned();
    let status = obj
        .as_object_mut()
        .map(|m| m.entry("status").or_insert_with(|| json!({})));
    if let Some(Value::Object(st)) = status {
        match v {
            Some(v) => st.insert("conditions".into(), v),
            None => st.remove("conditions"),
        };
    }
}

/// `pods/resize` (in-place resize): only the containers' `resources` and
/// `resizePolicy` change, matched by container name.
pub(super) fn take_resources(sent: &Value, obj: &mut Value) {
    for list in ["containers", "initContainers"] {
        let wanted: Vec<Value> = sent
            .pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let Some(current) = obj
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in current.iter_mut() {
            let name = c.get("name").cloned();
            let Some(w) = wanted.iter().find(|w| w.get("name") == name.as_ref()) else {
                continue;
            };
            if let Value::Object(cm) = c {
                for k in ["resources", "resizePolicy"] {
                    match w.get(k) {
                        Some(v) => {
                            cm.insert(k.into(), v.clone());
                        }
                        None => {
                            cm.remove(k);
                        }
                    }
                }
            }
        }
    }
}

/// `certificatesigningrequests/approval`: only `status.conditions` changes.
pub fn csr_approval() -> CustomSubresource {
    part_subresource(
        "approval",
        ("certificates.k8s.io", "v1", "CertificateSigningRequest"),
        take_approval,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patches() {
        let mut v = json!({"a": 1, "b": {"c": 2, "d": 3}});
        merge_patch(&mut v, &json!({"b": {"c": null, "e": 4}, "f": [1]}));
        assert_eq!(v, json!({"a": 1, "b": {"d": 3, "e": 4}, "f": [1]}));
        let mut pod = json!({"spec": {"containers": []}});
        take_ephemeral_containers(
            &json!({"spec": {"ephemeralContainers": [{"name": "dbg"}], "containers": [{"name": "x"}]}}),
            &mut pod,
        );
        assert_eq!(
            pod,
            json!({"spec": {"containers": [], "ephemeralContainers": [{"name": "dbg"}]}})
        );
    }
}
