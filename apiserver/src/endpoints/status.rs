//! Writing API errors as HTTP responses (upstream's `responsewriters`): an
//! [`ApiError`] is a domain value until an endpoint or filter sends it here.

use crate::apimachinery::errors::ApiError;
use crate::body::{self, Response};

impl ApiError {
    /// The HTTP response carrying this Status.
    pub fn into_response(self) -> Response {
        let bytes = serde_json::to_vec(&self.to_status()).unwrap_or_default();
        let mut builder = http::Response::builder()
            .status(self.code)
            .header(http::header::CONTENT_TYPE, "application/json");
        if let Some(d) = &self.details {
            if d.retry_after_seconds > 0 {
                builder =
                    builder.header(http::header::RETRY_AFTER, d.retry_after_seconds.to_string());
            }
        }
        builder
            .body(body::full(bytes))
            .unwrap_or_else(|_| http::Response::new(body::empty()))
    }
}

/// A plain-text response, for the few places upstream does not answer with a Status
/// (panics, some 429s, aggregator proxy errors).
pub fn plain_text(code: u16, text: &str) -> Response {
    http::Response::builder()
        .status(code)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(body::full(format!("{text}\n")))
        .unwrap_or_else(|_| http::Response::new(body::empty()))
}
