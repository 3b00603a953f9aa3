//! `Audit-Id`: taken from the request or generated, echoed on the response,
//! and passed to the next tier so one request has one ID across processes.

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::body::{Request, Response};

/// The header name.
pub const AUDIT_ID: &str = "audit-id";

/// The audit-ID filter.
#[derive(Clone, Default)]
pub struct AuditId;

impl Filter for AuditId {
    fn call(&self, mut req: Request, next: Next) -> BoxFuture<'static, Response> {
        let id = match req.headers().get(AUDIT_ID).filter(|v| !v.is_empty()) {
            Some(v) => v.clone(),
            None => {
                let v = http::HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
                    .unwrap_or_else(|_| http::HeaderValue::from_static("unknown"));
                req.headers_mut().insert(AUDIT_ID, v.clone());
                v
            }
        };
        Box::pin(async move {
            let mut resp = next.run(req).await;
            resp.headers_mut().insert(AUDIT_ID, id);
            resp
        })
    }
}
