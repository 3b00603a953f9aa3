//! What the aggregator knows at run time: the APIServices (listed from etcd,
//! then kept current by an etcd watch from the list's revision, relisted when
//! the watch ends: compaction, etcd lost), the connection to kube-core, and
//! the front-proxy client certificate used towards external servers.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use apiserver::authentication::{UserInfo, SYSTEM_MASTERS};
use apiserver::proxy::Delegate;
use apiserver::registry::store::{ListOptions, Store};
use apiserver::registry::watch::WatchOptions;
use apiserver::registry::watch_event::{EventType, WatchEvent};
use serde_json::Value;
use tokio::sync::watch;

/// Pause before relisting after a watch ended or a list failed.
const RELIST_BACKOFF: Duration = Duration::from_secs(1);

/// The identity of the aggregator's own requests (discovery probes, reading
/// Services and EndpointSlices), as upstream's `system:kube-aggregator`.
pub fn internal_user() -> UserInfo {
    UserInfo {
        name: "system:kube-aggregator".into(),
        uid: String::new(),
        groups: vec![SYSTEM_MASTERS.into()],
        extra: BTreeMap::new(),
    }
}

/// Shared state of the aggregator's controllers and router.
pub struct State {
    /// The APIService store (etcd).
    pub store: Arc<Store>,
    /// kube-core (and, behind it, the CRD tier).
    pub delegate: Delegate,
    /// The front-proxy client certificate and key (PEM), presented to
    /// external servers.
    pub proxy_client_cert: Option<(Vec<u8>, Vec<u8>)>,
    /// Route to endpoint IPs (EndpointSlices) rather than the ClusterIP.
    pub endpoint_routing: bool,
    /// The aggregator's own address (`host:port`), where upstream's loopback
    /// resolver sends the `default/kubernetes` Service.
    pub loopback: String,
    /// Where remote APIServices may not send requests.
    pub endpoint_policy: crate::remote::EndpointPolicy,
    services: RwLock<Arc<BTreeMap<String, Value>>>,
    /// Bumped whenever the set of APIServices changed; each controller
    /// holds its own receiver (see [`State::subscribe`]).
    generation: watch::Sender<u64>,
}

impl State {
    /// A state with no APIServices loaded yet.
    pub fn new(
        store: Arc<Store>,
        delegate: Delegate,
        proxy_client_cert: Option<(Vec<u8>, Vec<u8>)>,
        endpoint_routing: bool,
        loopback: String,
        endpoint_policy: crate::remote::EndpointPolicy,
    ) -> Self {
        State {
            store,
            delegate,
            proxy_client_cert,
            endpoint_routing,
            loopback,
            endpoint_policy,
            services: RwLock::new(Arc::new(BTreeMap::new())),
            generation: watch::Sender::new(0),
        }
    }

    /// A receiver that sees every later change of the APIServices.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    fn set_services(&self, map: BTreeMap<String, Value>) {
        match self.services.write() {
            Ok(mut s) => *s = Arc::new(map),
            Err(p) => *p.into_inner() = Arc::new(map),
        }
        self.generation.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// The APIServices by name, as last read.
    pub fn services(&self) -> Arc<BTreeMap<String, Value>> {
        match self.services.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Lists every APIService from etcd (notifying when anything changed);
    /// returns the list's revision.
    pub async fn relist(&self) -> Result<i64, String> {
        let page = self
            .store
            .list("", &ListOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let map: BTreeMap<String, Value> = page
            .items
            .into_iter()
            .filter_map(|o| {
                let name = o.pointer("/metadata/name")?.as_str()?.to_string();
                Some((name, o))
            })
            .collect();
        if !same_objects(&self.services(), &map) {
            self.set_services(map);
        }
        Ok(page.resource_version)
    }

    /// Applies the watch events after revision `rv` until the watch ends.
    async fn follow(&self, rv: i64) {
        let opts = WatchOptions {
            list: ListOptions {
                resource_version: Some(rv.to_string()),
                ..ListOptions::default()
            },
            ..WatchOptions::default()
        };
        let mut events = match self.store.watch("", opts).await {
            Ok(rx) => rx,
            Err(e) => {
                tracing::warn!(error = %e, "could not watch APIServices");
                return;
            }
        };
        while let Some(ev) = events.recv().await {
            let (type_, object) = match ev {
                WatchEvent::Object(type_, obj) => (type_, obj.into_value()),
                WatchEvent::Bookmark { .. } => continue,
                WatchEvent::Error(e) => {
                    tracing::info!(error = %e, "APIService watch ended; relisting");
                    return;
                }
            };
            let Some(name) = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(str::to_string)
            else {
                tracing::info!(object = %object, "APIService without a name; relisting");
                return;
            };
            let mut map = (*self.services()).clone();
            if type_ == EventType::Deleted {
                map.remove(&name);
            } else {
                map.insert(name, object);
            }
            self.set_services(map);
        }
    }

    /// Keeps the in-memory APIServices current: a list, then a watch from
    /// its revision; a list again whenever the watch ends.
    pub async fn run_watch(self: Arc<Self>) {
        loop {
            match self.relist().await {
                Ok(rv) => self.follow(rv).await,
                Err(e) => tracing::warn!(error = %e, "could not list APIServices"),
            }
            tokio::time::sleep(RELIST_BACKOFF).await;
        }
    }

    /// GETs `path` from kube-core as the aggregator; returns the status code
    /// and the JSON body (`Null` when not JSON).
    pub async fn get_json(&self, path: &str) -> Result<(u16, Value), String> {
        get_json(&self.delegate, path, Some(&internal_user())).await
    }
}

fn same_objects(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| {
            ka == kb
                && va.pointer("/metadata/resourceVersion")
                    == vb.pointer("/metadata/resourceVersion")
        })
}

/// GETs `path` through `d` as `user`, with a 10 s deadline.
pub async fn get_json(
    d: &Delegate,
    path: &str,
    user: Option<&UserInfo>,
) -> Result<(u16, Value), String> {
    d.call_json(
        http::Method::GET,
        path,
        None,
        user,
        None,
        Duration::from_secs(10),
    )
    .await
}
