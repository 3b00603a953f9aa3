//! PUT and PATCH.

use serde_json::Value;

use super::create::read_object;
use super::{
    check_fields, decode_json, read_body, respond, shape_object, with_warnings, RestRequest,
};
use crate::apimachinery::errors::ApiError;
use crate::body::{Request, Response};
use crate::endpoints::negotiation::{body_format, BodyFormat, Negotiated};
use crate::registry::store::UpdateKind;

/// Upstream's limit on JSON-patch operations.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// PUT of one object (or its status).
pub async fn update(
    rest: &RestRequest<'_>,
    namespace: &str,
    req: Request,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    rest.query.field_validation()?;
    let ctx = rest.write_context("UpdateOptions")?;
    let (mut obj, keys) = read_object(rest, req).await?;
    let warnings = check_fields(rest, &mut obj, &keys, false)?;
    let updated = rest
        .store
        .update(
            namespace,
            &rest.info.name,
            rest.subresource(),
            UpdateKind::Replace(obj),
            &ctx,
        )
        .await?;
    Ok(with_warnings(
        respond(200, &shape_object(rest.store, updated, neg), neg),
        &warnings,
    ))
}

/// PATCH of one object (or its status).
pub async fn patch(
    rest: &RestRequest<'_>,
    namespace: &str,
    req: Request,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    rest.query.field_validation()?;
    let ct = super::content_type(&req);
    let format = body_format(ct.as_deref())?;
    if format == BodyFormat::ApplyPatch {
        let bytes = read_body(req).await?;
        return super::apply::apply(rest, namespace, &bytes, neg).await;
    }
    if rest.query.get("force").is_some() {
        let err = crate::apimachinery::validation::FieldError::forbidden(
            "force",
            "may not be specified for non-apply patch",
        );
        return Err(ApiError::invalid("meta.k8s.io", "PatchOptions", "", &[err]));
    }
    let ctx = rest.write_context("PatchOptions")?;
    let bytes = read_body(req).await?;
    let mut patch_doc = decode_json(&bytes)?;
    let warnings = if matches!(
        format,
        BodyFormat::MergePatch | BodyFormat::StrategicMergePatch
    ) {
        let keys = if rest.query.get("fieldValidation") != Some("Ignore") {
            super::strict_json::key_paths(&bytes)
        } else {
            Vec::new()
        };
        check_fields(rest, &mut patch_doc, &keys, true)?
    } else {
        Vec::new()
    };
    let apply: Box<dyn Fn(&Value) -> Result<Value, ApiError> + Send + Sync> = match format {
        BodyFormat::JsonPatch => {
            let ops: json_patch::Patch = serde_json::from_value(patch_doc).map_err(|e| {
                ApiError::bad_request(format!(
                    "the server rejected our request due to an error in our request: {e}"
                ))
            })?;
            if ops.0.len() > MAX_JSON_PATCH_OPERATIONS {
                return Err(ApiError {
                    code: 413,
                    reason: "RequestEntityTooLarge",
                    message: format!(
                        "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                        ops.0.len()
                    ),
                    details: None,
                    continue_token: None,
                });
            }
            Box::new(move |old: &Value| {
                let mut doc = old.clone();
                // `copy` chains that double the object are stopped at the
                // request body limit, as upstream's accumulated copy limit.
                crate::registry::json_patch::apply_bounded(
                    &mut doc,
                    &ops,
                    crate::body::MAX_REQUEST_BODY_BYTES,
                )
                .map_err(|e| ApiError {
                    code: 422,
                    reason: "Invalid",
                    message: format!(
                        "the server rejected our request due to an error in our request: {e}"
                    ),
                    details: None,
                    continue_token: None,
                })?;
                Ok(doc)
            })
        }
        // Strategic merge patch with the kind's merge keys when declared,
        // else with merge-patch semantics.
        BodyFormat::StrategicMergePatch if rest.store.def.strategic_merge.is_some() => {
            if !patch_doc.is_object() {
                return Err(ApiError::bad_request("the patch must be a JSON object"));
            }
            let smp = rest.store.def.strategic_merge.clone();
            Box::new(move |old: &Value| match &smp {
                Some(f) => f(old, &patch_doc).map_err(ApiError::bad_request),
                None => Ok(old.clone()),
            })
        }
        BodyFormat::MergePatch | BodyFormat::StrategicMergePatch => {
            if !patch_doc.is_object() {
                return Err(ApiError::bad_request("the patch must be a JSON object"));
            }
            Box::new(move |old: &Value| {
                let mut doc = old.clone();
                json_patch::merge(&mut doc, &patch_doc);
                Ok(doc)
            })
        }
        BodyFormat::ApplyPatch | BodyFormat::Json | BodyFormat::Yaml | BodyFormat::Protobuf => {
            return Err(ApiError::unsupported_media_type(
                ct.as_deref().unwrap_or(""),
                &[
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/strategic-merge-patch+json",
                ],
            ))
        }
    };
    let updated = rest
        .store
        .update(
            namespace,
            &rest.info.name,
            rest.subresource(),
            UpdateKind::Patch(apply.as_ref()),
            &ctx,
        )
        .await?;
    Ok(with_warnings(
        respond(200, &shape_object(rest.store, updated, neg), neg),
        &warnings,
    ))
}
