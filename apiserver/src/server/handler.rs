//! The director at the bottom of the chain: health, version and discovery,
//! then resource requests to their stores, and everything this server does
//! not own to the delegate (the next tier), or 404 at the end of the chain.

use std::sync::{Arc, RwLock};

use http_body_util::BodyExt;
use serde_json::Value;

use super::healthz::HealthChecks;
use crate::apimachinery::errors::ApiError;
use crate::authentication::UserInfo;
use crate::body::{self, Request, Response};
use crate::endpoints::aggregated_discovery;
use crate::endpoints::discovery::group_list;
use crate::endpoints::handlers::{self, json_response, Query};
use crate::proxy::Delegate;
use crate::registry::catalog::{Catalog, Route};
use crate::request::info::{NonResource, RequestInfo};

/// The server behind a tier's filter chain (upstream's `GenericAPIServer`):
/// what it serves itself (its [`Catalog`], health checks, version, metrics,
/// OpenAPI, discovery), and the delegate it hands everything else to.
pub struct GenericApiServer {
    groups: RwLock<Arc<Catalog>>,
    delegate: Option<Delegate>,
    pub livez: HealthChecks,
    pub readyz: HealthChecks,
    /// Where this server is in its shutdown (`/readyz` and watches read it).
    pub lifecycle: super::lifecycle::Lifecycle,
    version: Value,
    server_address: String,
    interceptor: Option<Arc<dyn Interceptor>>,
    /// While set, requests this server would answer 404 get 503 with
    /// `Retry-After` instead (routes not loaded yet after start).
    routes_pending: std::sync::atomic::AtomicBool,
    /// Non-resource paths served by the tier itself (`/openapi/v3`), by prefix.
    non_resource: RwLock<Vec<(String, NonResourceHandler)>>,
    /// The OpenAPI documents of this server's resources, when built.
    openapi: RwLock<Option<Arc<crate::openapi::OpenApi>>>,
    /// `/openapi/v2` merged with the delegate's, cached.
    merged_v2: crate::openapi::v2::MergedV2,
    /// Aggregated `/api` and `/apis`, prepared.
    discovery: super::discovery_cache::DiscoveryCache,
}

/// A hook that sees every request after health and version, before this
/// server's own routing: the aggregator uses it to send the paths of remote
/// APIServices elsewhere and to serve merged discovery. It returns the request
/// untouched (`Err`) when it does not take it.
pub trait Interceptor: Send + Sync {
    /// Takes `req` (answering it) or hands it back.
    fn intercept(
        &self,
        req: Request,
        info: &RequestInfo,
    ) -> Result<futures_util::future::BoxFuture<'static, Response>, Request>;
}

/// Serves a non-resource path (e.g. `/openapi/v3/...`) registered with
/// [`GenericApiServer::add_non_resource`].
pub type NonResourceHandler =
    Arc<dyn Fn(Request) -> futures_util::future::BoxFuture<'static, Response> + Send + Sync>;

impl GenericApiServer {
    /// A server serving `groups`, delegating the rest to `delegate`.
    pub fn new(groups: Catalog, delegate: Option<Delegate>, server_address: String) -> Self {
        let lifecycle = super::lifecycle::Lifecycle::default();
        let mut readyz = HealthChecks::new();
        readyz.add("shutdown", lifecycle.readyz_check());
        GenericApiServer {
            groups: RwLock::new(Arc::new(groups)),
            delegate,
            livez: HealthChecks::new(),
            readyz,
            lifecycle,
            version: crate::endpoints::version::version_info(),
            server_address,
            interceptor: None,
            routes_pending: std::sync::atomic::AtomicBool::new(false),
            non_resource: RwLock::new(Vec::new()),
            openapi: RwLock::new(None),
            merged_v2: Default::default(),
            discovery: Default::default(),
        }
    }

