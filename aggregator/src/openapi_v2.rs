//! `/openapi/v2` merged across the local tier chain and every remote
//! APIService, as upstream's aggregator does (its OpenAPI aggregation
//! controller): each source's document is downloaded into a cache with
//! `If-None-Match`, when an APIService changes and every minute (upstream's
//! period after a successful download), and the merged document is served
//! from memory with its own ETag.
//!
//! Merging keeps the local chain's document first, then the remote ones in
//! APIService priority order; a path or definition already present is kept
//! (upstream ignores path conflicts the same way; it renames conflicting
//! definitions, which this does not yet do).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use apiserver::authentication::UserInfo;
use apiserver::body::{Request, Response};
use apiserver::openapi::v2::merge as merge_into;
use bytes::Bytes;
use futures_util::future::join_all;
use serde_json::Value;

use crate::availability::Availability;
use crate::discovery::{fetch, remote_client, service_key};
use crate::remote::ServiceRef;
use crate::state::State;

/// How often every source is asked again.
const PERIOD: Duration = Duration::from_secs(60);

/// After the local chain's discovery changes, how long it must stay
/// unchanged before the documents are downloaded again, so that a burst of
/// CRD writes (an operator's install, 1,000 CRDs) costs the extensions tier
/// one rebuild of its document per burst instead of one per CRD ...
const SETTLE: Duration = Duration::from_millis(500);
/// ... and the longest a continuing burst delays the download.
const SETTLE_AT_MOST: Duration = Duration::from_secs(5);

/// One source's cached document.
#[derive(Clone)]
struct Cached {
    etag: Option<String>,
    doc: Arc<Value>,
}

/// The merged document, serialized, and its ETag.
struct Merged {
    bytes: Bytes,
    etag: String,
}

/// The OpenAPI v2 aggregator (see the module documentation).
pub struct OpenApiV2 {
    state: Arc<State>,
    avail: Arc<Availability>,
    local: RwLock<Option<Cached>>,
    remote: RwLock<HashMap<String, Cached>>,
    merged: RwLock<Option<Arc<Merged>>>,
    /// The merged document's protobuf form.
    protobuf: apiserver::openapi::v2::ProtobufForm,
    /// Bumped when the local chain's discovery changed (a CRD came, went
    /// or changed its versions): its document is asked for again at once.
    local_changes: Option<tokio::sync::watch::Receiver<u64>>,
    /// The aggregator's own kinds (`apiregistration.k8s.io`), merged after
    /// the local chain's.
    own: Option<Value>,
}

impl OpenApiV2 {
    /// An aggregator with nothing downloaded yet.
    /// `local_changes` signals changes of the local chain's discovery;
    /// `own` is the aggregator's own `/openapi/v2` document.
    pub fn new(
        state: Arc<State>,
        avail: Arc<Availability>,
        local_changes: Option<tokio::sync::watch::Receiver<u64>>,
        own: Option<&[u8]>,
    ) -> Arc<Self> {
        Arc::new(OpenApiV2 {
            state,
            avail,
            local: RwLock::new(None),
            remote: RwLock::new(HashMap::new()),
            merged: RwLock::new(None),
            protobuf: Default::default(),
            local_changes,
            own: own.and_then(|b| serde_json::from_slice(b).ok()),
        })
    }

    /// Serves the merged document; before the first download, the local
    /// chain's own answer.
    pub async fn serve(&self, req: Request) -> Response {
        let merged = self.merged.read().ok().and_then(|m| m.clone());
        let Some(m) = merged else {
            let user = req.extensions().get::<UserInfo>().cloned();
            return self.state.delegate.forward(req, user.as_ref()).await;
        };
        let if_none_match = req
            .headers()
            .get(http::header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok());
        let accept = req
            .headers()
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        apiserver::openapi::v2::respond(&m.bytes, &m.etag, if_none_match, accept, &self.protobuf)
    }

