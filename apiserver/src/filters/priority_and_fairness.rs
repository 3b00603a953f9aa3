//! API Priority and Fairness (upstream's `WithPriorityAndFairness`): each
//! request is classified, waits for seats of its priority level and holds
//! them while it executes (a WATCH only until the next tier has answered,
//! its initialisation); a request that cannot be admitted gets 429 with
//! `Retry-After` before any expensive work. Long-running requests other
//! than watches (exec, attach, port-forward, proxy, log) are not counted,
//! as upstream. Sits after impersonation and before authorization.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::authentication::UserInfo;
use crate::body::{Request, Response};
use crate::flowcontrol::estimate::OBJECT_COUNT_HEADER;
use crate::flowcontrol::{Classification, FlowControl};
use crate::request::info::RequestInfo;

/// Upstream's response headers naming (by UID, not name) the schema and
/// level a request was classified into.
pub const FLOW_SCHEMA_UID_HEADER: &str = "X-Kubernetes-PF-FlowSchema-UID";
pub const PRIORITY_LEVEL_UID_HEADER: &str = "X-Kubernetes-PF-PriorityLevel-UID";

/// The filter.
#[derive(Clone)]
pub struct PriorityAndFairness {
    pub flow_control: Arc<FlowControl>,
}

/// Upstream's 429 of the in-flight limits: plain text, `Retry-After: 1`.
pub fn too_many_requests() -> Response {
    let mut resp = http::Response::new(crate::body::full(
        "Too many requests, please try again later.\n",
    ));
    *resp.status_mut() = http::StatusCode::TOO_MANY_REQUESTS;
    let h = resp.headers_mut();
    h.insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    h.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        "x-content-type-options",
        http::HeaderValue::from_static("nosniff"),
    );
    resp
}

fn set_headers(resp: &mut Response, c: &Classification) {
    let h = resp.headers_mut();
    for (name, value) in [
        (FLOW_SCHEMA_UID_HEADER, &c.flow_schema_uid),
        (PRIORITY_LEVEL_UID_HEADER, &c.priority_level_uid),
    ] {
        if let Ok(v) = http::HeaderValue::from_str(value) {
            h.insert(name, v);
        }
    }
}

impl Filter for PriorityAndFairness {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let (Some(info), Some(user)) = (
            req.extensions().get::<RequestInfo>(),
            req.extensions().get::<UserInfo>(),
        ) else {
            return next.run(req);
        };
        let watch = info.verb == "watch";
        if info.is_long_running() && !watch {
            return next.run(req);
        }
        let fc = self.flow_control.clone();
        let c = fc.classify(user, info);
        let seats = fc.estimator.seats(info);
        let counted =
            (info.verb == "list" || watch).then(|| (info.api_group.clone(), info.resource.clone()));
        Box::pin(async move {
            let ticket = match fc.admit(&c, seats).await {
                Ok(t) => t,
                Err(_) => {
                    let mut resp = too_many_requests();
                    set_headers(&mut resp, &c);
                    return resp;
                }
            };
            let mut resp = next.run(req).await;
            set_headers(&mut resp, &c);
            if let Some(count) = resp.headers_mut().remove(OBJECT_COUNT_HEADER) {
                if let (Some((group, resource)), Some(n)) = (
                    counted,
                    count.to_str().ok().and_then(|c| c.parse::<u64>().ok()),
                ) {
                    fc.estimator.record(&group, &resource, n);
                }
            }
            if watch {
                // Initialised: the next tier answered; the stream that
                // follows holds no seat.
                drop(ticket);
                return resp;
            }
            // The seats are held until the body has been sent.
            resp.map(|body| crate::body::observed(body, move |_| drop(ticket)))
        })
    }
}
