//! Delegation: forwarding a request to the next tier over HTTPS, carrying the
//! caller's identity the way upstream's front proxy does.
//!
//! The tier in front authenticates the client; the request then travels with
//! the front-proxy client certificate (mTLS) and `X-Remote-User`,
//! `X-Remote-Uid`, `X-Remote-Group` and `X-Remote-Extra-<key>` headers, which
//! the next tier's request-header authenticator trusts only because of that
//! certificate. Any identity header the client sent itself was stripped by the
//! authentication filter, and is stripped again here. Bodies stream both
//! ways; upgrade requests (exec, attach, port-forward) are passed through.

pub mod endpoints;

use std::time::Duration;

use std::sync::Arc;

use anyhow::Context;
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioIo;

use crate::apimachinery::errors::ApiError;
use crate::authentication::request_header::is_standard_identity_header;
use crate::authentication::UserInfo;
use crate::body::{self, Body, Request, Response};
use crate::transport::multiplexed::{Failed, Multiplexed};
use endpoints::Endpoints;

type Connector = crate::transport::tier::TierConnector;

/// Headers that describe one hop and are never forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
];

/// A client of the next tier: one server, or several replicas of it
/// ([`endpoints`]).
///
/// Requests go over pooled HTTP/1.1 connections, except watches, which
/// share a few HTTP/2 connections ([`Multiplexed`]) when the next tier
/// speaks HTTP/2: a proxied watch then costs a stream, not a connection.
#[derive(Clone)]
pub struct Delegate {
    client: Client<Connector, Body>,
    watches: Arc<Multiplexed>,
    endpoints: Arc<Endpoints>,
}

impl Delegate {
    /// A delegate at `url` using the given TLS client configuration.
    pub fn new(url: &str, tls: rustls::ClientConfig) -> anyhow::Result<Self> {
        Self::replicated(&[url], tls)
    }

