//! `kube-core-apiserver`: serves the built-in Kubernetes kinds stored in etcd,
//! and delegates API groups it does not own to the extensions tier.

mod admission;
mod allocators;
mod authorization;
mod bootstrap;
mod controllers;
mod rbac;
mod resources;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use apiserver::admission::AdmissionChain;
use apiserver::authorization::rbac::RbacAuthorizer;
use apiserver::authorization::{AlwaysAllow, Authorizer, PrivilegedGroups, UnionAuthorizer};
use apiserver::server::handler::GenericApiServer;
use apiserver::server::options::{
    AuthenticationOptions, DelegationOptions, EtcdOptions, GenericOptions, SecureServingOptions,
};
use apiserver::storage::EtcdStorage;
use clap::Parser;

/// kube-core's default port.
const DEFAULT_PORT: u16 = 6444;

/// Serves the built-in Kubernetes API (core, apps, batch, RBAC, ...) from etcd.
#[derive(Parser, Debug)]
#[command(name = "kube-core-apiserver", version)]
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
    #[command(flatten)]
    admission: apiserver::admission::plugins::AdmissionOptions,
    /// CIDR range from which ClusterIPs are assigned to Services.
    #[arg(long, default_value = "10.96.0.0/12")]
    service_cluster_ip_range: String,
    /// Serve LISTs and WATCHes from an in-memory cache fed by one etcd watch per resource.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    watch_cache: bool,
    /// Memory budget of each resource's watch cache; beyond it reads go to etcd.
    #[arg(long, default_value_t = apiserver::registry::cache_serving::DEFAULT_CACHE_BUDGET)]
    watch_cache_max_bytes_per_resource: usize,
    /// PEM private key (ECDSA P-256 or RSA) signing service account tokens
    /// (`serviceaccounts/<name>/token`); without it TokenRequest is not served.
    #[arg(long)]
    service_account_signing_key_file: Option<std::path::PathBuf>,
    /// Port range reserved for NodePort Services.
    #[arg(long, default_value = "30000-32767")]
    service_node_port_range: String,
    /// How often the cluster IP and node port repair loops run (upstream
    /// runs them every 3 minutes; not an upstream flag). 0 disables them.
    #[arg(long, default_value = "3m", value_parser = apiserver::server::options::parse_duration)]
    service_allocation_repair_interval: std::time::Duration,
    /// Ordered list of authorizers: `Node`, `RBAC`, `AlwaysAllow`,
    /// `AlwaysDeny` (members of `system:masters` are always allowed first,
    /// as upstream); kubeadm clusters run `Node,RBAC`.
    #[arg(long, value_delimiter = ',', default_value = "RBAC")]
    authorization_mode: Vec<String>,
}

/// The authorizers `--authorization-mode` asks for.
struct Authorizers {
    /// The whole chain.
    chain: Arc<dyn Authorizer>,
    /// The RBAC authorizer, when RBAC is one of the modes.
    rbac: Option<Arc<RbacAuthorizer>>,
    /// The Node authorizer's graph, when Node is one of the modes.
    node_graph: Option<Arc<authorization::node::Graph>>,
}

