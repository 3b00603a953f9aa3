//! Converting custom resources between the versions of a CRD: `None` only
//! rewrites `apiVersion`; `Webhook` POSTs an `apiextensions.k8s.io/v1`
//! ConversionReview over HTTPS (trusting the CRD's `caBundle`) and takes
//! the converted object, keeping the original metadata but labels and
//! annotations (upstream's `webhook_converter.go`).
//!
//! Conversion runs inside the store's synchronous strategy hooks, so the
//! webhook call blocks its worker thread (`block_in_place`); the tier runs
//! on the multi-threaded runtime.

use std::time::Duration;

use apiserver::apimachinery::errors::ApiError;
use apiserver::transport::remote::{client_config, ServerTrust};
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use serde_json::{json, Value};

type Connector = apiserver::transport::HttpsConnector;

/// How long a conversion webhook may take (upstream's default timeout).
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// A CRD's conversion strategy.
pub enum Converter {
    /// `None`: versions differ only in `apiVersion`.
    None,
    /// `Webhook`: an HTTPS conversion webhook.
    Webhook(Webhook),
    /// A webhook whose client configuration is unusable: every conversion
    /// fails with this message.
    Broken(String),
}

/// A conversion webhook client.
pub struct Webhook {
    client: Client<Connector, Full<Bytes>>,
    url: http::Uri,
    /// `<group>/<version>, Kind=<kind>` for error messages.
    what: String,
}

impl Converter {
    /// The converter `spec.conversion` of a CRD asks for; a webhook whose
    /// client configuration cannot be used gives an error message.
    pub fn from_crd(crd: &Value, what: String) -> Result<Converter, String> {
        let conv = crd.get("spec").and_then(|s| s.get("conversion"));
        let strategy = conv
            .and_then(|c| c.get("strategy"))
            .and_then(Value::as_str)
            .unwrap_or("None");
        if strategy != "Webhook" {
            return Ok(Converter::None);
        }
        let cc = conv
            .and_then(|c| c.get("webhook"))
            .and_then(|w| w.get("clientConfig"))
            .cloned()
            .unwrap_or(Value::Null);
        let url = match (cc.get("url").and_then(Value::as_str), cc.get("service")) {
            (Some(u), _) => u.to_string(),
            (None, Some(svc)) => {
                let s = |k: &str| svc.get(k).and_then(Value::as_str).unwrap_or("");
                let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
                format!(
                    "https://{}.{}.svc:{port}{}",
                    s("name"),
                    s("namespace"),
                    s("path")
                )
            }
            _ => return Err("webhook clientConfig has neither url nor service".into()),
        };
        let url: http::Uri = url
            .parse()
            .map_err(|e| format!("invalid webhook URL {url}: {e}"))?;
        let ca = match cc.get("caBundle").and_then(Value::as_str) {
            Some(b) if !b.is_empty() => base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| format!("invalid caBundle: {e}"))?,
            _ => Vec::new(),
        };
        // Verified against the caBundle, or the machine's roots without one,
        // for the URL's host (`<service>.<namespace>.svc` for a service), as
        // admission webhooks are.
        let server_name = url
            .host()
            .unwrap_or("")
            .trim_matches(['[', ']'])
            .to_string();
        let trust = if ca.is_empty() {
            ServerTrust::SystemRoots {
                server_name: &server_name,
            }
        } else {
            ServerTrust::CaBundle {
                pem: &ca,
                server_name: &server_name,
            }
        };
        let tls = client_config(trust, None).map_err(|e| format!("invalid caBundle: {e}"))?;
        let client = apiserver::transport::https_client(tls, Some(Duration::from_secs(5)));
        Ok(Converter::Webhook(Webhook { client, url, what }))
    }

    /// Converts `obj` to `desired` (`group/version`) in place.
    pub fn convert(&self, obj: &mut Value, desired: &str) -> Result<(), ApiError> {
        self.convert_many(std::slice::from_mut(obj), desired)
    }

    /// Converts every object of `objs` to `desired` in place; a webhook gets
    /// all those not already in `desired` in one ConversionReview.
    pub fn convert_many(&self, objs: &mut [Value], desired: &str) -> Result<(), ApiError> {
        let pending: Vec<usize> = (0..objs.len())
            .filter(|i| objs[*i].get("apiVersion").and_then(Value::as_str) != Some(desired))
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        match self {
            Converter::None => {
                for i in pending {
                    if let Value::Object(m) = &mut objs[i] {
                        m.insert("apiVersion".into(), Value::String(desired.to_string()));
                    }
                }
                Ok(())
            }
            Converter::Broken(msg) => Err(ApiError::internal(format!(
                "conversion webhook is misconfigured: {msg}"
            ))),
            Converter::Webhook(w) => {
                let handle = tokio::runtime::Handle::try_current()
                    .map_err(|e| ApiError::internal(format!("no runtime for conversion: {e}")))?;
                let inputs: Vec<&Value> = pending.iter().map(|i| &objs[*i]).collect();
                let converted =
                    tokio::task::block_in_place(|| handle.block_on(w.call(&inputs, desired)))
                        .map_err(|e| {
                            ApiError::internal(format!(
                                "conversion webhook for {} failed: {e}",
                                w.what
                            ))
                        })?;
                for (i, c) in pending.into_iter().zip(converted) {
                    objs[i] = c;
                }
                Ok(())
            }
        }
    }
}

