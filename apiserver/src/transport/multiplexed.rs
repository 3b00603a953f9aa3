//! Long-running streams (watches) to another server over a few shared
//! HTTP/2 connections, as client-go multiplexes its own watches, instead of
//! one HTTP/1.1 connection (and TLS session and file descriptor) per watch.
//!
//! What holds:
//! - A connection carries at most [`MAX_STREAMS_PER_CONNECTION`] streams
//!   (100: the smallest limit RFC 9113 recommends a server advertise, so no
//!   stream ever waits for a slot the server has not granted). Streams are
//!   packed onto the busiest connection with room; a new connection is
//!   opened only when every one is full, and a connection left without
//!   streams is let go (closed once its last stream ends) as soon as another
//!   one carries traffic, or after 10 to 20 s without streams.
//! - Flow control cannot stall the other watches on a connection: each
//!   stream may have [`STREAM_WINDOW`] unread bytes in flight, and the
//!   connection window covers every stream's at once, so a slow watcher
//!   holds back only its own stream (its server waits, as it would on a
//!   full TCP buffer).
//! - A dead server is noticed: the connection is pinged every 30 s (also
//!   while idle) and closed when a ping is not answered within 10 s; its
//!   streams then end with an error and their clients resume.
//! - A server that does not speak HTTP/2 (its ALPN answer is not `h2`) is
//!   remembered, and the caller sends its streams over HTTP/1.1 instead
//!   ([`Failed::NotHttp2`] hands the request back).
//!
//! Unary requests are not sent here: a pooled HTTP/1.1 exchange costs less
//! CPU than an HTTP/2 stream (README, "Where the aggregator's CPU goes").

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::client::conn::http2::SendRequest;
use hyper_util::client::legacy::connect::{Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tower::ServiceExt;

use super::tier::TierConnector;
use crate::body::{self, Body, Request, Response};

/// Streams one connection carries at most.
pub const MAX_STREAMS_PER_CONNECTION: usize = 100;

/// Unread bytes one stream may have in flight.
const STREAM_WINDOW: u32 = 1024 * 1024;

/// Unread bytes a whole connection may have in flight: every stream's window
/// at once.
const CONNECTION_WINDOW: u32 = STREAM_WINDOW * MAX_STREAMS_PER_CONNECTION as u32;

/// How long a connection without streams is kept for the next watch.
const IDLE_TIMEOUT: Duration = Duration::from_secs(20);

/// Upper bound on opening a connection (TCP and TLS).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request was not answered.
pub enum Failed {
    /// The server does not speak HTTP/2: the request, untouched, to send
    /// another way.
    NotHttp2(Box<Request>),
    /// No connection could be made; nothing was sent.
    Connect(String),
    /// The connection failed while the request was on it.
    Http(hyper::Error),
}

/// HTTP/2 connections to any number of servers, shared by their streams.
pub struct Multiplexed {
    connector: TierConnector,
    /// Connections by `scheme://authority`; each list's lock is held while
    /// a connection to it opens, so a burst of watches opens one.
    servers: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Vec<Connection2>>>>>,
    /// Servers that answered without `h2`.
    http1_only: Mutex<HashSet<String>>,
    /// How long a connection without streams is kept.
    idle_timeout: Duration,
}

/// One HTTP/2 connection and how many streams are open on it.
struct Connection2 {
    send: SendRequest<Body>,
    streams: Arc<AtomicUsize>,
}

/// A stream's place on its connection, given back when dropped (when the
/// response body is, or the request fails).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Multiplexed {
    /// A client over `tls` (its ALPN list is replaced by `h2, http/1.1`).
    pub fn new(tls: rustls::ClientConfig) -> Self {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_all_versions()
            .wrap_connector(http);
        Self::over(TierConnector::Https(connector))
    }

    /// A client of the server on the Unix socket at `path`, speaking
    /// HTTP/2 from the first byte (the servers of this project accept it).
    pub fn unix(path: &std::path::Path) -> Self {
        Self::over(TierConnector::unix(path, true))
    }

    fn over(connector: TierConnector) -> Self {
        Multiplexed {
            connector,
            servers: Mutex::new(HashMap::new()),
            http1_only: Mutex::new(HashSet::new()),
            idle_timeout: IDLE_TIMEOUT,
        }
    }

    /// Sends `req` (an absolute `https` URI) as a stream of a shared
    /// connection to its server and returns the response, whose body keeps
    /// the stream's slot until it is dropped.
    pub async fn request(&self, mut req: Request) -> Result<Response, Failed> {
        let Some(server) = server_of(req.uri()) else {
            return Err(Failed::NotHttp2(Box::new(req)));
        };
        if lock(&self.http1_only).contains(&server) {
            return Err(Failed::NotHttp2(Box::new(req)));
        }
        let connections = lock(&self.servers)
            .entry(server.clone())
            .or_default()
            .clone();
        // A connection that closed since it was last used (its server went
        // away or said GOAWAY) fails `ready` before anything is sent: the
        // request then goes on a new connection, once.
        let mut attempt = 0;
        let (mut send, slot) = loop {
            attempt += 1;
            let (mut send, slot) = {
                let mut conns = connections.lock().await;
                match reserve(&mut conns) {
                    Some(reserved) => reserved,
                    None => match self.connect(req.uri().clone(), &connections).await {
                        Ok(Some(conn)) => {
                            conns.push(conn);
                            match reserve(&mut conns) {
                                Some(reserved) => reserved,
                                None => return Err(Failed::Connect("connection closed".into())),
                            }
                        }
                        Ok(None) => {
                            lock(&self.http1_only).insert(server);
                            return Err(Failed::NotHttp2(Box::new(req)));
                        }
                        Err(e) => return Err(Failed::Connect(e)),
                    },
                }
            };
            match send.ready().await {
                Ok(()) => break (send, slot),
                Err(_) if attempt < 2 => continue,
                Err(e) => return Err(Failed::Http(e)),
            }
        };
        *req.version_mut() = http::Version::HTTP_2;
        let resp = send.send_request(req).await.map_err(Failed::Http)?;
        Ok(resp.map(|incoming| {
            body::boxed(WithSlot {
                inner: incoming,
                _slot: slot,
            })
        }))
    }

    /// Opens a connection to the server of `uri`: `None` when it does not
    /// speak HTTP/2.
    async fn connect(
        &self,
        uri: http::Uri,
        pool: &Arc<tokio::sync::Mutex<Vec<Connection2>>>,
    ) -> Result<Option<Connection2>, String> {
        let connecting = self.connector.clone().oneshot(uri.clone());
        let io = match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
            Ok(Ok(io)) => io,
            Ok(Err(e)) => return Err(format!("connecting to {uri}: {e}")),
            Err(_) => return Err(format!("connecting to {uri}: timed out")),
        };
        if !io.connected().is_negotiated_h2() {
            return Ok(None);
        }
        let (send, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .keep_alive_interval(Duration::from_secs(30))
            .keep_alive_timeout(Duration::from_secs(10))
            .keep_alive_while_idle(true)
            .handshake(io)
            .await
            .map_err(|e| format!("HTTP/2 handshake with {uri}: {e}"))?;
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(server = %uri, error = %e, "multiplexed connection ended");
            }
        });
        let streams = Arc::new(AtomicUsize::new(0));
        tokio::spawn(let_go_when_idle(
            Arc::downgrade(pool),
            streams.clone(),
            self.idle_timeout,
        ));
        Ok(Some(Connection2 { send, streams }))
    }

    /// Open connections to the server of `uri` and their streams (tests
    /// and diagnostics).
    pub async fn connections_to(&self, uri: &http::Uri) -> Vec<usize> {
        let Some(server) = server_of(uri) else {
            return Vec::new();
        };
        let Some(conns) = lock(&self.servers).get(&server).cloned() else {
            return Vec::new();
        };
        let conns = conns.lock().await;
        conns
            .iter()
            .filter(|c| !c.send.is_closed())
            .map(|c| c.streams.load(Ordering::Acquire))
            .collect()
    }
}