    /// Installs the interceptor that sees requests before this server's routing.
    pub fn with_interceptor(mut self, interceptor: Arc<dyn Interceptor>) -> Self {
        self.interceptor = Some(interceptor);
        self
    }

    /// Serves `path` and everything under `path/` with `handler` (checked
    /// after health and version, before delegation).
    pub fn add_non_resource(&self, path: &str, handler: NonResourceHandler) {
        let path = path.trim_end_matches('/').to_string();
        match self.non_resource.write() {
            Ok(mut v) => v.push((path, handler)),
            Err(p) => p.into_inner().push((path, handler)),
        }
    }

    fn non_resource_handler(&self, path: &str) -> Option<NonResourceHandler> {
        let list = match self.non_resource.read() {
            Ok(v) => v,
            Err(p) => p.into_inner(),
        };
        list.iter()
            .find(|(p, _)| path == p || path.starts_with(&format!("{p}/")))
            .map(|(_, h)| h.clone())
    }

    /// Marks the routes as still loading (`true`) or loaded (`false`): while
    /// loading, what would be a 404 at the end of the chain is a 503 with
    /// `Retry-After: 1`, so clients never see false 404s after a restart.
    pub fn set_routes_pending(&self, pending: bool) {
        self.routes_pending
            .store(pending, std::sync::atomic::Ordering::SeqCst);
    }

