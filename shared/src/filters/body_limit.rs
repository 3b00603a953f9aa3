//! Request bodies over the limit (upstream: 3 MiB) get 413: at once when
//! `Content-Length` says so, otherwise as soon as a handler reads past it.

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::body::{self, Request, Response};
use crate::endpoints::status::ApiError;

/// The body-limit filter.
#[derive(Clone)]
pub struct BodyLimit {
    pub max_bytes: usize,
}

impl Filter for BodyLimit {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let declared = req
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > self.max_bytes as u64) {
            let err = ApiError::request_entity_too_large(self.max_bytes);
            return Box::pin(async move { err.into_response() });
        }
        let max = self.max_bytes;
        let req = req.map(|b| body::boxed(http_body_util::Limited::new(b, max)));
        Box::pin(next.run(req))
    }
}