impl Webhook {
    /// Converts `objs` to `desired` in one ConversionReview, as upstream's
    /// webhook converter does for a list.
    async fn call(&self, objs: &[&Value], desired: &str) -> Result<Vec<Value>, String> {
        let uid = uuid::Uuid::new_v4().to_string();
        let review = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objs},
        });
        let body = serde_json::to_vec(&review).map_err(|e| e.to_string())?;
        let req = http::Request::builder()
            .method("POST")
            .uri(self.url.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let resp = tokio::time::timeout(WEBHOOK_TIMEOUT, self.client.request(req))
            .await
            .map_err(|_| "timed out".to_string())?
            .map_err(|e| format!("{e}: {}", source_chain(&e)))?;
        let status = resp.status();
        let bytes = tokio::time::timeout(WEBHOOK_TIMEOUT, resp.into_body().collect())
            .await
            .map_err(|_| "timed out reading the response".to_string())?
            .map_err(|e| e.to_string())?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("the server responded with status {status}"));
        }
        let v: Value =
            serde_json::from_slice(&bytes).map_err(|e| format!("invalid response: {e}"))?;
        let r = v
            .get("response")
            .ok_or("the response has no response field")?;
        if r.get("uid").and_then(Value::as_str) != Some(uid.as_str()) {
            return Err("expected response.uid to match the request uid".into());
        }
        let result = r.get("result").cloned().unwrap_or(Value::Null);
        if result.get("status").and_then(Value::as_str) != Some("Success") {
            let msg = result.get("message").and_then(Value::as_str).unwrap_or("");
            return Err(format!("conversion failed: {msg}"));
        }
        let converted = r
            .get("convertedObjects")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if converted.len() != objs.len() {
            return Err(format!(
                "expected {} converted objects, got {}",
                objs.len(),
                converted.len()
            ));
        }
        converted
            .into_iter()
            .zip(objs)
            .map(|(c, obj)| restore_metadata(c, obj, desired))
            .collect()
    }
}

/// Checks one converted object and keeps the original metadata but its
/// labels and annotations (the only metadata a webhook may change).
fn restore_metadata(mut converted: Value, obj: &Value, desired: &str) -> Result<Value, String> {
    if converted.get("apiVersion").and_then(Value::as_str) != Some(desired) {
        return Err(format!(
            "invalid converted object: expected apiVersion {desired}"
        ));
    }
    let mut md = obj.get("metadata").cloned().unwrap_or_else(|| json!({}));
    for k in ["labels", "annotations"] {
        match converted.get("metadata").and_then(|m| m.get(k)) {
            Some(v) => md[k] = v.clone(),
            None => {
                if let Value::Object(m) = &mut md {
                    m.remove(k);
                }
            }
        }
    }
    if let Value::Object(m) = &mut converted {
        m.insert("metadata".into(), md);
    }
    Ok(converted)
}

fn source_chain(e: &dyn std::error::Error) -> String {
    let mut out = Vec::new();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push(s.to_string());
        cur = s.source();
    }
    out.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(client_config: Value) -> Value {
        json!({"spec": {"conversion": {"strategy": "Webhook",
            "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": client_config}}}})
    }

    #[tokio::test]
    async fn a_webhook_without_ca_bundle_trusts_the_system_roots() {
        let c = Converter::from_crd(
            &crd(json!({"url": "https://convert.example.com/crd"})),
            "x".into(),
        );
        assert!(matches!(c, Ok(Converter::Webhook(_))));
    }

    #[tokio::test]
    async fn a_ca_bundle_that_is_not_pem_is_refused() {
        let c = Converter::from_crd(
            &crd(json!({"url": "https://convert.example.com/crd", "caBundle": "bm90IGEgY2VydA=="})),
            "x".into(),
        );
        assert!(matches!(c, Err(e) if e.contains("invalid caBundle")));
    }
}
