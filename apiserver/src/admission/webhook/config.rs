//! Webhook configurations (`admissionregistration.k8s.io/v1`
//! `MutatingWebhookConfiguration` / `ValidatingWebhookConfiguration`) read
//! into the form admission calls: upstream's defaults applied (failurePolicy
//! `Fail`, matchPolicy `Equivalent`, `timeoutSeconds` 10, scope `*`, service
//! port 443, reinvocationPolicy `Never`, empty selectors), selectors parsed
//! and `matchConditions` compiled once per configuration change.
//!
//! A webhook whose configuration cannot be read (a selector that does not
//! parse, a bad URL) is kept with its error: calling it fails, and its
//! failure policy decides, as upstream treats a webhook it cannot reach.

use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::meta::{str_field, string_list};
use crate::cel::expression::Expression;

/// Upstream's default and maximum `timeoutSeconds`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT_SECONDS: u64 = 30;

/// Where a webhook is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `clientConfig.url`: scheme `https`, `host[:port]` and path (with query).
    Url {
        host: String,
        port: u16,
        path: String,
    },
    /// `clientConfig.service`.
    Service {
        namespace: String,
        name: String,
        port: u16,
        path: String,
    },
}

impl Target {
    /// The DNS name the serving certificate must hold.
    pub fn server_name(&self) -> String {
        match self {
            Target::Url { host, .. } => host.trim_start_matches('[').trim_end_matches(']').into(),
            Target::Service {
                namespace, name, ..
            } => format!("{name}.{namespace}.svc"),
        }
    }

    /// The URL as upstream names it in errors (`https://svc.ns.svc:443/path`).
    pub fn url(&self) -> String {
        match self {
            Target::Url { host, port, path } => format!("https://{host}:{port}{path}"),
            Target::Service { port, path, .. } => {
                format!("https://{}:{port}{path}", self.server_name())
            }
        }
    }
}

/// One `rules` entry.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    /// `*`, `Cluster` or `Namespaced`.
    pub scope: String,
}

/// One CEL `matchConditions` entry.
#[derive(Debug)]
pub struct MatchCondition {
    pub name: String,
    pub expression: Expression,
}

/// One webhook of a configuration, ready to be matched and called.
#[derive(Debug)]
pub struct Webhook {
    pub name: String,
    /// The configuration's name and uid.
    pub configuration: String,
    /// Identity for reinvocation: configuration uid and index.
    pub id: String,
    pub mutating: bool,
    pub target: Result<Target, String>,
    /// `caBundle` (PEM), empty for the system roots.
    pub ca_bundle: Vec<u8>,
    pub rules: Vec<Rule>,
    pub fail_open: bool,
    pub match_equivalent: bool,
    pub namespace_selector: Result<LabelSelector, String>,
    pub object_selector: Result<LabelSelector, String>,
    /// `None`, `NoneOnDryRun`, `Some`, `Unknown` (empty when unset).
    pub side_effects: String,
    pub timeout: Duration,
    pub review_versions: Vec<String>,
    pub reinvoke_if_needed: bool,
    pub match_conditions: Vec<MatchCondition>,
}

/// Reads `clientConfig` into its target.
fn target(cc: &Value) -> Result<Target, String> {
    if let Some(svc) = cc.get("service").filter(|s| s.is_object()) {
        let port = svc.get("port").and_then(Value::as_u64).unwrap_or(443);
        return Ok(Target::Service {
            namespace: str_field(svc, "namespace").into(),
            name: str_field(svc, "name").into(),
            port: u16::try_from(port).map_err(|_| format!("invalid service port {port}"))?,
            path: match str_field(svc, "path") {
                "" => "/".into(),
                p => p.into(),
            },
        });
    }
    let url = str_field(cc, "url");
    if url.is_empty() {
        return Err("webhook configuration must have either service or URL".into());
    }
    let uri: http::Uri = url.parse().map_err(|e| format!("Unparsable URL: {e}"))?;
    if uri.scheme_str() != Some("https") {
        return Err(format!(
            "Unparsable URL: 'https' scheme required, got {url:?}"
        ));
    }
    let host = uri
        .host()
        .ok_or_else(|| format!("Unparsable URL: no host in {url:?}"))?;
    Ok(Target::Url {
        host: host.to_string(),
        port: uri.port_u16().unwrap_or(443),
        path: uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "/".into()),
    })
}

