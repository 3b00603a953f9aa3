//! `kube-extensions-apiserver`: serves `apiextensions.k8s.io`
//! (CustomResourceDefinitions); anything else is the end of the delegation
//! chain and gets 404.

use std::sync::Arc;

use clap::Parser;
use shared::admission::AdmissionChain;
use shared::authorization::AlwaysAllow;
use shared::endpoints::discovery::GroupSet;
use shared::registry::resource::ResourceDef;
use shared::registry::store::Store;
use shared::registry::table::Column;
use shared::server::handler::ApiServer;
use shared::server::options::{
    AuthenticationOptions, EtcdOptions, GenericOptions, SecureServingOptions,
};
use shared::storage::EtcdStorage;

/// The extensions tier's default port.
const DEFAULT_PORT: u16 = 6445;

/// Serves CustomResourceDefinitions and the custom resources they define.
#[derive(Parser, Debug)]
#[command(name = "kube-extensions-apiserver", version)]
struct Options {
    #[command(flatten)]
    serving: SecureServingOptions,
    #[command(flatten)]
    authentication: AuthenticationOptions,
    #[command(flatten)]
    etcd: EtcdOptions,
    #[command(flatten)]
    generic: GenericOptions,
}

/// The CustomResourceDefinition resource.
fn crd_definition() -> ResourceDef {
    ResourceDef::new(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    )
    .cluster_scoped()
    .short_names(&["crd", "crds"])
    .categories(&["api-extensions"])
    .storage_path("apiextensions.k8s.io/customresourcedefinitions")
    .with_status()
    .columns(vec![Column::path(
        "Created At",
        "metadata.creationTimestamp",
    )])
    .strategy(shared::registry::strategy::SpecStrategy)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    shared::server::init_logging();
    let opts = Options::parse();
    let storage = EtcdStorage::connect(&opts.etcd.etcd_servers, Default::default())
        .await
        .map_err(|e| anyhow::anyhow!("configuring etcd client: {e}"))?;
    let prefix = opts.etcd.etcd_prefix.trim_end_matches('/').to_string();
    let mut groups = GroupSet::default();
    groups.add(Store::new(
        crd_definition(),
        storage.clone(),
        &prefix,
        AdmissionChain::default(),
    ));
    let address = shared::server::listen_address(&opts.serving, DEFAULT_PORT).to_string();
    let mut api = ApiServer::new(groups, None, address);
    api.readyz
        .add("etcd", shared::server::healthz::etcd_check(storage.clone()));
    shared::server::run(
        shared::server::ServerConfig {
            name: "kube-extensions-apiserver",
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