/// Takes the connection whose stream count is `streams` out of `pool` once
/// it has carried no stream for `idle_timeout` (the connection then
/// closes), or when the pool is gone.
async fn let_go_when_idle(
    pool: std::sync::Weak<tokio::sync::Mutex<Vec<Connection2>>>,
    streams: Arc<AtomicUsize>,
    idle_timeout: Duration,
) {
    let mut idle_checks = 0;
    loop {
        tokio::time::sleep(idle_timeout / 2).await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let mut conns = pool.lock().await;
        let Some(at) = conns.iter().position(|c| Arc::ptr_eq(&c.streams, &streams)) else {
            return;
        };
        if conns[at].send.is_closed() {
            conns.remove(at);
            return;
        }
        idle_checks = if streams.load(Ordering::Acquire) == 0 {
            idle_checks + 1
        } else {
            0
        };
        if idle_checks >= 2 {
            conns.remove(at);
            return;
        }
    }
}

/// Picks the busiest open connection with room and takes a slot on it;
/// drops closed connections, and idle ones once another carries streams.
fn reserve(conns: &mut Vec<Connection2>) -> Option<(SendRequest<Body>, Slot)> {
    conns.retain(|c| !c.send.is_closed());
    let chosen = conns
        .iter()
        .enumerate()
        .map(|(i, c)| (i, c.streams.load(Ordering::Acquire)))
        .filter(|(_, n)| *n < MAX_STREAMS_PER_CONNECTION)
        .max_by_key(|(_, n)| *n)
        .map(|(i, _)| i)?;
    conns[chosen].streams.fetch_add(1, Ordering::AcqRel);
    let send = conns[chosen].send.clone();
    let slot = Slot(conns[chosen].streams.clone());
    let mut i = 0;
    conns.retain(|c| {
        let keep = i == chosen || c.streams.load(Ordering::Acquire) > 0;
        i += 1;
        keep
    });
    Some((send, slot))
}

