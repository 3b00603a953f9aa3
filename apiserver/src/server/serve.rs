//! The accept loop: TCP, TLS handshake, then hyper serving HTTP/1.1 and
//! HTTP/2 (with upgrades) on each connection, until shutdown.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::body;
use crate::filters::HttpService;
use crate::request::peer::PeerCertificates;

/// How long a client may take to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// HTTP/2 streams per connection (kube-apiserver's default).
const MAX_CONCURRENT_STREAMS: u32 = 1000;

/// Serves `service` on `listener` until `shutdown` resolves, then stops
/// accepting and waits (up to `drain`) for open connections to finish.
pub async fn serve(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    service: HttpService,
    shutdown: impl std::future::Future<Output = ()>,
    drain: Duration,
) {
    let acceptor = TlsAcceptor::from(tls);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (tcp, remote) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let service = service.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
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
            let peer = PeerCertificates::new(
                tls.get_ref()
                    .1
                    .peer_certificates()
                    .map(|c| c.to_vec())
                    .unwrap_or_default(),
            );
            let hyper_service = hyper::service::service_fn(move |req: http::Request<Incoming>| {
                let mut req = req.map(body::boxed);
                req.extensions_mut().insert(peer.clone());
                let response = service.handle(req);
                async move { Ok::<_, Infallible>(response.await) }
            });
            let mut builder = auto::Builder::new(TokioExecutor::new());
            builder
                .http2()
                .max_concurrent_streams(MAX_CONCURRENT_STREAMS);
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), hyper_service);
            if let Err(e) = watcher.watch(conn.into_owned()).await {
                tracing::debug!(%remote, error = %e, "connection ended with error");
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
