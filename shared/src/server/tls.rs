//! TLS serving: rustls with ALPN `h2`/`http/1.1`, TLS 1.2+, and client
//! certificates *requested but not verified* at the TLS layer (upstream's
//! `RequestClientCert`). Each authenticator verifies the chain against its own
//! CA, so a certificate of one CA can never satisfy another.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::CryptoProvider;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, ServerConfig, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, UnixTime};

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

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
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
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
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

/// A client configuration trusting `ca_pem`, presenting an optional client
/// certificate; HTTP/1.1 only (delegation keeps one request per connection so
/// long watches never share a stream limit, and upgrades work).
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
    // ALPN is set by the connector (HTTP/1.1 only).
    config.alpn_protocols.clear();
    Ok(config)
}
