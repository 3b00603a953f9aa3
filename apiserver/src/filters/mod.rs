//! The filters of the handler chain, one per file, each a `tower` layer.
//!
//! A filter implements [`Filter`]: it sees the request and the rest of the
//! chain ([`Next`]) and returns the response. [`FilterLayer`] turns it into a
//! `tower::Layer`. The chain is assembled in `server::chain`, in upstream's
//! order.

pub mod audit;
pub mod audit_id;
pub mod authentication;
pub mod authorization;
pub mod body_limit;
pub mod cache_control;
pub mod httplog;
pub mod impersonation;
pub mod max_in_flight;
pub mod panic_recovery;
pub mod priority_and_fairness;
pub mod request_info;
pub mod request_metrics;
pub mod timeout;
pub mod tracing;

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use tower::{Layer, Service};

use crate::body::{Request, Response};

/// The type-erased service every layer wraps and produces.
///
/// Cloning it is one reference count: a filter hands the rest of the chain
/// to [`Next`] on every request, and a boxed, cloneable service
/// (`tower::util::BoxCloneService`) would copy the whole rest of the chain
/// there, one allocation per filter below, on every request and at every
/// filter. The services of the chain hold no per-request state, so calling
/// a shared one is all a request needs.
#[derive(Clone)]
pub struct HttpService(Arc<dyn Fn(Request) -> BoxFuture<'static, Response> + Send + Sync>);

impl HttpService {
    /// Erases `svc`; each request calls a clone of it (an [`HttpService`]
    /// is returned as it is, without another layer of boxing).
    pub fn new<S>(svc: S) -> Self
    where
        S: Service<Request, Response = Response, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        if let Some(erased) = (&svc as &dyn std::any::Any).downcast_ref::<HttpService>() {
            return erased.clone();
        }
        HttpService(Arc::new(move |req| {
            let mut svc = svc.clone();
            Box::pin(async move {
                // Back-pressure: a layer that limits (concurrency, rate,
                // load shedding) is waited for before the call.
                let ready = match tower::ServiceExt::ready(&mut svc).await {
                    Ok(ready) => ready,
                    Err(never) => match never {},
                };
                match ready.call(req).await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                }
            })
        }))
    }

    /// Handles one request.
    pub fn handle(&self, req: Request) -> BoxFuture<'static, Response> {
        (self.0)(req)
    }
}

impl Service<Request> for HttpService {
    type Response = Response;
    type Error = Infallible;
    type Future = futures_util::future::Map<
        BoxFuture<'static, Response>,
        fn(Response) -> Result<Response, Infallible>,
    >;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        self.handle(req)
            .map(Ok as fn(Response) -> Result<Response, Infallible>)
    }
}

/// The rest of the chain after a filter.
pub struct Next(HttpService);

impl Next {
    /// Passes the request on and returns the response.
    pub fn run(self, req: Request) -> BoxFuture<'static, Response> {
        self.0.handle(req)
    }
}

/// One filter of the chain. Implementations are cheap to clone (shared state
/// behind `Arc`).
pub trait Filter: Clone + Send + Sync + 'static {
    /// Handles a request, usually by calling `next` with it.
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response>;
}

/// A `tower::Layer` applying a [`Filter`].
#[derive(Clone)]
pub struct FilterLayer<F>(pub F);

impl<F: Filter> FilterLayer<F> {
    /// A layer applying `filter`.
    pub fn new(filter: F) -> Self {
        FilterLayer(filter)
    }
}

impl<F: Filter, S> Layer<S> for FilterLayer<F>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
{
    type Service = HttpService;

    /// The filter in front of `inner`: each request is one call of the
    /// filter with the rest of the chain (one boxed future per filter).
    fn layer(&self, inner: S) -> HttpService {
        let filter = self.0.clone();
        let inner = HttpService::new(inner);
        HttpService(Arc::new(move |req| filter.call(req, Next(inner.clone()))))
    }
}

/// Wraps an async function as the innermost service of a chain.
pub fn service_fn<F, Fut>(f: F) -> HttpService
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    HttpService(Arc::new(move |req| Box::pin(f(req))))
}

#[cfg(test)]
mod ready_tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A service that is ready only on its second poll, and refuses to be
    /// called before it said so.
    #[derive(Clone)]
    struct ReadyOnSecondPoll(Arc<AtomicUsize>);

    impl Service<Request> for ReadyOnSecondPoll {
        type Response = Response;
        type Error = Infallible;
        type Future = BoxFuture<'static, Result<Response, Infallible>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _req: Request) -> Self::Future {
            let polls = self.0.load(Ordering::SeqCst);
            Box::pin(async move {
                let status = if polls >= 2 { 200 } else { 500 };
                Ok(http::Response::builder()
                    .status(status)
                    .body(crate::body::empty())
                    .expect("response"))
            })
        }
    }

    #[tokio::test]
    async fn the_chain_waits_until_a_service_is_ready() {
        let polls = Arc::new(AtomicUsize::new(0));
        let svc = HttpService::new(ReadyOnSecondPoll(polls.clone()));
        let req = http::Request::builder()
            .uri("/")
            .body(crate::body::empty())
            .expect("request");
        let resp = svc.handle(req).await;
        assert_eq!(resp.status().as_u16(), 200);
        assert_eq!(polls.load(Ordering::SeqCst), 2);
    }
}
