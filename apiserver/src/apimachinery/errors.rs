//! `metav1.Status` error bodies with upstream codes, reasons and message formats.
//!
//! Every API error a handler or filter returns is an [`ApiError`]; it renders as
//! the exact JSON upstream's `apierrors` package produces, so clients that switch
//! on `reason` (client-go's `IsNotFound`, kubectl's messages) behave the same.

use super::validation::FieldError;
use serde::Serialize;

/// A cause inside `details.causes`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StatusCause {
    #[serde(rename = "reason", skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// `details` of a Status.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StatusDetails {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    #[serde(rename = "retryAfterSeconds", skip_serializing_if = "is_zero")]
    pub retry_after_seconds: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// An API error: renders as a `Status` with `status: Failure`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// Boxed: most errors carry none, and every `Result` that can hold an
    /// `ApiError` is as large as it.
    pub details: Option<Box<StatusDetails>>,
    /// `metadata.continue` of the Status: the inconsistent continue token
    /// a 410 for a compacted continue token offers (upstream's
    /// `NewInconsistentContinue`), so the client can go on at the latest
    /// revision.
    pub continue_token: Option<String>,
}

/// Identifies a resource in messages: `configmaps`, or `deployments.apps`.
#[derive(Clone, Copy, Debug)]
pub struct GroupResource<'a> {
    pub group: &'a str,
    pub resource: &'a str,
}

impl std::fmt::Display for GroupResource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