    /// The groups currently served.
    pub fn groups(&self) -> Arc<Catalog> {
        self.groups
            .read()
            .map(|g| g.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Replaces the served groups (routes added or removed at runtime).
    pub fn set_groups(&self, groups: Catalog) {
        match self.groups.write() {
            Ok(mut g) => *g = Arc::new(groups),
            Err(p) => *p.into_inner() = Arc::new(groups),
        }
    }

    /// Serves `/openapi/v2` and `/openapi/v3[/...]` from `spec`; group
    /// versions it has no document for go to the delegate.
    pub fn set_openapi(&self, spec: Arc<crate::openapi::OpenApi>) {
        match self.openapi.write() {
            Ok(mut o) => *o = Some(spec),
            Err(p) => *p.into_inner() = Some(spec),
        }
    }

    fn openapi(&self) -> Option<Arc<crate::openapi::OpenApi>> {
        self.openapi
            .read()
            .map(|o| o.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// The delegate, if any.
    pub fn delegate(&self) -> Option<&Delegate> {
        self.delegate.as_ref()
    }

    /// Handles one request that passed the filters, routed by the
    /// [`RequestInfo`] the filters recognised (never by the path again).
    pub async fn handle(self: Arc<Self>, mut req: Request) -> Response {
        req.extensions_mut()
            .insert(self.lifecycle.watch_termination());
        let Some(info) = req.extensions().get::<RequestInfo>().cloned() else {
            return ApiError::internal("no request info").into_response();
        };
        match &info.non_resource {
            NonResource::Health { endpoint, check } => {
                let checks = if *endpoint == "livez" {
                    &self.livez
                } else {
                    &self.readyz
                };
                return checks.serve(endpoint, check, &Query::of(&info)).await;
            }
            NonResource::Version => return json_response(200, &self.version, false),
            NonResource::Metrics if req.method() == http::Method::GET => {
                return crate::metrics::response();
            }
            _ => {}
        }
        let req = match &self.interceptor {
            Some(i) => match i.intercept(req, &info) {
                Ok(fut) => return fut.await,
                Err(req) => req,
            },
            None => req,
        };
        let path = info.path.trim_end_matches('/');
        let path = if path.is_empty() { "/" } else { path };
        if !info.is_resource_request {
            if let Some(h) = self.non_resource_handler(path) {
                return h(req).await;
            }
        }
        let groups = self.groups();
        if info.is_resource_request {
            match groups
                .route(&info.api_group, &info.api_version, &info.resource)
                .cloned()
            {
                Some(Route::Store(store)) => return handlers::serve(&store, &info, req).await,
                Some(Route::Handler(_, handler)) => return handler(req, info).await,
                None => {}
            }
            if groups.owns_group(&info.api_group) {
                return ApiError::path_not_found().into_response();
            }
            return self.delegate_or_404(req).await;
        }
        if matches!(
            info.non_resource,
            NonResource::OpenApiV2
                | NonResource::OpenApiV3
                | NonResource::OpenApiV3GroupVersion { .. }
        ) {
            if let Some(spec) = self.openapi() {
                let inm = req
                    .headers()
                    .get(http::header::IF_NONE_MATCH)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                if info.non_resource == NonResource::OpenApiV3 {
                    return self.merged_openapi_v3_root(&spec, req).await;
                }
                if info.non_resource == NonResource::OpenApiV2 && req.method() == http::Method::GET
                {
                    if let Some(d) = &self.delegate {
                        let user = req.extensions().get::<UserInfo>().cloned();
                        if let Some((bytes, etag)) = self
                            .merged_v2
                            .document(spec.v2_bytes(), d, user.as_ref())
                            .await
                        {
                            let accept = req
                                .headers()
                                .get(http::header::ACCEPT)
                                .and_then(|v| v.to_str().ok());
                            return crate::openapi::v2::respond(
                                &bytes,
                                &etag,
                                inm.as_deref(),
                                accept,
                                &self.merged_v2.protobuf,
                            );
                        }
                    }
                }
                if let Some(resp) = spec.serve(path, req.uri().query(), inm.as_deref()) {
                    return resp;
                }
            }
        }
        let aggregated = (info.non_resource == NonResource::Apis
            || (info.non_resource == NonResource::Api && groups.owns_group("")))
            && req.method() == http::Method::GET
            && aggregated_discovery::wants_aggregated(
                req.headers()
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok()),
            );
        if aggregated {
            return self
                .aggregated_discovery(&groups, req, info.non_resource == NonResource::Api)
                .await;
        }
        match &info.non_resource {
            NonResource::Api if groups.owns_group("") => {
                json_response(200, &groups.api_versions(&self.server_address), false)
            }
            NonResource::ApiVersion(v) if groups.owns_group("") => {
                match groups.resource_list("", v) {
                    Some(list) => json_response(200, &list, false),
                    None => ApiError::path_not_found().into_response(),
                }
            }
            NonResource::Apis => {
                let user = req.extensions().get::<UserInfo>().cloned();
                self.merged_group_list(&groups, user.as_ref()).await
            }
            NonResource::ApiGroup(g) if groups.owns_group(g) => match groups.api_group(g) {
                Some(body) => json_response(200, &body, false),
                None => ApiError::path_not_found().into_response(),
            },
            NonResource::ApiGroupVersion(g, v) if groups.owns_group(g) => {
                match groups.resource_list(g, v) {
                    Some(list) => json_response(200, &list, false),
                    None => ApiError::path_not_found().into_response(),
                }
            }
            _ => self.delegate_or_404(req).await,
        }
    }

    /// `/openapi/v3`: this server's group versions, then the delegate's.
    async fn merged_openapi_v3_root(
        &self,
        spec: &crate::openapi::OpenApi,
        req: Request,
    ) -> Response {
        let mut root = spec.v3_root();
        if let Some(d) = &self.delegate {
            let user = req.extensions().get::<UserInfo>().cloned();
            let resp = d.forward(req, user.as_ref()).await;
            if resp.status().is_success() {
                if let Ok(collected) = resp.into_body().collect().await {
                    if let Ok(Value::Object(theirs)) =
                        serde_json::from_slice::<Value>(&collected.to_bytes())
                    {
                        if let (Some(Value::Object(mine)), Some(Value::Object(other))) =
                            (root.get_mut("paths"), theirs.get("paths"))
                        {
                            for (k, v) in other {
                                mine.entry(k.clone()).or_insert_with(|| v.clone());
                            }
                        }
                    }
                }
            }
        }
        json_response(200, &root, false)
    }

    /// Aggregated `/api` (this server's core group) or `/apis` (its named
    /// groups, then the delegate's), from prepared documents with an ETag
    /// answering `If-None-Match` (see [`super::discovery_cache`]).
    async fn aggregated_discovery(
        &self,
        groups: &Arc<Catalog>,
        req: Request,
        core: bool,
    ) -> Response {
        let inm = req
            .headers()
            .get(http::header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let user = req.extensions().get::<UserInfo>().cloned();
        let doc = self
            .discovery
            .document(groups, core, self.delegate.as_ref(), user.as_ref())
            .await;
        doc.response(inm.as_deref())
    }

    async fn delegate_or_404(&self, req: Request) -> Response {
        match &self.delegate {
            Some(d) => {
                let user = req.extensions().get::<UserInfo>().cloned();
                d.forward(req, user.as_ref()).await
            }
            None if self
                .routes_pending
                .load(std::sync::atomic::Ordering::SeqCst) =>
            {
                ApiError::service_unavailable_retry(
                    "the server is starting; its API routes are not loaded yet",
                    1,
                )
                .into_response()
            }
            None => ApiError::path_not_found().into_response(),
        }
    }

    /// `/apis`: this server's groups, then the delegate's.
    async fn merged_group_list(&self, groups: &Catalog, user: Option<&UserInfo>) -> Response {
        let own = groups.group_list_entries();
        let delegated = match &self.delegate {
            Some(d) => fetch_group_list(d, user).await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "could not read the delegate's /apis");
                Vec::new()
            }),
            None => Vec::new(),
        };
        json_response(200, &group_list(own, delegated), false)
    }
}

/// GETs `/apis` from a delegate as `user`.
pub async fn fetch_group_list(d: &Delegate, user: Option<&UserInfo>) -> Result<Vec<Value>, String> {
    let req = http::Request::builder()
        .method("GET")
        .uri("/apis")
        .header(http::header::ACCEPT, "application/json")
        .body(body::empty())
        .map_err(|e| e.to_string())?;
    let resp = d.forward(req, user).await;
    if !resp.status().is_success() {
        return Err(format!("status {}", resp.status()));
    }
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    Ok(v.get("groups")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::info::parse_request_info;

    fn request(path: &str) -> Request {
        let mut req = http::Request::builder()
            .uri(path)
            .body(body::empty())
            .expect("request");
        req.extensions_mut()
            .insert(parse_request_info("GET", path, None));
        req
    }

    #[tokio::test]
    async fn unknown_routes_are_503_while_pending_then_404() {
        let api = Arc::new(GenericApiServer::new(Catalog::default(), None, "x".into()));
        api.set_routes_pending(true);
        let resp = api
            .clone()
            .handle(request("/apis/example.com/v1/widgets"))
            .await;
        assert_eq!(resp.status().as_u16(), 503);
        assert_eq!(
            resp.headers()
                .get(http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
            Some("1")
        );
        api.set_routes_pending(false);
        let resp = api
            .clone()
            .handle(request("/apis/example.com/v1/widgets"))
            .await;
        assert_eq!(resp.status().as_u16(), 404);
    }

    #[tokio::test]
    async fn non_resource_handlers_serve_their_prefix() {
        let api = Arc::new(GenericApiServer::new(Catalog::default(), None, "x".into()));
        api.add_non_resource(
            "/openapi/v3",
            Arc::new(|_req| Box::pin(async { json_response(200, &serde_json::json!({}), false) })),
        );
        let resp = api.clone().handle(request("/openapi/v3/apis/a/v1")).await;
        assert_eq!(resp.status().as_u16(), 200);
        let resp = api.clone().handle(request("/openapi/v3x")).await;
        assert_eq!(resp.status().as_u16(), 404);
    }
}
