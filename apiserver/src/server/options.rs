//! Command-line options shared by every tier, named as upstream's flags.

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::authentication::request_header::{RequestHeaderAuthenticator, RequestHeaderNames};
use crate::authentication::token_file::TokenFileAuthenticator;
use crate::authentication::union::{UnionAuthenticator, DEFAULT_ANONYMOUS_PATHS};
use crate::authentication::x509::{CertVerifier, X509Authenticator};
use crate::authentication::Authenticator;
use crate::proxy::Delegate;

/// `--bind-address`, `--secure-port`, `--tls-*`.
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Secure serving flags")]
pub struct SecureServingOptions {
    /// The IP address on which to listen for the --secure-port port.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: IpAddr,
    /// The port on which to serve HTTPS with authentication and authorization.
    #[arg(long)]
    pub secure_port: Option<u16>,
    /// File containing the default x509 serving certificate (PEM, chain allowed).
    #[arg(long)]
    pub tls_cert_file: PathBuf,
    /// File containing the default x509 private key matching --tls-cert-file.
    #[arg(long)]
    pub tls_private_key_file: PathBuf,
    /// The limit on concurrent HTTP/2 streams per connection
    /// (kube-apiserver's default, 1000).
    #[arg(long, default_value_t = 1000)]
    pub http2_max_streams_per_connection: u32,
    /// The most client connections served at once; further connections wait
    /// in the listen backlog until one closes (not an upstream flag:
    /// kube-apiserver has no such limit).
    #[arg(long, default_value_t = 10_000)]
    pub max_connections: usize,
    /// Also serve on this Unix domain socket, for the tier in front of this
    /// one on the same host (its `--delegate-url unix:PATH`): plain HTTP,
    /// no TLS. Only a client running as this server's user or as root is
    /// served there, and it is trusted as a front proxy (its
    /// `--requestheader-*` headers name the caller) as a client certificate
    /// of `--requestheader-client-ca-file` is. The socket is created with
    /// mode 0600, replacing a stale one (not an upstream flag).
    #[arg(long)]
    pub unix_socket: Option<PathBuf>,
}

impl SecureServingOptions {
    /// The limits every connection of the listener is held to.
    pub fn connection_limits(&self) -> super::serve::ConnectionLimits {
        super::serve::ConnectionLimits {
            max_streams_per_connection: self.http2_max_streams_per_connection.max(1),
            max_connections: self.max_connections.max(1),
            ..Default::default()
        }
    }
}

/// `--client-ca-file`, `--token-auth-file`, `--requestheader-*`, `--anonymous-auth`.
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Authentication flags")]
pub struct AuthenticationOptions {
    /// Client certificates signed by this CA authenticate as their CN (user) and O (groups).
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,
    /// Static bearer tokens, CSV: token,user,uid,"group1,group2".
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// Allow requests without credentials to the health and version endpoints as system:anonymous.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,
    /// CA verifying the client certificates of front proxies before their identity headers are trusted.
    #[arg(long)]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// Common names allowed for front-proxy client certificates (empty: any signed by the CA).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
    /// Headers carrying the user name.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-User")]
    pub requestheader_username_headers: Vec<String>,
    /// Headers carrying the user UID.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_uid_headers: Vec<String>,
    /// Headers carrying groups.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Group")]
    pub requestheader_group_headers: Vec<String>,
    /// Header prefixes carrying extra user attributes.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Extra-")]
    pub requestheader_extra_headers_prefix: Vec<String>,
    /// PEM files with the keys verifying service account tokens (public or
    /// private keys, certificates).
    #[arg(long, value_delimiter = ',')]
    pub service_account_key_file: Vec<PathBuf>,
    /// Issuers of service account tokens; the first signs new tokens.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "https://kubernetes.default.svc.cluster.local"
    )]
    pub service_account_issuer: Vec<String>,
    /// Audiences service account tokens must carry (default: the issuers).
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// The client CA as PEM, when it came from somewhere else than a file
    /// (the `extension-apiserver-authentication` ConfigMap); wins over
    /// `--client-ca-file`.
    #[arg(skip)]
    pub client_ca_pem: Option<Vec<u8>>,
    /// The front-proxy CA as PEM, likewise; wins over
    /// `--requestheader-client-ca-file`.
    #[arg(skip)]
    pub requestheader_client_ca_pem: Option<Vec<u8>>,
}

/// The pieces built from [`AuthenticationOptions`].
pub struct BuiltAuthentication {
    pub authenticator: Arc<UnionAuthenticator>,
    pub header_names: Arc<RequestHeaderNames>,
    /// CA subjects offered to clients in the TLS handshake.
    pub client_ca_hints: Vec<rustls::DistinguishedName>,
}

impl AuthenticationOptions {
    /// `--api-audiences`, defaulting to the issuers as upstream.
    pub fn audiences(&self) -> Vec<String> {
        if self.api_audiences.is_empty() {
            self.service_account_issuer.clone()
        } else {
            self.api_audiences.clone()
        }
    }

