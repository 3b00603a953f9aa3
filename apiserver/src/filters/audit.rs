//! Writes the audit records of each request the policy selects (upstream's
//! `WithAudit`): `RequestReceived` before the request is handled,
//! `ResponseStarted` when a long-running response begins, and
//! `ResponseComplete` when the response ends (finished, failed, or dropped
//! by the client), each unless the policy omits its stage.
//!
//! The filter sits after authentication (the record names the authenticated
//! user; the impersonated one and the authorizer's decision are added by the
//! later filters through the request's [`AuditContext`]). Requests that fail
//! authentication are recorded by [`Audit::record_unauthenticated`].
//!
//! The request body is read here only when the record needs it: the object
//! of a create or update names its object (`objectRef.name`, `uid`,
//! `resourceVersion`), and at level `Request` and above the body itself is
//! the `requestObject` (JSON, YAML and protobuf bodies are recorded as JSON).
//! At `RequestResponse` the response body is copied as it streams to the
//! client (never for a watch) and recorded as the `responseObject`; an error
//! answer's `Status` fills `responseStatus` at every level.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::future::BoxFuture;
use http_body_util::BodyExt;
use serde_json::Value;

use super::{Filter, Next};
use crate::apimachinery::errors::ApiError;
use crate::audit::event::{MicroTime, ObjectReference, ResponseStatus, User};
use crate::audit::policy::{Attributes, RequestAuditConfig};
use crate::audit::{metrics, AuditContext, Auditor, Event, Level, Stage};
use crate::authentication::UserInfo;
use crate::body::{self, Request, Response};
use crate::request::info::RequestInfo;
use crate::request::{RemoteAddr, RequestStart};

/// Longest user agent recorded (upstream's limit), then `...TRUNCATED`.
const MAX_USER_AGENT: usize = 1024;
/// Most response bytes copied for a `responseObject`; a larger response is
/// recorded without it.
const MAX_CAPTURED_RESPONSE: usize = 64 * 1024 * 1024;

/// The audit filter; without an auditor (no `--audit-policy-file`) it only
/// passes requests on.
#[derive(Clone)]
pub struct Audit {
    pub auditor: Option<Arc<Auditor>>,
}

impl Filter for Audit {
    fn call(&self, mut req: Request, next: Next) -> BoxFuture<'static, Response> {
        let Some(auditor) = &self.auditor else {
            return next.run(req);
        };
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return next.run(req);
        };
        let user = req.extensions().get::<UserInfo>();
        let cfg = auditor.policy.evaluate(&attributes(info, user));
        metrics::level(cfg.level);
        if cfg.level == Level::None {
            return next.run(req);
        }
        let mut ev = new_event(&req, info, user, cfg.level);
        let reads_body = reads_body(&req, info, cfg.level);
        let long_running = info.is_long_running();
        let is_watch = info.verb == "watch";
        let ctx = AuditContext::default();
        req.extensions_mut().insert(ctx.clone());
        let auditor = auditor.clone();
        Box::pin(async move {
            let req = if reads_body {
                match read_request_object(req, &mut ev, &cfg).await {
                    Ok(req) => req,
                    Err(resp) => {
                        ev.response_status = Some(ResponseStatus::code(resp.status().as_u16()));
                        finish(&auditor, ev, &ctx, &cfg);
                        return resp;
                    }
                }
            } else {
                req
            };
            if !auditor.emit(&mut ev, &cfg.omit_stages) {
                metrics::rejected();
                return ApiError::internal("failed to store audit event").into_response();
            }
            let guard = PanicGuard(Some((auditor.clone(), ev.clone(), cfg.omit_stages.clone())));
            let resp = next.run(req).await;
            guard.disarm();
            let code = resp.status().as_u16();
            ev.response_status = Some(ResponseStatus::code(code));
            if long_running {
                let mut started = ev.clone();
                started.stage = Stage::ResponseStarted;
                add_context(&mut started, &ctx);
                auditor.emit(&mut started, &cfg.omit_stages);
            }
            let wants_status = code >= 400;
            let wants_object = cfg.level >= Level::RequestResponse && !is_watch;
            let content_type = resp
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let capture = if (wants_status || wants_object) && !long_running {
                MAX_CAPTURED_RESPONSE
            } else {
                0
            };
            let (parts, body) = resp.into_parts();
            let body = tapped(body, capture, move |captured| {
                if let Some(bytes) = captured {
                    if let Some(obj) = decode(&content_type, &bytes) {
                        if obj.get("kind").and_then(Value::as_str) == Some("Status") {
                            ev.response_status = Some(ResponseStatus::from_status(code, &obj));
                        }
                        if wants_object {
                            let mut obj = obj;
                            if cfg.omit_managed_fields {
                                drop_managed_fields(&mut obj);
                            }
                            ev.response_object = Some(obj);
                        }
                    }
                }
                finish(&auditor, ev, &ctx, &cfg);
            });
            http::Response::from_parts(parts, body)
        })
    }
}

