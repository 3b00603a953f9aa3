//! The `/scale` subresource of custom resources: an `autoscaling/v1` Scale
//! view of the object through the CRD's `specReplicasPath`,
//! `statusReplicasPath` and `labelSelectorPath` (upstream's
//! `registry/customresource` ScaleREST). `kubectl scale` PATCHes it.

use std::sync::Arc;

use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::meta;
use apiserver::apimachinery::validation::FieldError;
use apiserver::body::{Request, Response};
use apiserver::endpoints::handlers::{decode_json, json_response, read_body};
use apiserver::endpoints::negotiation::{body_format, BodyFormat};
use apiserver::registry::store::{Store, UpdateKind, WriteContext};
use apiserver::request::info::RequestInfo;
use serde_json::{json, Value};

/// The CRD's scale paths, as field lists (`.spec.replicas` → `[spec, replicas]`).
#[derive(Clone, Debug)]
pub struct ScalePaths {
    pub spec_replicas: Vec<String>,
    pub status_replicas: Vec<String>,
    pub label_selector: Option<Vec<String>>,
}

fn split(path: &str) -> Vec<String> {
    path.trim_start_matches('.')
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

impl ScalePaths {
    /// From `subresources.scale` of a CRD version.
    pub fn from_crd(scale: &Value) -> ScalePaths {
        let s = |k: &str| scale.get(k).and_then(Value::as_str).unwrap_or("");
        ScalePaths {
            spec_replicas: split(s("specReplicasPath")),
            status_replicas: split(s("statusReplicasPath")),
            label_selector: Some(s("labelSelectorPath"))
                .filter(|p| !p.is_empty())
                .map(split),
        }
    }
}

fn lookup<'a>(obj: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, k| v.get(k))
}

fn set_path(obj: &mut Value, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = obj;
    for p in parents {
        if !cur.get(p).is_some_and(Value::is_object) {
            if let Value::Object(m) = cur {
                m.insert(p.clone(), json!({}));
            }
        }
        let Some(next) = cur.get_mut(p) else {
            return;
        };
        cur = next;
    }
    if let Value::Object(m) = cur {
        m.insert(last.clone(), value);
    }
}

/// The Scale view of an object.
pub fn to_scale(obj: &Value, paths: &ScalePaths) -> Value {
    let replicas = |p: &[String]| lookup(obj, p).and_then(Value::as_i64).unwrap_or(0);
    let mut status = json!({"replicas": replicas(&paths.status_replicas)});
    if let Some(sel) = paths
        .label_selector
        .as_ref()
        .and_then(|p| lookup(obj, p))
        .and_then(Value::as_str)
    {
        status["selector"] = json!(sel);
    }
    let mut md = serde_json::Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = obj.get("metadata").and_then(|m| m.get(k)) {
            md.insert(k.into(), v.clone());
        }
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": md,
        "spec": {"replicas": replicas(&paths.spec_replicas)},
        "status": status,
    })
}

fn invalid_scale(name: &str, err: FieldError) -> ApiError {
    ApiError::invalid("autoscaling", "Scale", name, &[err])
}

