//! An aggregated API server in a few dozen lines on the shared library: the
//! `metrics.k8s.io/v1beta1` API (`NodeMetrics` for this machine, read from
//! `/proc`, and `PodMetrics`, empty here), as metrics-server serves it for
//! `kubectl top`.
//!
//! Authentication: the aggregator's front-proxy client certificate
//! (`--requestheader-client-ca-file`, `--requestheader-allowed-names`) with
//! the caller's identity in `X-Remote-*` headers, or a bearer token checked
//! with a TokenReview (`--authentication-kubeconfig`); anything else is 401.
//! Authorization: a SubjectAccessReview per request, cached ten seconds
//! (`--authorization-kubeconfig`), as upstream's metrics-server. Its
//! identity needs `system:auth-delegator` (deploy/manifests/metrics-server.yaml).

mod openapi;
mod proc;

use std::sync::Arc;
use std::time::Duration;

use apiserver::apimachinery::errors::{ApiError, GroupResource};
use apiserver::authentication::UserInfo;
use apiserver::endpoints::handlers::json_response;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::resource::ResourceDef;
use apiserver::server::handler::GenericApiServer;
use apiserver::server::options::{AuthenticationOptions, GenericOptions, SecureServingOptions};
use clap::Parser;
use serde_json::{json, Value};

const GROUP: &str = "metrics.k8s.io";
const VERSION: &str = "v1beta1";
const DEFAULT_PORT: u16 = 4443;

/// An example metrics server for one node.
#[derive(Parser, Debug)]
#[command(name = "example-metrics-server", version)]
struct Options {
    #[command(flatten)]
    serving: SecureServingOptions,
    #[command(flatten)]
    authentication: AuthenticationOptions,
    #[command(flatten)]
    generic: GenericOptions,
    #[command(flatten)]
    audit: apiserver::server::audit_options::AuditOptions,
    #[command(flatten)]
    delegated: apiserver::server::delegated::DelegatedAuthOptions,
    /// The Node name this machine's metrics are reported under (default: the host name).
    #[arg(long)]
    node_name: Option<String>,
    /// How often /proc is sampled (the metrics window).
    #[arg(long, default_value = "5s", value_parser = apiserver::server::options::parse_duration)]
    metric_resolution: Duration,
}

fn node_metrics(node: &str, u: &proc::Usage) -> Value {
    json!({
        "kind": "NodeMetrics",
        "apiVersion": format!("{GROUP}/{VERSION}"),
        "metadata": {"name": node, "creationTimestamp": u.timestamp.clone()},
        "timestamp": u.timestamp.clone(),
        "window": format!("{}s", u.window.as_secs().max(1)),
        "usage": {"cpu": format!("{}n", u.nanocores), "memory": format!("{}Ki", u.memory_kib)},
    })
}

fn list(kind: &str, items: Vec<Value>) -> Value {
    json!({"kind": kind, "apiVersion": format!("{GROUP}/{VERSION}"), "metadata": {}, "items": items})
}

fn register(groups: &mut Catalog, node: String, usage: proc::NodeUsage) {
    let nodes = ResourceDef::new(GROUP, VERSION, "NodeMetrics", "nodes")
        .singular("")
        .cluster_scoped()
        .verbs(&["get", "list"]);
    groups.add_handler(
        nodes,
        Arc::new(move |req, info| {
            let (node, usage) = (node.clone(), usage.clone());
            Box::pin(async move {
                if let Some(u) = req.extensions().get::<UserInfo>() {
                    tracing::info!(user = %u.name, groups = ?u.groups, path = %req.uri().path(), "request");
                }
                let gr = GroupResource { group: GROUP, resource: "nodes" };
                let current = usage.get();
                match info.verb.as_str() {
                    "list" => {
                        let items = current.iter().map(|u| node_metrics(&node, u)).collect();
                        json_response(200, &list("NodeMetricsList", items), false)
                    }
                    "get" => match current {
                        Some(u) if info.name == node => {
                            json_response(200, &node_metrics(&node, &u), false)
                        }
                        _ => ApiError::not_found(gr, &info.name).into_response(),
                    },
                    verb => ApiError::method_not_supported(gr, verb).into_response(),
                }
            })
        }),
    );
    let pods = ResourceDef::new(GROUP, VERSION, "PodMetrics", "pods")
        .singular("")
        .verbs(&["get", "list"]);
    groups.add_handler(
        pods,
        Arc::new(|_req, info| {
            Box::pin(async move {
                let gr = GroupResource {
                    group: GROUP,
                    resource: "pods",
                };
                match info.verb.as_str() {
                    "list" => json_response(200, &list("PodMetricsList", vec![]), false),
                    "get" => ApiError::not_found(gr, &info.name).into_response(),
                    verb => ApiError::method_not_supported(gr, verb).into_response(),
                }
            })
        }),
    );
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    apiserver::server::init_logging();
    let mut opts =
        Options::parse_from(apiserver::server::config_file::expand(std::env::args_os())?);
    opts.delegated
        .lookup_authentication(&mut opts.authentication)
        .await?;
    let node = match &opts.node_name {
        Some(n) => n.clone(),
        None => std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".into()),
    };
    let delegated = opts.delegated.build()?;
    let usage = proc::NodeUsage::default();
    tokio::spawn(usage.clone().run(opts.metric_resolution));
    let mut groups = Catalog::default();
    register(&mut groups, node, usage);
    let address = apiserver::server::listen_address(&opts.serving, DEFAULT_PORT).to_string();
    let api =
        GenericApiServer::new(groups, None, address).with_interceptor(Arc::new(openapi::OpenApi));
    apiserver::server::run(
        apiserver::server::ServerConfig {
            name: "example-metrics-server",
            serving: &opts.serving,
            default_port: DEFAULT_PORT,
            authentication: &opts.authentication,
            generic: &opts.generic,
            audit: &opts.audit,
            authorizer: delegated.authorizer,
            credential_validator: None,
            trust_front_proxy_authorization: false,
            token_reviewer: delegated.token_reviewer,
            flow_control: None,
        },
        Arc::new(api),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_metrics_have_upstream_shape() {
        let u = proc::Usage {
            nanocores: 250_000_000,
            memory_kib: 1024,
            timestamp: "2026-01-01T00:00:00Z".into(),
            window: Duration::from_secs(5),
        };
        let m = node_metrics("n1", &u);
        assert_eq!(m["usage"]["cpu"], "250000000n");
        assert_eq!(m["usage"]["memory"], "1024Ki");
        assert_eq!(m["window"], "5s");
        assert_eq!(m["apiVersion"], "metrics.k8s.io/v1beta1");
    }
}
