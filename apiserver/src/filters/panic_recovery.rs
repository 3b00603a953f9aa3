//! Turns a panic in any handler into upstream's plain-text 500, so one bad
//! request never takes the process (or the connection's other streams) down.

use std::panic::AssertUnwindSafe;

use futures_util::future::BoxFuture;
use futures_util::FutureExt;

use super::{Filter, Next};
use crate::body::{Request, Response};
use crate::endpoints::status::plain_text;

/// The panic-recovery filter.
#[derive(Clone, Default)]
pub struct PanicRecovery;

impl Filter for PanicRecovery {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let method = req.method().clone();
        let uri = req.uri().clone();
        Box::pin(async move {
            match AssertUnwindSafe(next.run(req)).catch_unwind().await {
                Ok(resp) => resp,
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    tracing::error!(%method, %uri, panic = %what, "handler panicked");
                    plain_text(
                        500,
                        "This request caused apiserver to panic. Look in the logs for details.",
                    )
                }
            }
        })
    }
}
