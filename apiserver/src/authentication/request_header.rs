//! Front-proxy request-header authentication (`--requestheader-*` flags).
//!
//! A request is trusted to name its user in `X-Remote-User` / `X-Remote-Group` /
//! `X-Remote-Extra-*` only if its TLS client certificate chains to the
//! request-header CA and its CN is one of the allowed names (any CN when the list
//! is empty). This is how each tier receives the caller's identity from the tier
//! in front of it.

use std::collections::BTreeMap;

use super::x509::CertVerifier;
use super::{AuthOutcome, AuthRequest, Authenticator, UserInfo};

/// Header names, as the `--requestheader-*-headers` flags configure them.
#[derive(Clone, Debug)]
pub struct RequestHeaderNames {
    pub username: Vec<String>,
    pub uid: Vec<String>,
    pub group: Vec<String>,
    pub extra_prefix: Vec<String>,
}

impl Default for RequestHeaderNames {
    fn default() -> Self {
        RequestHeaderNames {
            username: vec!["X-Remote-User".into()],
            uid: vec![],
            group: vec!["X-Remote-Group".into()],
            extra_prefix: vec!["X-Remote-Extra-".into()],
        }
    }
}

impl RequestHeaderNames {
    /// Whether `name` is one of the identity headers (which are stripped from
    /// every request after authentication, and from every client request
    /// before delegation).
    pub fn is_identity_header(&self, name: &str) -> bool {
        let eq = |h: &String| h.eq_ignore_ascii_case(name);
        let prefixed =
            |p: &String| name.len() >= p.len() && name[..p.len()].eq_ignore_ascii_case(p);
        self.username.iter().any(eq)
            || self.uid.iter().any(eq)
            || self.group.iter().any(eq)
            || self.extra_prefix.iter().any(prefixed)
            || is_standard_identity_header(name)
    }
}

/// The standard `X-Remote-*` headers, always treated as identity headers.
pub fn is_standard_identity_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "x-remote-user"
        || lower == "x-remote-uid"
        || lower == "x-remote-group"
        || lower.starts_with("x-remote-extra-")
}

/// Authenticates requests relayed by a trusted front proxy.
pub struct RequestHeaderAuthenticator {
    verifier: CertVerifier,
    allowed_names: Vec<String>,
    names: RequestHeaderNames,
}

impl RequestHeaderAuthenticator {
    /// An authenticator trusting proxies whose certificates chain to `verifier`.
    pub fn new(
        verifier: CertVerifier,
        allowed_names: Vec<String>,
        names: RequestHeaderNames,
    ) -> Self {
        RequestHeaderAuthenticator {
            verifier,
            allowed_names,
            names,
        }
    }
}

impl RequestHeaderAuthenticator {
    /// Whether the request came with a front proxy's client certificate:
    /// one chaining to the request-header CA, with an allowed CN when
    /// names are listed. `Err` carries the outcome otherwise (another
    /// authenticator may then look at the request, or the CN is refused).
    fn trusted_certificate(&self, req: &AuthRequest<'_>) -> Result<(), AuthOutcome> {
        let Some(peer) = req.peer_certificates else {
            return Err(AuthOutcome::NotApplicable);
        };
        if peer.chain().is_empty() || self.verifier.verify_peer(peer).is_err() {
            // Not a front proxy: let the other authenticators look at the request.
            return Err(AuthOutcome::NotApplicable);
        }
        if !self.allowed_names.is_empty() {
            let cn = peer
                .leaf_subject()
                .map(|(cn, _)| cn.as_str())
                .unwrap_or_default();
            if !self.allowed_names.iter().any(|a| a == cn) {
                return Err(AuthOutcome::Failed(format!(
                    "client certificate CN {cn:?} is not allowed"
                )));
            }
        }
        Ok(())
    }
}

fn header_values<'a>(
    headers: &'a http::HeaderMap,
    names: &'a [String],
) -> impl Iterator<Item = String> + 'a {
    names.iter().flat_map(move |n| {
        headers
            .get_all(n.as_str())
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect::<Vec<_>>()
    })
}

impl Authenticator for RequestHeaderAuthenticator {
    fn is_front_proxy(&self) -> bool {
        true
    }

    fn authenticate(&self, req: &AuthRequest<'_>) -> AuthOutcome {
        // A client of the Unix socket is a front proxy on this host, served
        // only because it runs as this server's user or root.
        let on_trusted_socket = req.peer_credentials.is_some_and(|c| c.is_trusted());
        if !on_trusted_socket {
            if let Err(outcome) = self.trusted_certificate(req) {
                return outcome;
            }
        }
        let Some(name) = header_values(req.headers, &self.names.username).find(|v| !v.is_empty())
        else {
            return AuthOutcome::NotApplicable;
        };
        let uid = header_values(req.headers, &self.names.uid)
            .find(|v| !v.is_empty())
            .unwrap_or_default();
        let groups = header_values(req.headers, &self.names.group).collect();
        let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (header, value) in req.headers.iter() {
            for prefix in &self.names.extra_prefix {
                let h = header.as_str();
                if h.len() > prefix.len() && h[..prefix.len()].eq_ignore_ascii_case(prefix) {
                    let key = percent_encoding::percent_decode_str(&h[prefix.len()..])
                        .decode_utf8_lossy()
                        .to_lowercase();
                    if let Ok(v) = value.to_str() {
                        extra.entry(key).or_default().push(v.to_string());
                    }
                }
            }
        }
        AuthOutcome::Authenticated(UserInfo {
            name,
            uid,
            groups,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_headers() {
        let n = RequestHeaderNames::default();
        assert!(n.is_identity_header("x-remote-user"));
        assert!(n.is_identity_header("X-Remote-Extra-Scopes"));
        assert!(!n.is_identity_header("x-remote"));
        assert!(!n.is_identity_header("content-type"));
    }
}
