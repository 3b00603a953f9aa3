//! The TLS client certificate chain a request arrived with.

use std::sync::Arc;

use rustls_pki_types::CertificateDer;

/// The client certificate chain of a connection, stored in every request's
/// extensions (empty when the client sent none), with what authentication
/// has learned about it.
///
/// Every request on a connection presents the same chain, so the leaf's
/// subject is parsed once per connection and each CA's verdict on the chain
/// is reached once per connection (see `CertVerifier::verify_peer`), instead
/// of parsing DER on every request.
#[derive(Clone, Debug, Default)]
pub struct PeerCertificates(Arc<PeerChain>);

#[derive(Debug, Default)]
pub(crate) struct PeerChain {
    pub(crate) certs: Vec<CertificateDer<'static>>,
    /// The leaf's subject (CN, organizations), parsed on first use.
    pub(crate) subject: std::sync::OnceLock<Result<(String, Vec<String>), String>>,
    /// Verdicts of the CA verifiers that have looked at this chain.
    pub(crate) verdicts: std::sync::Mutex<Vec<PeerVerdict>>,
}

/// One verifier's verdict on a connection's chain, valid until `until`.
#[derive(Debug)]
pub(crate) struct PeerVerdict {
    pub(crate) verifier: usize,
    pub(crate) until: std::time::Instant,
    pub(crate) result: Result<(), String>,
}

impl PeerCertificates {
    /// The chain a client presented (end entity first).
    pub fn new(certs: Vec<CertificateDer<'static>>) -> Self {
        PeerCertificates(Arc::new(PeerChain {
            certs,
            ..Default::default()
        }))
    }

    /// The certificates, end entity first (empty without a client certificate).
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.0.certs
    }

    pub(crate) fn memo(&self) -> &PeerChain {
        &self.0
    }
}

/// The peer credentials of a Unix domain socket client (`SO_PEERCRED`: the
/// user, group and process the kernel saw connect), stored in every request
/// of the connection.
///
/// Only a client running as this server's own user or as root is served on
/// the socket (see [`PeerCredentials::is_trusted`]): either could read the
/// front-proxy client key this server's tier in front uses anyway, so
/// trusting it as a front proxy (its `X-Remote-*` headers name the caller)
/// grants nothing a TLS front proxy on that host could not claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerCredentials {
    pub uid: u32,
    pub gid: u32,
    pub pid: Option<i32>,
}

impl PeerCredentials {
    /// Whether the client runs as this process's effective user or as root.
    pub fn is_trusted(&self) -> bool {
        static OWN_UID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        // SAFETY: geteuid has no preconditions and cannot fail.
        let own = *OWN_UID.get_or_init(|| unsafe { libc::geteuid() });
        self.uid == own || self.uid == 0
    }
}
