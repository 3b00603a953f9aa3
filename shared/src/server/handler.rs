//! The director at the bottom of the chain: health, version and discovery,
//! then resource requests to their stores, and everything this server does
//! not own to the delegate (the next tier), or 404 at the end of the chain.

use std::sync::{Arc, RwLock};

use http_body_util::BodyExt;
use serde_json::Value;

use super::healthz::HealthChecks;
use crate::authentication::UserInfo;
use crate::body::{self, Request, Response};
use crate::endpoints::discovery::{group_list, GroupSet, Route};
use crate::endpoints::handlers::{self, json_response};
use crate::endpoints::request_info::RequestInfo;
use crate::endpoints::status::ApiError;
use crate::proxy::Delegate;

/// The non-filter part of an API server.
pub struct ApiServer {
    groups: RwLock<Arc<GroupSet>>,
    delegate: Option<Delegate>,
    pub livez: HealthChecks,
    pub readyz: HealthChecks,
    version: Value,
    server_address: String,
    /// The OpenAPI documents of this server's resources, when built.
    openapi: RwLock<Option<Arc<crate::openapi::OpenApi>>>,
}

impl ApiServer {
    /// A server serving `groups`, delegating the rest to `delegate`.
    pub fn new(groups: GroupSet, delegate: Option<Delegate>, server_address: String) -> Self {
        ApiServer {
            groups: RwLock::new(Arc::new(groups)),
            delegate,
            livez: HealthChecks::new(),
            readyz: HealthChecks::new(),
            version: crate::endpoints::version::version_info(),
            server_address,
            openapi: RwLock::new(None),
        }
    }

    /// The groups currently served.
    pub fn groups(&self) -> Arc<GroupSet> {
        self.groups
            .read()
            .map(|g| g.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Replaces the served groups (routes added or removed at runtime).
    pub fn set_groups(&self, groups: GroupSet) {
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

    /// Handles one request that passed the filters.
    pub async fn handle(self: Arc<Self>, req: Request) -> Response {
        let Some(info) = req.extensions().get::<RequestInfo>().cloned() else {
            return ApiError::internal("no request info").into_response();
        };
        let path = req.uri().path().trim_end_matches('/').to_string();
        let path = if path.is_empty() {
            "/".to_string()
        } else {
            path
        };
        for endpoint in ["healthz", "livez", "readyz"] {
            let base = format!("/{endpoint}");
            if path == base || path.starts_with(&format!("{base}/")) {
                let sub = path[base.len()..].trim_start_matches('/');
                let checks = if endpoint == "livez" {
                    &self.livez
                } else {
                    &self.readyz
                };
                return checks.serve(endpoint, sub, req.uri()).await;
            }
        }
        if path == "/version" {
            return json_response(200, &self.version, false);
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
        if path == "/openapi/v2" || path == "/openapi/v3" || path.starts_with("/openapi/v3/") {
            if let Some(spec) = self.openapi() {
                let inm = req
                    .headers()
                    .get(http::header::IF_NONE_MATCH)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                if path == "/openapi/v3" {
                    return self.merged_openapi_v3_root(&spec, req).await;
                }
                if let Some(resp) = spec.serve(&path, req.uri().query(), inm.as_deref()) {
                    return resp;
                }
            }
        }
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match parts.as_slice() {
            ["api"] if groups.owns_group("") => {
                json_response(200, &groups.api_versions(&self.server_address), false)
            }
            ["api", v] if groups.owns_group("") => match groups.resource_list("", v) {
                Some(list) => json_response(200, &list, false),
                None => ApiError::path_not_found().into_response(),
            },
            ["apis"] => {
                let user = req.extensions().get::<UserInfo>().cloned();
                self.merged_group_list(&groups, user.as_ref()).await
            }
            ["apis", g] if groups.owns_group(g) => match groups.api_group(g) {
                Some(body) => json_response(200, &body, false),
                None => ApiError::path_not_found().into_response(),
            },
            ["apis", g, v] if groups.owns_group(g) => match groups.resource_list(g, v) {
                Some(list) => json_response(200, &list, false),
                None => ApiError::path_not_found().into_response(),
            },
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

    async fn delegate_or_404(&self, req: Request) -> Response {
        match &self.delegate {
            Some(d) => {
                let user = req.extensions().get::<UserInfo>().cloned();
                d.forward(req, user.as_ref()).await
            }
            None => ApiError::path_not_found().into_response(),
        }
    }

    /// `/apis`: this server's groups, then the delegate's.
    async fn merged_group_list(&self, groups: &GroupSet, user: Option<&UserInfo>) -> Response {
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
