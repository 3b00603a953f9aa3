//! The `scale` subresource: an `autoscaling/v1` Scale view of a workload
//! (`spec.replicas`, `status.replicas`, the selector as a string). GET reads
//! it; PUT and PATCH change only `spec.replicas` (`kubectl scale`, HPAs).

use serde_json::{json, Value};

use super::create::check_type_meta_of;
use super::{decode_json, read_body, respond, RestRequest};
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::validation::FieldError;
use crate::body::{Request, Response};
use crate::endpoints::negotiation::{body_format, BodyFormat, Negotiated};
use crate::registry::resource::Subresource;
use crate::registry::store::UpdateKind;

/// `metav1.LabelSelectorAsSelector(...).String()` for a LabelSelector, or
/// `labels.SelectorFromSet(...).String()` for a plain map (replication
/// controllers): requirements sorted by key.
pub fn selector_string(sel: Option<&Value>) -> String {
    let Some(sel) = sel.and_then(Value::as_object) else {
        return String::new();
    };
    let is_label_selector = sel.contains_key("matchLabels") || sel.contains_key("matchExpressions");
    let mut reqs: Vec<(String, String)> = Vec::new();
    let labels = if is_label_selector {
        sel.get("matchLabels").and_then(Value::as_object)
    } else {
        Some(sel)
    };
    for (k, v) in labels.into_iter().flatten() {
        reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
    }
    for e in sel
        .get("matchExpressions")
        .filter(|_| is_label_selector)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let mut values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort();
        let s = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        reqs.push((key.to_string(), s));
    }
    reqs.sort();
    reqs.into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(",")
}

/// The Scale of a workload object.
pub fn scale_of(obj: &Value) -> Value {
    let meta = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let mut m = serde_json::Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta.get(k) {
            m.insert(k.into(), v.clone());
        }
    }
    let mut status = serde_json::Map::new();
    status.insert(
        "replicas".into(),
        json!(obj
            .pointer("/status/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0)),
    );
    let selector = selector_string(obj.pointer("/spec/selector"));
    if !selector.is_empty() {
        status.insert("selector".into(), json!(selector));
    }
    let mut spec = serde_json::Map::new();
    if let Some(r) = obj.pointer("/spec/replicas").and_then(Value::as_i64) {
        spec.insert("replicas".into(), json!(r));
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": m,
        "spec": spec,
        "status": status,
    })
}

/// Serves GET, PUT and PATCH on `<resource>/<name>/scale`.
pub async fn serve(
    rest: &RestRequest<'_>,
    namespace: &str,
    req: Request,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let def = &rest.store.def;
    let name = rest.info.name.clone();
    match rest.info.verb.as_str() {
        "get" => {
            let obj = rest.store.get(namespace, &name).await?;
            Ok(respond(200, &scale_of(&obj), neg))
        }
        "update" | "patch" => {
            rest.query.field_validation()?;
            let ctx = rest.write_context(if rest.info.verb == "update" {
                "UpdateOptions"
            } else {
                "PatchOptions"
            })?;
            let ct = super::content_type(&req);
            let format = body_format(ct.as_deref())?;
            let bytes = read_body(req).await?;
            let is_update = rest.info.verb == "update";
            // The scale client of client-go (HPA controller, `kubectl
            // scale` of v1.36) may PUT the Scale in protobuf.
            let doc = match format {
                BodyFormat::Protobuf if is_update => crate::protobuf::decode_object(&bytes)
                    .map_err(|e| {
                        ApiError::bad_request(format!("failed to decode protobuf body: {e}"))
                    })?,
                BodyFormat::Yaml if is_update => super::create::decode_yaml(&bytes)?,
                _ => decode_json(&bytes)?,
            };
            if is_update {
                if !matches!(
                    format,
                    BodyFormat::Json | BodyFormat::Protobuf | BodyFormat::Yaml
                ) {
                    return Err(super::unsupported_object_format(ct.as_deref()));
                }
                check_type_meta_of(&doc, "autoscaling/v1", "Scale")?;
            }
            let group = def.group.clone();
            let resource = def.resource.clone();
            let apply = move |old: &Value| -> Result<Value, ApiError> {
                let current = scale_of(old);
                let wanted = if is_update {
                    doc.clone()
                } else {
                    let mut s = current.clone();
                    match format {
                        BodyFormat::JsonPatch => {
                            let ops: json_patch::Patch = serde_json::from_value(doc.clone())
                                .map_err(|e| ApiError::bad_request(e.to_string()))?;
                            json_patch::patch(&mut s, &ops)
                                .map_err(|e| ApiError::bad_request(e.to_string()))?;
                        }
                        _ => json_patch::merge(&mut s, &doc),
                    }
                    s
                };
                let rv = wanted
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let old_rv = old
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !rv.is_empty() && rv != old_rv {
                    return Err(ApiError::conflict(
                        crate::apimachinery::errors::GroupResource {
                            group: &group,
                            resource: &resource,
                        },
                        old.pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                        ApiError::OPTIMISTIC_LOCK_MSG,
                    ));
                }
                let replicas = wanted
                    .pointer("/spec/replicas")
                    .cloned()
                    .unwrap_or(json!(0));
                let Some(n) = replicas.as_i64() else {
                    return Err(ApiError::bad_request("spec.replicas must be an integer"));
                };
                if n < 0 {
                    let err = FieldError::invalid(
                        "spec.replicas",
                        json!(n),
                        "must be greater than or equal to 0",
                    );
                    let name = old
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    return Err(ApiError::invalid("autoscaling", "Scale", name, &[err]));
                }
                let mut new = old.clone();
                if let Some(Value::Object(spec)) = new.get_mut("spec") {
                    spec.insert("replicas".into(), json!(n));
                }
                Ok(new)
            };
            let updated = rest
                .store
                .update(
                    namespace,
                    &name,
                    Some(Subresource::Scale),
                    UpdateKind::Patch(&apply),
                    &ctx,
                )
                .await?;
            Ok(respond(200, &scale_of(&updated), neg))
        }
        other => Err(ApiError::method_not_supported(def.group_resource(), other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_view() {
        let d = json!({"metadata": {"name": "web", "namespace": "d", "resourceVersion": "5", "labels": {"x": "y"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]}},
            "status": {"replicas": 2}});
        let s = scale_of(&d);
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(
            s["status"],
            json!({"replicas": 2, "selector": "app=web,tier in (a,b)"})
        );
        assert_eq!(s["metadata"]["resourceVersion"], "5");
        assert!(s["metadata"].get("labels").is_none());
        let rc = json!({"spec": {"selector": {"b": "2", "a": "1"}}});
        assert_eq!(scale_of(&rc)["status"]["selector"], "a=1,b=2");
    }
}
