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

/// A body that counts the bytes it yields and calls `on_end` with the count
/// once, when it is dropped (finished, failed, or abandoned by the client):
/// how the request metrics see the end of a streamed response.
pub fn observed(body: Body, on_end: impl FnOnce(u64) + Send + 'static) -> Body {
    Body(
        Observed {
            inner: body,
            bytes: 0,
            on_end: Some(Box::new(on_end)),
        }
        .boxed_unsync(),
    )
}

/// A body that ends (cleanly, between frames) once `end` resolves: how a
/// proxied stream is cut at shutdown.
pub fn ends_when(body: Body, end: futures_util::future::BoxFuture<'static, ()>) -> Body {
    Body(
        EndsWhen {
            inner: body,
            end: Some(end),
        }
        .boxed_unsync(),
    )
}

struct EndsWhen {
    inner: Body,
    end: Option<futures_util::future::BoxFuture<'static, ()>>,
}

impl http_body::Body for EndsWhen {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        if let Some(end) = self.end.as_mut() {
            if end.as_mut().poll(cx).is_ready() {
                self.end = None;
                self.inner = empty();
                return std::task::Poll::Ready(None);
            }
        }
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

struct Observed {
    inner: Body,
    bytes: u64,
    on_end: Option<Box<dyn FnOnce(u64) + Send>>,
}

impl http_body::Body for Observed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if let std::task::Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
                self.bytes += data.len() as u64;
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        if let Some(on_end) = self.on_end.take() {
            on_end(self.bytes);
        }
    }
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

    #[tokio::test]
    async fn observed_bodies_report_their_bytes_once_dropped() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
        let s = seen.clone();
        let body = observed(full(&b"hello"[..]), move |n| {
            *s.lock().expect("lock") = Some(n);
        });
        let bytes = body.collect().await.expect("body").to_bytes();
        assert_eq!(&bytes[..], b"hello");
        assert_eq!(*seen.lock().expect("lock"), Some(5));
    }
}

/// The largest request body any tier reads (upstream's
/// `MaxRequestBodyBytes`, 3 MiB); also the bound of a webhook's patched object.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;