    /// A delegate spreading requests over the replicas at `urls` (at least
    /// one). With several, each replica's `/readyz` is probed every second
    /// (on the current runtime) for as long as the delegate lives.
    pub fn replicated(urls: &[&str], tls: rustls::ClientConfig) -> anyhow::Result<Self> {
        anyhow::ensure!(!urls.is_empty(), "no delegate URL");
        let bases = urls
            .iter()
            .map(|url| {
                url.trim_end_matches('/')
                    .parse::<Uri>()
                    .with_context(|| format!("parsing delegate URL {url}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let watches = Arc::new(Multiplexed::new(tls.clone()));
        let client = crate::transport::pooled_client(crate::transport::tier::TierConnector::Https(
            crate::transport::https_connector(tls, Some(Duration::from_secs(5))),
        ));
        Ok(Self::assemble(client, watches, bases))
    }

    /// A delegate on the Unix socket at `path` (the next tier on this
    /// host, serving it with `--unix-socket`): plain HTTP, the caller's
    /// identity in the same headers, the kernel vouching for this process.
    pub fn unix(path: &std::path::Path) -> anyhow::Result<Self> {
        let base = crate::transport::tier::UNIX_BASE_URL.parse::<Uri>()?;
        let watches = Arc::new(Multiplexed::unix(path));
        let client = crate::transport::pooled_client(crate::transport::tier::TierConnector::unix(
            path, false,
        ));
        Ok(Self::assemble(client, watches, vec![base]))
    }

    fn assemble(
        client: Client<Connector, Body>,
        watches: Arc<Multiplexed>,
        bases: Vec<Uri>,
    ) -> Self {
        let endpoints = Arc::new(Endpoints::new(bases));
        if endpoints.len() > 1 {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(probe_readiness(client.clone(), Arc::downgrade(&endpoints)));
            }
        }
        Delegate {
            client,
            watches,
            endpoints,
        }
    }

    /// The delegate's base URL (the first replica's).
    pub fn url(&self) -> &Uri {
        &self.endpoints.get(0).base
    }

    fn target(&self, path_and_query: &str) -> Result<Uri, ApiError> {
        self.target_at(0, path_and_query)
    }

    fn target_at(&self, replica: usize, path_and_query: &str) -> Result<Uri, ApiError> {
        let base = &self.endpoints.get(replica).base;
        let base_path = base.path().trim_end_matches('/');
        let mut parts = base.clone().into_parts();
        let mut full = format!("{base_path}{path_and_query}");
        if full.is_empty() {
            full.push('/');
        }
        parts.path_and_query = Some(
            full.parse()
                .map_err(|e| ApiError::bad_request(format!("invalid request path: {e}")))?,
        );
        Uri::from_parts(parts)
            .map_err(|e| ApiError::internal(format!("building delegate URL: {e}")))
    }

    /// Forwards `req` as `user` and returns the next tier's response as is.
    ///
    /// With several replicas, a request whose connection could not be made
    /// goes to the next replica (nothing was sent, so even a POST is safe
    /// to send again); its body is read first so it can be sent again.
    pub async fn forward(&self, mut req: Request, user: Option<&UserInfo>) -> Response {
        let pq = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
            .to_string();
        let upgrade = is_upgrade(req.headers());
        let info = req.extensions().get::<crate::request::info::RequestInfo>();
        let cut_at_shutdown = req
            .extensions()
            .get::<crate::request::WatchTermination>()
            .filter(|_| !upgrade && info.is_some_and(|i| i.is_long_running()))
            .cloned();
        let multiplex = !upgrade && info.is_some_and(|i| i.verb == "watch");
        let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut req));
        let (parts, body) = req.into_parts();
        let mut headers = HeaderMap::new();
        copy_request_headers(&parts.headers, &mut headers, upgrade);
        set_identity_headers(&mut headers, user);
        if let Some(crate::request::RemoteAddr(addr)) = parts.extensions.get() {
            append_forwarded_for(&mut headers, addr.ip());
        }
        let order = self.endpoints.order();
        // One replica: the body streams through. Several: it is read once so
        // that it can be sent again to the next replica.
        let mut body = if upgrade {
            Some(body::empty())
        } else {
            Some(body)
        };
        let replayable = if order.len() > 1 && !upgrade {
            use http_body_util::BodyExt;
            match body.take().map(|b| b.collect()) {
                Some(collecting) => match collecting.await {
                    Ok(c) => Some(c.to_bytes()),
                    Err(e) => {
                        let limit = e
                            .downcast_ref::<http_body_util::LengthLimitError>()
                            .is_some();
                        return if limit {
                            ApiError::request_entity_too_large(crate::body::MAX_REQUEST_BODY_BYTES)
                        } else {
                            ApiError::bad_request(format!("reading the request body: {e}"))
                        }
                        .into_response();
                    }
                },
                None => None,
            }
        } else {
            None
        };
        let mut last_error = None;
        let mut resp = None;
        for (attempt, &replica) in order.iter().enumerate() {
            let uri = match self.target_at(replica, &pq) {
                Ok(u) => u,
                Err(e) => return e.into_response(),
            };
            let mut out = http::Request::builder()
                .method(parts.method.clone())
                .uri(uri)
                .version(http::Version::HTTP_11);
            if let Some(h) = out.headers_mut() {
                // The last attempt (the only one, with one replica) takes
                // the headers instead of copying them.
                *h = if attempt + 1 == order.len() {
                    std::mem::take(&mut headers)
                } else {
                    headers.clone()
                };
            }
            let this_body = match (&replayable, body.take()) {
                (Some(bytes), _) => body::full(bytes.clone()),
                (None, Some(b)) => b,
                (None, None) => body::empty(),
            };
            let out = match out.body(this_body) {
                Ok(r) => r,
                Err(e) => {
                    return ApiError::internal(format!("building delegated request: {e}"))
                        .into_response()
                }
            };
            let sent = if multiplex {
                match self.watches.request(out).await {
                    Ok(r) => Ok(r),
                    Err(Failed::NotHttp2(out)) => {
                        self.client.request(*out).await.map(|r| r.map(body::boxed))
                    }
                    Err(Failed::Http(e)) => {
                        let base = &self.endpoints.get(replica).base;
                        tracing::warn!(delegate = %base, error = %e, "delegate watch failed");
                        last_error = Some(format!(
                            "error trying to reach the delegate API server at {base}: {e}"
                        ));
                        break;
                    }
                    Err(Failed::Connect(e)) => {
                        self.endpoints.failed(replica);
                        let retry = attempt + 1 < order.len();
                        tracing::warn!(error = %e, retry, "delegate unreachable");
                        last_error = Some(format!(
                            "error trying to reach the delegate API server: {e}"
                        ));
                        if !retry {
                            break;
                        }
                        continue;
                    }
                }
            } else {
                self.client.request(out).await.map(|r| r.map(body::boxed))
            };
            match sent {
                Ok(r) => {
                    resp = Some(r);
                    break;
                }
                Err(e) if caused_by_body_limit(&e) => {
                    return ApiError::request_entity_too_large(crate::body::MAX_REQUEST_BODY_BYTES)
                        .into_response();
                }
                Err(e) => {
                    let base = &self.endpoints.get(replica).base;
                    if e.is_connect() {
                        self.endpoints.failed(replica);
                    }
                    let retry = e.is_connect() && attempt + 1 < order.len();
                    tracing::warn!(delegate = %base, error = %e, retry, "delegate unreachable");
                    last_error = Some(format!(
                        "error trying to reach the delegate API server at {base}: {e}"
                    ));
                    if !retry {
                        break;
                    }
                }
            }
        }
        let Some(resp) = resp else {
            return ApiError::service_unavailable(
                last_error.unwrap_or_else(|| "no delegate replica".to_string()),
            )
            .into_response();
        };
        if resp.status() == http::StatusCode::SWITCHING_PROTOCOLS {
            if let Some(client_upgrade) = client_upgrade {
                return splice_upgrade(resp, client_upgrade);
            }
        }
        let (mut parts, body) = resp.into_parts();
        for h in HOP_BY_HOP {
            parts.headers.remove(*h);
        }
        parts.extensions.insert(crate::request::Forwarded);
        let body = match cut_at_shutdown {
            Some(t) => body::ends_when(body, Box::pin(t.cut())),
            None => body,
        };
        http::Response::from_parts(parts, body)
    }
}

impl Delegate {
    /// Sends one JSON request of its own (not a proxied one) as `user`
    /// (`X-Remote-*`, for a front-proxy delegate) or with a bearer token, and
    /// reads the JSON answer, all within `timeout`. A body that is not JSON
    /// reads as `null`.
    pub async fn call_json(
        &self,
        method: http::Method,
        path: &str,
        body: Option<&serde_json::Value>,
        user: Option<&UserInfo>,
        bearer: Option<&str>,
        timeout: Duration,
    ) -> Result<(u16, serde_json::Value), String> {
        let body = body.map(|v| ("application/json", Bytes::from(v.to_string())));
        let (code, bytes) = self.call(method, path, body, user, bearer, timeout).await?;
        Ok((
            code,
            serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
        ))
    }

