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
//!
//! As upstream, the client CA and the front proxy's trust (CA, allowed
//! names, header names) not given by flags are read at start from the
//! `kube-system/extension-apiserver-authentication` ConfigMap, which the
//! credentials may read through the Role
//! `extension-apiserver-authentication-reader`
//! (`--authentication-skip-lookup` turns this off).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::authentication::token_review::TokenReviewAuthenticator;
use crate::authorization::delegating::{DelegatingAuthorizer, ReviewClient};
use crate::authorization::{AlwaysAllowPaths, Authorizer, PrivilegedGroups, UnionAuthorizer};
use crate::client::ApiClient;
use crate::server::options::{parse_duration, AuthenticationOptions};

/// Where the cluster publishes the trust delegated servers need.
const AUTHENTICATION_CONFIGMAP: &str =
    "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";

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
    /// Do not read the client CA and request-header settings missing from
    /// the flags from the extension-apiserver-authentication ConfigMap.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub authentication_skip_lookup: bool,
}

/// A JSON-array string of the ConfigMap (`["X-Remote-User"]`).
fn string_list(data: &serde_json::Value, key: &str) -> Option<Vec<String>> {
    let text = data.get(key)?.as_str()?;
    serde_json::from_str(text).ok()
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
    /// Fills what `authn` lacks (client CA; front-proxy CA with its allowed
    /// names and headers) from the cluster's
    /// `extension-apiserver-authentication` ConfigMap. A failed lookup is
    /// logged, not fatal (as upstream: requests the flags cannot
    /// authenticate are then anonymous).
    pub async fn lookup_authentication(
        &self,
        authn: &mut AuthenticationOptions,
    ) -> anyhow::Result<()> {
        let wants_client_ca = authn.client_ca_file.is_none() && authn.client_ca_pem.is_none();
        let wants_request_header = authn.requestheader_client_ca_file.is_none()
            && authn.requestheader_client_ca_pem.is_none();
        if self.authentication_skip_lookup || !(wants_client_ca || wants_request_header) {
            return Ok(());
        }
        let Some(client) = client(&self.authentication_kubeconfig, "authentication")? else {
            return Ok(());
        };
        let cm = match client.get_json(AUTHENTICATION_CONFIGMAP).await {
            Ok((200, v)) => v,
            Ok((code, v)) => {
                tracing::warn!(
                    code,
                    message = v
                        .get("message")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or(""),
                    "unable to get configmap/extension-apiserver-authentication in kube-system; \
                     bind the credentials to the Role extension-apiserver-authentication-reader"
                );
                return Ok(());
            }
            Err(e) => {
                tracing::warn!(error = %e, "unable to get configmap/extension-apiserver-authentication");
                return Ok(());
            }
        };
        let data = cm.get("data").cloned().unwrap_or_default();
        let text = |k: &str| {
            data.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        if wants_client_ca {
            authn.client_ca_pem = text("client-ca-file").map(String::into_bytes);
        }
        if wants_request_header {
            if let Some(ca) = text("requestheader-client-ca-file") {
                authn.requestheader_client_ca_pem = Some(ca.into_bytes());
                let set = |target: &mut Vec<String>, key: &str| {
                    if let Some(v) = string_list(&data, key) {
                        *target = v;
                    }
                };
                set(
                    &mut authn.requestheader_allowed_names,
                    "requestheader-allowed-names",
                );
                set(
                    &mut authn.requestheader_username_headers,
                    "requestheader-username-headers",
                );
                set(
                    &mut authn.requestheader_uid_headers,
                    "requestheader-uid-headers",
                );
                set(
                    &mut authn.requestheader_group_headers,
                    "requestheader-group-headers",
                );
                set(
                    &mut authn.requestheader_extra_headers_prefix,
                    "requestheader-extra-headers-prefix",
                );
            }
        }
        tracing::info!("read the cluster's authentication settings from kube-system/extension-apiserver-authentication");
        Ok(())
    }

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
