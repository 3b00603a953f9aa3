//! What the aggregator knows at run time: the APIServices (read from etcd and
//! held in memory), the connection to kube-core, and the front-proxy client
//! certificate used towards external servers.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::Value;
use shared::authentication::{UserInfo, SYSTEM_MASTERS};
use shared::proxy::Delegate;
use shared::registry::store::{ListOptions, Store};
use tokio::sync::Notify;

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
    services: RwLock<Arc<BTreeMap<String, Value>>>,
    /// Signalled when the set of APIServices changed.
    pub changed: Notify,
}

impl State {
    /// A state with no APIServices loaded yet.
    pub fn new(
        store: Arc<Store>,
        delegate: Delegate,
        proxy_client_cert: Option<(Vec<u8>, Vec<u8>)>,
        endpoint_routing: bool,
    ) -> Self {
        State {
            store,
            delegate,
            proxy_client_cert,
            endpoint_routing,
            services: RwLock::new(Arc::new(BTreeMap::new())),
            changed: Notify::new(),
        }
    }

    /// The APIServices by name, as last read.
    pub fn services(&self) -> Arc<BTreeMap<String, Value>> {
        match self.services.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Re-reads every APIService from etcd; notifies when anything changed.
    pub async fn refresh(&self) -> Result<(), String> {
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
        let changed = {
            let cur = self.services();
            !same_objects(&cur, &map)
        };
        if changed {
            match self.services.write() {
                Ok(mut s) => *s = Arc::new(map),
                Err(p) => *p.into_inner() = Arc::new(map),
            }
            // A stored permit: a change made while the availability
            // controller is busy still triggers its next pass at once.
            self.changed.notify_one();
        }
        Ok(())
    }

    /// Keeps the in-memory APIServices current (every `period`).
    pub async fn run_refresh(self: Arc<Self>, period: Duration) {
        loop {
            if let Err(e) = self.refresh().await {
                tracing::warn!(error = %e, "could not list APIServices");
            }
            tokio::time::sleep(period).await;
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
    let req = http::Request::builder()
        .method("GET")
        .uri(path)
        .header(http::header::ACCEPT, "application/json")
        .body(shared::body::empty())
        .map_err(|e| e.to_string())?;
    let fut = async {
        let resp = d.forward(req, user).await;
        let code = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok::<_, String>((code, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
    };
    tokio::time::timeout(Duration::from_secs(10), fut)
        .await
        .map_err(|_| format!("GET {path}: timed out"))?
}
