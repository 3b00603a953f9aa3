//! Request bodies over the limit (upstream: 3 MiB) get 413 as soon as a
//! handler reads past it (at once for a declared length far over it).

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::apimachinery::errors::ApiError;
use crate::body::{self, Request, Response};

/// The body-limit filter.
#[derive(Clone)]
pub struct BodyLimit {
    pub max_bytes: usize,
}

impl Filter for BodyLimit {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        // A declared length far over the limit is refused before reading;
        // otherwise the body is read up to the limit (so a client that is
        // still writing sees the 413 rather than a reset connection).
        let declared = req
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > 4 * self.max_bytes as u64) {
            let err = ApiError::request_entity_too_large(self.max_bytes);
            return Box::pin(async move { err.into_response() });
        }
        let max = self.max_bytes;
        let req = req.map(|b| body::boxed(http_body_util::Limited::new(b, max)));
        Box::pin(next.run(req))
    }
}
