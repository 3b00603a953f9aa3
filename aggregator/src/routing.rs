//! The aggregator's router: `/apis` merged from every APIService (and the
//! tiers behind), `/apis/<group>` for groups served by external servers, and
//! everything under `/apis/<group>/<version>` of a remote APIService proxied
//! to its server with the caller's identity. The rest goes on to kube-core.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::{join_all, BoxFuture};
use futures_util::FutureExt;
use rand::seq::IndexedRandom;
use serde_json::{json, Value};
use shared::authentication::UserInfo;
use shared::body::{Request, Response};
use shared::endpoints::aggregated_discovery as ad;
use shared::endpoints::handlers::json_response;
use shared::endpoints::request_info::RequestInfo;
use shared::endpoints::status::{plain_text, ApiError};
use shared::server::handler::Interceptor;

use crate::apiservice::{compare_versions, GROUP};
use crate::availability::Availability;
use crate::remote::ServiceRef;
use crate::state::State;

/// The interceptor installed in front of the aggregator's own routing.
pub struct Router {
    pub state: Arc<State>,
    pub availability: Arc<Availability>,
    /// The aggregator's own resources (`apiregistration.k8s.io`).
    pub own: Arc<shared::endpoints::discovery::GroupSet>,
    /// Itself, for the futures it hands out.
    pub this: std::sync::Weak<Router>,
}

impl Interceptor for Router {
    fn intercept(
        &self,
        req: Request,
        _info: &RequestInfo,
    ) -> Result<BoxFuture<'static, Response>, Request> {
        let path = req.uri().path().trim_end_matches('/').to_string();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let aggregated_asked = req.method() == http::Method::GET
            && ad::wants_aggregated(
                req.headers()
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok()),
            );
        match parts.as_slice() {
            ["api"] | ["apis"] if aggregated_asked => {
                let Some(this) = self.this.upgrade() else {
                    return Err(req);
                };
                let core = parts[0] == "api";
                Ok(aggregated(this, req, core).boxed())
            }
            ["apis"] if req.method() == http::Method::GET => {
                let state = self.state.clone();
                Ok(async move { merged_group_list(&state, req).await }.boxed())
            }
            ["openapi", "v3"] if req.method() == http::Method::GET => {
                let state = self.state.clone();
                Ok(async move { openapi_v3_root(&state, req).await }.boxed())
            }
            ["openapi", "v3", "apis", g, v] => {
                let name = format!("{v}.{g}");
                let services = self.state.services();
                let Some(obj) = services.get(&name).filter(|o| ServiceRef::of(o).is_some()) else {
                    return Err(req);
                };
                let obj = obj.clone();
                let state = self.state.clone();
                let avail = self.availability.clone();
                Ok(async move { proxy(&state, &avail, &name, &obj, req).await }.boxed())
            }
            ["apis", g, ..] if *g == GROUP => Err(req),
            ["apis", g] => match group_of_remote(&self.state, g) {
                Some(body) => Ok(async move { json_response(200, &body, false) }.boxed()),
                None => Err(req),
            },
            ["apis", g, v, ..] => {
                let name = format!("{v}.{g}");
                let services = self.state.services();
                let Some(obj) = services.get(&name).filter(|o| ServiceRef::of(o).is_some()) else {
                    return Err(req);
                };
                let obj = obj.clone();
                let state = self.state.clone();
                let avail = self.availability.clone();
                Ok(async move { proxy(&state, &avail, &name, &obj, req).await }.boxed())
            }
            _ => Err(req),
        }
    }
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
async fn openapi_v3_root(state: &State, req: Request) -> Response {
    let user = req.extensions().get::<UserInfo>().cloned();
    let mut root = match crate::state::get_json(&state.delegate, "/openapi/v3", user.as_ref()).await
    {
        Ok((200, v)) if v.get("paths").is_some_and(Value::is_object) => v,
        _ => return state.delegate.forward(req, user.as_ref()).await,
    };
    let services = state.services();
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
struct Entry {
    group: String,
    version: String,
    group_priority: i64,
    version_priority: i64,
}

fn entries(services: &BTreeMap<String, Value>) -> Vec<Entry> {
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
fn sorted_groups(entries: Vec<Entry>) -> Vec<(String, Vec<String>)> {
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

fn api_group(name: &str, versions: &[String]) -> Value {
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

/// Every named group in discovery order with its versions: the aggregator's
/// group first, then every APIService's group by priority, then any group
/// the tiers behind serve that has no APIService yet (a CRD created since the
/// last registration pass).
async fn group_versions(state: &State, user: Option<&UserInfo>) -> Vec<(String, Vec<String>)> {
    let services = state.services();
    let mut groups: Vec<(String, Vec<String>)> = vec![(GROUP.to_string(), vec!["v1".into()])];
    for (g, versions) in sorted_groups(entries(&services)) {
        if g != GROUP {
            groups.push((g, versions));
        }
    }
    match shared::server::handler::fetch_group_list(&state.delegate, user).await {
        Ok(delegated) => {
            for g in delegated {
                let Some(name) = g.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if groups.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let versions = g
                    .get("versions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.get("version").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect();
                groups.push((name.to_string(), versions));
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not read the delegate's /apis"),
    }
    groups
}

/// Legacy `/apis`.
async fn merged_group_list(state: &State, req: Request) -> Response {
    let user = req.extensions().get::<UserInfo>().cloned();
    let groups: Vec<Value> = group_versions(state, user.as_ref())
        .await
        .iter()
        .map(|(g, v)| api_group(g, v))
        .collect();
    json_response(
        200,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
        false,
    )
}

/// One version's aggregated entry: from the tiers behind (fetched now) for
/// local group/versions, from the last discovery probe for remote ones
/// (`Stale` when the server is not available).
async fn aggregated_version(
    router: &Router,
    user: Option<&UserInfo>,
    group: &str,
    version: &str,
) -> Value {
    let name = format!("{version}.{group}");
    let services = router.state.services();
    let remote = services
        .get(&name)
        .is_some_and(|o| ServiceRef::of(o).is_some());
    if remote {
        let stale = !router
            .availability
            .health(&name)
            .is_some_and(|h| h.available);
        return match router.availability.resource_list(&name) {
            Some(list) => ad::version_from_resource_list(group, version, &list, stale),
            None => ad::version_from_resource_list(group, version, &Value::Null, true),
        };
    }
    if group == GROUP {
        let list = router
            .own
            .resource_list(group, version)
            .unwrap_or(Value::Null);
        return ad::version_from_resource_list(group, version, &list, false);
    }
    let path = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    match crate::state::get_json(&router.state.delegate, &path, user).await {
        Ok((200, list)) => ad::version_from_resource_list(group, version, &list, false),
        _ => ad::version_from_resource_list(group, version, &Value::Null, true),
    }
}

/// Aggregated `/api` (`core` only) or `/apis` (every other group).
async fn aggregated(router: Arc<Router>, req: Request, core: bool) -> Response {
    let user = req.extensions().get::<UserInfo>().cloned();
    let if_none_match = req
        .headers()
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let groups = if core {
        vec![(String::new(), vec!["v1".to_string()])]
    } else {
        group_versions(&router.state, user.as_ref()).await
    };
    let entries = groups.iter().map(|(g, versions)| {
        let router = router.clone();
        let user = user.clone();
        async move {
            let vs = versions
                .iter()
                .map(|v| aggregated_version(&router, user.as_ref(), g, v));
            ad::group_entry(g, join_all(vs).await)
        }
    });
    let items = join_all(entries).await;
    ad::respond(&ad::list(items), if_none_match.as_deref())
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
