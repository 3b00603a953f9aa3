//! `fieldValidation` for custom resources: fields the schema would prune are
//! "unknown fields". `Strict` rejects them with 400
//! `strict decoding error: unknown field "spec.foo"`, `Warn` (the default)
//! answers with one `Warning: 299 - "unknown field \"spec.foo\""` header per
//! field, `Ignore` says nothing; in every case they are pruned.

use apiserver::apimachinery::errors::ApiError;
use apiserver::body::{self, Request, Response};
use apiserver::endpoints::handlers::{read_body, Query};
use apiserver::request::info::RequestInfo;
use apiserver::schema::Schema;
use http::HeaderValue;
use serde_json::Value;

/// What the check decided for one request.
pub struct Checked {
    /// The request, with its body restored.
    pub request: Request,
    /// `Warning` header values to add to the response.
    pub warnings: Vec<String>,
}

/// Checks the body of a create, update or (merge) patch for unknown fields.
pub async fn check(schema: &Schema, req: Request, info: &RequestInfo) -> Result<Checked, ApiError> {
    let unchanged = |request| {
        Ok(Checked {
            request,
            warnings: Vec::new(),
        })
    };
    if !matches!(info.verb.as_str(), "create" | "update" | "patch")
        || !matches!(info.subresource.as_str(), "" | "status")
    {
        return unchanged(req);
    }
    let mode = Query::of(info)
        .get("fieldValidation")
        .unwrap_or("Warn")
        .to_string();
    if !matches!(mode.as_str(), "Warn" | "Strict" | "") {
        return unchanged(req);
    }
    let ct = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_ascii_lowercase();
    if ct.starts_with("application/json-patch+json") {
        return unchanged(req);
    }
    let apply = ct.starts_with("application/apply-patch+yaml");
    let yaml = apply || ct.starts_with("application/yaml");
    let (parts, b) = req.into_parts();
    let bytes = read_body(http::Request::from_parts(parts.clone(), b)).await?;
    let request = http::Request::from_parts(parts, body::full(bytes.clone()));
    let (mut doc, duplicate) = if yaml {
        match apiserver::endpoints::handlers::decode_yaml_lenient(&bytes) {
            Ok(decoded) => decoded,
            // The handler reports what does not decode.
            Err(_) => return unchanged(request),
        }
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(v @ Value::Object(_)) => (v, None),
            _ => return unchanged(request),
        }
    };
    if mode == "Strict" {
        if let Some(d) = &duplicate {
            return Err(ApiError::bad_request(format!(
                "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {d}"
            )));
        }
    }
    let mut unknown = schema.unknown_metadata_fields(&doc);
    unknown.extend(schema.prune(&mut doc));
    if unknown.is_empty() && duplicate.is_none() {
        return unchanged(request);
    }
    if mode == "Strict" {
        if apply {
            // Upstream's apply reports them from its typed conversion.
            let lines: Vec<String> = unknown
                .iter()
                .map(|f| format!(".{f}: field not declared in schema"))
                .collect();
            let detail = match lines.as_slice() {
                [one] => one.clone(),
                many => format!("errors:\n  {}", many.join("\n  ")),
            };
            return Err(ApiError::bad_request(format!(
                "failed to create typed patch object ({}/{}, Kind={}): {detail}",
                info.api_group,
                info.api_version,
                schema_kind(&doc)
            )));
        }
        let messages: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect();
        return Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            messages.join(", ")
        )));
    }
    let messages = duplicate
        .into_iter()
        .chain(unknown.iter().map(|f| format!("unknown field \"{f}\"")));
    let warnings = messages
        .map(|m| format!("299 - \"{}\"", m.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    Ok(Checked { request, warnings })
}

/// The `kind` of a decoded body.
fn schema_kind(doc: &Value) -> &str {
    doc.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// Adds `Warning` headers to a response.
pub fn add_warnings(resp: &mut Response, warnings: &[String]) {
    for w in warnings {
        if let Ok(v) = HeaderValue::from_str(w) {
            resp.headers_mut().append(http::header::WARNING, v);
        }
    }
}
