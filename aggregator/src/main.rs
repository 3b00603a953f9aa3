//! `kube-aggregator`: the front door. Terminates TLS for every client,
//! authenticates it, serves merged discovery, and forwards everything else to
//! kube-core with the caller's identity (front-proxy certificate and
//! `X-Remote-*` headers).

use std::sync::Arc;

use clap::Parser;
use shared::authorization::AlwaysAllow;
use shared::endpoints::discovery::GroupSet;
use shared::proxy::Delegate;
use shared::server::handler::ApiServer;
use shared::server::options::{
    AuthenticationOptions, DelegationOptions, GenericOptions, SecureServingOptions,
};

/// The aggregator's default port (the cluster's API endpoint).
const DEFAULT_PORT: u16 = 6443;

/// The cluster's API endpoint.
#[derive(Parser, Debug)]
#[command(name = "kube-aggregator", version)]
struct Options {
    #[command(flatten)]
    serving: SecureServingOptions,
    #[command(flatten)]
    authentication: AuthenticationOptions,
    #[command(flatten)]
    delegation: DelegationOptions,
    #[command(flatten)]
    generic: GenericOptions,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    shared::server::init_logging();
    let opts = Options::parse();
    let delegate = Delegate::from_options(&opts.delegation)?
        .ok_or_else(|| anyhow::anyhow!("--delegate-url (the kube-core tier) is required"))?;
    let address = shared::server::listen_address(&opts.serving, DEFAULT_PORT).to_string();
    let api = ApiServer::new(GroupSet::default(), Some(delegate), address);
    shared::server::run(
        shared::server::ServerConfig {
            name: "kube-aggregator",
            serving: &opts.serving,
            default_port: DEFAULT_PORT,
            authentication: &opts.authentication,
            generic: &opts.generic,
            authorizer: Arc::new(AlwaysAllow),
        },
        Arc::new(api),
    )
    .await
}
