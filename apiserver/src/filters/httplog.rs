//! One log line per request at verbosity 3 and above (upstream's httplog):
//! `HTTP verb=… URI=… latency=… userAgent=… audit-ID=… srcIP=… resp=…`,
//! when the response head is sent, or for a long-running request when its
//! response ends.

use std::time::Instant;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::body::{self, Request, Response};
use crate::request::RemoteAddr;

/// The request-logging filter; it only passes requests on below
/// verbosity 3.
#[derive(Clone, Default)]
pub struct HttpLog;

/// What one line says about a request.
struct Line {
    verb: String,
    uri: String,
    user_agent: String,
    audit_id: String,
    src_ip: String,
    start: Instant,
}

impl Line {
    fn log(&self, status: u16) {
        tracing::info!(
            verb = %self.verb,
            URI = %self.uri,
            latency = ?self.start.elapsed(),
            userAgent = %self.user_agent,
            "audit-ID" = %self.audit_id,
            srcIP = %self.src_ip,
            resp = status,
            "HTTP"
        );
    }
}

impl Filter for HttpLog {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        if !crate::logging::enabled(3) {
            return next.run(req);
        }
        let header = |name: &str| {
            req.headers()
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default()
        };
        let info = req.extensions().get::<crate::request::info::RequestInfo>();
        let line = Line {
            verb: info
                .map(|i| i.verb.to_uppercase())
                .unwrap_or_else(|| req.method().to_string()),
            uri: req
                .uri()
                .path_and_query()
                .map(|p| p.as_str().to_string())
                .unwrap_or_default(),
            user_agent: header("user-agent"),
            audit_id: header(super::audit_id::AUDIT_ID),
            // A Unix socket client has no address: `@`, as Go reports one.
            src_ip: match req.extensions().get::<RemoteAddr>() {
                Some(a) => a.0.to_string(),
                None if req
                    .extensions()
                    .get::<crate::request::peer::PeerCredentials>()
                    .is_some() =>
                {
                    "@".into()
                }
                None => String::new(),
            },
            start: Instant::now(),
        };
        let long_running = info.is_some_and(|i| i.is_long_running());
        Box::pin(async move {
            let resp = next.run(req).await;
            let status = resp.status().as_u16();
            if !long_running {
                line.log(status);
                return resp;
            }
            let (parts, b) = resp.into_parts();
            let b = body::observed(b, move |_| line.log(status));
            http::Response::from_parts(parts, b)
        })
    }
}
