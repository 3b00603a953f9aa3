//! PATCH with `application/apply-patch+yaml`: server-side apply.
//!
//! The body is the manager's configuration (YAML or JSON) naming the
//! object's apiVersion, kind and name. An existing object gets the
//! configuration merged in by [`crate::fieldmanager::apply`] through the
//! store's update path; a missing one is created from it through the
//! store's create path (201), as upstream's `forceAllowCreate`.

use serde_json::Value;

use super::create::decode_yaml;
use super::{check_unknown_fields, respond, shape_object, with_warnings, RestRequest};
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::validation::FieldError;
use crate::body::Response;
use crate::endpoints::negotiation::Negotiated;
use crate::registry::store::UpdateKind;

/// Serves one apply request.
pub async fn apply(
    rest: &RestRequest<'_>,
    namespace: &str,
    bytes: &[u8],
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let mut ctx = rest.write_context("PatchOptions")?;
    let manager = rest.query.get("fieldManager").unwrap_or("").to_string();
    if manager.is_empty() {
        let err = FieldError::required("fieldManager", "is required for apply patch");
        return Err(ApiError::invalid("meta.k8s.io", "PatchOptions", "", &[err]));
    }
    let force = match rest.query.get("force") {
        None | Some("") | Some("false") | Some("0") => false,
        Some("true") | Some("1") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "invalid value for force: {other:?}"
            )))
        }
    };
    let mut config = decode_yaml(bytes)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {}", e.message)))?;
    check_config(rest, &config)?;
    let warnings = check_unknown_fields(rest, &mut config, true)?;
    ctx.applying = true;

    let store = rest.store;
    let subresource = rest.subresource();
    let op = store.field_operation(subresource);
    let merge = |old: &Value| crate::fieldmanager::apply(&op, Some(old), &config, &manager, force);
    let name = &rest.info.name;
    for _ in 0..2 {
        match store
            .update(
                namespace,
                name,
                subresource,
                UpdateKind::Patch(&merge),
                &ctx,
            )
            .await
        {
            Ok(updated) => {
                return Ok(with_warnings(
                    respond(200, &shape_object(store, updated, neg), neg),
                    &warnings,
                ))
            }
            Err(e) if e.code == 404 && subresource.is_none() => {}
            Err(e) => return Err(e),
        }
        let obj = crate::fieldmanager::apply(&op, None, &config, &manager, force)?;
        match store.create(namespace, obj, &ctx).await {
            Ok(created) => {
                return Ok(with_warnings(
                    respond(201, &shape_object(store, created, neg), neg),
                    &warnings,
                ))
            }
            // Created meanwhile: apply to it.
            Err(e) if e.reason == "AlreadyExists" => continue,
            Err(e) => return Err(e),
        }
    }
    Err(ApiError::conflict(
        store.def.group_resource(),
        name,
        ApiError::OPTIMISTIC_LOCK_MSG,
    ))
}

/// The configuration must be an object of the endpoint's apiVersion and
/// kind, named as the URL.
fn check_config(rest: &RestRequest<'_>, config: &Value) -> Result<(), ApiError> {
    let def = &rest.store.def;
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let kind = s(config.get("kind"));
    if kind.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Object 'Kind' is missing in '{config}'"
        )));
    }
    let api_version = s(config.get("apiVersion"));
    let expected = def.api_version();
    if api_version != expected {
        return Err(ApiError::bad_request(format!(
            "Incorrect version specified in apply patch. Specified patch version: {api_version}, expected: {expected}"
        )));
    }
    let expected_kind = match rest.info.subresource.as_str() {
        "scale" => "Scale",
        _ => def.kind.as_str(),
    };
    if kind != expected_kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({expected_kind})"
        )));
    }
    let name = s(config.get("metadata").and_then(|m| m.get("name")));
    if name != rest.info.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            rest.info.name
        )));
    }
    if def.namespaced {
        let ns = s(config.get("metadata").and_then(|m| m.get("namespace")));
        if !ns.is_empty() && ns != rest.info.namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    Ok(())
}
