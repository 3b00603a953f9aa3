//! The HTTP body type every layer of the handler chain speaks.
//!
//! Requests and responses carry a boxed body so that filters, handlers and the
//! delegation proxy can pass streams (watches, proxied bodies) through without
//! buffering, and small fixed bodies without extra allocation.

use bytes::Bytes;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Empty, Full};

/// Errors carried by a [`Body`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The body type of every request and response inside the server: a boxed
/// stream of byte frames. (A newtype rather than an alias, so the boxed
/// error's trait-object lifetime never leaks into async code.)
pub struct Body(UnsyncBoxBody<Bytes, BoxError>);

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        std::pin::Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0.size_hint()
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Body")
    }
}

/// A request as the handler chain sees it.
pub type Request = http::Request<Body>;

/// A response as the handler chain produces it.
pub type Response = http::Response<Body>;

/// A body holding `bytes` in one frame.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Body(
        Full::new(bytes.into())
            .map_err(|never| match never {})
            .boxed_unsync(),
    )
}

/// A body with no bytes.
pub fn empty() -> Body {
    Body(Empty::new().map_err(|never| match never {}).boxed_unsync())
}

/// Boxes any body whose error converts into [`BoxError`].
pub fn boxed<B>(body: B) -> Body
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    Body(body.map_err(Into::into).boxed_unsync())
}
