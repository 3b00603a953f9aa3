//! DELETE of one object and of a collection.

use serde_json::{json, Value};

use super::read::list_body;
use super::{read_object_body, respond, shape_object, RestRequest};
use crate::apimachinery::errors::{success_status, ApiError};
use crate::apimachinery::meta;
use crate::body::{Request, Response};
use crate::endpoints::negotiation::Negotiated;
use crate::registry::store::{DeleteOptions, DeleteOutcome, ListPage};

/// DeleteOptions from the optional body and the query.
async fn delete_options(rest: &RestRequest<'_>, req: Request) -> Result<DeleteOptions, ApiError> {
    // client-go sends DeleteOptions in protobuf when it talks protobuf
    // (controller manager, scheduler, kubelet, Helm); kubectl sends JSON.
    let body = read_object_body(req).await?;
    let mut opts = DeleteOptions {
        grace_period_seconds: rest.query.int("gracePeriodSeconds")?,
        propagation_policy: rest.query.get("propagationPolicy").map(str::to_string),
        dry_run: rest.query.dry_run("DeleteOptions")?,
        ..Default::default()
    };
    if !body.is_null() {
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be a DeleteOptions object",
            ));
        }
        if let Some(g) = body.get("gracePeriodSeconds").and_then(Value::as_i64) {
            opts.grace_period_seconds = Some(g);
        }
        if let Some(p) = body.get("propagationPolicy").and_then(Value::as_str) {
            opts.propagation_policy = Some(p.to_string());
        }
        if let Some(pre) = body.get("preconditions") {
            opts.precondition_uid = pre.get("uid").and_then(Value::as_str).map(str::to_string);
            opts.precondition_resource_version = pre
                .get("resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if opts.propagation_policy.is_none() {
            // The deprecated `orphanDependents` means Orphan or Background.
            match body.get("orphanDependents").and_then(Value::as_bool) {
                Some(true) => opts.propagation_policy = Some("Orphan".to_string()),
                Some(false) => opts.propagation_policy = Some("Background".to_string()),
                None => {}
            }
        }
        if let Some(Value::Array(d)) = body.get("dryRun") {
            if d.iter().any(|v| v == "All") {
                opts.dry_run = true;
            }
        }
    }
    if let Some(p) = &opts.propagation_policy {
        if !matches!(p.as_str(), "Orphan" | "Background" | "Foreground") {
            return Err(ApiError::bad_request(format!(
                "propagationPolicy: Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
            )));
        }
    }
    if opts.grace_period_seconds.is_some_and(|g| g < 0) {
        opts.grace_period_seconds = Some(1);
    }
    Ok(opts)
}

/// DELETE of one object.
pub async fn delete(
    rest: &RestRequest<'_>,
    namespace: &str,
    req: Request,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let ctx = rest.write_context("DeleteOptions")?;
    let opts = delete_options(rest, req).await?;
    match rest
        .store
        .delete(namespace, &rest.info.name, &opts, &ctx)
        .await?
    {
        DeleteOutcome::Pending(obj) => Ok(respond(200, &shape_object(rest.store, obj, neg), neg)),
        DeleteOutcome::Deleted(obj) => {
            if rest.store.def.return_deleted_object {
                return Ok(respond(200, &shape_object(rest.store, obj, neg), neg));
            }
            let status = success_status(
                rest.store.def.group_resource(),
                meta::name(&obj),
                meta::uid(&obj),
            );
            Ok(respond(200, &status, neg))
        }
    }
}

/// DELETE on a collection: answers with the list of deleted objects.
pub async fn delete_collection(
    rest: &RestRequest<'_>,
    namespace: &str,
    req: Request,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let ctx = rest.write_context("DeleteOptions")?;
    let list_opts = rest.query.list_options()?;
    let opts = delete_options(rest, req).await?;
    let items = rest
        .store
        .delete_collection(namespace, &list_opts, &opts, &ctx)
        .await?;
    let rv = items
        .iter()
        .filter_map(|o| meta::resource_version(o).parse::<i64>().ok())
        .max()
        .unwrap_or(0);
    let page = ListPage {
        items,
        resource_version: rv,
        continue_token: None,
        remaining_item_count: None,
    };
    let mut body = list_body(rest.store, page, neg);
    if let Some(m) = body.get_mut("metadata") {
        *m = json!({});
    }
    Ok(respond(200, &body, neg))
}