impl Audit {
    /// Records a request that failed authentication (upstream's
    /// `WithFailedAuthenticationAudit`): no user, stage `ResponseStarted`.
    pub fn record_unauthenticated(auditor: &Auditor, req: &Request, code: u16) {
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return;
        };
        let cfg = auditor.policy.evaluate(&attributes(info, None));
        metrics::level(cfg.level);
        if cfg.level == Level::None {
            return;
        }
        let mut ev = new_event(req, info, None, cfg.level);
        ev.response_status = Some(ResponseStatus {
            message: Some("Unauthorized".into()),
            status: Some("Failure".into()),
            reason: Some("Unauthorized".into()),
            ..ResponseStatus::code(code)
        });
        ev.stage = Stage::ResponseStarted;
        auditor.emit(&mut ev, &cfg.omit_stages);
    }
}

fn attributes<'a>(info: &'a RequestInfo, user: Option<&'a UserInfo>) -> Attributes<'a> {
    Attributes {
        user,
        verb: &info.verb,
        is_resource_request: info.is_resource_request,
        path: &info.path,
        namespace: &info.namespace,
        api_group: &info.api_group,
        resource: &info.resource,
        subresource: &info.subresource,
        name: &info.name,
    }
}

fn new_event(req: &Request, info: &RequestInfo, user: Option<&UserInfo>, level: Level) -> Event {
    let received = match req.extensions().get::<RequestStart>() {
        Some(start) => jiff::Timestamp::now()
            .checked_sub(jiff::SignedDuration::try_from(start.0.elapsed()).unwrap_or_default())
            .unwrap_or_else(|_| jiff::Timestamp::now()),
        None => jiff::Timestamp::now(),
    };
    let audit_id = req
        .headers()
        .get(super::audit_id::AUDIT_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut ev = Event::new(level, audit_id, MicroTime::from(received));
    ev.request_uri = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| req.uri().path().to_string());
    ev.verb = info.verb.clone();
    if let Some(u) = user {
        ev.user = User::from(u);
    }
    ev.source_ips = source_ips(req);
    let ua = req
        .headers()
        .get(http::header::USER_AGENT)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    ev.user_agent = if ua.len() > MAX_USER_AGENT {
        let mut end = MAX_USER_AGENT;
        while !ua.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...TRUNCATED", &ua[..end])
    } else {
        ua
    };
    if info.is_resource_request {
        ev.object_ref = Some(ObjectReference {
            resource: info.resource.clone(),
            namespace: info.namespace.clone(),
            name: info.name.clone(),
            api_group: info.api_group.clone(),
            api_version: info.api_version.clone(),
            subresource: info.subresource.clone(),
            ..Default::default()
        });
    }
    ev
}

/// Upstream's `SourceIPs`: the `X-Forwarded-For` chain, then `X-Real-Ip`,
/// then the connection's peer unless it is already last.
fn source_ips(req: &Request) -> Vec<String> {
    let mut ips: Vec<String> = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        .map(str::to_string)
        .collect();
    if ips.is_empty() {
        if let Some(ip) = req
            .headers()
            .get("x-real-ip")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        {
            ips.push(ip.to_string());
        }
    }
    if let Some(RemoteAddr(addr)) = req.extensions().get::<RemoteAddr>() {
        let ip = addr.ip().to_canonical().to_string();
        if ips.last() != Some(&ip) {
            ips.push(ip);
        }
    }
    ips
}

/// Whether the record needs the request body.
fn reads_body(req: &Request, info: &RequestInfo, level: Level) -> bool {
    if !info.is_resource_request
        || info.is_long_running()
        || req.headers().contains_key(http::header::UPGRADE)
        || matches!(
            info.subresource.as_str(),
            "proxy" | "exec" | "attach" | "portforward"
        )
    {
        return false;
    }
    match info.verb.as_str() {
        "create" | "update" => true,
        "patch" | "delete" | "deletecollection" => level >= Level::Request,
        _ => false,
    }
}

