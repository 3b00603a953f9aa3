//! The discovery manager: merged discovery served from memory, as upstream's
//! kube-aggregator `discoveryManager` does it.
//!
//! Each source is fetched into a cache with `If-None-Match`:
//! - the local tier chain (kube-core, and the CRD tier behind it): its
//!   aggregated `/api` and `/apis`. Upstream's local delegates run in-process
//!   and are always current; here they sit in other processes, so they are
//!   asked every second (a 304 when nothing changed), at once when an
//!   APIService or a CRD changes (the CRD tier installs a CRD's routes right
//!   after marking it Established), and a few times shortly after that;
//! - every remote APIService's server (one fetch per Service, shared by the
//!   APIServices behind it): its aggregated `/apis`, or the legacy
//!   `/apis/<g>/<v>` lists when it serves no aggregated document; fetched
//!   when one of its APIServices changes and every minute (upstream's
//!   period), failed ones retried sooner.
//!
//! `/api` and `/apis` (aggregated and legacy) are then prepared documents:
//! serving them sends nothing to the tiers behind. A remote group/version
//! whose last fetch failed, or whose APIService is not available, is listed
//! with `freshness: Stale`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use apiserver::endpoints::aggregated_discovery::{self as ad, Document};
use apiserver::proxy::Delegate;
use apiserver::registry::catalog::Catalog;
use bytes::Bytes;
use futures_util::future::join_all;
use http_body_util::BodyExt;
use rand::seq::IndexedRandom;
use serde_json::{json, Value};
use tokio::sync::{watch, Notify};

use crate::apiservice::GROUP;
use crate::availability::Availability;
use crate::remote::{resolve, ServiceRef};
use crate::routing::{api_group, sorted_groups};
use crate::state::{internal_user, State};

/// Deadline of one discovery fetch (upstream: 5 s).
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the local tier chain is asked (with `If-None-Match`).
const LOCAL_PERIOD: Duration = Duration::from_secs(1);
/// After a kick (APIService or CRD change), the local chain is asked this
/// many more times, this far apart, to catch routes installed just after.
const LOCAL_FOLLOW_UPS: u32 = 3;
const LOCAL_FOLLOW_UP_PERIOD: Duration = Duration::from_millis(250);
/// How often every remote server is asked again (upstream: one minute).
const REMOTE_PERIOD: Duration = Duration::from_secs(60);
/// How soon a failed remote fetch is retried.
const REMOTE_RETRY: Duration = Duration::from_secs(10);

/// The cached aggregated documents of the local tier chain.
#[derive(Default)]
struct Local {
    core: Vec<Value>,
    core_etag: Option<String>,
    apis: Vec<Value>,
    apis_etag: Option<String>,
    /// At least one fetch of both documents succeeded.
    synced: bool,
    /// The last fetch failed (auto-registration then waits).
    stale: bool,
}

/// The cached discovery of one remote Service.
#[derive(Default, Clone)]
struct Remote {
    etag: Option<String>,
    /// (group, version) → `APIVersionDiscovery`.
    versions: BTreeMap<(String, String), Value>,
    stale: bool,
}

/// The documents served.
struct Served {
    core: Document,
    apis: Document,
    legacy_apis: Value,
}

/// The discovery manager (see the module documentation).
pub struct Discovery {
    state: Arc<State>,
    avail: Arc<Availability>,
    own: Arc<Catalog>,
    local: RwLock<Local>,
    remote: RwLock<HashMap<String, Remote>>,
    served: RwLock<Arc<Served>>,
    local_kick: Notify,
    local_changed: watch::Sender<u64>,
}

/// One fetched response.
pub(crate) struct Fetched {
    pub status: u16,
    pub aggregated: bool,
    pub etag: Option<String>,
    pub body: Bytes,
}

