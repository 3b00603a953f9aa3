//! How a tier reaches the next one: HTTPS on TCP (mTLS, the front-proxy
//! client certificate), or, for a tier on the same host, plain HTTP on the
//! next tier's Unix domain socket (`--delegate-url unix:PATH`), where the
//! kernel's peer credentials take the place of the certificate (see
//! [`crate::request::peer::PeerCredentials`]).
//!
//! The socket link saves what mTLS on loopback costs both processes per
//! request: TLS records (framing, copies, AES-GCM) and the TCP/IP stack
//! (README, "The link between tiers on one host").

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpStream, UnixStream};

use super::HttpsConnector;

/// The scheme prefix of a delegate URL naming a Unix socket: `unix:PATH`
/// (`unix:///run/kube/kube-core.sock` is accepted too).
pub const UNIX_URL_PREFIX: &str = "unix:";

/// The base URL requests over a Unix socket are addressed to: the
/// connector ignores it (the socket is the destination); it gives requests
/// the `Host: localhost` header and the pools a key.
pub const UNIX_BASE_URL: &str = "http://localhost";

/// The socket path of a `unix:` delegate URL, `None` for any other URL.
pub fn unix_socket_of(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix(UNIX_URL_PREFIX)?;
    let path = rest.strip_prefix("//").unwrap_or(rest);
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// Connects to the next tier: over TLS, or to one Unix socket whatever the
/// URI (see [`UNIX_BASE_URL`]).
#[derive(Clone)]
pub enum TierConnector {
    Https(HttpsConnector),
    Unix {
        path: Arc<Path>,
        /// Whether connections speak HTTP/2 from their first byte (prior
        /// knowledge; the servers of this project detect it): for the
        /// multiplexed watch connections. Pooled HTTP/1.1 connections say
        /// no.
        http2: bool,
    },
}

impl TierConnector {
    /// A connector to the Unix socket at `path`.
    pub fn unix(path: &Path, http2: bool) -> Self {
        TierConnector::Unix {
            path: Arc::from(path),
            http2,
        }
    }
}

/// A connection made by [`TierConnector`].
pub enum TierIo {
    Https(hyper_rustls::MaybeHttpsStream<TokioIo<TcpStream>>),
    Unix {
        stream: TokioIo<UnixStream>,
        http2: bool,
    },
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower::Service<Uri> for TierConnector {
    type Response = TierIo;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<TierIo, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match self {
            TierConnector::Https(c) => c.poll_ready(cx),
            TierConnector::Unix { .. } => Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        match self {
            TierConnector::Https(c) => {
                let connecting = c.call(uri);
                Box::pin(async move { connecting.await.map(TierIo::Https) })
            }
            TierConnector::Unix { path, http2 } => {
                let (path, http2) = (path.clone(), *http2);
                Box::pin(async move {
                    let stream = UnixStream::connect(&*path).await.map_err(|e| {
                        io::Error::new(e.kind(), format!("connecting to {}: {e}", path.display()))
                    })?;
                    Ok(TierIo::Unix {
                        stream: TokioIo::new(stream),
                        http2,
                    })
                })
            }
        }
    }
}

impl Connection for TierIo {
    fn connected(&self) -> Connected {
        match self {
            TierIo::Https(s) => s.connected(),
            TierIo::Unix { http2: true, .. } => Connected::new().negotiated_h2(),
            TierIo::Unix { .. } => Connected::new(),
        }
    }
}

impl hyper::rt::Read for TierIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            TierIo::Https(s) => Pin::new(s).poll_read(cx, buf),
            TierIo::Unix { stream, .. } => Pin::new(stream).poll_read(cx, buf),
        }
    }
}

impl hyper::rt::Write for TierIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            TierIo::Https(s) => Pin::new(s).poll_write(cx, buf),
            TierIo::Unix { stream, .. } => Pin::new(stream).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            TierIo::Https(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            TierIo::Unix { stream, .. } => Pin::new(stream).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            TierIo::Https(s) => s.is_write_vectored(),
            TierIo::Unix { stream, .. } => stream.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            TierIo::Https(s) => Pin::new(s).poll_flush(cx),
            TierIo::Unix { stream, .. } => Pin::new(stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            TierIo::Https(s) => Pin::new(s).poll_shutdown(cx),
            TierIo::Unix { stream, .. } => Pin::new(stream).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unix_socket_of;
    use std::path::PathBuf;

    #[test]
    fn unix_urls_name_their_socket() {
        for url in ["unix:/run/kube/core.sock", "unix:///run/kube/core.sock"] {
            assert_eq!(
                unix_socket_of(url),
                Some(PathBuf::from("/run/kube/core.sock"))
            );
        }
        assert_eq!(unix_socket_of("unix:"), None);
        assert_eq!(unix_socket_of("https://127.0.0.1:6444"), None);
    }
}
