//! `kube-extensions-apiserver`: serves `apiextensions.k8s.io`
//! (CustomResourceDefinitions) and, at runtime, the custom resources of every
//! Established CRD; anything else is the end of the delegation chain and
//! gets 404 (503 with `Retry-After` until the CRDs are loaded after start).

mod controller;
mod conversion;
mod crd;
mod field_validation;
mod jsonpath;
mod namespace_cleanup;
mod naming;
mod openapi;
mod openapi_v2;
mod scale;
mod serving;

use std::sync::Arc;

use apiserver::admission::AdmissionChain;
use apiserver::authorization::{AlwaysAllowPaths, PrivilegedGroups, UnionAuthorizer};
use apiserver::registry::catalog::Catalog;
use apiserver::registry::store::Store;
use apiserver::server::handler::GenericApiServer;
use apiserver::server::options::{
    AuthenticationOptions, EtcdOptions, GenericOptions, SecureServingOptions,
};
use apiserver::storage::EtcdStorage;
use clap::Parser;

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
    #[command(flatten)]
    audit: apiserver::server::audit_options::AuditOptions,
    #[command(flatten)]
    logging: apiserver::logging::LoggingOptions,
    #[command(flatten)]
    admission: apiserver::admission::plugins::AdmissionOptions,
    /// Serve LISTs and WATCHes of CRDs and custom resources from an in-memory
    /// cache fed by one etcd watch per resource (per served version of a
    /// custom resource; not for CRDs with a conversion webhook).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    watch_cache: bool,
    /// Memory budget of each resource's watch cache; beyond it reads go to etcd.
    #[arg(long, default_value_t = apiserver::registry::cache_serving::DEFAULT_CACHE_BUDGET)]
    watch_cache_max_bytes_per_resource: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let opts = Options::parse_from(apiserver::server::config_file::expand(std::env::args_os())?);
    opts.logging.init();
    let storage = EtcdStorage::connect(&opts.etcd.etcd_servers, opts.etcd.storage_options()?)
        .await
        .map_err(|e| anyhow::anyhow!("configuring etcd client: {e}"))?;
    let prefix = opts.etcd.etcd_prefix.trim_end_matches('/').to_string();
    let admission = custom_resource_admission(&opts.admission, &storage, &prefix)?;
    let watch_cache = opts
        .watch_cache
        .then_some(opts.watch_cache_max_bytes_per_resource);
    let mut crds = Store::new(
        crd::definition(),
        storage.clone(),
        &prefix,
        AdmissionChain::default(),
    );
    if let Some(max_bytes) = watch_cache {
        crds = crds.with_watch_cache(max_bytes);
    }
    let mut groups = Catalog::default();
    groups.add(crds.clone());
    let address = apiserver::server::listen_address(&opts.serving, DEFAULT_PORT).to_string();
    let mut api = GenericApiServer::new(groups, None, address);
    api.set_routes_pending(true);
    api.readyz.add(
        "etcd",
        apiserver::server::healthz::etcd_check(storage.clone()),
    );
    // Ready once the CRDs are loaded (upstream's crd-informer-synced hook).
    let synced = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = synced.clone();
    api.readyz.add(
        "poststarthook/crd-informer-synced",
        Arc::new(move || {
            let loaded = flag.load(std::sync::atomic::Ordering::SeqCst);
            Box::pin(async move {
                if loaded {
                    Ok(())
                } else {
                    Err("the CustomResourceDefinitions are not loaded yet".to_string())
                }
            })
        }),
    );
    let openapi = Arc::new(openapi::OpenApi::with_own(openapi::own_document()));
    let published = openapi.clone();
    api.add_non_resource(
        "/openapi/v3",
        Arc::new(move |req| Box::pin(published.clone().serve(req))),
    );
    let published = openapi.clone();
    api.add_non_resource(
        "/openapi/v2",
        Arc::new(move |req| Box::pin(published.clone().serve_v2(req))),
    );
    let api = Arc::new(api);
    controller::Controller::new(
        api.clone(),
        crds,
        serving::StoreConfig {
            storage: storage.clone(),
            prefix: prefix.clone(),
            admission,
            watch_cache,
        },
        openapi,
        synced,
    )
    .spawn();
    apiserver::server::run(
        apiserver::server::ServerConfig {
            name: "kube-extensions-apiserver",
            serving: &opts.serving,
            default_port: DEFAULT_PORT,
            authentication: &opts.authentication,
            generic: &opts.generic,
            audit: &opts.audit,
            // kube-core, in front, authorized what it forwards; direct
            // clients must be cluster admins (health probes and
            // system:monitoring's scrapes excepted).
            authorizer: Arc::new(UnionAuthorizer(vec![
                Arc::new(PrivilegedGroups),
                Arc::new(apiserver::authorization::MonitoringGroup),
                Arc::new(AlwaysAllowPaths(
                    apiserver::authorization::HEALTH_PATHS
                        .iter()
                        .map(|p| p.to_string())
                        .collect(),
                )),
            ])),
            // The CRD tier has no client of kube-core: the objects tokens
            // are bound to are read from kube-core's keys in the etcd they
            // share (only direct clients with tokens need it).
            credential_validator: Some(Arc::new(
                apiserver::authentication::bound_tokens::BoundTokenValidator::over_etcd(
                    storage.clone(),
                    &prefix,
                ),
            )),
            trust_front_proxy_authorization: true,
            token_reviewer: None,
            flow_control: None,
        },
        api,
    )
    .await
}

/// The admission chain of custom resources: the enabled plugins that apply
/// to them, in upstream's order.
fn custom_resource_admission(
    options: &apiserver::admission::plugins::AdmissionOptions,
    storage: &EtcdStorage,
    prefix: &str,
) -> anyhow::Result<AdmissionChain> {
    let namespace_lifecycle =
        apiserver::admission::namespace_lifecycle::NamespaceLifecycle::new(storage.clone(), prefix);
    let namespaces = apiserver::admission::namespaces::Namespaces::start(storage.clone(), prefix);
    namespace_lifecycle.read_namespaces_from(namespaces.clone());
    let mut available: Vec<Arc<dyn apiserver::admission::AdmissionPlugin>> =
        vec![Arc::new(namespace_lifecycle)];
    available.extend(
        apiserver::admission::webhook::Webhooks::start(storage.clone(), prefix, namespaces.clone())
            .plugins(),
    );
    available.push(apiserver::admission::policy::plugin(
        &apiserver::admission::policy::ValidatingAdmissionPolicy::start(
            storage.clone(),
            prefix,
            namespaces,
        ),
    ));
    let (plugins, _built_in_only) = apiserver::admission::plugins::ordered(options, available)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(AdmissionChain::new(plugins))
}
