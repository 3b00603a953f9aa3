//! Opens a server span for each request the tracer samples (upstream's
//! `WithTracing`): a child of the request's `traceparent`, or the root of a
//! new trace; the request goes on carrying the new span as its
//! `traceparent`, so the next tier's span is its child and one request is
//! one trace across the tiers. The span ends when the response head is
//! sent, or for a long-running request when its response ends.

use std::sync::Arc;
use std::time::SystemTime;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::body::{self, Request, Response};
use crate::traces::{Span, SpanContext, Tracer};

/// The tracing filter; without a tracer (no `--tracing-config-file`) it
/// only passes requests on.
#[derive(Clone, Default)]
pub struct Tracing {
    pub tracer: Option<Arc<Tracer>>,
}

impl Filter for Tracing {
    fn call(&self, mut req: Request, next: Next) -> BoxFuture<'static, Response> {
        let Some(tracer) = self.tracer.clone() else {
            return next.run(req);
        };
        let parent = req
            .headers()
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .and_then(SpanContext::from_traceparent);
        if !tracer.sample(parent.as_ref()) {
            return next.run(req);
        }
        let context = SpanContext::child_of(parent.as_ref(), true);
        if let Ok(v) = http::HeaderValue::from_str(&context.traceparent()) {
            req.headers_mut().insert("traceparent", v);
        }
        let info = req.extensions().get::<crate::request::info::RequestInfo>();
        let long_running = info.is_some_and(|i| i.is_long_running());
        let mut attributes = vec![
            ("http.request.method", req.method().to_string()),
            ("url.path", req.uri().path().to_string()),
        ];
        if let Some(ua) = req
            .headers()
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
        {
            attributes.push(("user_agent.original", ua.to_string()));
        }
        if let Some(id) = req
            .headers()
            .get(super::audit_id::AUDIT_ID)
            .and_then(|v| v.to_str().ok())
        {
            attributes.push(("audit-id", id.to_string()));
        }
        let start = SystemTime::now();
        Box::pin(async move {
            let resp = next.run(req).await;
            let status_code = resp.status().as_u16();
            let span = move || Span {
                context,
                parent_span_id: parent.map(|p| p.span_id),
                name: "KubernetesAPI",
                start,
                end: SystemTime::now(),
                attributes,
                status_code,
            };
            if !long_running {
                tracer.sink.export(span());
                return resp;
            }
            let (parts, b) = resp.into_parts();
            let b = body::observed(b, move |_| tracer.sink.export(span()));
            http::Response::from_parts(parts, b)
        })
    }
}
