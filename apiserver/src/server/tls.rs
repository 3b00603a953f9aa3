//! TLS serving: rustls with ALPN `h2`/`http/1.1`, TLS 1.2+, and client
//! certificates *requested but not verified* at the TLS layer (upstream's
//! `RequestClientCert`). Each authenticator verifies the chain against its own
//! CA, so a certificate of one CA can never satisfy another.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DistinguishedName, ServerConfig};
use rustls_pki_types::{CertificateDer, UnixTime};

use crate::pki::{parse_certs, parse_key, provider};

/// Asks for a client certificate, accepts any chain, and checks only that the
/// client holds its key. The chain is verified later, per authenticator.
#[derive(Debug)]
struct RequestClientCert {
    hints: Vec<DistinguishedName>,
    provider: Arc<CryptoProvider>,
}

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    crate::pki::signatures_checked_by_provider!();
}

/// A serving configuration from PEM files. `client_ca_hints` are the subjects
/// of every CA whose client certificates are accepted (clients such as Go's
/// only send a certificate whose issuer is among them).
pub fn server_config(
    cert_pem: &[u8],
    key_pem: &[u8],
    client_ca_hints: Vec<DistinguishedName>,
) -> anyhow::Result<ServerConfig> {
    let provider = provider();
    let certs = parse_certs(cert_pem)?;
    let key = parse_key(key_pem)?;
    let verifier = Arc::new(RequestClientCert {
        hints: client_ca_hints,
        provider: provider.clone(),
    });
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}