/// The authorizer of `--authorization-mode`.
fn build_authorizer(modes: &[String]) -> anyhow::Result<Authorizers> {
    let mut chain: Vec<Arc<dyn Authorizer>> = vec![Arc::new(PrivilegedGroups)];
    let mut rbac = None;
    let mut node_graph = None;
    for mode in modes {
        match mode.trim() {
            "Node" => {
                let graph = Arc::new(authorization::node::Graph::new());
                let rules = rbac::policy::node_rules()
                    .iter()
                    .map(apiserver::authorization::rbac::PolicyRule::from_json)
                    .collect();
                chain.push(Arc::new(authorization::node::NodeAuthorizer::new(
                    graph.clone(),
                    rules,
                )));
                node_graph = Some(graph);
            }
            "RBAC" => {
                let r = Arc::new(RbacAuthorizer::new());
                chain.push(r.clone());
                rbac = Some(r);
            }
            "AlwaysAllow" => chain.push(Arc::new(AlwaysAllow)),
            // Denies by having no opinion: nothing after it is asked.
            "AlwaysDeny" => break,
            other => anyhow::bail!(
                "--authorization-mode: unsupported mode {other:?} (supported: Node, RBAC, AlwaysAllow, AlwaysDeny)"
            ),
        }
    }
    Ok(Authorizers {
        chain: Arc::new(UnionAuthorizer(chain)),
        rbac,
        node_graph,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let opts = Options::parse_from(apiserver::server::config_file::expand(std::env::args_os())?);
    opts.logging.init();
    let storage = EtcdStorage::connect(&opts.etcd.etcd_servers, opts.etcd.storage_options()?)
        .await
        .map_err(|e| anyhow::anyhow!("configuring etcd client: {e}"))?;
    let prefix = opts.etcd.etcd_prefix.trim_end_matches('/').to_string();
    let namespace_lifecycle = Arc::new(
        apiserver::admission::namespace_lifecycle::NamespaceLifecycle::new(
            storage.clone(),
            &prefix,
        ),
    );
    let Authorizers {
        chain: authorizer,
        rbac: rbac_authorizer,
        node_graph,
    } = build_authorizer(&opts.authorization_mode)?;
    let built_in = admission::BuiltInPlugins::new();
    let mut available = built_in
        .all(
            namespace_lifecycle.clone(),
            authorizer.clone(),
            &opts.admission,
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let namespaces = apiserver::admission::namespaces::Namespaces::start(storage.clone(), &prefix);
    let webhooks = apiserver::admission::webhook::Webhooks::start(
        storage.clone(),
        &prefix,
        namespaces.clone(),
    );
    webhooks.set_authorizer(authorizer.clone());
    available.extend(webhooks.plugins());
    let policies = apiserver::admission::policy::ValidatingAdmissionPolicy::start(
        storage.clone(),
        &prefix,
        namespaces,
    );
    policies.set_authorizer(authorizer.clone());
    available.push(apiserver::admission::policy::plugin(&policies));
    let (mut plugins, unimplemented) =
        apiserver::admission::plugins::ordered(&opts.admission, available)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    if !unimplemented.is_empty() {
        tracing::info!(plugins = ?unimplemented, "enabled admission plugins this server does not implement yet");
    }
    // RBAC's escalation check belongs to the RBAC storage, as upstream's,
    // after admission.
    if let Some(rbac) = &rbac_authorizer {
        plugins.push(Arc::new(rbac::escalation::RbacEscalation {
            rbac: rbac.clone(),
            authorizer: authorizer.clone(),
        }));
    }
    let admission = AdmissionChain::new(plugins);
    let cidr = allocators::ServiceCidr::parse(&opts.service_cluster_ip_range)
        .map_err(|e| anyhow::anyhow!("--service-cluster-ip-range: {e}"))?;
    let node_ports = allocators::PortRange::parse(&opts.service_node_port_range)
        .map_err(|e| anyhow::anyhow!("--service-node-port-range: {e}"))?;
    let ips = allocators::ClusterIpAllocator::new(storage.clone(), &prefix, cidr);
    let ports = allocators::NodePortAllocator::new(storage.clone(), &prefix, node_ports);
    let repair = (!opts.service_allocation_repair_interval.is_zero()).then(|| {
        (
            storage.clone(),
            prefix.clone(),
            ips.clone(),
            ports.clone(),
            opts.service_allocation_repair_interval,
        )
    });
    let services = allocators::AllocatingServiceStrategy {
        ips: ips.clone(),
        ports,
    };
    let tokens = match &opts.service_account_signing_key_file {
        Some(path) => {
            let pem = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
            let issuer = opts
                .authentication
                .service_account_issuer
                .first()
                .cloned()
                .unwrap_or_default();
            let signer =
                apiserver::authentication::service_account::TokenSigner::from_pem(&pem, &issuer)
                    .map_err(|e| anyhow::anyhow!("--service-account-signing-key-file: {e}"))?;
            Some(resources::TokenIssuing {
                signer: Arc::new(signer),
                audiences: opts.authentication.audiences(),
            })
        }
        None => None,
    };
    let (mut groups, _) = resources::build(&storage, &prefix, &admission, services, tokens);
    if opts.watch_cache {
        groups.enable_watch_caches(opts.watch_cache_max_bytes_per_resource);
    }
    built_in.objects().set_stores(&groups, admission::READS);
    webhooks.set_resources(groups.defs().cloned().map(Arc::new).collect());
    policies.params.set_built_in(
        groups
            .defs()
            .filter(|d| d.conversion.is_none())
            .map(|d| {
                (
                    d.api_version(),
                    d.kind.clone(),
                    apiserver::admission::policy::params::ParamLocation {
                        storage_path: d.storage_path.clone(),
                        namespaced: d.namespaced,
                    },
                )
            })
            .collect(),
    );
    if let Some(namespaces) = groups.lookup("", "v1", "namespaces") {
        let _ = namespace_lifecycle.namespaces.set(namespaces.clone());
    }
    // Bound service account tokens die with their pod, secret or account;
    // those are looked up in the watch caches first, etcd when they cannot
    // answer.
    let validator: Arc<dyn apiserver::authentication::bound_tokens::CredentialValidator> =
        Arc::new(bound_token_validator(&groups, &storage, &prefix));
    let review_authenticator = opts.authentication.build()?.authenticator;
    review_authenticator.set_validator(validator.clone());
    resources::register_token_review(
        &mut groups,
        review_authenticator,
        opts.authentication.audiences(),
    );
    resources::register_access_reviews(&mut groups, authorizer.clone(), rbac_authorizer.clone());
    // The served document also covers the kinds custom handlers serve
    // (bindings, tokenreviews, the access reviews, selfsubjectreviews).
    let openapi = resources::openapi::build(&groups.defs().cloned().collect::<Vec<_>>());
    let delegate = opts.delegation.delegate()?;
    let address = apiserver::server::listen_address(&opts.serving, DEFAULT_PORT).to_string();
    let mut api = GenericApiServer::new(groups, delegate, address);
    api.set_openapi(openapi.clone());

    let bootstrapped = Arc::new(AtomicBool::new(false));
    tokio::spawn(bootstrap::ensure_system_namespaces(
        api.groups(),
        bootstrapped.clone(),
    ));
    tokio::spawn(bootstrap::ensure_system_priority_classes(api.groups()));
    let policy_written = Arc::new(AtomicBool::new(false));
    tokio::spawn(rbac::ensure_bootstrap_policy(
        api.groups(),
        policy_written.clone(),
    ));
    if let Some(mirrors) = rbac::start_mirrors(&api.groups()) {
        // ClusterRole aggregation runs in every replica, from the start: it
        // writes what the roles determine, so replicas agree, and roles are
        // complete as soon as the server is ready.
        tokio::spawn(rbac::aggregation::run(
            api.groups(),
            mirrors.cluster_roles.clone(),
        ));
        if let Some(rbac_authorizer) = rbac_authorizer.clone() {
            tokio::spawn(rbac::feed(mirrors, rbac_authorizer));
        }
    }
    // The singleton loops: in one replica at a time (leader election over
    // the Lease kube-system/kube-core-controllers), or here when
    // --leader-elect=false.
    let singletons = {
        let (groups, storage, prefix, openapi) = (
            api.groups(),
            storage.clone(),
            prefix.clone(),
            openapi.clone(),
        );
        move || {
            let (groups, storage, prefix, openapi) = (
                groups.clone(),
                storage.clone(),
                prefix.clone(),
                openapi.clone(),
            );
            let repair = repair.clone();
            async move {
                // Dropped (leadership lost): every loop is aborted.
                let mut loops = tokio::task::JoinSet::new();
                if let Some((storage, prefix, ips, ports, interval)) = repair {
                    let repair = allocators::repair::Repair::new(storage, &prefix, ips, ports);
                    loops.spawn(repair.run(interval));
                }
                loops.spawn(controllers::namespace::run(
                    groups.clone(),
                    controllers::namespace::CustomResources::new(storage, &prefix),
                ));
                loops.spawn(controllers::service_accounts::run(groups.clone()));
                loops.spawn(controllers::policy_type_checking::run(
                    groups.clone(),
                    openapi,
                ));
                while loops.join_next().await.is_some() {}
            }
        }
    };
    tokio::spawn(controllers::apiserver_identity::run(
        api.groups(),
        apiserver::server::listen_address(&opts.serving, DEFAULT_PORT).port(),
    ));
    if opts.leader_election.leader_elect {
        let leases = api
            .groups()
            .lookup("coordination.k8s.io", "v1", "leases")
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("leader election needs the leases resource"))?;
        let cfg = opts.leader_election.config(
            "kube-core-controllers",
            apiserver::server::leader_election::candidate_identity(),
        )?;
        let elector = apiserver::server::leader_election::LeaderElector::new(
            cfg,
            Arc::new(apiserver::server::leader_election::StoreLeases(
                (*leases).clone(),
            )),
        );
        tokio::spawn(elector.run(singletons, Some(api.lifecycle.watch_termination())));
    } else {
        tokio::spawn(singletons());
    }
    // The Node authorizer's graph, from the pods and volumes this server
    // watches; ready once every first list is in.
    if let Some(graph) = node_graph {
        let populator = authorization::node::Populator::start(&api.groups(), graph);
        api.readyz.add(
            "node-authorizer-graph",
            Arc::new(move || {
                let synced = populator.synced();
                Box::pin(async move {
                    if synced {
                        Ok(())
                    } else {
                        Err("node authorizer graph not loaded yet".into())
                    }
                })
            }),
        );
    }
    tokio::spawn(bootstrap::ensure_legacy_token_tracking_configmap(
        api.groups(),
    ));
    let authentication_published = Arc::new(AtomicBool::new(false));
    tokio::spawn(bootstrap::ensure_authentication_configmap(
        api.groups(),
        bootstrap::authentication_configmap_data(&opts.authentication)?,
        authentication_published.clone(),
    ));
    // The Service clients in pods use to reach the API: the aggregator (the
    // front door) serves upstream's port.
    tokio::spawn(allocators::kubernetes_service::ensure(
        api.groups(),
        cidr.first(),
        6443,
    ));
    if !opts.etcd.etcd_compaction_interval.is_zero() {
        storage.spawn_compactor(opts.etcd.etcd_compaction_interval);
    }
    api.readyz.add(
        "etcd",
        apiserver::server::healthz::etcd_check(storage.clone()),
    );
    api.readyz.add(
        "poststarthook/system-namespaces",
        Arc::new(move || {
            let done = bootstrapped.load(Ordering::SeqCst);
            Box::pin(async move {
                if done {
                    Ok(())
                } else {
                    Err("system namespaces not created yet".into())
                }
            })
        }),
    );
    // Delegating components (controller manager, scheduler, aggregated
    // servers) read it at start: not ready before it is there.
    api.readyz.add(
        "poststarthook/start-cluster-authentication-info-controller",
        Arc::new(move || {
            let done = authentication_published.load(Ordering::SeqCst);
            Box::pin(async move {
                if done {
                    Ok(())
                } else {
                    Err("extension-apiserver-authentication not published yet".into())
                }
            })
        }),
    );
    if let Some(rbac_authorizer) = rbac_authorizer {
        // Upstream's readiness waits for the RBAC bootstrap too.
        api.readyz.add(
            "poststarthook/rbac/bootstrap-roles",
            Arc::new(move || {
                let synced = rbac_authorizer.synced() && policy_written.load(Ordering::SeqCst);
                Box::pin(async move {
                    if synced {
                        Ok(())
                    } else {
                        Err("RBAC objects not loaded yet".into())
                    }
                })
            }),
        );
    }
    let api = Arc::new(api);
    apiserver::server::run(
        apiserver::server::ServerConfig {
            name: "kube-core-apiserver",
            serving: &opts.serving,
            default_port: DEFAULT_PORT,
            authentication: &opts.authentication,
            generic: &opts.generic,
            audit: &opts.audit,
            authorizer,
            credential_validator: Some(validator),
            trust_front_proxy_authorization: false,
            token_reviewer: None,
            flow_control: None,
        },
        api,
    )
    .await
}

/// The bound token validator, reading service accounts, secrets, pods and
/// nodes from this server's stores (their watch caches) before etcd.
fn bound_token_validator(
    groups: &apiserver::registry::catalog::Catalog,
    storage: &apiserver::storage::EtcdStorage,
    prefix: &str,
) -> apiserver::authentication::bound_tokens::BoundTokenValidator {
    use apiserver::authentication::bound_tokens::{BoundTokenValidator, StoreLookup};
    let mut lookup = StoreLookup::new();
    for resource in ["serviceaccounts", "secrets", "pods", "nodes"] {
        if let Some(store) = groups.lookup("", "v1", resource) {
            lookup = lookup.with_store(resource, store.clone());
        }
    }
    BoundTokenValidator::over_etcd(storage.clone(), prefix).with_lookup(Arc::new(lookup))
}
