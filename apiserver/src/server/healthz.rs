//! `/healthz`, `/livez`, `/readyz`: named checks, `?verbose`, `?exclude=`, and
//! per-check subpaths (`/readyz/etcd`), with upstream's output format.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::body::{self, Response};
use crate::endpoints::handlers::Query;

/// A check: Ok, or the reason it failed (logged, never shown to clients).
pub type CheckFn = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// Named checks of one endpoint.
#[derive(Clone, Default)]
pub struct HealthChecks {
    checks: Vec<(String, CheckFn)>,
}

impl HealthChecks {
    /// A set with upstream's always-passing `ping` check.
    pub fn new() -> Self {
        let mut h = HealthChecks::default();
        h.add("ping", Arc::new(|| Box::pin(async { Ok(()) })));
        h
    }

    /// Adds a named check.
    pub fn add(&mut self, name: &str, check: CheckFn) {
        self.checks.push((name.to_string(), check));
    }

    /// Serves `/<endpoint>` or `/<endpoint>/<check>`, as the request's
    /// parsed `query` asks (`verbose`, `exclude=<check>`).
    pub async fn serve(&self, endpoint: &str, sub: &str, query: &Query) -> Response {
        let excluded: Vec<&str> = query.all("exclude").collect();
        if !sub.is_empty() {
            let Some((_, check)) = self.checks.iter().find(|(n, _)| n == sub) else {
                return text(404, "404 page not found");
            };
            return match check().await {
                Ok(()) => text(200, "ok"),
                Err(e) => {
                    tracing::warn!(check = sub, error = %e, "health check failed");
                    text(500, &format!("internal server error: {sub} check failed"))
                }
            };
        }
        let mut out = String::new();
        let mut failed = false;
        for (name, check) in &self.checks {
            if excluded.contains(&name.as_str()) {
                out.push_str(&format!("[+]{name} excluded: ok\n"));
                continue;
            }
            match check().await {
                Ok(()) => out.push_str(&format!("[+]{name} ok\n")),
                Err(e) => {
                    tracing::warn!(check = %name, error = %e, "health check failed");
                    failed = true;
                    out.push_str(&format!("[-]{name} failed: reason withheld\n"));
                }
            }
        }
        if failed {
            out.push_str(&format!("{endpoint} check failed"));
            return text(500, &out);
        }
        if query.get("verbose").is_some() {
            out.push_str(&format!("{endpoint} check passed"));
            return text(200, &out);
        }
        text(200, "ok")
    }
}

/// A check that etcd answers (reads its current revision).
pub fn etcd_check(storage: crate::storage::EtcdStorage) -> CheckFn {
    Arc::new(move || {
        let storage = storage.clone();
        Box::pin(async move {
            storage
                .current_revision()
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    })
}

fn text(code: u16, s: &str) -> Response {
    http::Response::builder()
        .status(code)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(body::full(s.to_string()))
        .unwrap_or_else(|_| http::Response::new(body::empty()))
}
