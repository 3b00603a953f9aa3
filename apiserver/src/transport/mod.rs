//! Reaching other servers: how the TLS identity of a remote server is
//! trusted ([`remote`]: a `caBundle` for `<service>.<namespace>.svc`, or
//! none), which addresses a Service resolves to ([`service`]: its ready
//! EndpointSlice endpoints), and watches carried over shared HTTP/2
//! connections ([`multiplexed`]), and the next tier on TLS or on a Unix
//! socket ([`tier`]). The aggregator (APIServices), admission
//! webhooks and conversion webhooks all use them.

pub mod multiplexed;
pub mod remote;
pub mod service;
pub mod tier;

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// The connector of [`https_client`].
pub type HttpsConnector = hyper_rustls::HttpsConnector<HttpConnector>;

/// An HTTPS-only, HTTP/1.1 client over `tls` (no Nagle delay, pooled
/// connections kept 20 s idle, under the 32 s after which this project's
/// servers close an idle connection, so a pooled one is not reused just as
/// the server closes it; an optional connect timeout): how this server
/// reaches the next tier, admission webhooks and conversion webhooks.
pub fn https_client<B>(
    tls: rustls::ClientConfig,
    connect_timeout: Option<Duration>,
) -> Client<HttpsConnector, B>
where
    B: http_body::Body + Send,
    B::Data: Send,
{
    pooled_client(https_connector(tls, connect_timeout))
}

/// The connector of [`https_client`]: HTTPS only, HTTP/1.1, no Nagle delay.
pub fn https_connector(
    tls: rustls::ClientConfig,
    connect_timeout: Option<Duration>,
) -> HttpsConnector {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(connect_timeout);
    hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http1()
        .wrap_connector(http)
}

/// A pooled HTTP/1.1 client over `connector`, idle connections kept as
/// [`https_client`]'s.
pub fn pooled_client<C, B>(connector: C) -> Client<C, B>
where
    C: hyper_util::client::legacy::connect::Connect + Clone,
    B: http_body::Body + Send,
    B::Data: Send,
{
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(20))
        .build(connector)
}
