//! The aggregator's router: `/api` and `/apis` (aggregated and legacy) from
//! the discovery manager's prepared documents, `/apis/<group>` for groups served by external servers, and
//! everything under `/apis/<group>/<version>` of a remote APIService proxied
//! to its server with the caller's identity. The rest goes on to kube-core.

use std::collections::BTreeMap;
use std::sync::Arc;

use apiserver::apimachinery::errors::ApiError;
use apiserver::authentication::UserInfo;
use apiserver::body::{Request, Response};
use apiserver::endpoints::aggregated_discovery as ad;
use apiserver::endpoints::handlers::json_response;
use apiserver::endpoints::status::plain_text;
use apiserver::request::info::{NonResource, RequestInfo};
use apiserver::server::handler::Interceptor;
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use rand::seq::IndexedRandom;
use serde_json::{json, Value};

use crate::apiservice::{compare_versions, GROUP};
use crate::availability::Availability;
use crate::discovery::Discovery;
use crate::remote::ServiceRef;
use crate::state::State;

/// The interceptor installed in front of the aggregator's own routing.
pub struct Router {
    pub state: Arc<State>,
    pub availability: Arc<Availability>,
    /// Merged discovery, served from memory.
    pub discovery: Arc<Discovery>,
    /// Merged `/openapi/v2`, served from memory.
    pub openapi_v2: Arc<crate::openapi_v2::OpenApiV2>,
    /// The OpenAPI v3 document of the aggregator's own group.
    pub own_openapi: Arc<apiserver::openapi::OpenApi>,
}

impl Interceptor for Router {
    fn intercept(
        &self,
        req: Request,
        info: &RequestInfo,
    ) -> Result<BoxFuture<'static, Response>, Request> {
        let aggregated_asked = req.method() == http::Method::GET
            && ad::wants_aggregated(
                req.headers()
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok()),
            );
        match &info.non_resource {
            NonResource::Api | NonResource::Apis if aggregated_asked => {
                let doc = if info.non_resource == NonResource::Api {
                    self.discovery.core()
                } else {
                    self.discovery.apis()
                };
                let inm = req
                    .headers()
                    .get(http::header::IF_NONE_MATCH)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                Ok(async move { doc.response(inm.as_deref()) }.boxed())
            }
            NonResource::Apis if req.method() == http::Method::GET => {
                let body = self.discovery.legacy_apis();
                Ok(async move { json_response(200, &body, false) }.boxed())
            }
            NonResource::OpenApiV2 if req.method() == http::Method::GET => {
                let v2 = self.openapi_v2.clone();
                Ok(async move { v2.serve(req).await }.boxed())
            }
            NonResource::OpenApiV3 if req.method() == http::Method::GET => {
                let state = self.state.clone();
                let own = self.own_openapi.clone();
                Ok(async move { openapi_v3_root(&state, &own, req).await }.boxed())
            }
            NonResource::OpenApiV3GroupVersion { group, version } if !group.is_empty() => {
                let name = format!("{version}.{group}");
                let services = self.state.services();
                let Some(obj) = services.get(&name).filter(|o| ServiceRef::of(o).is_some()) else {
                    return Err(req);
                };
                let obj = obj.clone();
                let state = self.state.clone();
                let avail = self.availability.clone();
                Ok(async move { proxy(&state, &avail, &name, &obj, req).await }.boxed())
            }
            NonResource::ApiGroup(g) | NonResource::ApiGroupVersion(g, _) if g == GROUP => Err(req),
            _ if info.is_resource_request && info.api_group == GROUP => Err(req),
            NonResource::ApiGroup(g) => match group_of_remote(&self.state, g) {
                Some(body) => Ok(async move { json_response(200, &body, false) }.boxed()),
                None => Err(req),
            },
            _ => {
                let services = self.state.services();
                let Some(name) = remote_apiservice_for(&services, info) else {
                    return Err(req);
                };
                let Some(obj) = services.get(&name).cloned() else {
                    return Err(req);
                };
                let state = self.state.clone();
                let avail = self.availability.clone();
                Ok(async move { proxy(&state, &avail, &name, &obj, req).await }.boxed())
            }
        }
    }
}

