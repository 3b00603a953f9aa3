//! Reaching the server behind a remote APIService: resolving its Service to
//! addresses as upstream does (ExternalName by DNS name; otherwise the ready
//! endpoints of its EndpointSlices on the Service port's name, or the
//! ClusterIP without endpoint routing), and HTTPS clients with the
//! APIService's trust settings and the front-proxy client certificate.

use std::collections::HashMap;
use std::sync::Mutex;

use apiserver::proxy::Delegate;
use apiserver::transport::remote::{client_config, ServerTrust};
use apiserver::transport::service::{host_port, ready_addresses};
use base64::Engine;
use serde_json::Value;

use crate::state::State;

/// Why a Service could not be resolved: the `Available` condition it gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unresolved {
    /// `False` or `Unknown`.
    pub status: &'static str,
    /// Upstream's reason (`ServiceNotFound`, `MissingEndpoints`, ...).
    pub reason: &'static str,
    pub message: String,
}

impl Unresolved {
    fn new(status: &'static str, reason: &'static str, message: String) -> Self {
        Unresolved {
            status,
            reason,
            message,
        }
    }
}

/// The service reference of an APIService (`None` for a local one).
pub struct ServiceRef {
    pub namespace: String,
    pub name: String,
    pub port: u16,
}

impl ServiceRef {
    /// Reads `spec.service`.
    pub fn of(apiservice: &Value) -> Option<ServiceRef> {
        let svc = apiservice
            .pointer("/spec/service")
            .filter(|s| s.is_object())?;
        Some(ServiceRef {
            namespace: svc.get("namespace")?.as_str()?.to_string(),
            name: svc.get("name")?.as_str()?.to_string(),
            port: svc
                .get("port")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(443),
        })
    }

    /// The DNS name the serving certificate must hold: `<svc>.<ns>.svc`.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.name, self.namespace)
    }
}

/// Upstream's loopback resolver: the `kubernetes` Service in `default` on
/// port 443 is the API server itself, reached at `own` (not through its
/// EndpointSlices, which may name addresses this process cannot reach).
pub fn loopback_for(svc: &ServiceRef, own: &str) -> Option<String> {
    (svc.namespace == "default" && svc.name == "kubernetes" && svc.port == 443)
        .then(|| own.to_string())
}

/// Where an APIService may not send the aggregator: its own tiers (this
/// aggregator and the replicas of the next tier, which trust its
/// front-proxy certificate) always, and loopback addresses unless allowed.
/// Without this, whoever may write an APIService and a Service could point
/// the aggregator's client certificate at the tiers' own ports or at
/// anything listening on the host.
#[derive(Clone, Debug, Default)]
pub struct EndpointPolicy {
    /// `--allow-loopback-apiservice-endpoints`: loopback addresses (and
    /// `localhost`) may be endpoints (one-host clusters, tests).
    pub allow_loopback: bool,
    /// `host:port` of this process and of each next-tier replica.
    pub own: Vec<String>,
}

impl EndpointPolicy {
    /// Why `addr` (`host:port`) may not be proxied to, if it may not.
    pub fn refuses(&self, addr: &str) -> Option<&'static str> {
        let (host, port) = split_host_port(addr)?;
        let loopback = is_loopback_host(host);
        let own = self.own.iter().any(|o| {
            split_host_port(o).is_some_and(|(oh, op)| {
                op == port && (oh.eq_ignore_ascii_case(host) || (loopback && is_loopback_host(oh)))
            })
        });
        if own {
            return Some("is one of the API server's own tiers");
        }
        (loopback && !self.allow_loopback)
            .then_some("is a loopback address (--allow-loopback-apiservice-endpoints is off)")
    }
}

fn split_host_port(addr: &str) -> Option<(&str, &str)> {
    let (host, port) = addr.rsplit_once(':')?;
    Some((host.trim_start_matches('[').trim_end_matches(']'), port))
}

/// Loopback or unspecified IPs (which connect to this host), `localhost`.
fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || ip
                    .to_ipv4_mapped()
                    .is_some_and(|v4| v4.is_loopback() || v4.is_unspecified())
        }
        Err(_) => false,
    }
}

