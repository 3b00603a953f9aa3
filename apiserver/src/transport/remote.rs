//! TLS towards an external (aggregated) API server, as upstream's aggregator
//! builds it for an APIService: the serving certificate is verified against
//! the APIService's `caBundle` for the name `<service>.<namespace>.svc`
//! whatever address the connection goes to (an endpoint IP, an ExternalName),
//! or not verified at all with `insecureSkipTLSVerify`. The front-proxy client
//! certificate is presented either way, so the server can trust `X-Remote-*`.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::{DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

use crate::pki::{parse_certs, parse_key, provider};

/// How the server's certificate is checked.
pub enum ServerTrust<'a> {
    /// Verified against these PEM roots for this DNS name.
    CaBundle { pem: &'a [u8], server_name: &'a str },
    /// Verified against the machine's trusted roots for this DNS name (a
    /// webhook without `caBundle`).
    SystemRoots { server_name: &'a str },
    /// Not verified (`insecureSkipTLSVerify: true`); only the handshake
    /// signature is checked.
    Insecure,
}

/// A client configuration for one external server, presenting `client_cert`
/// (PEM certificate and key) when given. Its ALPN list is left to the
/// connector, as the delegate's.
pub fn client_config(
    trust: ServerTrust<'_>,
    client_cert: Option<(&[u8], &[u8])>,
) -> anyhow::Result<rustls::ClientConfig> {
    let provider = provider();
    let verifier: Arc<dyn ServerCertVerifier> = match trust {
        ServerTrust::CaBundle { pem, server_name } => {
            let mut roots = rustls::RootCertStore::empty();
            let pinned = parse_certs(pem)?;
            for cert in &pinned {
                roots.add(cert.clone())?;
            }
            let inner =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()?;
            Arc::new(FixedName {
                inner,
                name: ServerName::try_from(server_name.to_string())?,
                pinned,
            })
        }
        ServerTrust::SystemRoots { server_name } => {
            let mut roots = rustls::RootCertStore::empty();
            let loaded = rustls_native_certs::load_native_certs();
            for cert in loaded.certs {
                // A root the machine lists but rustls cannot use is skipped,
                // as the platform verifiers skip it.
                let _ = roots.add(cert);
            }
            let inner =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()?;
            Arc::new(FixedName {
                inner,
                name: ServerName::try_from(server_name.to_string())?,
                pinned: Vec::new(),
            })
        }
        ServerTrust::Insecure => Arc::new(NoVerification {
            provider: provider.clone(),
        }),
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match client_cert {
        Some((cert, key)) => builder.with_client_auth_cert(parse_certs(cert)?, parse_key(key)?)?,
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols.clear();
    Ok(config)
}

/// WebPKI verification for a fixed name, whatever host the URL had.
///
/// As Go's verifier (and so upstream), a server certificate that is itself
/// one of the trusted roots is accepted when it is valid now and names the
/// server: webhooks and add-ons commonly serve a self-signed certificate
/// (marked as a CA) and put that same certificate in `caBundle`, which
/// WebPKI alone refuses (`CaUsedAsEndEntity`).
#[derive(Debug)]
struct FixedName {
    inner: Arc<WebPkiServerVerifier>,
    name: ServerName<'static>,
    /// The `caBundle` certificates.
    pinned: Vec<CertificateDer<'static>>,
}

/// Whether the DER certificate is valid at `now` and holds `name` among its
/// subject alternative names.
fn names_server(der: &[u8], name: &ServerName<'_>, now: UnixTime) -> bool {
    use x509_parser::extensions::GeneralName;
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
        return false;
    };
    let now = now.as_secs() as i64;
    let validity = cert.validity();
    if now < validity.not_before.timestamp() || now > validity.not_after.timestamp() {
        return false;
    }
    let Ok(Some(san)) = cert.subject_alternative_name() else {
        return false;
    };
    san.value.general_names.iter().any(|g| match (g, name) {
        (GeneralName::DNSName(d), ServerName::DnsName(n)) => {
            let n = n.as_ref();
            d.eq_ignore_ascii_case(n)
                || d.strip_prefix("*.").is_some_and(|suffix| {
                    n.split_once('.')
                        .is_some_and(|(_, rest)| rest.eq_ignore_ascii_case(suffix))
                })
        }
        (GeneralName::IPAddress(bytes), ServerName::IpAddress(ip)) => {
            let ip: std::net::IpAddr = (*ip).into();
            match ip {
                std::net::IpAddr::V4(v4) => *bytes == v4.octets().as_slice(),
                std::net::IpAddr::V6(v6) => *bytes == v6.octets().as_slice(),
            }
        }
        _ => false,
    })
}

impl ServerCertVerifier for FixedName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            &self.name,
            ocsp_response,
            now,
        ) {
            Ok(v) => Ok(v),
            Err(e) => {
                let pinned = self
                    .pinned
                    .iter()
                    .any(|c| c.as_ref() == end_entity.as_ref());
                if pinned && names_server(end_entity.as_ref(), &self.name, now) {
                    Ok(ServerCertVerified::assertion())
                } else {
                    Err(e)
                }
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Accepts any certificate (`insecureSkipTLSVerify`).
#[derive(Debug)]
struct NoVerification {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    crate::pki::signatures_checked_by_provider!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_a_bundle_without_certificates() {
        let err = client_config(
            ServerTrust::CaBundle {
                pem: b"not pem",
                server_name: "metrics.kube-system.svc",
            },
            None,
        );
        assert!(err.is_err());
    }

    #[test]
    fn insecure_needs_no_bundle() {
        assert!(client_config(ServerTrust::Insecure, None).is_ok());
    }

    fn verifier_for(pem: &str, name: &str) -> FixedName {
        let provider = provider();
        let pinned = parse_certs(pem.as_bytes()).expect("certs");
        let mut roots = rustls::RootCertStore::empty();
        for c in &pinned {
            roots.add(c.clone()).expect("root");
        }
        FixedName {
            inner: WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .expect("verifier"),
            name: ServerName::try_from(name.to_string()).expect("name"),
            pinned,
        }
    }

    #[test]
    fn a_self_signed_ca_serving_itself_is_accepted_for_its_names_only() {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "hook.ns.svc".into()])
                .expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).expect("cert");
        let der = cert.der().clone();
        let now = UnixTime::now();
        for name in ["127.0.0.1", "hook.ns.svc"] {
            let v = verifier_for(&cert.pem(), name);
            assert!(
                v.verify_server_cert(&der, &[], &v.name.clone(), &[], now)
                    .is_ok(),
                "{name}"
            );
        }
        let v = verifier_for(&cert.pem(), "other.ns.svc");
        assert!(v
            .verify_server_cert(&der, &[], &v.name.clone(), &[], now)
            .is_err());
        // Not in the bundle: refused.
        let other_key = rcgen::KeyPair::generate().expect("key");
        let other = rcgen::CertificateParams::new(vec!["x.example.com".into()])
            .expect("params")
            .self_signed(&other_key)
            .expect("cert");
        let v = verifier_for(&other.pem(), "hook.ns.svc");
        assert!(v
            .verify_server_cert(&der, &[], &v.name.clone(), &[], now)
            .is_err());
    }
}
