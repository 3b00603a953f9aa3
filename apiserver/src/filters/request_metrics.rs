//! Records every request this tier answers in the request metrics
//! ([`crate::endpoints::metrics`]): count, latency and response size when it
//! ends, the in-flight gauge while it runs (long-running requests in their own
//! gauge, for as long as their response streams).
//!
//! A response another server produced ([`Forwarded`]) is not counted here:
//! the server that answered counts it, so one request is counted once across
//! the tiers. Latency runs from this filter to the end of the response body
//! for long-running requests (a watch: its whole life, as upstream), and to the
//! response head otherwise (the body of a non-streaming response is already
//! encoded then).

use std::time::Instant;

use futures_util::future::BoxFuture;
use http_body::Body as _;

use super::{Filter, Next};
use crate::body::{self, Request, Response};
use crate::endpoints::metrics::{in_flight, is_mutating, RequestLabels};
use crate::request::info::RequestInfo;
use crate::request::Forwarded;

/// The request-metrics filter.
#[derive(Clone, Default)]
pub struct RequestMetrics;

impl Filter for RequestMetrics {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let start = Instant::now();
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return next.run(req);
        };
        let labels = RequestLabels::of(
            info,
            req.method(),
            header(&req, http::header::CONTENT_TYPE),
            header(&req, http::header::USER_AGENT),
        );
        let long_running = info.is_long_running();
        let in_flight = (!long_running).then(|| in_flight(is_mutating(info)));
        Box::pin(async move {
            let resp = next.run(req).await;
            drop(in_flight);
            if resp.extensions().get::<Forwarded>().is_some() {
                return resp;
            }
            let code = resp.status().as_u16();
            if long_running {
                let gauge = labels.long_running();
                let (parts, body) = resp.into_parts();
                let body = body::observed(body, move |bytes| {
                    drop(gauge);
                    labels.observe(code, Some(bytes), start.elapsed());
                });
                return http::Response::from_parts(parts, body);
            }
            match resp.body().size_hint().exact() {
                Some(bytes) => {
                    labels.observe(code, Some(bytes), start.elapsed());
                    resp
                }
                // A streamed read (a large LIST): its size is known at its end.
                None if matches!(labels.verb, "GET" | "LIST") => {
                    let elapsed = start.elapsed();
                    let (parts, body) = resp.into_parts();
                    let body = body::observed(body, move |bytes| {
                        labels.observe(code, Some(bytes), elapsed);
                    });
                    http::Response::from_parts(parts, body)
                }
                None => {
                    labels.observe(code, None, start.elapsed());
                    resp
                }
            }
        })
    }
}

fn header(req: &Request, name: http::header::HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}
