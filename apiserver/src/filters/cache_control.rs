//! `Cache-Control: no-cache, private` on every response that did not set its own.

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::body::{Request, Response};

/// The cache-control filter.
#[derive(Clone, Default)]
pub struct CacheControl;

impl Filter for CacheControl {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        Box::pin(async move {
            let mut resp = next.run(req).await;
            resp.headers_mut()
                .entry(http::header::CACHE_CONTROL)
                .or_insert(http::HeaderValue::from_static("no-cache, private"));
            resp
        })
    }
}