fn details(gr: GroupResource<'_>, name: &str) -> Option<Box<StatusDetails>> {
    Some(Box::new(StatusDetails {
        name: name.to_string(),
        group: gr.group.to_string(),
        kind: gr.resource.to_string(),
        ..Default::default()
    }))
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            continue_token: None,
        }
    }

    /// 404 `<resource> "<name>" not found`.
    pub fn not_found(gr: GroupResource<'_>, name: &str) -> Self {
        ApiError {
            details: details(gr, name),
            ..Self::new(404, "NotFound", format!("{gr} \"{name}\" not found"))
        }
    }

    /// 404 for a path nothing serves, as upstream's final not-found handler says it.
    pub fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 409 `<resource> "<name>" already exists`.
    pub fn already_exists(gr: GroupResource<'_>, name: &str) -> Self {
        ApiError {
            details: details(gr, name),
            ..Self::new(
                409,
                "AlreadyExists",
                format!("{gr} \"{name}\" already exists"),
            )
        }
    }

    /// 409 optimistic-concurrency conflict.
    pub fn conflict(gr: GroupResource<'_>, name: &str, why: &str) -> Self {
        ApiError {
            details: details(gr, name),
            ..Self::new(
                409,
                "Conflict",
                format!("Operation cannot be fulfilled on {gr} \"{name}\": {why}"),
            )
        }
    }

    /// The message upstream uses for a stale `resourceVersion`.
    pub const OPTIMISTIC_LOCK_MSG: &'static str =
        "the object has been modified; please apply your changes to the latest version and try again";

    /// 422 `<Kind> "<name>" is invalid: <errors>` with one cause per field error.
    pub fn invalid(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let causes = errors
            .iter()
            .map(|e| StatusCause {
                reason: e.error_type.reason().to_string(),
                message: e.message_body(),
                field: e.field.clone(),
            })
            .collect();
        // Upstream prints the qualified kind (`Deployment.apps`).
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let message = match errors {
            [] => format!("{qualified} \"{name}\" is invalid"),
            [one] => format!("{qualified} \"{name}\" is invalid: {one}"),
            many => format!(
                "{qualified} \"{name}\" is invalid: [{}]",
                many.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        ApiError {
            details: Some(Box::new(StatusDetails {
                name: name.to_string(),
                group: group.to_string(),
                kind: kind.to_string(),
                causes,
                ..Default::default()
            })),
            ..Self::new(422, "Invalid", message)
        }
    }

    /// 400 with the given message.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 401 as upstream's authentication filter writes it.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 403 `<resource> "<name>" is forbidden: <why>` (or the collection form).
    pub fn forbidden(gr: GroupResource<'_>, name: &str, why: &str) -> Self {
        let message = if name.is_empty() {
            format!("{gr} is forbidden: {why}")
        } else {
            format!("{gr} \"{name}\" is forbidden: {why}")
        };
        ApiError {
            details: details(gr, name),
            ..Self::new(403, "Forbidden", message)
        }
    }

    /// 403 with a message built by the caller (authorization filter).
    pub fn forbidden_message(gr: GroupResource<'_>, name: &str, message: String) -> Self {
        ApiError {
            details: details(gr, name),
            ..Self::new(403, "Forbidden", message)
        }
    }

    /// 405 `<verb> is not supported on resources of kind "<resource>"`.
    pub fn method_not_supported(gr: GroupResource<'_>, action: &str) -> Self {
        ApiError {
            details: details(gr, ""),
            ..Self::new(
                405,
                "MethodNotAllowed",
                format!("{action} is not supported on resources of kind \"{gr}\""),
            )
        }
    }

    /// 406 for an `Accept` header we cannot satisfy.
    pub fn not_acceptable(supported: &[&str]) -> Self {
        Self::new(
            406,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: {}",
                supported.join(", ")
            ),
        )
    }

    /// 415 for a body `Content-Type` we cannot decode.
    pub fn unsupported_media_type(content_type: &str, supported: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                if supported.is_empty() { content_type.to_string() } else { supported.join(", ") }
            ),
        )
    }

    /// 413 for an object etcd will not store (over its request limit).
    pub fn stored_object_too_large() -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: etcdserver: request is too large",
        )
    }

    /// 413 for a body over the limit.
    pub fn request_entity_too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// 410 Expired (compacted resourceVersion or continue token).
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 410 Expired for a continue token whose revision was compacted,
    /// offering `continue_token` to go on from the same key at the latest
    /// revision.
    pub fn inconsistent_continue(message: impl Into<String>, continue_token: String) -> Self {
        ApiError {
            continue_token: Some(continue_token),
            ..Self::expired(message)
        }
    }

    /// 504 `Timeout: <message>`.
    pub fn timeout(message: &str) -> Self {
        Self::new(504, "Timeout", format!("Timeout: {message}"))
    }

    /// 500 `Internal error occurred: <err>`.
    pub fn internal(err: impl std::fmt::Display) -> Self {
        let err = err.to_string();
        ApiError {
            details: Some(Box::new(StatusDetails {
                causes: vec![StatusCause {
                    message: err.clone(),
                    ..empty_cause()
                }],
                ..Default::default()
            })),
            ..Self::new(
                500,
                "InternalError",
                format!("Internal error occurred: {err}"),
            )
        }
    }

    /// 503 with the given message (a dependency such as etcd or a tier is down).
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(503, "ServiceUnavailable", message)
    }

    /// 503 with `retryAfterSeconds`, as upstream answers before its routes are installed.
    pub fn service_unavailable_retry(message: impl Into<String>, retry_after_seconds: u32) -> Self {
        ApiError {
            details: Some(Box::new(StatusDetails {
                retry_after_seconds,
                ..Default::default()
            })),
            ..Self::new(503, "ServiceUnavailable", message)
        }
    }

    /// 429 with `retryAfterSeconds`.
    pub fn too_many_requests(message: impl Into<String>, retry_after_seconds: u32) -> Self {
        ApiError {
            details: Some(Box::new(StatusDetails {
                retry_after_seconds,
                ..Default::default()
            })),
            ..Self::new(429, "TooManyRequests", message)
        }
    }

    /// The `Status` object as JSON.
    pub fn to_status(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct Status<'a> {
            kind: &'static str,
            #[serde(rename = "apiVersion")]
            api_version: &'static str,
            metadata: serde_json::Map<String, serde_json::Value>,
            status: &'static str,
            message: &'a str,
            reason: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            details: Option<&'a StatusDetails>,
            code: u16,
        }
        serde_json::to_value(Status {
            kind: "Status",
            api_version: "v1",
            metadata: match &self.continue_token {
                Some(t) => [("continue".to_string(), serde_json::Value::String(t.clone()))]
                    .into_iter()
                    .collect(),
                None => Default::default(),
            },
            status: "Failure",
            message: &self.message,
            reason: self.reason,
            details: self.details.as_deref(),
            code: self.code,
        })
        .unwrap_or(serde_json::Value::Null)
    }
}

fn empty_cause() -> StatusCause {
    StatusCause {
        reason: String::new(),
        message: String::new(),
        field: String::new(),
    }
}

/// A `Status` with `status: Success`, as DELETE returns when no object is returned.
pub fn success_status(gr: GroupResource<'_>, name: &str, uid: &str) -> serde_json::Value {
    serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": { "name": name, "group": gr.group, "kind": gr.resource, "uid": uid },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_matches_upstream() {
        let e = ApiError::not_found(
            GroupResource {
                group: "",
                resource: "configmaps",
            },
            "nope",
        );
        assert_eq!(
            serde_json::to_string(&e.to_status()).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}"#
        );
    }

    #[test]
    fn unauthorized_matches_upstream() {
        assert_eq!(
            serde_json::to_string(&ApiError::unauthorized().to_status()).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#
        );
    }

    #[test]
    fn group_resource_display() {
        assert_eq!(
            GroupResource {
                group: "apps",
                resource: "deployments"
            }
            .to_string(),
            "deployments.apps"
        );
    }
}