/// GETs `path` through `d` as the aggregator, with `accept` and
/// `If-None-Match`, within [`FETCH_TIMEOUT`].
pub(crate) async fn fetch(
    d: &Delegate,
    path: &str,
    accept: &str,
    inm: Option<&str>,
) -> Result<Fetched, String> {
    let mut b = http::Request::builder()
        .method("GET")
        .uri(path)
        .header(http::header::ACCEPT, accept);
    if let Some(tag) = inm {
        b = b.header(http::header::IF_NONE_MATCH, tag);
    }
    let req = b
        .body(apiserver::body::empty())
        .map_err(|e| e.to_string())?;
    let user = internal_user();
    let fut = async {
        let resp = d.forward(req, Some(&user)).await;
        let status = resp.status().as_u16();
        let (aggregated, etag) = {
            let header = |h: http::header::HeaderName| {
                resp.headers()
                    .get(h)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            (
                ad::is_aggregated(header(http::header::CONTENT_TYPE).as_deref()),
                header(http::header::ETAG),
            )
        };
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok::<_, String>(Fetched {
            status,
            aggregated,
            etag,
            body,
        })
    };
    tokio::time::timeout(FETCH_TIMEOUT, fut)
        .await
        .map_err(|_| format!("GET {path}: timed out"))?
}

/// The key upstream caches remote results under: `<ns>/<name>:<port>`.
pub(crate) fn service_key(svc: &ServiceRef) -> String {
    format!("{}/{}:{}", svc.namespace, svc.name, svc.port)
}

fn spec_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn rv(obj: &Value) -> String {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// `entry` with its freshness set.
fn with_freshness(mut entry: Value, stale: bool) -> Value {
    if let Value::Object(m) = &mut entry {
        m.insert("freshness".into(), json!(ad::freshness(stale)));
    }
    entry
}

/// (group, version) → version entry of a list of group entries.
fn index(items: &[Value]) -> BTreeMap<(String, String), Value> {
    let mut out = BTreeMap::new();
    for g in items {
        let name = ad::entry_name(g);
        for v in g
            .get("versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(ver) = v.get("version").and_then(Value::as_str) {
                out.insert((name.to_string(), ver.to_string()), v.clone());
            }
        }
    }
    out
}

/// A client of a random address of the server behind the remote
/// APIService `obj` (the addresses the availability controller last found,
/// else resolved now).
pub(crate) async fn remote_client(
    state: &State,
    avail: &Availability,
    obj: &Value,
) -> Result<Delegate, String> {
    let svc = ServiceRef::of(obj).ok_or("not a remote APIService")?;
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let addrs = match avail.health(name) {
        Some(h) if !h.addrs.is_empty() => h.addrs,
        _ => resolve(state, &svc).await.map_err(|u| u.message)?,
    };
    let addr = addrs
        .choose(&mut rand::rng())
        .cloned()
        .ok_or("no addresses")?;
    avail.clients.get(state, obj, &addr)
}

impl Discovery {
    /// A manager with empty caches (documents are built at once).
    pub fn new(state: Arc<State>, avail: Arc<Availability>, own: Arc<Catalog>) -> Arc<Self> {
        let d = Arc::new(Discovery {
            state,
            avail,
            own,
            local: RwLock::new(Local::default()),
            remote: RwLock::new(HashMap::new()),
            served: RwLock::new(Arc::new(Served {
                core: Document::new(&ad::list(vec![])),
                apis: Document::new(&ad::list(vec![])),
                legacy_apis: json!({}),
            })),
            local_kick: Notify::new(),
            local_changed: watch::Sender::new(0),
        });
        d.rebuild();
        d
    }

    /// Aggregated `/api`.
    pub fn core(&self) -> Document {
        self.served().core.clone()
    }

    /// Aggregated `/apis`.
    pub fn apis(&self) -> Document {
        self.served().apis.clone()
    }

    /// Legacy `/apis` (`APIGroupList`).
    pub fn legacy_apis(&self) -> Value {
        self.served().legacy_apis.clone()
    }

    fn served(&self) -> Arc<Served> {
        match self.served.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Asks the local chain again now (and a few times after).
    pub fn kick_local(&self) {
        self.local_kick.notify_one();
    }

    /// A receiver that sees every change of the local chain's documents.
    pub fn subscribe_local(&self) -> watch::Receiver<u64> {
        self.local_changed.subscribe()
    }

    /// The group/versions the local chain serves, once read and while the
    /// last read succeeded.
    pub fn local_group_versions(&self) -> Option<BTreeSet<(String, String)>> {
        let local = self.local.read().ok()?;
        if !local.synced || local.stale {
            return None;
        }
        let mut out: BTreeSet<(String, String)> = index(&local.core)
            .into_keys()
            .chain(index(&local.apis).into_keys())
            .collect();
        out.insert((GROUP.to_string(), "v1".to_string()));
        Some(out)
    }

    /// Fetches the local chain's documents; returns whether they changed.
    async fn refresh_local(&self) -> bool {
        let (core_etag, apis_etag) = match self.local.read() {
            Ok(l) => (l.core_etag.clone(), l.apis_etag.clone()),
            Err(_) => (None, None),
        };
        let d = &self.state.delegate;
        let (core, apis) = tokio::join!(
            fetch(d, "/api", ad::CONTENT_TYPE, core_etag.as_deref()),
            fetch(d, "/apis", ad::CONTENT_TYPE, apis_etag.as_deref()),
        );
        let Ok(mut local) = self.local.write() else {
            return false;
        };
        let mut changed = false;
        let mut ok = true;
        for (res, core) in [(core, true), (apis, false)] {
            match res {
                Ok(f) if f.status == 304 => {}
                Ok(f) if f.status == 200 && f.aggregated => match ad::parse_items(&f.body) {
                    Some(items) => {
                        changed = true;
                        if core {
                            local.core = items;
                            local.core_etag = f.etag;
                        } else {
                            local.apis = items;
                            local.apis_etag = f.etag;
                        }
                    }
                    None => ok = false,
                },
                Ok(f) => {
                    tracing::warn!(status = f.status, core, "local discovery not served");
                    ok = false;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not fetch the local discovery");
                    ok = false;
                }
            }
        }
        if ok && !local.synced && local.core_etag.is_some() && local.apis_etag.is_some() {
            local.synced = true;
            changed = true;
        }
        if local.stale == ok {
            local.stale = !ok;
            changed = true;
        }
        changed
    }

    /// Keeps the local chain's documents current (see the module docs).
    pub async fn run_local(self: Arc<Self>) {
        let mut follow_ups = 0;
        loop {
            if self.refresh_local().await {
                self.local_changed.send_modify(|g| *g = g.wrapping_add(1));
                self.rebuild();
            }
            let wait = if follow_ups > 0 {
                follow_ups -= 1;
                LOCAL_FOLLOW_UP_PERIOD
            } else {
                LOCAL_PERIOD
            };
            tokio::select! {
                _ = self.local_kick.notified() => follow_ups = LOCAL_FOLLOW_UPS,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Fetches the discovery of the Service behind `apiservices` (all of
    /// them pointing at it) into `cached`.
    async fn refresh_remote(&self, apiservices: &[Value], cached: &mut Remote) {
        let Some(first) = apiservices.first() else {
            return;
        };
        let name = first
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let client = match remote_client(&self.state, &self.avail, first).await {
            Ok(c) => c,
            Err(e) => {
                tracing::info!(apiservice = %name, error = %e, "no client for discovery");
                cached.stale = true;
                return;
            }
        };
        let aggregated_ok =
            match fetch(&client, "/apis", ad::CONTENT_TYPE, cached.etag.as_deref()).await {
                Ok(f) if f.status == 304 => true,
                Ok(f) if f.status == 200 && f.aggregated => match ad::parse_items(&f.body) {
                    Some(items) => {
                        cached.versions = index(&items);
                        cached.etag = f.etag;
                        true
                    }
                    None => false,
                },
                Ok(f) if [200, 404, 406].contains(&f.status) => false,
                Ok(f) => {
                    tracing::info!(apiservice = %name, status = f.status, "discovery failed");
                    cached.stale = true;
                    return;
                }
                Err(e) => {
                    tracing::info!(apiservice = %name, error = %e, "discovery failed");
                    cached.stale = true;
                    return;
                }
            };
        if !aggregated_ok {
            cached.etag = None;
        }
        // The legacy list of each group/version the aggregated document
        // lacks (all of them without one; the core group, which a server
        // lists under `/api`, for a legacy `v1.` APIService).
        let lists = apiservices
            .iter()
            .filter(|o| {
                let gv = (
                    spec_str(o, "group").to_string(),
                    spec_str(o, "version").to_string(),
                );
                !aggregated_ok || !cached.versions.contains_key(&gv)
            })
            .map(|o| {
                let (g, v) = (spec_str(o, "group"), spec_str(o, "version"));
                let path = if g.is_empty() {
                    format!("/api/{v}")
                } else {
                    format!("/apis/{g}/{v}")
                };
                let client = &client;
                async move {
                    let f = fetch(client, &path, "application/json", None).await.ok()?;
                    let list: Value = serde_json::from_slice(&f.body).ok()?;
                    (f.status == 200).then(|| {
                        let entry = ad::version_from_resource_list(g, v, &list, false);
                        ((g.to_string(), v.to_string()), entry)
                    })
                }
            });
        let results = join_all(lists).await;
        cached.stale = results.iter().any(Option::is_none);
        for (gv, entry) in results.into_iter().flatten() {
            cached.versions.insert(gv, entry);
        }
    }

    /// Keeps every remote Service's discovery current: fetched when one of
    /// its APIServices changes, every [`REMOTE_PERIOD`], and failed ones
    /// again after [`REMOTE_RETRY`].
    pub async fn run_remote(self: Arc<Self>) {
        let mut changes = self.state.subscribe();
        let mut fetched_for: HashMap<String, String> = HashMap::new();
        let mut last_full = Instant::now();
        let mut last_retry = Instant::now();
        let mut first = true;
        let this = &self;
        loop {
            // Registered before this round's fetches, so an availability
            // change during them still wakes the loop (`notify_waiters`
            // only reaches futures that are waiting or enabled).
            let availability_changed = self.avail.changed.notified();
            tokio::pin!(availability_changed);
            availability_changed.as_mut().enable();
            let services = self.state.services();
            let full = first || last_full.elapsed() >= REMOTE_PERIOD;
            let retry = last_retry.elapsed() >= REMOTE_RETRY;
            first = false;
            if full {
                last_full = Instant::now();
            }
            if retry {
                last_retry = Instant::now();
            }
            let mut by_service: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for obj in services.values() {
                if let Some(svc) = ServiceRef::of(obj) {
                    by_service
                        .entry(service_key(&svc))
                        .or_default()
                        .push(obj.clone());
                }
            }
            let current = match self.remote.read() {
                Ok(r) => r.clone(),
                Err(_) => HashMap::new(),
            };
            let dirty: Vec<(String, Vec<Value>, Remote)> = by_service
                .iter()
                .filter(|(key, objs)| {
                    let cached = current.get(*key);
                    full || cached.is_none()
                        || (retry && cached.is_some_and(|c| c.stale))
                        || objs.iter().any(|o| {
                            let name = o.pointer("/metadata/name").and_then(Value::as_str);
                            name.and_then(|n| fetched_for.get(n)) != Some(&rv(o))
                        })
                })
                .map(|(k, objs)| {
                    (
                        k.clone(),
                        objs.clone(),
                        current.get(k).cloned().unwrap_or_default(),
                    )
                })
                .collect();
            let results = join_all(dirty.into_iter().map(|(key, objs, mut cached)| async move {
                this.refresh_remote(&objs, &mut cached).await;
                (key, objs, cached)
            }))
            .await;
            if let Ok(mut remote) = self.remote.write() {
                for (key, objs, cached) in results {
                    for o in &objs {
                        if let Some(n) = o.pointer("/metadata/name").and_then(Value::as_str) {
                            fetched_for.insert(n.to_string(), rv(o));
                        }
                    }
                    remote.insert(key, cached);
                }
                remote.retain(|k, _| by_service.contains_key(k));
            }
            fetched_for.retain(|n, _| services.contains_key(n));
            self.rebuild();
            tokio::select! {
                _ = changes.changed() => {}
                _ = availability_changed => {}
                _ = tokio::time::sleep(REMOTE_RETRY) => {}
            }
        }
    }

    /// Kicks the local refresh whenever a CRD changes: a watch of
    /// CustomResourceDefinitions through the API (kube-core forwards it to
    /// the extensions tier), never a read of another tier's etcd keys;
    /// re-established when it ends or fails.
    pub async fn run_crd_watch(self: Arc<Self>, delegate: Delegate) {
        const PATH: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true";
        let user = internal_user();
        loop {
            let req = http::Request::builder()
                .method("GET")
                .uri(PATH)
                .header(http::header::ACCEPT, "application/json")
                .body(apiserver::body::empty());
            match req {
                Ok(req) => {
                    let resp = delegate.forward(req, Some(&user)).await;
                    if resp.status().is_success() {
                        self.kick_local();
                        let mut body = resp.into_body();
                        // Every frame is a CRD event (no bookmarks were asked for).
                        while let Some(Ok(frame)) = body.frame().await {
                            if frame.data_ref().is_some_and(|d| !d.is_empty()) {
                                self.kick_local();
                            }
                        }
                    } else {
                        tracing::debug!(status = %resp.status(), "could not watch CRDs");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not build the CRD watch"),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Rebuilds the served documents whenever the APIServices change.
    pub async fn run_rebuild(self: Arc<Self>) {
        let mut changes = self.state.subscribe();
        while changes.changed().await.is_ok() {
            self.rebuild();
            // A new or changed APIService may be a new CRD group: ask now.
            self.kick_local();
        }
    }

    /// Every named group in discovery order with its versions: the
    /// aggregator's group first, then every APIService's group by priority,
    /// then any group the local chain serves that has no APIService yet (a
    /// CRD created since the last registration pass).
    fn group_versions(
        services: &BTreeMap<String, Value>,
        local: &BTreeMap<(String, String), Value>,
    ) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = vec![(GROUP.to_string(), vec!["v1".into()])];
        for (g, versions) in sorted_groups(crate::routing::entries(services)) {
            if g != GROUP {
                groups.push((g, versions));
            }
        }
        let registered: BTreeSet<String> = groups.iter().map(|(g, _)| g.clone()).collect();
        for (g, v) in local
            .keys()
            .filter(|(g, _)| !g.is_empty() && !registered.contains(g))
        {
            match groups.iter_mut().find(|(n, _)| n == g) {
                Some((_, vs)) => vs.push(v.clone()),
                None => groups.push((g.clone(), vec![v.clone()])),
            }
        }
        groups
    }

    /// Rebuilds the served documents from the caches.
    pub fn rebuild(&self) {
        let services = self.state.services();
        // The local chain's last documents are served as `Current` even
        // while it cannot be reached (upstream's local delegates are
        // in-process and never stale; a `Stale` entry makes clients drop
        // the group, which a tier restart must not cause).
        let (local_core, local_apis) = match self.local.read() {
            Ok(l) => (index(&l.core), index(&l.apis)),
            Err(_) => return,
        };
        let remote = match self.remote.read() {
            Ok(r) => r.clone(),
            Err(_) => return,
        };
        let groups = Self::group_versions(&services, &local_apis);
        let mut items = Vec::new();
        for (g, versions) in &groups {
            let mut entries = Vec::new();
            for v in versions {
                let name = format!("{v}.{g}");
                let svc = services.get(&name).and_then(ServiceRef::of);
                let gv = (g.clone(), v.clone());
                if let Some(svc) = svc {
                    let available = self.avail.health(&name).is_some_and(|h| h.available);
                    let cached = remote.get(&service_key(&svc));
                    let stale = !available || cached.is_none_or(|c| c.stale);
                    let entry = cached
                        .and_then(|c| c.versions.get(&gv).cloned())
                        .unwrap_or_else(|| json!({"version": v, "resources": []}));
                    entries.push(with_freshness(entry, stale));
                } else if g == GROUP {
                    let list = self.own.resource_list(g, v).unwrap_or(Value::Null);
                    entries.push(ad::version_from_resource_list(g, v, &list, false));
                } else if let Some(entry) = local_apis.get(&gv) {
                    entries.push(with_freshness(entry.clone(), false));
                }
            }
            if !entries.is_empty() {
                items.push(ad::group_entry(g, entries));
            }
        }
        // A remote legacy `v1.` APIService serves the core group instead.
        let core_entries: Vec<Value> = match services.get("v1.").and_then(ServiceRef::of) {
            Some(svc) => {
                let available = self.avail.health("v1.").is_some_and(|h| h.available);
                let cached = remote.get(&service_key(&svc));
                let stale = !available || cached.is_none_or(|c| c.stale);
                let entry = cached
                    .and_then(|c| c.versions.get(&(String::new(), "v1".to_string())).cloned())
                    .unwrap_or_else(|| json!({"version": "v1", "resources": []}));
                vec![with_freshness(entry, stale)]
            }
            None => local_core
                .into_iter()
                .map(|(_, e)| with_freshness(e, false))
                .collect(),
        };
        let core_items = if core_entries.is_empty() {
            vec![]
        } else {
            vec![ad::group_entry("", core_entries)]
        };
        let legacy: Vec<Value> = groups.iter().map(|(g, v)| api_group(g, v)).collect();
        let served = Served {
            core: Document::new(&ad::list(core_items)),
            apis: Document::new(&ad::list(items)),
            legacy_apis: json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": legacy}),
        };
        if let Ok(mut s) = self.served.write() {
            *s = Arc::new(served);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apiservice(g: &str, v: &str, gp: i64, vp: i64) -> (String, Value) {
        (
            format!("{v}.{g}"),
            json!({"metadata": {"name": format!("{v}.{g}")},
                   "spec": {"group": g, "version": v, "groupPriorityMinimum": gp, "versionPriority": vp}}),
        )
    }

    #[test]
    fn unregistered_local_groups_follow_the_registered_ones() {
        let services: BTreeMap<String, Value> = [
            apiservice("apps", "v1", 17800, 15),
            apiservice("example.com", "v1", 1000, 100),
        ]
        .into_iter()
        .collect();
        let local = index(&[
            ad::group_entry("apps", vec![json!({"version": "v1"})]),
            ad::group_entry(
                "example.com",
                vec![json!({"version": "v1"}), json!({"version": "v2"})],
            ),
            ad::group_entry(
                "new.io",
                vec![json!({"version": "v1"}), json!({"version": "v2"})],
            ),
        ]);
        let got = Discovery::group_versions(&services, &local);
        let names: Vec<&str> = got.iter().map(|(g, _)| g.as_str()).collect();
        assert_eq!(names, [GROUP, "apps", "example.com", "new.io"]);
        // A version without its APIService yet is not added to a registered group.
        assert_eq!(got[2].1, ["v1"]);
        assert_eq!(got[3].1, ["v1", "v2"]);
    }

    #[test]
    fn index_and_freshness() {
        let items = [ad::group_entry(
            "",
            vec![json!({"version": "v1", "freshness": "Current"})],
        )];
        let idx = index(&items);
        let e = idx
            .get(&(String::new(), "v1".to_string()))
            .cloned()
            .expect("core v1");
        assert_eq!(with_freshness(e, true)["freshness"], "Stale");
    }
}
