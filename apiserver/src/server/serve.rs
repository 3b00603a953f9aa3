//! The accept loop: TCP and the TLS handshake, or a Unix domain socket and
//! its client's peer credentials, then hyper serving HTTP/1.1 and HTTP/2
//! (with upgrades) on each connection, until shutdown.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio_rustls::TlsAcceptor;

use crate::body;
use crate::filters::HttpService;
use crate::request::peer::{PeerCertificates, PeerCredentials};
use crate::request::RemoteAddr;

/// What one listener allows its clients.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// How long a client may take to finish the TLS handshake.
    pub handshake_timeout: Duration,
    /// How long a client may take to send a request's headers, and how long
    /// an HTTP/1.1 connection may sit idle between requests (upstream's
    /// `ReadHeaderTimeout`, 32 s): a slowloris client, or one that opens
    /// connections and sends nothing, is disconnected.
    pub read_header_timeout: Duration,
    /// How often an HTTP/2 connection is pinged, and how long the peer has
    /// to answer before the connection is closed (dead peers hold nothing).
    pub http2_keep_alive: Duration,
    /// Concurrent HTTP/2 streams per connection.
    pub max_streams_per_connection: u32,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            handshake_timeout: Duration::from_secs(10),
            read_header_timeout: Duration::from_secs(32),
            http2_keep_alive: Duration::from_secs(90),
            max_streams_per_connection: 1000,
            max_connections: 10_000,
        }
    }
}

/// Where a server listens.
pub enum Listener {
    /// HTTPS on TCP: the client's identity is its certificate or credentials.
    Tls(TcpListener, TlsAcceptor),
    /// Plain HTTP on a Unix domain socket, for a front proxy on the same
    /// host: a client is served only if it connects as this process's user
    /// or as root (its peer credentials, checked by the kernel), and is then
    /// trusted as a front proxy (see [`PeerCredentials`]).
    Unix(UnixListener),
}

/// What a connection tells every request on it about its client.
#[derive(Clone)]
struct ConnectionClient {
    certificates: PeerCertificates,
    remote: Option<std::net::SocketAddr>,
    credentials: Option<PeerCredentials>,
}

/// Serves `service` on `listener` until `shutdown` resolves, then stops
/// accepting and waits (up to `drain`) for open connections to finish.
pub async fn serve(
    listener: Listener,
    service: HttpService,
    shutdown: impl std::future::Future<Output = ()>,
    drain: Duration,
    limits: ConnectionLimits,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            _ = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            accepted = accept(&listener) => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let service = service.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let _slot = slot;
            match accepted {
                Accepted::Tcp(tcp, remote, acceptor) => {
                    let _ = tcp.set_nodelay(true);
                    let tls =
                        match tokio::time::timeout(limits.handshake_timeout, acceptor.accept(tcp))
                            .await
                        {
                            Ok(Ok(s)) => s,
                            Ok(Err(e)) => {
                                tracing::debug!(%remote, error = %e, "TLS handshake failed");
                                return;
                            }
                            Err(_) => {
                                tracing::debug!(%remote, "TLS handshake timed out");
                                return;
                            }
                        };
                    let certificates = PeerCertificates::new(
                        tls.get_ref()
                            .1
                            .peer_certificates()
                            .map(|c| c.to_vec())
                            .unwrap_or_default(),
                    );
                    let client = ConnectionClient {
                        certificates,
                        remote: Some(remote),
                        credentials: None,
                    };
                    serve_connection(tls, client, service, limits, watcher).await
                }
                Accepted::Unix(unix, credentials) => {
                    let client = ConnectionClient {
                        certificates: PeerCertificates::default(),
                        remote: None,
                        credentials: Some(credentials),
                    };
                    serve_connection(unix, client, service, limits, watcher).await
                }
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("connections still open after drain period; closing");
    }
}

/// A connection just accepted.
enum Accepted {
    /// A TCP client, its TLS handshake still to do.
    Tcp(TcpStream, std::net::SocketAddr, TlsAcceptor),
    /// A Unix socket client trusted by its peer credentials.
    Unix(UnixStream, PeerCredentials),
}

/// The next client of `listener`; a Unix socket client connecting as
/// another user is turned away (logged) and the next one awaited.
async fn accept(listener: &Listener) -> std::io::Result<Accepted> {
    match listener {
        Listener::Tls(tcp, acceptor) => tcp
            .accept()
            .await
            .map(|(s, a)| Accepted::Tcp(s, a, acceptor.clone())),
        Listener::Unix(unix) => loop {
            let (stream, _) = unix.accept().await?;
            let cred = stream.peer_cred()?;
            let credentials = PeerCredentials {
                uid: cred.uid(),
                gid: cred.gid(),
                pid: cred.pid(),
            };
            if credentials.is_trusted() {
                return Ok(Accepted::Unix(stream, credentials));
            }
            tracing::warn!(
                uid = credentials.uid,
                pid = ?credentials.pid,
                "refused a Unix socket client running as another user"
            );
        },
    }
}

/// Serves HTTP/1.1 and HTTP/2 (with upgrades) on one accepted connection
/// until it closes or the server shuts down.
async fn serve_connection<S>(
    mut stream: S,
    client: ConnectionClient,
    service: HttpService,
    limits: ConnectionLimits,
    watcher: hyper_util::server::graceful::Watcher,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let remote = client.remote;
    // A client that connects and sends nothing is dropped after the header
    // timeout (hyper's own timer starts only with the first bytes of a
    // request).
    let mut first = vec![0u8; 4096];
    let n = match tokio::time::timeout(limits.read_header_timeout, stream.read(&mut first)).await {
        Ok(Ok(n)) if n > 0 => n,
        Ok(_) => return,
        Err(_) => {
            tracing::debug!(?remote, "no request before the header timeout");
            return;
        }
    };
    first.truncate(n);
    let hyper_service = hyper::service::service_fn(move |req: http::Request<Incoming>| {
        let mut req = req.map(body::boxed);
        let extensions = req.extensions_mut();
        extensions.insert(client.certificates.clone());
        if let Some(remote) = client.remote {
            extensions.insert(RemoteAddr(remote));
        }
        if let Some(credentials) = client.credentials {
            extensions.insert(credentials);
        }
        let response = service.handle(req);
        async move { Ok::<_, Infallible>(response.await) }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.read_header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_streams_per_connection)
        .keep_alive_interval(limits.http2_keep_alive)
        .keep_alive_timeout(Duration::from_secs(20));
    let io = Prefixed {
        prefix: first,
        at: 0,
        inner: stream,
    };
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), hyper_service);
    if let Err(e) = watcher.watch(conn.into_owned()).await {
        tracing::debug!(?remote, error = %e, "connection ended with error");
    }
}

/// A stream whose first bytes were read already: they are read again
/// first, then the stream itself.
struct Prefixed<S> {
    prefix: Vec<u8>,
    at: usize,
    inner: S,
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at < self.prefix.len() {
            let n = (self.prefix.len() - self.at).min(buf.remaining());
            let at = self.at;
            buf.put_slice(&self.prefix[at..at + n]);
            self.at += n;
            if self.at == self.prefix.len() {
                self.prefix = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