    /// Reads the files and builds the union authenticator.
    pub fn build(&self) -> anyhow::Result<BuiltAuthentication> {
        let names = RequestHeaderNames {
            username: self.requestheader_username_headers.clone(),
            uid: self.requestheader_uid_headers.clone(),
            group: self.requestheader_group_headers.clone(),
            extra_prefix: self.requestheader_extra_headers_prefix.clone(),
        };
        let mut authenticators: Vec<Arc<dyn Authenticator>> = Vec::new();
        let mut hints = Vec::new();
        let read = |inline: &Option<Vec<u8>>,
                    path: &Option<PathBuf>|
         -> anyhow::Result<Option<(Vec<u8>, String)>> {
            match (inline, path) {
                (Some(pem), _) => Ok(Some((pem.clone(), "the client CA from the cluster".into()))),
                (None, Some(path)) => Ok(Some((
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
                    path.display().to_string(),
                ))),
                (None, None) => Ok(None),
            }
        };
        if let Some((pem, source)) = read(
            &self.requestheader_client_ca_pem,
            &self.requestheader_client_ca_file,
        )? {
            let verifier =
                CertVerifier::from_pem(&pem).with_context(|| format!("loading {source}"))?;
            hints.extend(verifier.root_hint_subjects());
            authenticators.push(Arc::new(RequestHeaderAuthenticator::new(
                verifier,
                self.requestheader_allowed_names
                    .iter()
                    .filter(|n| !n.is_empty())
                    .cloned()
                    .collect(),
                names.clone(),
            )));
        }
        if let Some((pem, source)) = read(&self.client_ca_pem, &self.client_ca_file)? {
            let verifier =
                CertVerifier::from_pem(&pem).with_context(|| format!("loading {source}"))?;
            hints.extend(verifier.root_hint_subjects());
            authenticators.push(Arc::new(X509Authenticator::new(verifier)));
        }
        if let Some(path) = &self.token_auth_file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            authenticators.push(Arc::new(
                TokenFileAuthenticator::parse(&text)
                    .with_context(|| format!("parsing {}", path.display()))?,
            ));
        }
        if !self.service_account_key_file.is_empty() {
            let mut pems = Vec::new();
            for path in &self.service_account_key_file {
                pems.push(
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
                );
            }
            authenticators.push(Arc::new(
                crate::authentication::service_account::ServiceAccountAuthenticator::from_pems(
                    &pems,
                    self.service_account_issuer.clone(),
                    self.audiences(),
                )
                .context("loading --service-account-key-file")?,
            ));
        }
        let anonymous = self.anonymous_auth.then(|| {
            DEFAULT_ANONYMOUS_PATHS
                .iter()
                .map(|p| p.to_string())
                .collect()
        });
        Ok(BuiltAuthentication {
            authenticator: Arc::new(UnionAuthenticator::new(authenticators, anonymous)),
            header_names: Arc::new(names),
            client_ca_hints: hints,
        })
    }
}

/// `--delegate-url` and the credentials used to reach the next tier.
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Delegation flags")]
pub struct DelegationOptions {
    /// HTTPS URL of the next tier, which serves what this one does not;
    /// several (comma separated) for replicas of it, over which requests are
    /// spread (replicas whose `/readyz` fails, or which refuse connections,
    /// are skipped). `unix:PATH` reaches the next tier on this host on its
    /// `--unix-socket` instead (plain HTTP, no client certificate: the
    /// kernel's peer credentials vouch for this process).
    #[arg(long, value_delimiter = ',')]
    pub delegate_url: Vec<String>,
    /// CA bundle verifying the next tier's serving certificate.
    #[arg(long)]
    pub delegate_ca_file: Option<PathBuf>,
    /// Client certificate presented to the next tier (front-proxy client).
    #[arg(long)]
    pub proxy_client_cert_file: Option<PathBuf>,
    /// Key of --proxy-client-cert-file.
    #[arg(long)]
    pub proxy_client_key_file: Option<PathBuf>,
}

