//! The shutdown sequence of a tier, as upstream's `lifecycleSignals`:
//!
//! 1. SIGTERM: *shutdown initiated*. `/readyz` fails (`[-]shutdown failed`)
//!    so load balancers stop sending new clients; everything is still served.
//! 2. After `--shutdown-delay-duration`: *not accepting new requests*. The
//!    listener closes (new connections are refused), idle connections are
//!    closed (HTTP/2 `GOAWAY`), and watches are told to end: each sends a
//!    final BOOKMARK (when its client allowed bookmarks) and ends cleanly,
//!    so clients resume from it elsewhere instead of relisting; watches this
//!    tier only proxies end after `--shutdown-watch-termination-grace-period`.
//! 3. In-flight requests finish, for at most `--shutdown-drain`; then the
//!    audit backends are flushed and the process exits 0.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::healthz::CheckFn;
use crate::request::WatchTermination;

/// The signals one tier's shutdown passes through.
#[derive(Clone)]
pub struct Lifecycle(Arc<Inner>);

struct Inner {
    initiated: AtomicBool,
    phase: tokio::sync::watch::Sender<u8>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle(Arc::new(Inner {
            initiated: AtomicBool::new(false),
            phase: tokio::sync::watch::channel(0).0,
        }))
    }
}

impl Lifecycle {
    /// Step 1: from now on `/readyz` fails.
    pub fn initiate_shutdown(&self) {
        self.0.initiated.store(true, Ordering::SeqCst);
    }

    /// Whether shutdown has begun.
    pub fn shutdown_initiated(&self) -> bool {
        self.0.initiated.load(Ordering::SeqCst)
    }

    /// Step 2: watches end.
    pub fn end_watches(&self) {
        self.0.phase.send_if_modified(|p| {
            let was = *p;
            *p = (*p).max(1);
            *p != was
        });
    }

    /// Step 2, after the watch termination grace period: streams this
    /// server only proxies are cut.
    pub fn cut_proxied_streams(&self) {
        self.0.phase.send_replace(2);
    }

    /// What a request learns the end of watches from.
    pub fn watch_termination(&self) -> WatchTermination {
        WatchTermination(self.0.phase.subscribe())
    }

    /// The `shutdown` check of `/readyz`.
    pub fn readyz_check(&self) -> CheckFn {
        let me = self.clone();
        Arc::new(move || {
            let failing = me.shutdown_initiated();
            Box::pin(async move {
                if failing {
                    Err("the server is shutting down".to_string())
                } else {
                    Ok(())
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn readiness_fails_first_and_watches_end_after() {
        let l = Lifecycle::default();
        let check = l.readyz_check();
        let mut term = l.watch_termination();
        assert!(check().await.is_ok());
        l.initiate_shutdown();
        assert!(check().await.is_err());
        assert!(!term.is_set());
        let waiting = tokio::spawn(async move {
            term.wait().await;
        });
        l.end_watches();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("the watch is told to end")
            .expect("task");
        assert!(
            l.watch_termination().is_set(),
            "a later request sees it at once"
        );
    }
}
