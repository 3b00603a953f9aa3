//! Parses method, path and query into a [`RequestInfo`] once, for every later
//! filter and handler.

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::body::{Request, Response};
use crate::request::info::parse_request_info;

/// The request-info filter.
#[derive(Clone, Default)]
pub struct WithRequestInfo;

impl Filter for WithRequestInfo {
    fn call(&self, mut req: Request, next: Next) -> BoxFuture<'static, Response> {
        let info = parse_request_info(req.method().as_str(), req.uri().path(), req.uri().query());
        req.extensions_mut().insert(info);
        Box::pin(next.run(req))
    }
}
