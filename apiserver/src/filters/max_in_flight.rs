//! The in-flight limits (upstream's `WithMaxInFlightLimit`), used where
//! priority and fairness is off: at most `--max-requests-inflight`
//! read-only and `--max-mutating-requests-inflight` mutating requests run
//! at once; beyond that 429 with `Retry-After: 1`. Long-running requests
//! and `system:masters` are not counted, as upstream; neither are requests
//! a trusted front proxy forwarded, which were admitted at the front door
//! (the aggregator's priority and fairness). 0 means no limit.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio::sync::Semaphore;

use super::priority_and_fairness::too_many_requests;
use super::{Filter, Next};
use crate::authentication::{FrontProxied, UserInfo};
use crate::body::{Request, Response};
use crate::request::info::RequestInfo;

/// The filter.
#[derive(Clone)]
pub struct MaxInFlight {
    read_only: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl MaxInFlight {
    /// Limits of `read_only` and `mutating` requests (0: unlimited).
    pub fn new(read_only: usize, mutating: usize) -> MaxInFlight {
        let sem = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        MaxInFlight {
            read_only: sem(read_only),
            mutating: sem(mutating),
        }
    }
}

const READ_ONLY_VERBS: &[&str] = &["get", "list", "watch", "proxy"];

impl Filter for MaxInFlight {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return next.run(req);
        };
        if info.is_long_running() || req.extensions().get::<FrontProxied>().is_some() {
            return next.run(req);
        }
        let privileged = req
            .extensions()
            .get::<UserInfo>()
            .is_some_and(|u| u.groups.iter().any(|g| g == "system:masters"));
        if privileged {
            return next.run(req);
        }
        let sem = if READ_ONLY_VERBS.contains(&info.verb.as_str()) {
            &self.read_only
        } else {
            &self.mutating
        };
        let Some(sem) = sem else {
            return next.run(req);
        };
        let Ok(permit) = sem.clone().try_acquire_owned() else {
            return Box::pin(async { too_many_requests() });
        };
        Box::pin(async move {
            let resp = next.run(req).await;
            resp.map(|body| crate::body::observed(body, move |_| drop(permit)))
        })
    }
}
