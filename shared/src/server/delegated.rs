//! Delegated authentication and authorization for API servers that run
//! behind the aggregator (upstream's `DelegatingAuthenticationOptions` and
//! `DelegatingAuthorizationOptions`, with the same flag names): bearer tokens
//! are checked with TokenReviews and every request is authorized with a
//! SubjectAccessReview, both sent to the cluster with the server's own
//! credentials and cached. Identities asserted by the front proxy
//! (`--requestheader-*`) are authenticated locally, as before.
//!
//! The credentials come from `--authentication-kubeconfig` and
//! `--authorization-kubeconfig`, or from the pod's service account when the
//! flags are absent and the server runs in a pod. They need the ClusterRole
//! `system:auth-delegator`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::authentication::token_review::TokenReviewAuthenticator;
use crate::authorization::delegating::{DelegatingAuthorizer, ReviewClient};
use crate::authorization::{AlwaysAllowPaths, Authorizer, PrivilegedGroups, UnionAuthorizer};
use crate::client::ApiClient;
use crate::server::options::parse_duration;

/// The flags of delegated authentication and authorization.
#[derive(clap::Args, Debug, Clone)]
pub struct DelegatedAuthOptions {
    /// kubeconfig of the cluster, with rights to create
    /// tokenreviews.authentication.k8s.io. Without it (and outside a pod)
    /// bearer tokens are not accepted.
    #[arg(long)]
    pub authentication_kubeconfig: Option<PathBuf>,
    /// kubeconfig of the cluster, with rights to create
    /// subjectaccessreviews.authorization.k8s.io. Without it (and outside a
    /// pod) only --authorization-always-allow-paths and system:masters are
    /// allowed.
    #[arg(long)]
    pub authorization_kubeconfig: Option<PathBuf>,
    /// Paths allowed to everyone without asking the cluster.
    #[arg(long, value_delimiter = ',', default_value = "/healthz,/readyz,/livez")]
    pub authorization_always_allow_paths: Vec<String>,
    /// How long allowed SubjectAccessReview answers are cached.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authorization_webhook_cache_authorized_ttl: Duration,
    /// How long denied SubjectAccessReview answers are cached.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authorization_webhook_cache_unauthorized_ttl: Duration,
    /// How long TokenReview answers are cached.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authentication_token_webhook_cache_ttl: Duration,
}

/// What [`DelegatedAuthOptions::build`] makes.
pub struct DelegatedAuth {
    /// For [`super::ServerConfig::authorizer`].
    pub authorizer: Arc<dyn Authorizer>,
    /// For [`super::ServerConfig::token_reviewer`].
    pub token_reviewer: Option<Arc<TokenReviewAuthenticator>>,
}

fn client(flag: &Option<PathBuf>, what: &str) -> anyhow::Result<Option<ApiClient>> {
    match flag {
        Some(path) => Ok(Some(ApiClient::from_kubeconfig(path)?)),
        None => match ApiClient::in_cluster() {
            Ok(c) => Ok(Some(c)),
            Err(e) => {
                tracing::warn!(
                    "no --{what}-kubeconfig and not in a pod ({e}); delegated {what} is off"
                );
                Ok(None)
            }
        },
    }
}

impl DelegatedAuthOptions {
    /// Builds the authorizer (system:masters, the always-allowed paths, then
    /// SubjectAccessReviews) and the token reviewer.
    pub fn build(&self) -> anyhow::Result<DelegatedAuth> {
        let mut chain: Vec<Arc<dyn Authorizer>> = vec![
            Arc::new(PrivilegedGroups),
            Arc::new(AlwaysAllowPaths(
                self.authorization_always_allow_paths.clone(),
            )),
        ];
        if let Some(c) = client(&self.authorization_kubeconfig, "authorization")? {
            let c: Arc<dyn ReviewClient> = Arc::new(c);
            chain.push(Arc::new(DelegatingAuthorizer::with_ttls(
                c,
                self.authorization_webhook_cache_authorized_ttl,
                self.authorization_webhook_cache_unauthorized_ttl,
            )));
        }
        let token_reviewer = client(&self.authentication_kubeconfig, "authentication")?.map(|c| {
            Arc::new(
                TokenReviewAuthenticator::new(Arc::new(c), Vec::new())
                    .with_ttl(self.authentication_token_webhook_cache_ttl),
            )
        });
        Ok(DelegatedAuth {
            authorizer: Arc::new(UnionAuthorizer(chain)),
            token_reviewer,
        })
    }
}