fn server_of(uri: &http::Uri) -> Option<String> {
    Some(format!("{}://{}", uri.scheme_str()?, uri.authority()?))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A response body that holds its stream's slot.
struct WithSlot<B> {
    inner: B,
    _slot: Slot,
}

impl<B> http_body::Body for WithSlot<B>
where
    B: http_body::Body + Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_window_covers_every_stream() {
        assert_eq!(
            CONNECTION_WINDOW as usize,
            STREAM_WINDOW as usize * MAX_STREAMS_PER_CONNECTION
        );
        assert!(CONNECTION_WINDOW < i32::MAX as u32, "a legal HTTP/2 window");
    }

    #[test]
    fn servers_are_told_apart_by_scheme_and_authority() {
        let a: http::Uri = "https://127.0.0.1:6443/api/v1/pods?watch=1"
            .parse()
            .unwrap();
        let b: http::Uri = "https://127.0.0.1:6444/api/v1/pods".parse().unwrap();
        assert_eq!(server_of(&a).as_deref(), Some("https://127.0.0.1:6443"));
        assert_ne!(server_of(&a), server_of(&b));
        let relative: http::Uri = "/api".parse().unwrap();
        assert_eq!(server_of(&relative), None);
    }

    /// A TLS server (ALPN `alpn`) answering every request with a body that
    /// sends one byte and never ends, as a watch; its CA in PEM.
    async fn endless_server(alpn: Vec<Vec<u8>>) -> (std::net::SocketAddr, String) {
        use futures_util::StreamExt;
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".into()])
            .expect("params")
            .self_signed(&key)
            .expect("cert");
        let der = rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der()).expect("key");
        let mut config = rustls::ServerConfig::builder_with_provider(crate::pki::provider())
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], der)
            .expect("config");
        config.alpn_protocols = alpn;
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = hyper::service::service_fn(|_req| async {
                        let frames = futures_util::stream::once(async {
                            Ok::<_, std::convert::Infallible>(http_body::Frame::data(
                                bytes::Bytes::from_static(b"x"),
                            ))
                        })
                        .chain(futures_util::stream::pending());
                        Ok::<_, std::convert::Infallible>(http::Response::new(
                            http_body_util::StreamBody::new(frames),
                        ))
                    });
                    let mut builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    builder.http2().max_concurrent_streams(1000);
                    let _ = builder
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                        .await;
                });
            }
        });
        (addr, cert.pem())
    }

    fn watch_request(addr: std::net::SocketAddr) -> Request {
        http::Request::get(format!("https://{addr}/api/v1/pods?watch=1"))
            .body(body::empty())
            .expect("request")
    }

    #[tokio::test]
    async fn watches_share_connections_of_at_most_100_streams() {
        use http_body_util::BodyExt;
        let (addr, ca) = endless_server(vec![b"h2".to_vec(), b"http/1.1".to_vec()]).await;
        let client = Multiplexed::new(crate::pki::client_config(ca.as_bytes(), None).expect("tls"));
        let uri = watch_request(addr).uri().clone();
        let mut open = Vec::new();
        for _ in 0..150 {
            let Ok(resp) = client.request(watch_request(addr)).await else {
                panic!("watch not answered");
            };
            assert_eq!(resp.version(), http::Version::HTTP_2);
            let mut body = resp.into_body();
            let first = body.frame().await.expect("a frame").expect("data");
            assert_eq!(first.into_data().ok().as_deref(), Some(&b"x"[..]));
            open.push(body);
        }
        let mut streams = client.connections_to(&uri).await;
        streams.sort();
        assert_eq!(
            streams,
            vec![50, 100],
            "two connections, the first one full"
        );

        // Ended watches give their slots back; an idle connection is let
        // go once another one carries the next watch.
        drop(open);
        let mut streams = client.connections_to(&uri).await;
        streams.sort();
        assert_eq!(streams, vec![0, 0]);
        let Ok(next) = client.request(watch_request(addr)).await else {
            panic!("watch not answered");
        };
        assert_eq!(client.connections_to(&uri).await, vec![1]);
        drop(next);
    }

    #[tokio::test]
    async fn a_connection_without_streams_is_let_go() {
        let (addr, ca) = endless_server(vec![b"h2".to_vec()]).await;
        let mut client =
            Multiplexed::new(crate::pki::client_config(ca.as_bytes(), None).expect("tls"));
        client.idle_timeout = Duration::from_millis(200);
        let uri = watch_request(addr).uri().clone();
        let Ok(watch) = client.request(watch_request(addr)).await else {
            panic!("watch not answered");
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(client.connections_to(&uri).await, vec![1], "busy: kept");
        drop(watch);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(client.connections_to(&uri).await.is_empty(), "idle: let go");
    }

    #[tokio::test]
    async fn a_server_without_http2_gets_its_request_back() {
        let (addr, ca) = endless_server(vec![b"http/1.1".to_vec()]).await;
        let client = Multiplexed::new(crate::pki::client_config(ca.as_bytes(), None).expect("tls"));
        for _ in 0..2 {
            match client.request(watch_request(addr)).await {
                Err(Failed::NotHttp2(req)) => assert_eq!(req.uri().port_u16(), Some(addr.port())),
                _ => panic!("expected the request back"),
            }
        }
        assert!(lock(&client.http1_only).contains(&format!("https://{addr}")));
    }

    #[tokio::test]
    async fn an_unreachable_server_is_a_connect_failure() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        drop(listener);
        let (_, ca) = endless_server(vec![b"h2".to_vec()]).await;
        let client = Multiplexed::new(crate::pki::client_config(ca.as_bytes(), None).expect("tls"));
        assert!(matches!(
            client.request(watch_request(addr)).await,
            Err(Failed::Connect(_))
        ));
    }
}