    /// Downloads `/openapi/v2` through `d` into `cached`; whether it changed.
    async fn download(d: &apiserver::proxy::Delegate, cached: &mut Option<Cached>) -> bool {
        let etag = cached.as_ref().and_then(|c| c.etag.clone());
        match fetch(d, "/openapi/v2", "application/json", etag.as_deref()).await {
            Ok(f) if f.status == 304 => false,
            Ok(f) if f.status == 200 => match serde_json::from_slice::<Value>(&f.body) {
                Ok(doc) if doc.get("swagger").is_some() => {
                    *cached = Some(Cached {
                        etag: f.etag,
                        doc: Arc::new(doc),
                    });
                    true
                }
                _ => false,
            },
            Ok(f) => {
                tracing::debug!(status = f.status, "no OpenAPI v2 document");
                false
            }
            Err(e) => {
                tracing::debug!(error = %e, "could not download OpenAPI v2");
                false
            }
        }
    }

    /// One pass: downloads every source, merges when anything changed.
    async fn pass(&self) {
        let mut local = self.local.read().ok().and_then(|l| l.clone());
        let mut changed = Self::download(&self.state.delegate, &mut local).await;
        if let Ok(mut l) = self.local.write() {
            *l = local.clone();
        }
        let services = self.state.services();
        // Remote services in APIService priority order (highest first).
        let mut order: Vec<(i64, String, Value)> = services
            .values()
            .filter_map(|o| {
                let svc = ServiceRef::of(o)?;
                let gp = o.pointer("/spec/groupPriorityMinimum")?.as_i64()?;
                Some((gp, service_key(&svc), o.clone()))
            })
            .collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let mut by_key: BTreeMap<String, Value> = BTreeMap::new();
        let mut keys = Vec::new();
        for (_, key, obj) in order {
            if !by_key.contains_key(&key) {
                keys.push(key.clone());
                by_key.insert(key, obj);
            }
        }
        let current = self.remote.read().map(|r| r.clone()).unwrap_or_default();
        let downloads = by_key.iter().map(|(key, obj)| {
            let mut cached = current.get(key).cloned();
            async move {
                let changed = match remote_client(&self.state, &self.avail, obj).await {
                    Ok(client) => Self::download(&client, &mut cached).await,
                    Err(_) => false,
                };
                (key.clone(), cached, changed)
            }
        });
        let mut remote = HashMap::new();
        for (key, cached, c) in join_all(downloads).await {
            changed |= c;
            if let Some(cached) = cached {
                remote.insert(key, cached);
            }
        }
        changed |= remote.len() != current.len();
        if let Ok(mut r) = self.remote.write() {
            *r = remote.clone();
        }
        let Some(local) = local else { return };
        if !changed && self.merged.read().is_ok_and(|m| m.is_some()) {
            return;
        }
        let mut doc = (*local.doc).clone();
        if let Some(own) = &self.own {
            merge_into(&mut doc, own);
        }
        for key in &keys {
            if let Some(c) = remote.get(key) {
                merge_into(&mut doc, &c.doc);
            }
        }
        let bytes = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
        let etag = apiserver::openapi::v2::etag_of(&bytes);
        if let Ok(mut m) = self.merged.write() {
            *m = Some(Arc::new(Merged { bytes, etag }));
        }
    }

    /// Keeps the merged document current: on every APIService change, every
    /// change of the local chain's discovery (CRDs) and every [`PERIOD`].
    pub async fn run(self: Arc<Self>) {
        let mut changes = self.state.subscribe();
        let mut local = self.local_changes.clone();
        loop {
            changes.borrow_and_update();
            if let Some(l) = local.as_mut() {
                l.borrow_and_update();
            }
            self.pass().await;
            let local_changed = async {
                match local.as_mut() {
                    Some(l) => {
                        if l.changed().await.is_err() {
                            std::future::pending::<()>().await;
                        }
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let settle = tokio::select! {
                _ = changes.changed() => false,
                _ = local_changed => true,
                _ = tokio::time::sleep(PERIOD) => false,
            };
            if let (true, Some(l)) = (settle, local.as_mut()) {
                settled(l).await;
            }
        }
    }
}

/// Returns once `changes` has not changed for [`SETTLE`], or after
/// [`SETTLE_AT_MOST`].
async fn settled(changes: &mut tokio::sync::watch::Receiver<u64>) {
    let deadline = tokio::time::Instant::now() + SETTLE_AT_MOST;
    loop {
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() || tokio::time::Instant::now() >= deadline {
                    return;
                }
            }
            _ = tokio::time::sleep(SETTLE) => return,
        }
    }
}
