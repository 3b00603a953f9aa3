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

/// Target size of the frames [`coalesce`] makes: large enough that the
/// per-frame cost (an HTTP/2 DATA frame or HTTP/1 chunk, a TLS record, a
/// wake-up of the proxy in front) vanishes beside the bytes, small enough
/// that a long list still streams with bounded memory.
pub const COALESCED_FRAME: usize = 64 * 1024;

/// Joins many small byte slices (a list's items) into frames of about
/// `target` bytes, lazily: only one frame is built at a time. A slice that
/// alone reaches `target` is passed through without a copy.
pub fn coalesce(parts: impl Iterator<Item = Bytes>, target: usize) -> impl Iterator<Item = Bytes> {
    let mut parts = parts.peekable();
    std::iter::from_fn(move || {
        let first = parts.next()?;
        if first.len() >= target {
            return Some(first);
        }
        let mut frame = bytes::BytesMut::with_capacity(target);
        frame.extend_from_slice(&first);
        while let Some(next) = parts.next_if(|p| frame.len() + p.len() <= target) {
            frame.extend_from_slice(&next);
        }
        Some(frame.freeze())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesce_joins_small_parts_and_passes_big_ones() {
        let parts = vec![
            Bytes::from_static(b"ab"),
            Bytes::from_static(b"cd"),
            Bytes::from_static(b"ef"),
            Bytes::from(vec![b'x'; 10]),
            Bytes::from_static(b"g"),
        ];
        let big_ptr = parts[3].as_ptr();
        let frames: Vec<Bytes> = coalesce(parts.into_iter(), 5).collect();
        assert_eq!(
            frames.iter().map(|f| f.len()).collect::<Vec<_>>(),
            vec![4, 2, 10, 1]
        );
        assert_eq!(frames.concat(), b"abcdefxxxxxxxxxxg".to_vec());
        assert_eq!(frames[2].as_ptr(), big_ptr, "no copy of a big part");
        assert_eq!(coalesce(std::iter::empty(), 5).count(), 0);
    }
}

/// The largest request body any tier reads (upstream's
/// `MaxRequestBodyBytes`, 3 MiB); also the bound of a webhook's patched object.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;
