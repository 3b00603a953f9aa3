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

/// Resolves `svc` to the addresses (`host:port`) requests may go to.
pub async fn resolve(state: &State, svc: &ServiceRef) -> Result<Vec<String>, Unresolved> {
    if let Some(own) = loopback_for(svc, &state.loopback) {
        return Ok(vec![own]);
    }
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
            (None, false) => return Err("no caBundle and insecureSkipTLSVerify is false".into()),
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