/// Resolves `svc` to the addresses (`host:port`) requests may go to: those
/// [`EndpointPolicy`] allows (upstream's own loopback resolver for
/// `default/kubernetes` excepted).
pub async fn resolve(state: &State, svc: &ServiceRef) -> Result<Vec<String>, Unresolved> {
    if let Some(own) = loopback_for(svc, &state.loopback) {
        return Ok(vec![own]);
    }
    let addrs = resolve_addresses(state, svc).await?;
    let (allowed, refused): (Vec<String>, Vec<String>) = addrs
        .into_iter()
        .partition(|a| state.endpoint_policy.refuses(a).is_none());
    if allowed.is_empty() {
        if let Some(addr) = refused.first() {
            let why = state.endpoint_policy.refuses(addr).unwrap_or_default();
            return Err(Unresolved::new(
                "False",
                "EndpointsNotAllowed",
                format!(
                    "endpoint {addr} of service/{} in \"{}\" {why}",
                    svc.name, svc.namespace
                ),
            ));
        }
    }
    Ok(allowed)
}

async fn resolve_addresses(state: &State, svc: &ServiceRef) -> Result<Vec<String>, Unresolved> {
    let (ns, name) = (&svc.namespace, &svc.name);
    let path = format!("/api/v1/namespaces/{ns}/services/{name}");
    let service = match state.get_json(&path).await {
        Ok((200, v)) => v,
        Ok((404, _)) => {
            return Err(Unresolved::new(
                "False",
                "ServiceNotFound",
                format!("service/{name} in \"{ns}\" is not present"),
            ))
        }
        Ok((code, _)) => {
            return Err(Unresolved::new(
                "Unknown",
                "ServiceAccessError",
                format!("service/{name} in \"{ns}\" could not be read: status {code}"),
            ))
        }
        Err(e) => return Err(Unresolved::new("Unknown", "ServiceAccessError", e)),
    };
    let spec = service.get("spec").cloned().unwrap_or(Value::Null);
    if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
        let host = spec
            .get("externalName")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Ok(vec![host_port(host, svc.port)]);
    }
    let port = spec
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(svc.port)));
    let Some(port) = port else {
        return Err(Unresolved::new(
            "False",
            "ServicePortError",
            format!(
                "service/{name} in \"{ns}\" is not listening on port {}",
                svc.port
            ),
        ));
    };
    let port_name = port.get("name").and_then(Value::as_str).unwrap_or("");
    if !state.endpoint_routing {
        return match spec.get("clusterIP").and_then(Value::as_str) {
            Some(ip) if !ip.is_empty() && ip != "None" => Ok(vec![host_port(ip, svc.port)]),
            _ => Err(Unresolved::new(
                "False",
                "ServiceNotFound",
                format!("service/{name} in \"{ns}\" has no cluster IP"),
            )),
        };
    }
    let path = format!(
        "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D{name}"
    );
    let slices = match state.get_json(&path).await {
        Ok((200, v)) => v,
        Ok((code, _)) => {
            return Err(Unresolved::new(
                "Unknown",
                "EndpointsAccessError",
                format!(
                "endpointslices for service/{name} in \"{ns}\" could not be read: status {code}"
            ),
            ))
        }
        Err(e) => return Err(Unresolved::new("Unknown", "EndpointsAccessError", e)),
    };
    let items = slices
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if items.is_empty() {
        return Err(Unresolved::new(
            "False",
            "EndpointsNotFound",
            format!("cannot find endpointslices for service/{name} in \"{ns}\""),
        ));
    }
    let addrs = ready_addresses(&items, port_name);
    if addrs.is_empty() {
        return Err(Unresolved::new(
            "False",
            "MissingEndpoints",
            format!(
                "endpointslices for service/{name} in \"{ns}\" have no addresses with port name \"{port_name}\""
            ),
        ));
    }
    Ok(addrs)
}

/// HTTPS clients of external servers, one per (APIService spec, address),
/// kept so connections are reused.
#[derive(Default)]
pub struct Clients {
    cache: Mutex<HashMap<String, Delegate>>,
}

