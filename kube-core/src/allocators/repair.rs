//! Repair loops for Service allocations, as upstream's cluster IP and node
//! port repair controllers: periodically compare what the allocators
//! hold with what the Services use.
//!
//! - An address or port some Service uses but the allocator does not hold
//!   (an IPAddress object deleted by hand, a lost bitmap write) is taken
//!   again, so it is never handed out twice.
//! - One the allocator holds but no Service uses (a crash between the
//!   allocation and the Service write) is released, but only after it was
//!   seen leaked in [`PASSES_BEFORE_RELEASE`] consecutive passes (upstream's
//!   `numRepairsBeforeLeakCleanup`): a Service being created holds its
//!   address a moment before it is written.
//!
//! Only IPAddress objects of this allocator (`ipaddress.kubernetes.io/managed-by:
//! ipallocator.k8s.io`) and addresses inside the range are touched.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::time::Duration;

use apiserver::storage::{EtcdStorage, ListRequest};
use serde_json::Value;

use super::cluster_ip::ClusterIpAllocator;
use super::node_port::NodePortAllocator;

/// How many passes in a row must see a leak before it is released.
pub const PASSES_BEFORE_RELEASE: u32 = 3;

const MANAGED_BY: &str = "ipallocator.k8s.io";

/// What one pass changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub ips_restored: usize,
    pub ips_released: usize,
    pub ports_restored: usize,
    pub ports_released: usize,
}

/// The repair loops' state: leak counters between passes.
pub struct Repair {
    storage: EtcdStorage,
    prefix: String,
    ips: ClusterIpAllocator,
    ports: NodePortAllocator,
    leaked_ips: HashMap<IpAddr, u32>,
    leaked_ports: HashMap<i64, u32>,
}

/// What the Services use.
#[derive(Default)]
struct InUse {
    ips: BTreeMap<IpAddr, (String, String)>,
    ports: BTreeSet<i64>,
}

impl Repair {
    /// Repairs the allocations of `ips` and `ports`, reading Services under
    /// `prefix` (`/registry`).
    pub fn new(
        storage: EtcdStorage,
        prefix: &str,
        ips: ClusterIpAllocator,
        ports: NodePortAllocator,
    ) -> Self {
        Repair {
            storage,
            prefix: prefix.trim_end_matches('/').to_string(),
            ips,
            ports,
            leaked_ips: HashMap::new(),
            leaked_ports: HashMap::new(),
        }
    }

    /// Runs a pass every `interval`, forever.
    pub async fn run(mut self, interval: Duration) {
        loop {
            tokio::time::sleep(interval).await;
            match self.pass().await {
                Ok(r) if r != Report::default() => {
                    tracing::info!(?r, "repaired service allocations")
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "service allocation repair failed"),
            }
        }
    }

    async fn list(&self, path: &str) -> Result<Vec<apiserver::storage::KeyValue>, String> {
        let resp = self
            .storage
            .list(&ListRequest {
                prefix: format!("{}/{path}/", self.prefix),
                start_key: None,
                revision: None,
                limit: None,
            })
            .await
            .map_err(|e| format!("listing {path}: {e}"))?;
        Ok(resp.items)
    }

    /// One pass over both allocators. The allocations are read before the
    /// Services, so an allocation whose Service is being written shows as
    /// leaked at worst, which the leak counter absorbs.
    pub async fn pass(&mut self) -> Result<Report, String> {
        let records = self.list("ipaddresses").await?;
        let bitmap = self.ports.snapshot().await?;
        let in_use = self.in_use().await?;
        let mut report = Report::default();

        // Cluster IPs.
        let mut recorded = BTreeSet::new();
        let mut leaked = HashMap::new();
        for kv in &records {
            let Some(ip) = kv
                .key
                .rsplit('/')
                .next()
                .and_then(|s| s.parse::<IpAddr>().ok())
            else {
                continue;
            };
            recorded.insert(ip);
            let Ok(obj) = apiserver::protobuf::decode_from_storage(&kv.value) else {
                continue;
            };
            let managed = obj
                .pointer("/metadata/labels/ipaddress.kubernetes.io~1managed-by")
                .and_then(Value::as_str)
                == Some(MANAGED_BY);
            if !managed || !self.ips.cidr().contains(ip) || in_use.ips.contains_key(&ip) {
                continue;
            }
            let seen = self.leaked_ips.get(&ip).copied().unwrap_or(0) + 1;
            if seen >= PASSES_BEFORE_RELEASE {
                tracing::info!(%ip, "cluster IP appears to have leaked: releasing it");
                self.ips.release(ip).await;
                report.ips_released += 1;
            } else {
                leaked.insert(ip, seen);
            }
        }
        self.leaked_ips = leaked;
        for (ip, (ns, name)) in &in_use.ips {
            if recorded.contains(ip) || !self.ips.cidr().contains(*ip) {
                continue;
            }
            match self.ips.allocate_specific(*ip, ns, name).await {
                Ok(()) => {
                    tracing::info!(%ip, service = %format!("{ns}/{name}"), "cluster IP in use was not allocated: restored");
                    report.ips_restored += 1;
                }
                // Taken meanwhile (by the Service's own write, or another
                // replica's repair): nothing to do.
                Err(super::cluster_ip::IpError::Allocated) => {}
                Err(e) => tracing::warn!(%ip, error = ?e, "restoring a cluster IP"),
            }
        }

        // Node ports.
        let mut leaked = HashMap::new();
        let mut release = BTreeSet::new();
        for port in bitmap.iter().filter(|p| !in_use.ports.contains(p)) {
            let seen = self.leaked_ports.get(port).copied().unwrap_or(0) + 1;
            if seen >= PASSES_BEFORE_RELEASE {
                release.insert(*port);
            } else {
                leaked.insert(*port, seen);
            }
        }
        self.leaked_ports = leaked;
        let unmarked = in_use
            .ports
            .iter()
            .any(|p| self.ports.range().contains(*p) && !bitmap.contains(p));
        if unmarked || !release.is_empty() {
            let (restored, released) = self.ports.repair(&in_use.ports, &release).await?;
            report.ports_restored = restored;
            report.ports_released = released;
        }
        Ok(report)
    }

    /// The cluster IPs and node ports of every Service.
    async fn in_use(&self) -> Result<InUse, String> {
        let mut out = InUse::default();
        for kv in self.list("services/specs").await? {
            let Ok(svc) = apiserver::protobuf::decode_from_storage(&kv.value) else {
                continue;
            };
            let s = |p: &str| {
                svc.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let (ns, name) = (s("/metadata/namespace"), s("/metadata/name"));
            let spec = svc.get("spec").cloned().unwrap_or(Value::Null);
            let mut ips: Vec<&str> = spec
                .get("clusterIPs")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(ip) = spec.get("clusterIP").and_then(Value::as_str) {
                ips.push(ip);
            }
            for ip in ips.iter().filter_map(|ip| ip.parse::<IpAddr>().ok()) {
                out.ips.insert(ip, (ns.clone(), name.clone()));
            }
            let ports = spec.get("ports").and_then(Value::as_array);
            for p in ports.into_iter().flatten() {
                if let Some(n) = p.get("nodePort").and_then(Value::as_i64) {
                    out.ports.insert(n);
                }
            }
            if let Some(n) = spec.get("healthCheckNodePort").and_then(Value::as_i64) {
                out.ports.insert(n);
            }
        }
        Ok(out)
    }
}
