//! The Service strategy with allocation: cluster IPs and node ports are
//! taken just before the Service is written and given back when it is
//! deleted (or its write fails).

use std::net::IpAddr;

use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::meta;
use apiserver::apimachinery::validation::{FieldError, FieldPath};
use apiserver::registry::strategy::Strategy;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::cluster_ip::{ClusterIpAllocator, IpError};
use super::node_port::{NodePortAllocator, PortError};
use crate::resources::ServiceStrategy;

/// [`ServiceStrategy`] plus the allocators.
pub struct AllocatingServiceStrategy {
    pub ips: ClusterIpAllocator,
    pub ports: NodePortAllocator,
}

fn invalid(obj: &Value, err: FieldError) -> ApiError {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    ApiError::invalid("", "Service", name, &[err])
}

/// Whether a Service of this type holds node ports at all.
fn holds_node_ports(spec: &Value) -> bool {
    matches!(
        spec.get("type").and_then(Value::as_str),
        Some("NodePort" | "LoadBalancer")
    )
}

/// Whether ports without a `nodePort` get one (upstream's
/// `shouldAllocateNodePorts`); a requested one is allocated either way.
fn allocates_new_node_ports(spec: &Value) -> bool {
    match spec.get("type").and_then(Value::as_str) {
        Some("NodePort") => true,
        Some("LoadBalancer") => {
            spec.get("allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool)
                != Some(false)
        }
        _ => false,
    }
}

impl AllocatingServiceStrategy {
    async fn allocate_ip(&self, obj: &mut Value) -> Result<Option<IpAddr>, ApiError> {
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
            return Ok(None);
        }
        let requested = spec.get("clusterIP").and_then(Value::as_str).unwrap_or("");
        if requested == "None" {
            if let Some(Value::Object(s)) = obj.get_mut("spec") {
                s.insert("clusterIPs".into(), json!(["None"]));
            }
            return Ok(None);
        }
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ip = if requested.is_empty() {
            self.ips.allocate_next(&ns, &name).await
        } else {
            let Ok(ip) = requested.parse::<IpAddr>() else {
                return Ok(None); // validation already rejected it
            };
            self.ips.allocate_specific(ip, &ns, &name).await.map(|_| ip)
        };
        match ip {
            Ok(ip) => {
                if let Some(Value::Object(s)) = obj.get_mut("spec") {
                    s.insert("clusterIP".into(), json!(ip.to_string()));
                    s.insert("clusterIPs".into(), json!([ip.to_string()]));
                    s.insert("ipFamilies".into(), json!([self.ips.cidr().family()]));
                }
                Ok(Some(ip))
            }
            Err(e) => {
                let path = FieldPath::new("spec").child("clusterIPs");
                let detail = match e {
                    IpError::NotInRange(range) => format!(
                        "failed to allocate IP {requested}: the provided IP ({requested}) is not in the valid range. The range of valid IPs is {range}"
                    ),
                    IpError::Allocated => format!("failed to allocate IP {requested}: provided IP is already allocated"),
                    IpError::Full => {
                        return Err(ApiError::internal("failed to allocate a serviceIP: range is full"))
                    }
                    IpError::Storage(s) => return Err(ApiError::internal(format!("failed to allocate a serviceIP: {s}"))),
                };
                Err(invalid(
                    obj,
                    FieldError::invalid(path, json!([requested]), detail),
                ))
            }
        }
    }

    async fn allocate_ports(&self, obj: &mut Value) -> Result<Vec<i64>, ApiError> {
        let mut taken = Vec::new();
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        if !holds_node_ports(&spec) {
            return Ok(taken);
        }
        let count = spec
            .get("ports")
            .and_then(Value::as_array)
            .map(Vec::len)
            .unwrap_or(0);
        for i in 0..count {
            let requested = obj
                .pointer(&format!("/spec/ports/{i}/nodePort"))
                .and_then(Value::as_i64)
                .filter(|p| *p != 0);
            let result = match requested {
                Some(p) => self.ports.allocate_specific(p).await.map(|_| p),
                None if !allocates_new_node_ports(&spec) => continue,
                None => self.ports.allocate_next().await,
            };
            match result {
                Ok(p) => {
                    taken.push(p);
                    if let Some(Value::Object(port)) = obj.pointer_mut(&format!("/spec/ports/{i}"))
                    {
                        port.insert("nodePort".into(), json!(p));
                    }
                }
                Err(e) => {
                    for p in &taken {
                        self.ports.release(*p).await;
                    }
                    let path = FieldPath::new("spec")
                        .child("ports")
                        .index(i)
                        .child("nodePort");
                    let value = json!(requested.unwrap_or(0));
                    let detail = match e {
                        PortError::NotInRange(r) => format!(
                            "provided port is not in the valid range. The range of valid ports is {r}"
                        ),
                        PortError::Allocated => "provided port is already allocated".to_string(),
                        PortError::Full => {
                            return Err(ApiError::internal("failed to allocate a nodePort: range is full"))
                        }
                        PortError::Storage(s) => {
                            return Err(ApiError::internal(format!("failed to allocate a nodePort: {s}")))
                        }
                    };
                    return Err(invalid(obj, FieldError::invalid(path, value, detail)));
                }
            }
        }
        Ok(taken)
    }
}