/// Reads the request body into the record and puts it back. A body over the
/// limit is answered 413 here, as the handler would.
async fn read_request_object(
    req: Request,
    ev: &mut Event,
    cfg: &RequestAuditConfig,
) -> Result<Request, Response> {
    let (parts, body) = req.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            let limit = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            return Err(if limit {
                ApiError::request_entity_too_large(crate::body::MAX_REQUEST_BODY_BYTES)
            } else {
                ApiError::bad_request(format!("reading the request body: {e}"))
            }
            .into_response());
        }
    };
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    if !bytes.is_empty() {
        if let Some(mut obj) = decode(content_type, &bytes) {
            let is_object = !content_type.contains("patch");
            if is_object {
                if let (Some(r), Some(meta)) = (ev.object_ref.as_mut(), obj.get("metadata")) {
                    let text = |k: &str| {
                        meta.get(k)
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string()
                    };
                    if r.namespace.is_empty() {
                        r.namespace = text("namespace");
                    }
                    if r.name.is_empty() {
                        r.name = text("name");
                    }
                    r.uid = text("uid");
                    r.resource_version = text("resourceVersion");
                }
            }
            if cfg.level >= Level::Request {
                if cfg.omit_managed_fields && is_object {
                    drop_managed_fields(&mut obj);
                }
                ev.request_object = Some(obj);
            }
        }
    }
    Ok(http::Request::from_parts(parts, body::full(bytes)))
}

/// A JSON, YAML or protobuf body as JSON; `None` for anything else.
fn decode(content_type: &str, bytes: &[u8]) -> Option<Value> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    if media.ends_with("json") {
        serde_json::from_slice(bytes).ok()
    } else if media.ends_with("yaml") {
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| serde_saphyr::from_str(t).ok())
    } else if media == "application/vnd.kubernetes.protobuf" {
        crate::protobuf::decode_object(bytes).ok()
    } else {
        None
    }
}

/// Removes `metadata.managedFields` from an object, or from each item of a
/// list.
fn drop_managed_fields(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    if let Some(items) = obj.get_mut("items").and_then(Value::as_array_mut) {
        for item in items {
            if let Some(m) = item.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("managedFields");
            }
        }
    }
}

fn add_context(ev: &mut Event, ctx: &AuditContext) {
    let add = ctx.additions();
    if let Some(u) = &add.impersonated_user {
        ev.impersonated_user = Some(User::from(u));
    }
    for (k, v) in add.annotations {
        ev.annotations.entry(k).or_insert(v);
    }
}

fn finish(auditor: &Auditor, mut ev: Event, ctx: &AuditContext, cfg: &RequestAuditConfig) {
    ev.stage = Stage::ResponseComplete;
    if ev.response_status.is_none() {
        ev.response_status = Some(ResponseStatus::code(200));
    }
    add_context(&mut ev, ctx);
    auditor.emit(&mut ev, &cfg.omit_stages);
}

/// Records the `Panic` stage when the rest of the chain panics while
/// handling an audited request (the panic goes on to `PanicRecovery`).
struct PanicGuard(Option<(Arc<Auditor>, Event, Vec<Stage>)>);

impl PanicGuard {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for PanicGuard {
    fn drop(&mut self) {
        if let Some((auditor, mut ev, omit)) = self.0.take() {
            if std::thread::panicking() {
                ev.stage = Stage::Panic;
                ev.response_status = Some(ResponseStatus {
                    status: Some("Failure".into()),
                    reason: Some("InternalError".into()),
                    message: Some("APIServer panic'd".into()),
                    ..ResponseStatus::code(500)
                });
                auditor.emit(&mut ev, &omit);
            }
        }
    }
}

/// A body that copies up to `capture` bytes of what it yields and calls
/// `on_end` once when it is dropped (finished, failed or abandoned): with
/// the bytes if it finished within the limit, else `None`.
fn tapped(
    body: crate::body::Body,
    capture: usize,
    on_end: impl FnOnce(Option<Bytes>) + Send + 'static,
) -> crate::body::Body {
    crate::body::boxed(Tapped {
        inner: body,
        capture,
        copied: (capture > 0).then(BytesMut::new),
        finished: false,
        on_end: Some(Box::new(on_end)),
    })
}

struct Tapped {
    inner: crate::body::Body,
    capture: usize,
    copied: Option<BytesMut>,
    finished: bool,
    on_end: Option<Box<dyn FnOnce(Option<Bytes>) + Send>>,
}

impl http_body::Body for Tapped {
    type Data = Bytes;
    type Error = crate::body::BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            std::task::Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let capture = self.capture;
                    let over = match &mut self.copied {
                        Some(buf) if buf.len() + data.len() <= capture => {
                            buf.extend_from_slice(data);
                            false
                        }
                        Some(_) => true,
                        None => false,
                    };
                    if over {
                        self.copied = None;
                    }
                }
            }
            std::task::Poll::Ready(None) => self.finished = true,
            std::task::Poll::Ready(Some(Err(_))) => self.copied = None,
            std::task::Poll::Pending => {}
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

impl Drop for Tapped {
    fn drop(&mut self) {
        if let Some(on_end) = self.on_end.take() {
            let finished = self.finished || http_body::Body::is_end_stream(&self.inner);
            let copied = self
                .copied
                .take()
                .filter(|_| finished)
                .map(BytesMut::freeze);
            on_end(copied);
        }
    }
}