/// The remote APIService a request belongs to: `/apis/<g>/<v>/...` to
/// `<v>.<g>`; `/api` and everything under it to the legacy `v1.` APIService
/// when that one is remote (upstream proxies the whole `/api` tree for it).
fn remote_apiservice_for(services: &BTreeMap<String, Value>, info: &RequestInfo) -> Option<String> {
    let name = match &info.non_resource {
        NonResource::Api | NonResource::ApiVersion(_) => "v1.".to_string(),
        NonResource::ApiGroupVersion(g, v) if g != GROUP => format!("{v}.{g}"),
        _ if info.is_resource_request && info.api_prefix == "api" => "v1.".to_string(),
        _ if info.is_resource_request && info.api_group != GROUP => {
            format!("{}.{}", info.api_version, info.api_group)
        }
        _ => return None,
    };
    services
        .get(&name)
        .filter(|o| ServiceRef::of(o).is_some())
        .map(|_| name)
}

/// Sends `req` to the server of the remote APIService `name`.
async fn proxy(
    state: &State,
    avail: &Availability,
    name: &str,
    obj: &Value,
    req: Request,
) -> Response {
    let addr = match avail.health(name) {
        Some(h) if h.available => h.addrs.choose(&mut rand::rng()).cloned(),
        _ => None,
    };
    let Some(addr) = addr else {
        return plain_text(503, "service unavailable");
    };
    let client = match avail.clients.get(state, obj, &addr) {
        Ok(c) => c,
        Err(e) => return ApiError::internal(e).into_response(),
    };
    let user = req.extensions().get::<UserInfo>().cloned();
    client.forward(req, user.as_ref()).await
}

/// `/openapi/v3`: the tiers' own document list, plus one entry per remote
/// APIService pointing at `/openapi/v3/apis/<g>/<v>`, which is proxied to
/// the server owning it (upstream's v3 aggregation: no merging). When the
/// tiers behind serve no OpenAPI v3, their answer is passed on as is.
async fn openapi_v3_root(
    state: &State,
    own: &apiserver::openapi::OpenApi,
    req: Request,
) -> Response {
    let user = req.extensions().get::<UserInfo>().cloned();
    let mut root = match crate::state::get_json(&state.delegate, "/openapi/v3", user.as_ref()).await
    {
        Ok((200, v)) if v.get("paths").is_some_and(Value::is_object) => v,
        _ => return state.delegate.forward(req, user.as_ref()).await,
    };
    let services = state.services();
    if let (Some(paths), Some(Value::Object(mine))) = (
        root.get_mut("paths").and_then(Value::as_object_mut),
        own.v3_root().get("paths"),
    ) {
        for (k, v) in mine {
            paths.insert(k.clone(), v.clone());
        }
    }
    if let Some(paths) = root.get_mut("paths").and_then(Value::as_object_mut) {
        for obj in services.values().filter(|o| ServiceRef::of(o).is_some()) {
            let group = obj
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .unwrap_or("");
            let version = obj
                .pointer("/spec/version")
                .and_then(Value::as_str)
                .unwrap_or("");
            if group.is_empty() || version.is_empty() {
                continue;
            }
            let key = format!("apis/{group}/{version}");
            paths.insert(
                key.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{key}")}),
            );
        }
    }
    json_response(200, &root, false)
}

/// One APIService's place in discovery.
pub(crate) struct Entry {
    group: String,
    version: String,
    group_priority: i64,
    version_priority: i64,
}

pub(crate) fn entries(services: &BTreeMap<String, Value>) -> Vec<Entry> {
    services
        .values()
        .filter_map(|o| {
            let spec = o.get("spec")?;
            Some(Entry {
                group: spec.get("group")?.as_str()?.to_string(),
                version: spec.get("version")?.as_str()?.to_string(),
                group_priority: spec.get("groupPriorityMinimum")?.as_i64()?,
                version_priority: spec.get("versionPriority")?.as_i64()?,
            })
        })
        .collect()
}

