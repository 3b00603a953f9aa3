//! Certificates and keys in PEM, the crypto provider (ring) and client TLS
//! configurations: what serving, delegation, webhooks and clients share.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Parses every certificate in a PEM bundle.
pub fn parse_certs(pem: &[u8]) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem).collect::<Result<Vec<_>, _>>()?;
    if certs.is_empty() {
        anyhow::bail!("no certificates found in PEM data");
    }
    Ok(certs)
}

/// Parses the first private key in a PEM file.
pub fn parse_key(pem: &[u8]) -> anyhow::Result<PrivateKeyDer<'static>> {
    Ok(PrivateKeyDer::from_pem_slice(pem)?)
}

/// The crypto provider used everywhere (ring).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client configuration trusting `ca_pem`, presenting an optional client
/// certificate. Its ALPN list is left to the connector: HTTP/1.1 for
/// requests and upgrades, `h2` for the watches that share connections
/// (`crate::transport::multiplexed`).
pub fn client_config(
    ca_pem: &[u8],
    client_cert: Option<(&[u8], &[u8])>,
) -> anyhow::Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in parse_certs(ca_pem)? {
        roots.add(cert)?;
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_root_certificates(roots);
    let mut config = match client_cert {
        Some((cert, key)) => builder.with_client_auth_cert(parse_certs(cert)?, parse_key(key)?)?,
        None => builder.with_no_client_auth(),
    };
    // ALPN is set by the connector.
    config.alpn_protocols.clear();
    Ok(config)
}

/// The signature checks of a rustls certificate verifier (server or client
/// side), done with the verifier's `provider` field: every verifier here
/// checks handshake signatures the same way and differs only in which
/// certificates it trusts.
macro_rules! signatures_checked_by_provider {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &rustls_pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &rustls_pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            self.provider
                .signature_verification_algorithms
                .supported_schemes()
        }
    };
}
pub(crate) use signatures_checked_by_provider;
