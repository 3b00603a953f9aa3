//! The union of all configured authenticators, in upstream's order, plus the
//! anonymous fallback and the `system:authenticated` group adder.

use std::sync::Arc;

use super::{
    AuthOutcome, AuthRequest, Authenticator, UserInfo, ALL_AUTHENTICATED, ALL_UNAUTHENTICATED,
    ANONYMOUS,
};

/// Paths anonymous requests may reach when anonymous authentication is on (as
/// upstream's structured `anonymous.conditions`): health probes and version.
pub const DEFAULT_ANONYMOUS_PATHS: &[&str] = &["/healthz", "/livez", "/readyz", "/version"];

/// Tries each authenticator in turn; the first success wins. Invalid
/// credentials (a bad token, an untrusted certificate) fail the request unless
/// another authenticator succeeds: they never fall back to anonymous.
pub struct UnionAuthenticator {
    authenticators: Vec<Arc<dyn Authenticator>>,
    anonymous_paths: Option<Vec<String>>,
    /// Checks run after an authenticator accepted the credentials (bound
    /// service account tokens), set once storage is available.
    validator: std::sync::OnceLock<Arc<dyn super::bound_tokens::CredentialValidator>>,
    /// Delegated authentication of bearer tokens nothing else accepted.
    token_reviewer: std::sync::OnceLock<Arc<super::token_review::TokenReviewAuthenticator>>,
}

impl UnionAuthenticator {
    /// `anonymous_paths`: `None` disables anonymous requests; otherwise the
    /// path prefixes (exact path or path + `/...`) they may reach.
    pub fn new(
        authenticators: Vec<Arc<dyn Authenticator>>,
        anonymous_paths: Option<Vec<String>>,
    ) -> Self {
        UnionAuthenticator {
            authenticators,
            anonymous_paths,
            validator: std::sync::OnceLock::new(),
            token_reviewer: std::sync::OnceLock::new(),
        }
    }

    /// Sends bearer tokens no local authenticator accepts to a TokenReview
    /// (once; later calls are ignored).
    pub fn set_token_reviewer(&self, reviewer: Arc<super::token_review::TokenReviewAuthenticator>) {
        let _ = self.token_reviewer.set(reviewer);
    }

    /// When a token reviewer is set and the local authenticators did not
    /// identify the request (failed, or fell back to anonymous), the bearer
    /// token's review decides; otherwise `local` stands.
    pub async fn review_if_needed(
        &self,
        headers: &http::HeaderMap,
        local: Result<UserInfo, String>,
    ) -> Result<UserInfo, String> {
        let Some(reviewer) = self.token_reviewer.get() else {
            return local;
        };
        if matches!(&local, Ok(u) if !u.is_anonymous()) {
            return local;
        }
        let Some(token) = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            return local;
        };
        let mut user = reviewer.review(token).await?;
        if !user.in_group(ALL_AUTHENTICATED) {
            user.groups.push(ALL_AUTHENTICATED.to_string());
        }
        Ok(user)
    }

    /// Sets the check run on every authenticated request (once; later
    /// calls are ignored).
    pub fn set_validator(&self, validator: Arc<dyn super::bound_tokens::CredentialValidator>) {
        let _ = self.validator.set(validator);
    }

    /// Runs the validator, if any, on a request [`Self::authenticate`]
    /// accepted; `Err(reason)` makes it unauthorized.
    pub async fn validate(&self, headers: &http::HeaderMap, user: &UserInfo) -> Result<(), String> {
        match self.validator.get() {
            Some(v) => v.validate(headers, user).await,
            None => Ok(()),
        }
    }

    /// The user of the request, or the reason it is unauthorized.
    pub fn authenticate(&self, req: &AuthRequest<'_>) -> Result<UserInfo, String> {
        self.authenticate_with_source(req).map(|(user, _)| user)
    }

    /// Like [`Self::authenticate`], also telling whether a front proxy
    /// asserted the identity.
    pub fn authenticate_with_source(
        &self,
        req: &AuthRequest<'_>,
    ) -> Result<(UserInfo, bool), String> {
        let mut errors = Vec::new();
        for a in &self.authenticators {
            match a.authenticate(req) {
                AuthOutcome::Authenticated(mut user) => {
                    if !user.in_group(ALL_AUTHENTICATED) {
                        user.groups.push(ALL_AUTHENTICATED.to_string());
                    }
                    return Ok((user, a.is_front_proxy()));
                }
                AuthOutcome::Failed(e) => errors.push(e),
                AuthOutcome::NotApplicable => {}
            }
        }
        if !errors.is_empty() {
            return Err(errors.join(", "));
        }
        let allowed = self.anonymous_paths.as_ref().is_some_and(|paths| {
            paths.iter().any(|p| {
                req.path == p
                    || (req.path.starts_with(p.as_str()) && req.path[p.len()..].starts_with('/'))
            })
        });
        if allowed {
            return Ok((
                UserInfo {
                    name: ANONYMOUS.to_string(),
                    groups: vec![ALL_UNAUTHENTICATED.to_string()],
                    ..Default::default()
                },
                false,
            ));
        }
        Err("no credentials".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authentication::token_file::TokenFileAuthenticator;

    fn union(anon: bool) -> UnionAuthenticator {
        let tokens = TokenFileAuthenticator::parse("good,alice,1\n").unwrap();
        UnionAuthenticator::new(
            vec![Arc::new(tokens)],
            anon.then(|| {
                DEFAULT_ANONYMOUS_PATHS
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            }),
        )
    }

    fn req<'a>(headers: &'a http::HeaderMap, path: &'a str) -> AuthRequest<'a> {
        AuthRequest {
            headers,
            peer_certificates: None,
            peer_credentials: None,
            path,
            audiences: None,
        }
    }

    #[test]
    fn token_and_anonymous() {
        let u = union(true);
        let mut h = http::HeaderMap::new();
        assert!(u.authenticate(&req(&h, "/api")).is_err());
        assert_eq!(u.authenticate(&req(&h, "/readyz")).unwrap().name, ANONYMOUS);
        assert_eq!(
            u.authenticate(&req(&h, "/readyz/etcd")).unwrap().name,
            ANONYMOUS
        );
        assert!(u.authenticate(&req(&h, "/readyzz")).is_err());
        h.insert("authorization", "Bearer good".parse().unwrap());
        let alice = u.authenticate(&req(&h, "/api")).unwrap();
        assert_eq!(alice.groups, vec![ALL_AUTHENTICATED]);
        h.insert("authorization", "Bearer bad".parse().unwrap());
        assert!(
            u.authenticate(&req(&h, "/readyz")).is_err(),
            "a bad token is never anonymous"
        );
        assert!(union(false)
            .authenticate(&req(&http::HeaderMap::new(), "/readyz"))
            .is_err());
    }
}