    /// Sends one request of its own with an optional `(content type, body)`
    /// and reads the whole answer, within `timeout`: status code and body.
    pub async fn call(
        &self,
        method: http::Method,
        path: &str,
        body: Option<(&str, Bytes)>,
        user: Option<&UserInfo>,
        bearer: Option<&str>,
        timeout: Duration,
    ) -> Result<(u16, Bytes), String> {
        use http_body_util::BodyExt;
        let uri = self.target(path).map_err(|e| e.message)?;
        let mut b = http::Request::builder()
            .method(method.clone())
            .uri(uri)
            .header(http::header::ACCEPT, "application/json");
        if let Some(h) = b.headers_mut() {
            set_identity_headers(h, user);
            if let Some(token) = bearer {
                let v = HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| "the bearer token is not a valid header value".to_string())?;
                h.insert(http::header::AUTHORIZATION, v);
            }
        }
        let req = match body {
            Some((content_type, bytes)) => b
                .header(http::header::CONTENT_TYPE, content_type)
                .body(body::full(bytes)),
            None => b.body(body::empty()),
        }
        .map_err(|e| e.to_string())?;
        let fut = async {
            let resp = self.client.request(req).await.map_err(|e| e.to_string())?;
            let code = resp.status().as_u16();
            let bytes = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            Ok::<_, String>((code, bytes))
        };
        tokio::time::timeout(timeout, fut)
            .await
            .map_err(|_| format!("{method} {path}: no answer within {timeout:?}"))?
    }
}

/// Probes every replica's `/readyz` each second while the delegate lives.
async fn probe_readiness(client: Client<Connector, Body>, endpoints: std::sync::Weak<Endpoints>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(eps) = endpoints.upgrade() else {
            return;
        };
        let probes = eps.iter().enumerate().map(|(i, e)| {
            let client = client.clone();
            let uri = format!("{}/readyz", e.base.to_string().trim_end_matches('/'));
            async move {
                let ready = match uri.parse::<Uri>() {
                    Ok(uri) => {
                        let req = http::Request::get(uri).body(body::empty());
                        match req {
                            Ok(req) => matches!(
                                tokio::time::timeout(Duration::from_secs(1), client.request(req)).await,
                                Ok(Ok(r)) if r.status().is_success()
                            ),
                            Err(_) => false,
                        }
                    }
                    Err(_) => false,
                };
                (i, ready)
            }
        });
        for (i, ready) in futures_util::future::join_all(probes).await {
            eps.set_ready(i, ready);
        }
    }
}

/// Whether forwarding failed because the client's body went over the limit.
fn caused_by_body_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cur = err.source();
    }
    false
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(http::header::UPGRADE)
        && headers
            .get_all(http::header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| {
                v.split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
            })
}

