//! x509 client-certificate authentication against `--client-ca-file`.
//!
//! The TLS layer only asks for a certificate (upstream's `RequestClientCert`);
//! this authenticator verifies the chain against its own CA pool, so a
//! certificate from the front-proxy CA can never pass as a user certificate.
//! User = CN, groups = O.

use std::sync::Arc;

use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use rustls_pki_types::{CertificateDer, UnixTime};

use super::{AuthOutcome, AuthRequest, Authenticator, UserInfo};

/// Verifies client certificates against one CA bundle.
#[derive(Clone)]
pub struct CertVerifier {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl CertVerifier {
    /// Builds a verifier from PEM CA certificates.
    pub fn from_pem(pem: &[u8]) -> anyhow::Result<Self> {
        let mut roots = RootCertStore::empty();
        for cert in crate::server::tls::parse_certs(pem)? {
            roots.add(cert)?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()?;
        Ok(CertVerifier { verifier })
    }

    /// Verifies the chain (end entity first) for client authentication.
    pub fn verify(&self, chain: &[CertificateDer<'static>]) -> Result<(), String> {
        let Some((end_entity, intermediates)) = chain.split_first() else {
            return Err("no client certificate".into());
        };
        self.verifier
            .verify_client_cert(end_entity, intermediates, UnixTime::now())
            .map(|_| ())
            .map_err(|e| format!("verifying certificate: {e}"))
    }

    /// All CA subjects, offered to clients as acceptable issuers.
    pub fn root_hint_subjects(&self) -> Vec<rustls::DistinguishedName> {
        self.verifier.root_hint_subjects().to_vec()
    }
}

/// Subject common name and organizations of a certificate.
pub fn subject_names(cert: &CertificateDer<'_>) -> Result<(String, Vec<String>), String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|e| format!("parsing certificate: {e}"))?;
    let subject = parsed.subject();
    let cn = subject
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok())
        .unwrap_or_default()
        .to_string();
    let orgs = subject
        .iter_organization()
        .filter_map(|a| a.as_str().ok().map(str::to_string))
        .collect();
    Ok((cn, orgs))
}

/// Authenticates users by client certificates signed by the client CA.
pub struct X509Authenticator {
    verifier: CertVerifier,
}

impl X509Authenticator {
    /// An authenticator trusting the given CA.
    pub fn new(verifier: CertVerifier) -> Self {
        X509Authenticator { verifier }
    }
}

impl Authenticator for X509Authenticator {
    fn authenticate(&self, req: &AuthRequest<'_>) -> AuthOutcome {
        let Some(peer) = req.peer_certificates else {
            return AuthOutcome::NotApplicable;
        };
        if peer.0.is_empty() {
            return AuthOutcome::NotApplicable;
        }
        if let Err(e) = self.verifier.verify(&peer.0) {
            return AuthOutcome::Failed(e);
        }
        match subject_names(&peer.0[0]) {
            Ok((name, groups)) if !name.is_empty() => AuthOutcome::Authenticated(UserInfo {
                name,
                groups,
                ..Default::default()
            }),
            Ok(_) => AuthOutcome::Failed("certificate has no common name".into()),
            Err(e) => AuthOutcome::Failed(e),
        }
    }
}
