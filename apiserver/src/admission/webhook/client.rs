//! Calling one webhook: its Service resolved to a ready endpoint through the
//! EndpointSlices in etcd (upstream's endpoint resolver, at dial time), the
//! serving certificate verified against `caBundle` (or the machine's roots)
//! for `<service>.<namespace>.svc` or the URL's host, and the
//! `AdmissionReview` POSTed with `?timeout=<n>s`. Clients are kept per trust
//! setting so connections are reused across requests.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use rand::seq::IndexedRandom;
use serde_json::Value;

use super::config::{Target, Webhook};
use crate::storage::{EtcdStorage, ListRequest};
use crate::transport::remote::{client_config, ServerTrust};
use crate::transport::service::{host_port, ready_addresses};

/// The most a webhook's answer may hold: a patch that grows the object to
/// the request body limit, base64-encoded, with room for the rest.
pub const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;
/// Clients kept at most (one per distinct caBundle and server name).
const MAX_CLIENTS: usize = 256;

type HttpsClient = Client<crate::transport::HttpsConnector, Full<Bytes>>;

/// Resolves webhook targets and sends reviews.
pub struct WebhookClient {
    storage: EtcdStorage,
    prefix: String,
    clients: Mutex<HashMap<(Vec<u8>, String), HttpsClient>>,
}

impl WebhookClient {
    /// A client reading Services and EndpointSlices under `prefix` in
    /// `storage` (the tiers share one etcd).
    pub fn new(storage: EtcdStorage, prefix: &str) -> Self {
        WebhookClient {
            storage,
            prefix: prefix.trim_end_matches('/').to_string(),
            clients: Mutex::new(HashMap::new()),
        }
    }

    async fn read(&self, key: &str) -> Result<Option<Value>, String> {
        let kv = self.storage.get(key).await.map_err(|e| e.to_string())?;
        kv.map(|kv| crate::protobuf::decode_from_storage(&kv.value))
            .transpose()
    }

    /// The address (`host:port`) requests to `target` go to. For a Service,
    /// one ready endpoint (chosen at random) on the Service port's name, as
    /// upstream's endpoint resolver; messages are upstream's.
    pub async fn resolve(&self, target: &Target) -> Result<String, String> {
        let (namespace, name, port) = match target {
            Target::Url { host, port, .. } => return Ok(host_port(host, *port)),
            Target::Service {
                namespace,
                name,
                port,
                ..
            } => (namespace, name, *port),
        };
        let svc = self
            .read(&format!(
                "{}/services/specs/{namespace}/{name}",
                self.prefix
            ))
            .await?
            .ok_or_else(|| format!("service \"{name}\" not found"))?;
        let spec = svc.get("spec").cloned().unwrap_or(Value::Null);
        if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
            let host = spec
                .get("externalName")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Ok(host_port(host, port));
        }
        let svc_port = spec
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(port)))
            .ok_or_else(|| format!("no service port {port} found for service \"{name}\""))?;
        let port_name = svc_port.get("name").and_then(Value::as_str).unwrap_or("");
        let listed = self
            .storage
            .list(&ListRequest {
                prefix: format!("{}/endpointslices/{namespace}/", self.prefix),
                ..Default::default()
            })
            .await
            .map_err(|e| e.to_string())?;
        let slices: Vec<Value> = listed
            .items
            .iter()
            .filter_map(|kv| crate::protobuf::decode_from_storage(&kv.value).ok())
            .filter(|s| {
                s.pointer("/metadata/labels/kubernetes.io~1service-name")
                    .and_then(Value::as_str)
                    == Some(name.as_str())
            })
            .collect();
        let addrs = ready_addresses(&slices, port_name);
        addrs
            .choose(&mut rand::rng())
            .cloned()
            .ok_or_else(|| format!("no endpoints available for service \"{name}\""))
    }

    fn client(&self, hook: &Webhook, server_name: &str) -> Result<HttpsClient, String> {
        let key = (hook.ca_bundle.clone(), server_name.to_string());
        if let Ok(clients) = self.clients.lock() {
            if let Some(c) = clients.get(&key) {
                return Ok(c.clone());
            }
        }
        let trust = if hook.ca_bundle.is_empty() {
            ServerTrust::SystemRoots { server_name }
        } else {
            ServerTrust::CaBundle {
                pem: &hook.ca_bundle,
                server_name,
            }
        };
        let tls = client_config(trust, None).map_err(|e| format!("invalid caBundle: {e}"))?;
        let client = crate::transport::https_client(tls, None);
        if let Ok(mut clients) = self.clients.lock() {
            if clients.len() >= MAX_CLIENTS {
                clients.clear();
            }
            clients.insert(key, client.clone());
        }
        Ok(client)
    }

    /// POSTs `review` to the webhook within `timeout` and returns the JSON
    /// answer. The error reads as Go's client does (`Post "<url>": <why>`).
    pub async fn post(
        &self,
        hook: &Webhook,
        target: &Target,
        review: Bytes,
        timeout: Duration,
    ) -> Result<Value, String> {
        let secs = timeout.as_secs_f64().ceil().max(1.0) as u64;
        let path = match target {
            Target::Url { path, .. } | Target::Service { path, .. } => path,
        };
        let sep = if path.contains('?') { '&' } else { '?' };
        let shown = format!("{}{sep}timeout={secs}s", target.url());
        let fail = |why: String| format!("Post \"{shown}\": {why}");
        let call = async {
            let addr = self.resolve(target).await.map_err(&fail)?;
            let server_name = target.server_name();
            let client = self.client(hook, &server_name).map_err(&fail)?;
            let port = match target {
                Target::Url { port, .. } | Target::Service { port, .. } => *port,
            };
            let req = http::Request::post(format!("https://{addr}{path}{sep}timeout={secs}s"))
                .header(http::header::HOST, host_port(&server_name, port))
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "application/json")
                .body(Full::new(review))
                .map_err(|e| fail(e.to_string()))?;
            let resp = client
                .request(req)
                .await
                .map_err(|e| fail(error_chain(&e)))?;
            let code = resp.status().as_u16();
            let body = Limited::new(resp.into_body(), MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map_err(|e| fail(format!("reading the response: {e}")))?
                .to_bytes();
            if !(200..300).contains(&code) {
                let status: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                return Err(match status.get("message").and_then(Value::as_str) {
                    Some(m) if status.get("kind").and_then(Value::as_str) == Some("Status") => {
                        m.to_string()
                    }
                    _ => format!(
                        "the server responded with the status code {code} but did not return more information"
                    ),
                });
            }
            serde_json::from_slice(&body)
                .map_err(|e| format!("couldn't get version/kind; json parse error: {e}"))
        };
        match tokio::time::timeout(timeout, call).await {
            Ok(r) => r,
            Err(_) => Err(fail("context deadline exceeded".into())),
        }
    }
}

/// An error and its causes, as one line (`connection refused`, TLS alerts).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(err) = cur {
        let s = err.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        cur = err.source();
    }
    out
}