fn copy_request_headers(from: &HeaderMap, to: &mut HeaderMap, upgrade: bool) {
    for (name, value) in from {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n)
            || n == "host"
            || n == "authorization"
            || is_standard_identity_header(n)
            || n.starts_with("impersonate-")
            || (n == "upgrade" && !upgrade)
        {
            continue;
        }
        to.append(name.clone(), value.clone());
    }
    if upgrade {
        to.insert(
            http::header::CONNECTION,
            HeaderValue::from_static("Upgrade"),
        );
    }
}

/// Appends the client's address to `X-Forwarded-For`, as Go's reverse
/// proxy does, so the next tier's audit records see the whole chain.
fn append_forwarded_for(headers: &mut HeaderMap, ip: std::net::IpAddr) {
    let ip = ip.to_canonical().to_string();
    let chain: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let value = if chain.is_empty() {
        ip
    } else {
        format!("{}, {ip}", chain.join(", "))
    };
    if let Ok(v) = HeaderValue::from_str(&value) {
        headers.insert("x-forwarded-for", v);
    }
}

/// Sets `X-Remote-*` for `user`: extra keys are lower-cased and %-escaped.
pub fn set_identity_headers(headers: &mut HeaderMap, user: Option<&UserInfo>) {
    let Some(user) = user else { return };
    if let Ok(v) = HeaderValue::from_str(&user.name) {
        headers.insert("x-remote-user", v);
    }
    if !user.uid.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&user.uid) {
            headers.insert("x-remote-uid", v);
        }
    }
    for g in &user.groups {
        if let Ok(v) = HeaderValue::from_str(g) {
            headers.append("x-remote-group", v);
        }
    }
    for (key, values) in &user.extra {
        let escaped = percent_encoding::utf8_percent_encode(&key.to_lowercase(), EXTRA_KEY_ESCAPE)
            .to_string();
        let Ok(name) = HeaderName::from_bytes(format!("x-remote-extra-{escaped}").as_bytes())
        else {
            continue;
        };
        for value in values {
            if let Ok(v) = HeaderValue::from_str(value) {
                headers.append(name.clone(), v);
            }
        }
    }
}

/// Everything but RFC 3986 unreserved characters is escaped in extra keys.
const EXTRA_KEY_ESCAPE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Answers 101 to the client and copies bytes between the two upgraded
/// connections until either side closes.
fn splice_upgrade<B>(
    resp: http::Response<B>,
    client_upgrade: hyper::upgrade::OnUpgrade,
) -> Response {
    let (mut parts, _) = resp.into_parts();
    let backend = {
        let r = http::Response::from_parts(parts.clone(), ());
        hyper::upgrade::on(r)
    };
    tokio::spawn(async move {
        let (client, backend) = match tokio::join!(client_upgrade, backend) {
            (Ok(c), Ok(b)) => (c, b),
            (c, b) => {
                tracing::debug!(client = ?c.err(), backend = ?b.err(), "upgrade failed");
                return;
            }
        };
        let mut client = TokioIo::new(client);
        let mut backend = TokioIo::new(backend);
        let _ = tokio::io::copy_bidirectional(&mut client, &mut backend).await;
    });
    parts.headers.remove(http::header::TRANSFER_ENCODING);
    parts.extensions.insert(crate::request::Forwarded);
    http::Response::from_parts(parts, body::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_headers_replace_client_ones() {
        let mut from = HeaderMap::new();
        from.insert("x-remote-user", "mallory".parse().unwrap());
        from.insert("x-remote-extra-foo", "bar".parse().unwrap());
        from.insert("authorization", "Bearer x".parse().unwrap());
        from.insert("accept", "application/json".parse().unwrap());
        let mut to = HeaderMap::new();
        copy_request_headers(&from, &mut to, false);
        let mut extra = std::collections::BTreeMap::new();
        extra.insert(
            "Scopes/Of Thing".to_string(),
            vec!["a".to_string(), "b".to_string()],
        );
        let user = UserInfo {
            name: "alice".into(),
            uid: String::new(),
            groups: vec!["g1".into(), "g2".into()],
            extra,
        };
        set_identity_headers(&mut to, Some(&user));
        assert_eq!(to.get("x-remote-user").unwrap(), "alice");
        assert_eq!(to.get_all("x-remote-group").iter().count(), 2);
        assert!(to.get("x-remote-extra-foo").is_none());
        assert!(to.get("authorization").is_none());
        assert_eq!(
            to.get_all("x-remote-extra-scopes%2fof%20thing")
                .iter()
                .count(),
            2
        );
        assert_eq!(to.get("accept").unwrap(), "application/json");
    }
}
