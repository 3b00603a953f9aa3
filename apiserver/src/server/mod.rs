//! Serving: listeners, TLS, the handler chain, and running a tier.

pub mod audit_options;
pub mod chain;
pub mod config_file;
pub mod delegated;
pub mod discovery_cache;
pub mod flowcontrol_config;
pub mod handler;
pub mod healthz;
pub mod leader_election;
pub mod lifecycle;
pub mod memory;
pub mod options;
pub mod serve;
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use futures_util::FutureExt;

use crate::authorization::Authorizer;
use crate::filters::{service_fn, HttpService};
use handler::GenericApiServer;
use options::{AuthenticationOptions, GenericOptions, SecureServingOptions};

/// Everything needed to run one tier's HTTPS server.
pub struct ServerConfig<'a> {
    pub name: &'static str,
    pub serving: &'a SecureServingOptions,
    pub default_port: u16,
    pub authentication: &'a AuthenticationOptions,
    pub generic: &'a GenericOptions,
    /// `--audit-*`.
    pub audit: &'a audit_options::AuditOptions,
    pub authorizer: Arc<dyn Authorizer>,
    /// Checks run after authentication succeeded, e.g. that the objects a
    /// bound service account token names still exist.
    pub credential_validator:
        Option<Arc<dyn crate::authentication::bound_tokens::CredentialValidator>>,
    /// Skip authorization of requests a trusted front proxy forwarded (see
    /// [`crate::filters::authorization::Authorization::trust_front_proxy`]).
    pub trust_front_proxy_authorization: bool,
    /// Delegated authentication of bearer tokens (TokenReview), for servers
    /// that do not hold the token keys themselves.
    pub token_reviewer: Option<Arc<crate::authentication::token_review::TokenReviewAuthenticator>>,
    /// API Priority and Fairness, used when `--enable-priority-and-fairness`
    /// (the front door's; `None`: the max-in-flight limits).
    pub flow_control: Option<Arc<crate::flowcontrol::FlowControl>>,
}

/// The flow control configuration `generic` sizes: the server's
/// concurrency limit and a queue wait of a quarter of the request timeout.
pub fn flow_control_config(generic: &GenericOptions) -> crate::flowcontrol::FlowControlConfig {
    crate::flowcontrol::FlowControlConfig {
        server_concurrency_limit: (generic.max_requests_inflight
            + generic.max_mutating_requests_inflight)
            .max(1),
        queue_wait_limit: generic.request_timeout / 4,
    }
}

/// Starts text logging at verbosity 0 (`RUST_LOG` overrides the level), for
/// servers without [`crate::logging::LoggingOptions`].
pub fn init_logging() {
    crate::logging::LoggingOptions::default().init();
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// Steps 1 and 2 of the shutdown ([`lifecycle`]): resolves when the listener
/// is to close, after SIGTERM and `--shutdown-delay-duration`, with watches
/// told to end.
async fn shutdown_sequence(
    name: &str,
    lifecycle: lifecycle::Lifecycle,
    delay: std::time::Duration,
    watch_grace: std::time::Duration,
) {
    shutdown_signal().await;
    lifecycle.initiate_shutdown();
    tracing::info!(server = name, delay = ?delay, "shutdown initiated: /readyz fails from now on");
    tokio::time::sleep(delay).await;
    tracing::info!(
        server = name,
        "not accepting new connections; ending watches, draining requests"
    );
    lifecycle.end_watches();
    tokio::spawn(async move {
        tokio::time::sleep(watch_grace).await;
        lifecycle.cut_proxied_streams();
    });
}

/// The address a server listens on.
pub fn listen_address(serving: &SecureServingOptions, default_port: u16) -> SocketAddr {
    SocketAddr::new(
        serving.bind_address,
        serving.secure_port.unwrap_or(default_port),
    )
}

/// Raises the soft open-files limit to the hard limit (as Go programs do at
/// start): every watch holds a connection, and the tiers in front hold two.
pub fn raise_open_files_limit() {
    #[cfg(unix)]
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                tracing::warn!("could not raise the open files limit");
            }
        }
    }
}

/// Binds the Unix socket of `--unix-socket`: a stale socket file left by
/// an earlier run is replaced (a live server on it would not have let go of
/// it: binding a path another process listens on is refused by checking
/// that nobody answers there first), and the socket is made readable and
/// writable by this user only.
fn bind_unix_socket(path: &std::path::Path) -> anyhow::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            anyhow::bail!("{} is in use by another server", path.display());
        }
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("binding the Unix socket {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("restricting {}", path.display()))?;
    Ok(listener)
}

