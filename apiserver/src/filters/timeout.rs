//! Request deadlines: `min(?timeout=, --request-timeout)` for everything but
//! long-running requests (watch, proxy, exec, attach, log, portforward). On
//! expiry the client gets upstream's 504 Timeout Status.

use std::time::Duration;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::apimachinery::duration::parse_go_duration;
use crate::apimachinery::errors::ApiError;
use crate::body::{Request, Response};
use crate::endpoints::handlers::Query;
use crate::request::info::RequestInfo;

/// The timeout filter.
#[derive(Clone)]
pub struct RequestTimeout {
    pub default: Duration,
}

impl Filter for RequestTimeout {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let long_running = req
            .extensions()
            .get::<RequestInfo>()
            .is_some_and(RequestInfo::is_long_running);
        if long_running {
            return Box::pin(next.run(req));
        }
        let mut deadline = self.default;
        let query = match req.extensions().get::<RequestInfo>() {
            Some(info) => Query::of(info),
            None => Query::from_uri(req.uri()),
        };
        if let Some(t) = query.get("timeout").filter(|t| !t.is_empty()) {
            match parse_go_duration(t) {
                Ok(d) if d > Duration::ZERO => deadline = deadline.min(d),
                Ok(_) => {}
                Err(e) => {
                    let err = ApiError::bad_request(format!(
                        "invalid timeout specified in the request URL - {e}"
                    ));
                    return Box::pin(async move { err.into_response() });
                }
            }
        }
        Box::pin(async move {
            match tokio::time::timeout(deadline, next.run(req)).await {
                Ok(resp) => resp,
                Err(_) => ApiError::timeout("request did not complete within the allotted timeout")
                    .into_response(),
            }
        })
    }
}