/// Serves GET, PUT and PATCH on `<resource>/<name>/scale`.
pub async fn serve(
    store: Arc<Store>,
    paths: Arc<ScalePaths>,
    req: Request,
    info: RequestInfo,
) -> Response {
    match handle(&store, &paths, req, &info).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn handle(
    store: &Store,
    paths: &ScalePaths,
    req: Request,
    info: &RequestInfo,
) -> Result<Response, ApiError> {
    let namespace = if store.def.namespaced {
        info.namespace.as_str()
    } else {
        ""
    };
    if info.name.is_empty() {
        return Err(ApiError::path_not_found());
    }
    let name = info.name.as_str();
    let query = apiserver::endpoints::handlers::Query::of(info);
    let pretty = query.flag("pretty");
    match info.verb.as_str() {
        "get" => {
            let obj = store.get(namespace, name).await?;
            return Ok(json_response(200, &to_scale(&obj, paths), pretty));
        }
        "update" | "patch" => {}
        other => {
            return Err(ApiError::method_not_supported(
                store.def.group_resource(),
                other,
            ))
        }
    }
    let ctx = WriteContext {
        user: req
            .extensions()
            .get::<apiserver::authentication::UserInfo>()
            .cloned(),
        dry_run: query.dry_run(if info.verb == "patch" {
            "PatchOptions"
        } else {
            "UpdateOptions"
        })?,
        field_manager: apiserver::fieldmanager::manager_or_user_agent(
            query.get("fieldManager"),
            req.headers()
                .get(http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok()),
        ),
        applying: false,
        warnings: Default::default(),
        started: Default::default(),
    };
    let ct = apiserver::endpoints::handlers::content_type(&req);
    let format = body_format(ct.as_deref())?;
    let body = decode_json(&read_body(req).await?)?;
    let is_patch = info.verb == "patch";
    match (is_patch, format) {
        (false, BodyFormat::Json)
        | (true, BodyFormat::MergePatch)
        | (true, BodyFormat::JsonPatch) => {}
        _ => {
            return Err(ApiError::unsupported_media_type(
                ct.as_deref().unwrap_or(""),
                &[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                ],
            ))
        }
    }
    let json_patch: Option<json_patch::Patch> = if format == BodyFormat::JsonPatch {
        Some(serde_json::from_value(body.clone()).map_err(|e| {
            ApiError::bad_request(format!(
                "the server rejected our request due to an error in our request: {e}"
            ))
        })?)
    } else {
        None
    };
    let owned_name = name.to_string();
    let apply = move |old: &Value| -> Result<Value, ApiError> {
        let current = to_scale(old, paths);
        let scale = if !is_patch {
            body.clone()
        } else if let Some(ops) = &json_patch {
            let mut doc = current.clone();
            json_patch::patch(&mut doc, ops).map_err(|e| ApiError {
                code: 422,
                reason: "Invalid",
                message: format!(
                    "the server rejected our request due to an error in our request: {e}"
                ),
                details: None,
                continue_token: None,
            })?;
            doc
        } else {
            let mut doc = current.clone();
            json_patch::merge(&mut doc, &body);
            doc
        };
        let replicas = match scale.get("spec").and_then(|s| s.get("replicas")) {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_i64().ok_or_else(|| {
                invalid_scale(
                    &owned_name,
                    FieldError::invalid("spec.replicas", v.clone(), "must be an integer"),
                )
            })?,
        };
        if replicas < 0 {
            return Err(invalid_scale(
                &owned_name,
                FieldError::invalid(
                    "spec.replicas",
                    replicas,
                    "must be greater than or equal to 0",
                ),
            ));
        }
        let mut new = old.clone();
        set_path(&mut new, &paths.spec_replicas, json!(replicas));
        let rv = meta::resource_version(&scale);
        if !rv.is_empty() && !is_patch {
            meta::set(&mut new, "resourceVersion", json!(rv));
        }
        Ok(new)
    };
    let updated = store
        .update(namespace, name, None, UpdateKind::Patch(&apply), &ctx)
        .await?;
    Ok(json_response(200, &to_scale(&updated, paths), pretty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_view_and_paths() {
        let paths = ScalePaths::from_crd(
            &json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}),
        );
        let obj = json!({"metadata": {"name": "a", "namespace": "n", "resourceVersion": "5"}, "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=a"}});
        let s = to_scale(&obj, &paths);
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"], json!({"replicas": 2, "selector": "app=a"}));
        assert_eq!(s["metadata"]["resourceVersion"], "5");
        let mut o = json!({});
        set_path(&mut o, &paths.spec_replicas, json!(4));
        assert_eq!(o, json!({"spec": {"replicas": 4}}));
    }
}
