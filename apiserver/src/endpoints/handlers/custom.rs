//! Subresources served by their own handlers (`pods/binding`,
//! `pods/eviction`, `serviceaccounts/token`, CSR `approval`, the kubelet
//! subresources): their bodies (including patches) are read here, and they
//! are admitted as upstream admits them before the handler runs.

use serde_json::Value;

use super::{decode_json, read_body, read_object_body, respond_to, Query, RestRequest};
use crate::apimachinery::errors::ApiError;
use crate::body::MAX_REQUEST_BODY_BYTES;
use crate::body::{Request, Response};
use crate::registry::store::WriteContext;

pub(super) async fn serve_custom(
    rest: &RestRequest<'_>,
    sub: &crate::registry::resource::CustomSubresource,
    req: Request,
) -> Result<Response, ApiError> {
    let def = &rest.store.def;
    let info = rest.info;
    // kubectl's connect verbs arrive as get/create on the subresource.
    if !sub.verbs.contains(&info.verb.as_str()) && !sub.verbs.contains(&"*") {
        return Err(ApiError::method_not_supported(
            def.group_resource(),
            &info.verb,
        ));
    }
    let namespace = if def.namespaced {
        info.namespace.as_str()
    } else {
        ""
    };
    let ctx = rest.write_context("CreateOptions")?;
    let headers = req.headers().clone();
    let mut verb = info.verb.clone();
    let mut body = if verb == "patch" {
        read_patch_for_custom(rest, namespace, req, &mut verb).await?
    } else {
        read_object_body(req).await?
    };
    admit_custom(rest, sub, namespace, &ctx, &mut verb, &mut body).await?;
    let (code, value) = (sub.handler)(crate::registry::resource::SubresourceCall {
        store: rest.store,
        namespace,
        name: &info.name,
        verb: &verb,
        body,
        ctx,
    })
    .await?;
    Ok(respond_to(&headers, &rest.query, code, &value))
}

/// The body of a PATCH of a subresource served by its own handler: a JSON
/// merge or strategic merge patch is handed over as a merge patch; a JSON
/// Patch is applied to the current object here and handed over as an
/// update of the whole object (`verb` becomes `update`).
async fn read_patch_for_custom(
    rest: &RestRequest<'_>,
    namespace: &str,
    req: Request,
    verb: &mut String,
) -> Result<Value, ApiError> {
    use crate::endpoints::negotiation::{body_format, BodyFormat};
    let ct = super::content_type(&req);
    let format = body_format(ct.as_deref())?;
    match format {
        BodyFormat::MergePatch | BodyFormat::StrategicMergePatch | BodyFormat::Json => {
            let bytes = read_body(req).await?;
            decode_json(&bytes)
        }
        BodyFormat::JsonPatch => {
            let bytes = read_body(req).await?;
            let ops: ::json_patch::Patch = serde_json::from_slice(&bytes).map_err(|e| {
                ApiError::bad_request(format!(
                    "the server rejected our request due to an error in our request: {e}"
                ))
            })?;
            let mut current = rest.store.get(namespace, &rest.info.name).await?;
            crate::registry::json_patch::apply_bounded(&mut current, &ops, MAX_REQUEST_BODY_BYTES)
                .map_err(|e| ApiError {
                    code: 422,
                    reason: "Invalid",
                    message: format!(
                        "the server rejected our request due to an error in our request: {e}"
                    ),
                    details: None,
                    continue_token: None,
                })?;
            *verb = "update".to_string();
            Ok(current)
        }
        _ => Err(ApiError::unsupported_media_type(
            ct.as_deref().unwrap_or(""),
            &[
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
            ],
        )),
    }
}

/// Admission for a subresource served by its own handler, as upstream
/// admits them: a `create` (`pods/binding`, `pods/eviction`,
/// `serviceaccounts/token`) is a CREATE of the subresource's body (kind
/// `policy/v1 Eviction`, ...); an `update`/`patch` (`pods/ephemeralcontainers`,
/// `certificatesigningrequests/approval`) an UPDATE of the object as the
/// client means it against the current one; a kubelet subresource
/// (`exec`, `attach`, `portforward`, `proxy`) a CONNECT with its options
/// from the query. What mutating admission changes is what the handler
/// gets (a changed patch becomes an update of the whole object). Reads
/// (`log`, `get`) are not admitted.
async fn admit_custom(
    rest: &RestRequest<'_>,
    sub: &crate::registry::resource::CustomSubresource,
    namespace: &str,
    ctx: &WriteContext,
    verb: &mut String,
    body: &mut Value,
) -> Result<(), ApiError> {
    use crate::admission::{Attributes, Operation};
    let store = rest.store;
    let info = rest.info;
    let connect = sub.kind.2.ends_with("Options");
    let operation = match (verb.as_str(), connect) {
        ("create" | "get", true) => Operation::Connect,
        ("create", false) => Operation::Create,
        ("update" | "patch", false) => Operation::Update,
        _ => return Ok(()),
    };
    let group = if sub.kind.0.is_empty() && sub.kind.1.is_empty() {
        store.def.group.as_str()
    } else {
        sub.kind.0
    };
    let version = if sub.kind.1.is_empty() {
        store.def.version.as_str()
    } else {
        sub.kind.1
    };
    let old = match operation {
        Operation::Update => Some(store.get(namespace, &info.name).await?),
        _ => None,
    };
    let mut object = match (operation, verb.as_str(), &old) {
        (Operation::Connect, _, _) => connect_options(sub.kind.2, &rest.query),
        (Operation::Update, "patch", Some(current)) => {
            let mut merged = current.clone();
            ::json_patch::merge(&mut merged, body);
            merged
        }
        _ => body.clone(),
    };
    let attrs = Attributes {
        operation,
        resource: &store.def,
        subresource: sub.name,
        namespace,
        name: &info.name,
        object: None,
        old_object: old.as_ref(),
        user: ctx.user.as_ref(),
        dry_run: ctx.dry_run,
        warnings: Some(&ctx.warnings),
        started: Some(ctx.started.0),
        kind: Some((group, version, sub.kind.2)),
    };
    let changed = store.admission.mutate(&attrs, Some(&mut object)).await?;
    let attrs = Attributes {
        object: Some(&object),
        ..attrs
    };
    store.admission.validate(&attrs).await?;
    if changed && operation != Operation::Connect {
        if verb == "patch" {
            *verb = "update".to_string();
        }
        *body = object;
    }
    Ok(())
}

/// The options object of a CONNECT (`PodExecOptions`, ...) read from the
/// query: repeated `command` values form a list, `true`/`false` booleans.
fn connect_options(kind: &str, query: &Query) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("kind".into(), Value::from(kind));
    out.insert("apiVersion".into(), Value::from("v1"));
    for (k, v) in query.0.iter() {
        if k == "command" {
            let list = out
                .entry("command")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(a) = list {
                a.push(Value::from(v.as_str()));
            }
            continue;
        }
        if out.contains_key(k) {
            continue;
        }
        let value = match v.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => match v.parse::<i64>() {
                Ok(n) if k == "port" || k == "ports" => Value::from(n),
                _ => Value::from(v.as_str()),
            },
        };
        out.insert(k.clone(), value);
    }
    Value::Object(out)
}