fn selector(v: Option<&Value>) -> Result<LabelSelector, String> {
    match v.filter(|s| !s.is_null()) {
        None => Ok(LabelSelector::everything()),
        Some(s) => LabelSelector::from_json(s),
    }
}

/// Reads every webhook of one configuration object.
pub fn webhooks_of(config: &Value, mutating: bool) -> Vec<Webhook> {
    let meta = config.get("metadata").cloned().unwrap_or(Value::Null);
    let config_name = str_field(&meta, "name").to_string();
    let uid = str_field(&meta, "uid").to_string();
    let list = config
        .get("webhooks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.iter()
        .enumerate()
        .map(|(i, w)| {
            let cc = w.get("clientConfig").cloned().unwrap_or(Value::Null);
            let ca_bundle = match cc.get("caBundle").and_then(Value::as_str) {
                Some(b) => base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .unwrap_or_else(|_| b.as_bytes().to_vec()),
                None => Vec::new(),
            };
            let timeout = w
                .get("timeoutSeconds")
                .and_then(Value::as_u64)
                .map(|s| Duration::from_secs(s.clamp(1, MAX_TIMEOUT_SECONDS)))
                .unwrap_or(DEFAULT_TIMEOUT);
            let rules = w
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|r| Rule {
                    operations: string_list(r.get("operations")),
                    api_groups: string_list(r.get("apiGroups")),
                    api_versions: string_list(r.get("apiVersions")),
                    resources: string_list(r.get("resources")),
                    scope: match str_field(r, "scope") {
                        "" => "*".into(),
                        s => s.into(),
                    },
                })
                .collect();
            let match_conditions = w
                .get("matchConditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| MatchCondition {
                    name: str_field(c, "name").into(),
                    expression: Expression::compile(str_field(c, "expression")),
                })
                .collect();
            Webhook {
                name: str_field(w, "name").into(),
                configuration: config_name.clone(),
                id: format!("{uid}/{i}"),
                mutating,
                target: target(&cc),
                ca_bundle,
                rules,
                fail_open: str_field(w, "failurePolicy") == "Ignore",
                match_equivalent: str_field(w, "matchPolicy") != "Exact",
                namespace_selector: selector(w.get("namespaceSelector")),
                object_selector: selector(w.get("objectSelector")),
                side_effects: str_field(w, "sideEffects").into(),
                timeout,
                review_versions: string_list(w.get("admissionReviewVersions")),
                reinvoke_if_needed: mutating && str_field(w, "reinvocationPolicy") == "IfNeeded",
                match_conditions,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_defaults_and_targets() {
        let cfg = json!({"metadata": {"name": "c", "uid": "u"}, "webhooks": [
            {"name": "a.example.com", "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
             "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
             "sideEffects": "None", "admissionReviewVersions": ["v1"]},
            {"name": "b.example.com", "clientConfig": {"url": "https://127.0.0.1:8443/hook?x=1", "caBundle": "Zm9v"},
             "failurePolicy": "Ignore", "matchPolicy": "Exact", "timeoutSeconds": 99,
             "reinvocationPolicy": "IfNeeded", "objectSelector": {"matchLabels": {"a": "b"}}},
            {"name": "c.example.com", "clientConfig": {"url": "http://x"}},
        ]});
        let hooks = webhooks_of(&cfg, true);
        let a = &hooks[0];
        assert_eq!(
            a.target,
            Ok(Target::Service {
                namespace: "ns".into(),
                name: "svc".into(),
                port: 443,
                path: "/".into()
            })
        );
        assert_eq!(a.target.as_ref().unwrap().url(), "https://svc.ns.svc:443/");
        assert!(!a.fail_open && a.match_equivalent && !a.reinvoke_if_needed);
        assert_eq!(a.timeout, DEFAULT_TIMEOUT);
        assert_eq!(a.rules[0].scope, "*");
        assert_eq!(a.id, "u/0");
        let b = &hooks[1];
        assert_eq!(
            b.target.as_ref().unwrap().url(),
            "https://127.0.0.1:8443/hook?x=1"
        );
        assert_eq!(b.ca_bundle, b"foo");
        assert!(b.fail_open && !b.match_equivalent && b.reinvoke_if_needed);
        assert_eq!(b.timeout, Duration::from_secs(30));
        assert!(!b.object_selector.as_ref().unwrap().is_empty());
        assert!(hooks[2].target.is_err());
    }
}