/// Named groups in upstream's discovery order: by highest
/// `groupPriorityMinimum`, then name; versions by `versionPriority`, then
/// Kubernetes version order.
pub(crate) fn sorted_groups(entries: Vec<Entry>) -> Vec<(String, Vec<String>)> {
    let mut by_group: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for e in entries.into_iter().filter(|e| !e.group.is_empty()) {
        by_group.entry(e.group.clone()).or_default().push(e);
    }
    let mut groups: Vec<(i64, String, Vec<String>)> = by_group
        .into_iter()
        .map(|(g, mut vs)| {
            let max = vs.iter().map(|e| e.group_priority).max().unwrap_or(0);
            vs.sort_by(|a, b| {
                b.version_priority
                    .cmp(&a.version_priority)
                    .then_with(|| compare_versions(&a.version, &b.version))
            });
            (max, g, vs.into_iter().map(|e| e.version).collect())
        })
        .collect();
    groups.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    groups.into_iter().map(|(_, g, v)| (g, v)).collect()
}

pub(crate) fn api_group(name: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis/<group>` when an external server serves a version of `group`.
fn group_of_remote(state: &State, group: &str) -> Option<Value> {
    let services = state.services();
    let remote = services.values().any(|o| {
        o.pointer("/spec/group").and_then(Value::as_str) == Some(group)
            && ServiceRef::of(o).is_some()
    });
    if !remote {
        return None;
    }
    let (_, versions) = sorted_groups(entries(&services))
        .into_iter()
        .find(|(g, _)| g == group)?;
    let mut body = json!({"kind": "APIGroup", "apiVersion": "v1"});
    if let (Value::Object(out), Value::Object(inner)) = (&mut body, api_group(group, &versions)) {
        out.extend(inner);
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(g: &str, v: &str, gp: i64, vp: i64) -> Entry {
        Entry {
            group: g.into(),
            version: v.into(),
            group_priority: gp,
            version_priority: vp,
        }
    }

    #[test]
    fn paths_of_remote_apiservices_including_the_legacy_v1() {
        let remote = |g: &str, v: &str| {
            (
                format!("{v}.{g}"),
                json!({"spec": {"group": g, "version": v,
                    "service": {"namespace": "ns", "name": "s", "port": 443}}}),
            )
        };
        let local = |g: &str, v: &str| {
            (
                format!("{v}.{g}"),
                json!({"spec": {"group": g, "version": v}}),
            )
        };
        let mut services: BTreeMap<String, Value> = [
            remote("metrics.k8s.io", "v1beta1"),
            local("", "v1"),
            local("apps", "v1"),
        ]
        .into_iter()
        .collect();
        let route = |s: &BTreeMap<String, Value>, p: &str| {
            let info = apiserver::request::info::parse_request_info("GET", p, None);
            remote_apiservice_for(s, &info)
        };
        assert_eq!(
            route(&services, "/apis/metrics.k8s.io/v1beta1/nodes").as_deref(),
            Some("v1beta1.metrics.k8s.io")
        );
        assert_eq!(route(&services, "/apis/apps/v1/deployments"), None);
        assert_eq!(route(&services, "/api/v1/pods"), None);
        assert_eq!(
            route(&services, "/apis/metrics.k8s.io/v1beta1").as_deref(),
            Some("v1beta1.metrics.k8s.io")
        );
        assert_eq!(
            route(&services, "/apis/apiregistration.k8s.io/v1/apiservices"),
            None
        );
        let (name, obj) = remote("", "v1");
        services.insert(name, obj);
        for p in ["/api", "/api/v1", "/api/v1/namespaces/default/pods"] {
            assert_eq!(route(&services, p).as_deref(), Some("v1."), "{p}");
        }
    }

    #[test]
    fn groups_sort_by_priority_then_name_and_versions_by_priority() {
        let got = sorted_groups(vec![
            e("", "v1", 18000, 1),
            e("zeta.io", "v1", 1000, 100),
            e("apps", "v1", 17800, 15),
            e("alpha.io", "v1beta1", 1000, 100),
            e("alpha.io", "v1", 1000, 100),
            e("alpha.io", "v2alpha1", 1000, 200),
        ]);
        assert_eq!(
            got,
            vec![
                ("apps".to_string(), vec!["v1".to_string()]),
                (
                    "alpha.io".to_string(),
                    vec!["v2alpha1".into(), "v1".into(), "v1beta1".into()]
                ),
                ("zeta.io".to_string(), vec!["v1".to_string()]),
            ]
        );
    }
}
