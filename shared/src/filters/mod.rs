//! The filters of the handler chain, one per file, each a `tower` layer.
//!
//! A filter implements [`Filter`]: it sees the request and the rest of the
//! chain ([`Next`]) and returns the response. [`FilterLayer`] turns it into a
//! `tower::Layer`. The chain is assembled in `server::chain`, in upstream's
//! order.

pub mod audit_id;
pub mod authentication;
pub mod authorization;
pub mod body_limit;
pub mod cache_control;
pub mod impersonation;
pub mod panic_recovery;
pub mod request_info;
pub mod timeout;

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tower::util::BoxCloneService;
use tower::{Layer, Service};

use crate::body::{Request, Response};

/// The type-erased service every layer wraps and produces.
pub type HttpService = BoxCloneService<Request, Response, Infallible>;

/// The rest of the chain after a filter.
pub struct Next(HttpService);

impl Next {
    /// Passes the request on and returns the response.
    pub fn run(self, req: Request) -> BoxFuture<'static, Response> {
        let mut svc = self.0;
        let fut = svc.call(req);
        Box::pin(async move {
            match fut.await {
                Ok(resp) => resp,
                Err(never) => match never {},
            }
        })
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
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Service = FilterService<F>;

    fn layer(&self, inner: S) -> Self::Service {
        FilterService {
            filter: self.0.clone(),
            inner: BoxCloneService::new(inner),
        }
    }
}

/// The service a [`FilterLayer`] produces.
#[derive(Clone)]
pub struct FilterService<F> {
    filter: F,
    inner: HttpService,
}

impl<F: Filter> Service<Request> for FilterService<F> {
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
        use futures_util::FutureExt;
        self.filter
            .call(req, Next(self.inner.clone()))
            .map(Ok as fn(Response) -> Result<Response, Infallible>)
    }
}

/// Wraps an async function as the innermost service of a chain.
pub fn service_fn<F, Fut>(f: F) -> HttpService
where
    F: Fn(Request) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    BoxCloneService::new(tower::service_fn(move |req| {
        let fut = f(req);
        async move { Ok::<_, Infallible>(fut.await) }
    }))
}
