//! `kube-aggregator`: the front door. Terminates TLS for every client,
//! authenticates it, serves the APIService API (stored in etcd) and merged
//! discovery, proxies the groups of external API servers to them, and
//! forwards everything else to kube-core with the caller's identity
//! (front-proxy certificate and `X-Remote-*` headers).

mod apiservice;
mod authorizer;
mod autoregister;
mod availability;
mod bound_objects;
mod discovery;
mod openapi_v2;
mod remote;
mod routing;
mod state;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use apiserver::admission::AdmissionChain;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::store::Store;
use apiserver::server::handler::GenericApiServer;
use apiserver::server::options::{
    AuthenticationOptions, DelegationOptions, EtcdOptions, GenericOptions, SecureServingOptions,
};
use apiserver::storage::EtcdStorage;
use clap::Parser;

/// mimalloc: the front door holds no cache, only requests in flight, so it
/// takes the allocator that is cheapest per request (kube-core and the CRD
/// tier keep glibc's, which packs their caches tighter; see
/// `apiserver::server::memory`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The aggregator's default port (the cluster's API endpoint).
const DEFAULT_PORT: u16 = 6443;

/// How often auto-registration re-checks the cached local groups even when
/// nothing signalled a change.
const AUTOREGISTER_PERIOD: Duration = Duration::from_secs(2);
/// How often every APIService's availability is checked.
const AVAILABILITY_PERIOD: Duration = Duration::from_secs(5);
/// How often priority levels lend and borrow seats by demand (upstream: 10 s).
const FLOW_CONTROL_BORROWING_PERIOD: Duration = Duration::from_secs(2);

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
    etcd: EtcdOptions,
    #[command(flatten)]
    generic: GenericOptions,
    #[command(flatten)]
    audit: apiserver::server::audit_options::AuditOptions,
    #[command(flatten)]
    logging: apiserver::logging::LoggingOptions,
    #[command(flatten)]
    leader_election: apiserver::server::leader_election::LeaderElectionOptions,
    /// Route requests for external API servers to their endpoint IPs (from
    /// EndpointSlices) rather than the Service's cluster IP. On by default
    /// here: the aggregator runs off-cluster, where cluster IPs do not route.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    enable_aggregator_routing: bool,
    /// Let remote APIServices resolve to loopback addresses (or
    /// `localhost`): for clusters whose add-ons run on the same host as the
    /// aggregator. This aggregator's own port and the next tier's are
    /// refused either way.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    allow_loopback_apiservice_endpoints: bool,
    /// HTTPS addresses (`host:port`, comma separated) of the tiers behind
    /// this one, which trust its front-proxy certificate: no APIService may
    /// name them as endpoints. The HTTPS `--delegate-url`s are always
    /// included; list the tiers here when `--delegate-url` is a `unix:`
    /// socket, and the tiers further behind (not an upstream flag).
    #[arg(long, value_delimiter = ',')]
    tier_addresses: Vec<String>,
}

