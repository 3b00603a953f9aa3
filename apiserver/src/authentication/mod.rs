//! Authentication: who is calling.
//!
//! Authenticators are tried in upstream's order (front-proxy request headers,
//! x509 client certificates, bearer tokens) by [`union::UnionAuthenticator`]; the
//! `authentication` filter runs the union and stores the resulting [`UserInfo`]
//! in the request's extensions for authorization, handlers and delegation.

pub mod bound_tokens;
pub mod request_header;
pub mod service_account;
pub mod token_file;
pub mod token_review;
pub mod union;
pub mod x509;

use std::collections::BTreeMap;

use crate::request::peer::PeerCertificates;

/// The group every authenticated (non-anonymous) user is in.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// The group of requests without credentials.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// The user name of requests without credentials.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group that is always allowed everything.
pub const SYSTEM_MASTERS: &str = "system:masters";

/// An authenticated identity, as upstream's `user.Info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// Whether this is the anonymous user.
    pub fn is_anonymous(&self) -> bool {
        self.name == ANONYMOUS
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// What an authenticator can see of a request.
pub struct AuthRequest<'a> {
    pub headers: &'a http::HeaderMap,
    pub peer_certificates: Option<&'a PeerCertificates>,
    /// The client of a Unix socket connection, as the kernel saw it (see
    /// [`crate::request::peer::PeerCredentials`]): a trusted front proxy.
    pub peer_credentials: Option<&'a crate::request::peer::PeerCredentials>,
    pub path: &'a str,
    /// The audiences a token must be valid for: a TokenReview's
    /// `spec.audiences`; `None` for this server's own (`--api-audiences`).
    pub audiences: Option<&'a [String]>,
}

/// The answer of one authenticator.
#[derive(Debug)]
pub enum AuthOutcome {
    /// The request carries no credentials of this kind.
    NotApplicable,
    /// The credentials are valid.
    Authenticated(UserInfo),
    /// Credentials of this kind are present but invalid: the request fails with 401
    /// unless another authenticator accepts it.
    Failed(String),
}

/// One way of authenticating a request.
pub trait Authenticator: Send + Sync {
    /// Examines the request; never panics on hostile input.
    fn authenticate(&self, req: &AuthRequest<'_>) -> AuthOutcome;

    /// Whether users this authenticator accepts come from a trusted front
    /// proxy (the request-header authenticator) rather than their own
    /// credentials.
    fn is_front_proxy(&self) -> bool {
        false
    }
}

/// Request extension marking a request whose identity a trusted front proxy
/// (the tier in front) asserted with `X-Remote-*` headers.
#[derive(Clone, Copy, Debug)]
pub struct FrontProxied;