/// Serves `api` behind the full handler chain until SIGTERM/Ctrl-C.
pub async fn run(cfg: ServerConfig<'_>, api: Arc<GenericApiServer>) -> anyhow::Result<()> {
    raise_open_files_limit();
    memory::configure_allocator();
    tokio::spawn(memory::run_trimmer());
    let authn = cfg.authentication.build()?;
    if let Some(v) = cfg.credential_validator {
        authn.authenticator.set_validator(v);
    }
    if let Some(r) = cfg.token_reviewer {
        authn.authenticator.set_token_reviewer(r);
    }
    let cert = std::fs::read(&cfg.serving.tls_cert_file)
        .with_context(|| format!("reading {}", cfg.serving.tls_cert_file.display()))?;
    let key = std::fs::read(&cfg.serving.tls_private_key_file)
        .with_context(|| format!("reading {}", cfg.serving.tls_private_key_file.display()))?;
    let tls = Arc::new(tls::server_config(
        &cert,
        &key,
        authn.client_ca_hints.clone(),
    )?);
    let auditor = cfg.audit.build()?;
    let tracer = match &cfg.generic.tracing_config_file {
        Some(path) => {
            let tc = crate::traces::config::TracingConfiguration::load(path)?;
            let exporter = crate::traces::otlp::OtlpExporter::start(&tc.endpoint, cfg.name)?;
            Some(Arc::new(crate::traces::Tracer {
                sampling_rate_per_million: tc.sampling_rate_per_million,
                sink: Arc::new(exporter),
            }))
        }
        None => None,
    };
    let lifecycle = api.lifecycle.clone();
    let chain_cfg = chain::ChainConfig {
        authenticator: authn.authenticator,
        header_names: authn.header_names,
        authorizer: cfg.authorizer,
        trust_front_proxy_authorization: cfg.trust_front_proxy_authorization,
        request_timeout: cfg.generic.request_timeout,
        max_request_body_bytes: crate::body::MAX_REQUEST_BODY_BYTES,
        auditor: auditor.clone(),
        tracer,
        in_flight: match cfg.flow_control {
            Some(fc) if cfg.generic.enable_priority_and_fairness => {
                chain::InFlightLimits::PriorityAndFairness(fc)
            }
            _ => {
                chain::InFlightLimits::MaxInFlight(crate::filters::max_in_flight::MaxInFlight::new(
                    cfg.generic.max_requests_inflight as usize,
                    cfg.generic.max_mutating_requests_inflight as usize,
                ))
            }
        },
    };
    let handler: HttpService = service_fn(move |req| api.clone().handle(req));
    let service = chain::build_handler_chain(handler, &chain_cfg);
    let addr = listen_address(cfg.serving, cfg.default_port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    tracing::info!(server = cfg.name, %addr, "serving securely");
    let unix = match &cfg.serving.unix_socket {
        Some(path) => Some(bind_unix_socket(path)?),
        None => None,
    };
    if let Some(path) = &cfg.serving.unix_socket {
        tracing::info!(server = cfg.name, path = %path.display(), "serving the front proxy on a Unix socket");
    }
    let shutdown = shutdown_sequence(
        cfg.name,
        lifecycle,
        cfg.generic.shutdown_delay_duration,
        cfg.generic.shutdown_watch_termination_grace_period,
    )
    .boxed()
    .shared();
    let limits = cfg.serving.connection_limits();
    let drain = cfg.generic.shutdown_drain;
    let secure = serve::serve(
        serve::Listener::Tls(listener, tokio_rustls::TlsAcceptor::from(tls)),
        service.clone(),
        shutdown.clone(),
        drain,
        limits,
    );
    match unix {
        Some(unix) => {
            let local = serve::serve(
                serve::Listener::Unix(unix),
                service,
                shutdown,
                drain,
                limits,
            );
            tokio::join!(secure, local);
        }
        None => secure.await,
    }
    if let Some(path) = &cfg.serving.unix_socket {
        let _ = std::fs::remove_file(path);
    }
    if let Some(a) = auditor {
        a.sink.shutdown().await;
    }
    tracing::info!(server = cfg.name, "stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

    /// A socket another server listens on is left alone; one left behind by
    /// a server that died is replaced, and the new one is private.
    #[tokio::test]
    async fn unix_socket_replaces_a_stale_one_and_refuses_a_live_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tier.sock");
        let live = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        let err = super::bind_unix_socket(&path).expect_err("in use");
        assert!(
            err.to_string().contains("in use by another server"),
            "{err}"
        );
        drop(live);
        assert!(path.exists(), "a dropped listener leaves its socket file");
        let _listener = super::bind_unix_socket(&path).expect("stale socket replaced");
        let meta = std::fs::metadata(&path).expect("socket");
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
}