impl Clients {
    /// The client for `apiservice` at `addr`.
    pub fn get(&self, state: &State, apiservice: &Value, addr: &str) -> Result<Delegate, String> {
        let svc = ServiceRef::of(apiservice).ok_or("not a remote APIService")?;
        let spec = apiservice.get("spec").cloned().unwrap_or(Value::Null);
        let key = format!("{addr}|{spec}");
        if let Ok(cache) = self.cache.lock() {
            if let Some(d) = cache.get(&key) {
                return Ok(d.clone());
            }
        }
        let insecure = spec
            .get("insecureSkipTLSVerify")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let ca = spec
            .get("caBundle")
            .and_then(Value::as_str)
            .map(|b| base64::engine::general_purpose::STANDARD.decode(b))
            .transpose()
            .map_err(|e| format!("spec.caBundle: {e}"))?;
        let server_name = svc.server_name();
        let trust = match (&ca, insecure) {
            (_, true) => ServerTrust::Insecure,
            (Some(pem), false) => ServerTrust::CaBundle {
                pem,
                server_name: &server_name,
            },
            // As upstream (Go's TLS client with no CAData): the system roots.
            (None, false) => ServerTrust::SystemRoots {
                server_name: &server_name,
            },
        };
        let cert = state
            .proxy_client_cert
            .as_ref()
            .map(|(c, k)| (c.as_slice(), k.as_slice()));
        let tls = client_config(trust, cert).map_err(|e| e.to_string())?;
        let d = Delegate::new(&format!("https://{addr}"), tls).map_err(|e| e.to_string())?;
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() > 256 {
                cache.clear();
            }
            cache.insert(key, d.clone());
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn endpoint_policy_refuses_own_tiers_and_loopback() {
        let policy = EndpointPolicy {
            allow_loopback: false,
            own: vec!["127.0.0.1:6443".into(), "10.0.0.5:6444".into()],
        };
        for addr in [
            "127.0.0.1:8443",
            "[::1]:443",
            "localhost:443",
            "0.0.0.0:443",
            "[::ffff:127.0.0.1]:443",
            "127.9.9.9:1",
        ] {
            assert!(policy.refuses(addr).is_some(), "{addr} is loopback");
        }
        assert!(policy.refuses("10.0.0.5:6444").is_some(), "the next tier");
        assert!(policy.refuses("10.0.0.5:443").is_none());
        assert!(policy.refuses("metrics.example.com:443").is_none());
        let one_host = EndpointPolicy {
            allow_loopback: true,
            ..policy
        };
        assert!(one_host.refuses("127.0.0.1:8443").is_none());
        assert!(
            one_host.refuses("127.0.0.1:6443").is_some(),
            "still not the aggregator itself"
        );
        assert!(
            one_host.refuses("localhost:6443").is_some(),
            "by any loopback name"
        );
        assert!(one_host.refuses("10.0.0.5:6444").is_some());
    }

    #[test]
    fn default_kubernetes_on_443_is_the_server_itself() {
        let svc = |ns: &str, name: &str, port: u16| ServiceRef {
            namespace: ns.into(),
            name: name.into(),
            port,
        };
        let own = "127.0.0.1:6443";
        assert_eq!(
            loopback_for(&svc("default", "kubernetes", 443), own).as_deref(),
            Some(own)
        );
        assert_eq!(loopback_for(&svc("default", "kubernetes", 8443), own), None);
        assert_eq!(
            loopback_for(&svc("kube-system", "kubernetes", 443), own),
            None
        );
        assert_eq!(loopback_for(&svc("default", "other", 443), own), None);
    }

    #[test]
    fn service_ref_defaults_the_port() {
        let s = ServiceRef::of(
            &json!({"spec": {"service": {"namespace": "kube-system", "name": "m"}}}),
        )
        .expect("remote");
        assert_eq!(s.port, 443);
        assert_eq!(s.server_name(), "m.kube-system.svc");
        assert!(ServiceRef::of(&json!({"spec": {}})).is_none());
    }
}