impl DelegationOptions {
    /// Builds the delegate from the flags; `None` when no `--delegate-url` is set.
    pub fn delegate(&self) -> anyhow::Result<Option<Delegate>> {
        if self.delegate_url.is_empty() {
            return Ok(None);
        }
        if let Some(path) = self
            .delegate_url
            .iter()
            .find_map(|u| crate::transport::tier::unix_socket_of(u))
        {
            anyhow::ensure!(
                self.delegate_url.len() == 1,
                "a unix: --delegate-url names the one next tier on this host: it cannot be combined with other URLs"
            );
            return Ok(Some(Delegate::unix(&path)?));
        }
        let ca_path = self
            .delegate_ca_file
            .as_ref()
            .context("--delegate-ca-file is required with --delegate-url")?;
        let ca =
            std::fs::read(ca_path).with_context(|| format!("reading {}", ca_path.display()))?;
        let cert_key = match (&self.proxy_client_cert_file, &self.proxy_client_key_file) {
            (Some(c), Some(k)) => Some((
                std::fs::read(c).with_context(|| format!("reading {}", c.display()))?,
                std::fs::read(k).with_context(|| format!("reading {}", k.display()))?,
            )),
            (None, None) => None,
            _ => anyhow::bail!("--proxy-client-cert-file and --proxy-client-key-file go together"),
        };
        let tls = crate::pki::client_config(
            &ca,
            cert_key.as_ref().map(|(c, k)| (c.as_slice(), k.as_slice())),
        )?;
        let urls: Vec<&str> = self.delegate_url.iter().map(String::as_str).collect();
        Ok(Some(Delegate::replicated(&urls, tls)?))
    }
}

/// `--etcd-servers` and friends.
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Etcd flags")]
pub struct EtcdOptions {
    /// List of etcd servers to connect with (scheme://ip:port), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:2379")]
    pub etcd_servers: Vec<String>,
    /// The prefix to prepend to all resource paths in etcd.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// The interval of compaction requests (0 disables compaction by this server).
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub etcd_compaction_interval: Duration,
    /// SSL Certificate Authority file used to secure etcd communication.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// SSL certification file used to secure etcd communication.
    #[arg(long)]
    pub etcd_certfile: Option<PathBuf>,
    /// SSL key file used to secure etcd communication.
    #[arg(long)]
    pub etcd_keyfile: Option<PathBuf>,
}

impl EtcdOptions {
    /// The storage options these flags ask for: TLS when any `--etcd-*file`
    /// flag is set or an endpoint is `https://`.
    pub fn storage_options(&self) -> anyhow::Result<crate::storage::EtcdOptions> {
        let read = |p: &PathBuf, flag: &str| {
            std::fs::read(p).with_context(|| format!("reading {flag} {}", p.display()))
        };
        let client_cert_key = match (&self.etcd_certfile, &self.etcd_keyfile) {
            (Some(c), Some(k)) => Some((read(c, "--etcd-certfile")?, read(k, "--etcd-keyfile")?)),
            (None, None) => None,
            _ => anyhow::bail!("--etcd-certfile and --etcd-keyfile go together"),
        };
        let ca_pem = self
            .etcd_cafile
            .as_ref()
            .map(|p| read(p, "--etcd-cafile"))
            .transpose()?;
        let https = self.etcd_servers.iter().any(|s| s.starts_with("https://"));
        if !https && (ca_pem.is_some() || client_cert_key.is_some()) {
            anyhow::bail!(
                "--etcd-cafile/--etcd-certfile/--etcd-keyfile need https:// --etcd-servers"
            );
        }
        if https && self.etcd_servers.iter().any(|s| s.starts_with("http://")) {
            anyhow::bail!("--etcd-servers mixes http:// and https:// endpoints");
        }
        Ok(crate::storage::EtcdOptions {
            tls: https.then_some(crate::storage::EtcdTls {
                ca_pem,
                client_cert_key,
            }),
            ..Default::default()
        })
    }
}

/// `--request-timeout` and other generic limits.
#[derive(clap::Args, Clone, Debug)]
#[command(next_help_heading = "Generic flags")]
pub struct GenericOptions {
    /// A YAML or JSON file of flags (names without dashes, to values or
    /// lists); flags on the command line win over it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Default deadline of non-long-running requests.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// File with apiserver tracing configuration (an
    /// `apiserver.config.k8s.io` `TracingConfiguration`).
    #[arg(long)]
    pub tracing_config_file: Option<PathBuf>,
    /// How long in-flight requests may take to finish once the listener is
    /// closed at shutdown (upstream waits up to the request timeout).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub shutdown_drain: Duration,
    /// Time to delay the termination. During that time the server keeps serving requests normally. The endpoints /healthz and /livez will return success, but /readyz immediately returns failure. Graceful termination starts after this delay has elapsed. This can be used to allow load balancer to stop sending traffic to this server.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub shutdown_delay_duration: Duration,
    /// The grace period watches this server only proxies get to end on their own once shutdown stops accepting requests; then they are cut (its own watches end at once, with a final BOOKMARK).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub shutdown_watch_termination_grace_period: Duration,
    /// This and --max-mutating-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of non-mutating requests in flight, or a zero value disables the limit completely.
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: u32,
    /// This and --max-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. Otherwise, this flag limits the maximum number of mutating requests in flight, or a zero value disables the limit completely.
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: u32,
    /// If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness. (Priority and fairness runs at the front door, the aggregator; the tiers behind it apply the max-in-flight limits to clients that reach them directly.)
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub enable_priority_and_fairness: bool,
}

/// Parses a Go-style duration flag (`60s`, `5m`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::apimachinery::duration::parse_go_duration(s)
}