/// The cluster IPs and node ports a Service holds.
/// The cluster IPs and node ports a stored Service holds in the allocators:
/// none of either for what its type cannot hold (an ExternalName holds no
/// address, a ClusterIP Service no node port), whatever its spec says.
fn held(obj: &Value) -> (Vec<IpAddr>, Vec<i64>) {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let external = spec.get("type").and_then(Value::as_str) == Some("ExternalName");
    let ips = spec
        .get("clusterIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|_| !external)
        .filter_map(Value::as_str)
        .filter_map(|s| s.parse::<IpAddr>().ok())
        .collect();
    let ports = spec
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|_| holds_node_ports(spec))
        .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
        .filter(|p| *p != 0)
        .collect();
    (ips, ports)
}

impl AllocatingServiceStrategy {
    /// Allocates what an updated Service needs and its old state did not
    /// hold; on error, releases what this call took.
    async fn allocate_changes(&self, new: &mut Value, old: &Value) -> Result<(), ApiError> {
        let (old_ips, old_ports) = held(old);
        let spec = new.get("spec").cloned().unwrap_or(Value::Null);
        let ty = spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        let ip = spec.get("clusterIP").and_then(Value::as_str).unwrap_or("");
        let mut took_ip = None;
        if ty != "ExternalName" && ip != "None" {
            let needs = ip.is_empty() || ip.parse::<IpAddr>().is_ok_and(|a| !old_ips.contains(&a));
            if needs {
                if ip.is_empty() {
                    if let Some(Value::Object(s)) = new.get_mut("spec") {
                        s.remove("clusterIPs");
                    }
                }
                took_ip = self.allocate_ip(new).await?;
            }
        }
        if holds_node_ports(&spec) {
            let mut taken = Vec::new();
            let count = spec
                .get("ports")
                .and_then(Value::as_array)
                .map(Vec::len)
                .unwrap_or(0);
            for i in 0..count {
                let requested = new
                    .pointer(&format!("/spec/ports/{i}/nodePort"))
                    .and_then(Value::as_i64)
                    .filter(|p| *p != 0);
                let result = match requested {
                    Some(p) if old_ports.contains(&p) => continue,
                    Some(p) => self.ports.allocate_specific(p).await.map(|_| p),
                    None if !allocates_new_node_ports(&spec) => continue,
                    None => self.ports.allocate_next().await,
                };
                match result {
                    Ok(p) => {
                        taken.push(p);
                        if let Some(Value::Object(port)) =
                            new.pointer_mut(&format!("/spec/ports/{i}"))
                        {
                            port.insert("nodePort".into(), json!(p));
                        }
                    }
                    Err(e) => {
                        for p in taken {
                            self.ports.release(p).await;
                        }
                        if let Some(a) = took_ip {
                            self.ips
                                .release_held(a, meta::namespace(new), meta::name(new))
                                .await;
                        }
                        let path = FieldPath::new("spec")
                            .child("ports")
                            .index(i)
                            .child("nodePort");
                        let detail = match e {
                            PortError::NotInRange(r) => format!(
                                "provided port is not in the valid range. The range of valid ports is {r}"
                            ),
                            PortError::Allocated => "provided port is already allocated".to_string(),
                            PortError::Full => {
                                return Err(ApiError::internal("failed to allocate a nodePort: range is full"))
                            }
                            PortError::Storage(s) => {
                                return Err(ApiError::internal(format!("failed to allocate a nodePort: {s}")))
                            }
                        };
                        return Err(invalid(
                            new,
                            FieldError::invalid(path, json!(requested.unwrap_or(0)), detail),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Releases what `from` holds and `keep` does not.
    async fn release_difference(&self, from: &Value, keep: &Value) {
        let (ips, ports) = held(from);
        let (keep_ips, keep_ports) = held(keep);
        let (namespace, name) = (meta::namespace(from), meta::name(from));
        for ip in ips.into_iter().filter(|i| !keep_ips.contains(i)) {
            self.ips.release_held(ip, namespace, name).await;
        }
        for p in ports.into_iter().filter(|p| !keep_ports.contains(p)) {
            self.ports.release(p).await;
        }
    }
}

impl Strategy for AllocatingServiceStrategy {
    fn allocate_update<'a>(
        &'a self,
        new: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(self.allocate_changes(new, old))
    }

    fn release_update<'a>(
        &'a self,
        new: &'a Value,
        old: &'a Value,
        committed: bool,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if committed {
                self.release_difference(old, new).await;
            } else {
                self.release_difference(new, old).await;
            }
        })
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        ServiceStrategy.prepare_for_create(obj)
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        ServiceStrategy.prepare_for_update(new, old)
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        ServiceStrategy.validate(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        ServiceStrategy.validate_update(new, old)
    }

    fn allocate<'a>(&'a self, obj: &'a mut Value) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let ip = self.allocate_ip(obj).await?;
            if let Err(e) = self.allocate_ports(obj).await {
                if let Some(ip) = ip {
                    self.ips
                        .release_held(ip, meta::namespace(obj), meta::name(obj))
                        .await;
                }
                return Err(e);
            }
            Ok(())
        })
    }

    fn release<'a>(&'a self, obj: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let (ips, ports) = held(obj);
            let (namespace, name) = (meta::namespace(obj), meta::name(obj));
            for ip in ips {
                self.ips.release_held(ip, namespace, name).await;
            }
            for p in ports {
                self.ports.release(p).await;
            }
        })
    }
}