/// Where this process can reach itself: its listen address, with an
/// unspecified bind address (`0.0.0.0`, `::`) replaced by loopback.
fn loopback_address(listen: std::net::SocketAddr) -> String {
    let ip = match listen.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    std::net::SocketAddr::new(ip, listen.port()).to_string()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let opts = Options::parse_from(apiserver::server::config_file::expand(std::env::args_os())?);
    opts.logging.init();
    let delegate = opts
        .delegation
        .delegate()?
        .ok_or_else(|| anyhow::anyhow!("--delegate-url (the kube-core tier) is required"))?;
    let proxy_client_cert = match (
        &opts.delegation.proxy_client_cert_file,
        &opts.delegation.proxy_client_key_file,
    ) {
        (Some(c), Some(k)) => Some((
            std::fs::read(c).with_context(|| format!("reading {}", c.display()))?,
            std::fs::read(k).with_context(|| format!("reading {}", k.display()))?,
        )),
        _ => None,
    };
    let storage = EtcdStorage::connect(&opts.etcd.etcd_servers, opts.etcd.storage_options()?)
        .await
        .map_err(|e| anyhow::anyhow!("configuring etcd client: {e}"))?;
    let prefix = opts.etcd.etcd_prefix.trim_end_matches('/').to_string();
    let store = Store::new(
        apiservice::definition(),
        storage.clone(),
        &prefix,
        AdmissionChain::new(vec![]),
    );
    let mut groups = Catalog::default();
    groups.add(store.clone());

    let own_address = loopback_address(apiserver::server::listen_address(
        &opts.serving,
        DEFAULT_PORT,
    ));
    let mut own = vec![own_address.clone()];
    own.extend(opts.delegation.delegate_url.iter().flat_map(|u| {
        u.split(',')
            .filter_map(|u| u.trim().parse::<http::Uri>().ok())
            .filter_map(|u| {
                let port = u.port_u16().unwrap_or(443);
                u.host().map(|h| format!("{h}:{port}"))
            })
            .collect::<Vec<_>>()
    }));
    own.extend(opts.tier_addresses.iter().map(|a| a.trim().to_string()));
    let state = Arc::new(state::State::new(
        Arc::new(store),
        delegate.clone(),
        proxy_client_cert,
        opts.enable_aggregator_routing,
        own_address,
        remote::EndpointPolicy {
            allow_loopback: opts.allow_loopback_apiservice_endpoints,
            own,
        },
    ));
    let availability = Arc::new(availability::Availability::default());
    let own = Arc::new(groups.clone());
    let discovery = discovery::Discovery::new(state.clone(), availability.clone(), own);
    tokio::spawn(state.clone().run_watch());
    tokio::spawn(discovery.clone().run_local());
    tokio::spawn(discovery.clone().run_remote());
    tokio::spawn(discovery.clone().run_rebuild());
    tokio::spawn(discovery.clone().run_crd_watch(delegate.clone()));
    let registered = Arc::new(AtomicBool::new(false));
    tokio::spawn(autoregister::run(
        state.clone(),
        discovery.clone(),
        AUTOREGISTER_PERIOD,
        registered.clone(),
    ));
    // The APIService status writer runs in one replica: the leader of
    // kube-system/kube-aggregator-controllers (a Lease in kube-core).
    let leading = Arc::new(AtomicBool::new(!opts.leader_election.leader_elect));
    let mut elector = None;
    if opts.leader_election.leader_elect {
        let cfg = opts.leader_election.config(
            "kube-aggregator-controllers",
            apiserver::server::leader_election::candidate_identity(),
        )?;
        let leases = apiserver::server::leader_election::RemoteLeases {
            delegate: delegate.clone(),
            user: state::internal_user(),
        };
        elector = Some(apiserver::server::leader_election::LeaderElector::new(
            cfg,
            Arc::new(leases),
        ));
    }
    tokio::spawn(availability::run(
        state.clone(),
        availability.clone(),
        AVAILABILITY_PERIOD,
        leading.clone(),
    ));

    let address = apiserver::server::listen_address(&opts.serving, DEFAULT_PORT).to_string();
    let own_openapi = apiservice::openapi_document();
    let openapi_v2 = openapi_v2::OpenApiV2::new(
        state.clone(),
        availability.clone(),
        Some(discovery.subscribe_local()),
        Some(&own_openapi.v2_bytes()[..]),
    );
    tokio::spawn(openapi_v2.clone().run());
    let authorizer = Arc::new(authorizer::FrontDoorAuthorizer {
        state: state.clone(),
        delegated: apiserver::authorization::delegating::DelegatingAuthorizer::new(Arc::new(
            authorizer::KubeCoreReviews(delegate.clone()),
        )),
    });
    let router = Arc::new(routing::Router {
        state,
        availability,
        discovery,
        openapi_v2,
        own_openapi: own_openapi.clone(),
    });
    let delegate_for_flowcontrol = delegate.clone();
    let delegate_for_bound_tokens = delegate.clone();
    let mut api = GenericApiServer::new(groups, Some(delegate), address).with_interceptor(router);
    if let Some(elector) = elector {
        tokio::spawn(elector.run(
            apiserver::server::leader_election::hold_flag(leading.clone()),
            Some(api.lifecycle.watch_termination()),
        ));
    }
    api.set_openapi(own_openapi);
    api.readyz.add(
        "etcd",
        apiserver::server::healthz::etcd_check(storage.clone()),
    );
    api.readyz.add(
        "autoregister-completion",
        Arc::new(move || {
            let done = registered.load(Ordering::SeqCst);
            Box::pin(async move {
                if done {
                    Ok(())
                } else {
                    Err("APIServices of the tiers behind not registered yet".into())
                }
            })
        }),
    );
    // API Priority and Fairness: the front door is where a flood stops.
    let flow_control = opts.generic.enable_priority_and_fairness.then(|| {
        let fc = apiserver::flowcontrol::FlowControl::new(apiserver::server::flow_control_config(
            &opts.generic,
        ));
        tokio::spawn(fc.clone().run_borrowing(FLOW_CONTROL_BORROWING_PERIOD));
        tokio::spawn(apiserver::server::flowcontrol_config::run(
            fc.clone(),
            delegate_for_flowcontrol.clone(),
            state::internal_user(),
        ));
        fc
    });
    apiserver::server::run(
        apiserver::server::ServerConfig {
            name: "kube-aggregator",
            serving: &opts.serving,
            default_port: DEFAULT_PORT,
            authentication: &opts.authentication,
            generic: &opts.generic,
            audit: &opts.audit,
            authorizer,
            trust_front_proxy_authorization: false,
            token_reviewer: None,
            flow_control,
            credential_validator: Some(Arc::new(bound_objects::validator(
                delegate_for_bound_tokens,
            ))),
        },
        Arc::new(api),
    )
    .await
}
