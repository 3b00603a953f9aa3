//! x509 client-certificate authentication against `--client-ca-file`.
//!
//! The TLS layer only asks for a certificate (upstream's `RequestClientCert`);
//! this authenticator verifies the chain against its own CA pool, so a
//! certificate from the front-proxy CA can never pass as a user certificate.
//! User = CN, groups = O.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use rustls_pki_types::{CertificateDer, UnixTime};

use super::{AuthOutcome, AuthRequest, Authenticator, UserInfo};
use crate::request::peer::{PeerCertificates, PeerVerdict};

/// How long a verified chain is trusted without verifying it again (never
/// past the leaf certificate's `notAfter`).
const VERIFIED_TTL: Duration = Duration::from_secs(300);

/// How long a connection keeps a failed verdict on its chain (a chain that
/// failed against one CA, such as a user certificate looked at by the
/// front-proxy CA, fails again: only that connection remembers it).
const FAILED_TTL: Duration = Duration::from_secs(60);

/// At most this many verified chains are remembered; the cache is cleared
/// when it is full.
const VERIFIED_MAX: usize = 4096;

/// Verifies client certificates against one CA bundle.
///
/// A chain verification (signature checks) costs more than the rest of a
/// request's authentication, and every request on a connection presents the
/// same chain, so chains that verified are remembered for a few minutes
/// (and never past their leaf's expiry). Failures are not remembered.
#[derive(Clone)]
pub struct CertVerifier {
    verifier: Arc<dyn ClientCertVerifier>,
    verified: Arc<Mutex<HashMap<Box<[u8]>, Instant>>>,
}

/// The cache key of a chain: its certificates' DER, each length-prefixed.
fn chain_key(chain: &[CertificateDer<'static>]) -> Box<[u8]> {
    let mut key = Vec::with_capacity(chain.iter().map(|c| c.len() + 4).sum());
    for cert in chain {
        key.extend_from_slice(&(cert.len() as u32).to_be_bytes());
        key.extend_from_slice(cert.as_ref());
    }
    key.into_boxed_slice()
}

/// Until when a freshly verified chain may be trusted without verifying
/// again: the TTL, capped by the leaf's `notAfter`.
fn trusted_until(leaf: &CertificateDer<'_>) -> Instant {
    let now = Instant::now();
    let ttl = x509_parser::parse_x509_certificate(leaf.as_ref())
        .ok()
        .map(|(_, cert)| {
            let left = cert.validity().not_after.timestamp()
                - std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs() as i64)
                    .unwrap_or(i64::MAX);
            Duration::from_secs(left.max(0) as u64).min(VERIFIED_TTL)
        })
        .unwrap_or(Duration::ZERO);
    now + ttl
}

impl CertVerifier {
    /// Builds a verifier from PEM CA certificates.
    pub fn from_pem(pem: &[u8]) -> anyhow::Result<Self> {
        let mut roots = RootCertStore::empty();
        for cert in crate::pki::parse_certs(pem)? {
            roots.add(cert)?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()?;
        Ok(CertVerifier {
            verifier,
            verified: Default::default(),
        })
    }

    /// Verifies the chain (end entity first) for client authentication.
    pub fn verify(&self, chain: &[CertificateDer<'static>]) -> Result<(), String> {
        let Some((end_entity, intermediates)) = chain.split_first() else {
            return Err("no client certificate".into());
        };
        let key = chain_key(chain);
        let now = Instant::now();
        {
            let verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
            if verified.get(&key).is_some_and(|until| now < *until) {
                return Ok(());
            }
        }
        self.verifier
            .verify_client_cert(end_entity, intermediates, UnixTime::now())
            .map_err(|e| format!("verifying certificate: {e}"))?;
        let until = trusted_until(end_entity);
        let mut verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if verified.len() >= VERIFIED_MAX {
            verified.clear();
        }
        verified.insert(key, until);
        Ok(())
    }

    /// [`Self::verify`] for a connection's chain, decided once per
    /// connection: later requests on it reuse the verdict, a success until
    /// the chain's trust runs out as in [`Self::verify`], a failure for
    /// [`FAILED_TTL`]. Failures are remembered only by the connection that
    /// presented the chain, so no client can fill a shared cache with them.
    pub fn verify_peer(&self, peer: &PeerCertificates) -> Result<(), String> {
        let me = Arc::as_ptr(&self.verified) as *const () as usize;
        let memo = peer.memo();
        let now = Instant::now();
        {
            let verdicts = memo.verdicts.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(v) = verdicts.iter().find(|v| v.verifier == me && now < v.until) {
                return v.result.clone();
            }
        }
        let result = self.verify(&memo.certs);
        let until = match (&result, memo.certs.first()) {
            (Ok(()), Some(leaf)) => trusted_until(leaf),
            _ => now + FAILED_TTL,
        };
        let mut verdicts = memo.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        verdicts.retain(|v| v.verifier != me);
        verdicts.push(PeerVerdict {
            verifier: me,
            until,
            result: result.clone(),
        });
        result
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

impl PeerCertificates {
    /// [`subject_names`] of the leaf certificate, parsed once per
    /// connection.
    pub fn leaf_subject(&self) -> Result<&(String, Vec<String>), String> {
        let Some(leaf) = self.chain().first() else {
            return Err("no client certificate".into());
        };
        self.memo()
            .subject
            .get_or_init(|| subject_names(leaf))
            .as_ref()
            .map_err(Clone::clone)
    }
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
        if peer.chain().is_empty() {
            return AuthOutcome::NotApplicable;
        }
        if let Err(e) = self.verifier.verify_peer(peer) {
            return AuthOutcome::Failed(e);
        }
        match peer.leaf_subject() {
            Ok((name, groups)) if !name.is_empty() => AuthOutcome::Authenticated(UserInfo {
                name: name.clone(),
                groups: groups.clone(),
                ..Default::default()
            }),
            Ok(_) => AuthOutcome::Failed("certificate has no common name".into()),
            Err(e) => AuthOutcome::Failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    };

    fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).expect("ca");
        (cert.pem(), Issuer::new(params, key))
    }

    fn client(cn: &str, issuer: &Issuer<'_, KeyPair>) -> CertificateDer<'static> {
        let key = KeyPair::generate().expect("key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name.push(DnType::CommonName, cn);
        params
            .distinguished_name
            .push(DnType::OrganizationName, "devs");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.signed_by(&key, issuer).expect("leaf").der().clone()
    }

    #[test]
    fn verified_chains_are_remembered_and_failures_are_not() {
        let (ca_pem, issuer) = ca("client-ca");
        let (_, other) = ca("other-ca");
        let verifier = CertVerifier::from_pem(ca_pem.as_bytes()).expect("verifier");
        let good = vec![client("alice", &issuer)];
        let forged = vec![client("alice", &other)];

        assert!(verifier.verify(&good).is_ok());
        assert_eq!(verifier.verified.lock().expect("lock").len(), 1);
        // The second time is answered from the cache, with the same result.
        assert!(verifier.verify(&good).is_ok());

        // A certificate from another CA fails every time and is never cached.
        assert!(verifier.verify(&forged).is_err());
        assert!(verifier.verify(&forged).is_err());
        assert_eq!(verifier.verified.lock().expect("lock").len(), 1);
        assert!(verifier.verify(&[]).is_err());

        // A remembered chain expires: force its entry into the past.
        for until in verifier.verified.lock().expect("lock").values_mut() {
            *until = Instant::now() - Duration::from_secs(1);
        }
        assert!(
            verifier.verify(&good).is_ok(),
            "verified again after expiry"
        );
        let (name, groups) = subject_names(&good[0]).expect("names");
        assert_eq!((name.as_str(), groups), ("alice", vec!["devs".to_string()]));
    }

    #[test]
    fn a_connection_decides_its_chain_once_per_verifier() {
        let (client_pem, client_issuer) = ca("client-ca");
        let (proxy_pem, _) = ca("front-proxy-ca");
        let users = CertVerifier::from_pem(client_pem.as_bytes()).expect("users");
        let proxies = CertVerifier::from_pem(proxy_pem.as_bytes()).expect("proxies");
        let conn = PeerCertificates::new(vec![client("alice", &client_issuer)]);

        // Each verifier's verdict is kept on the connection: the user CA's
        // success and the front-proxy CA's failure.
        assert!(users.verify_peer(&conn).is_ok());
        assert!(proxies.verify_peer(&conn).is_err());
        assert_eq!(conn.memo().verdicts.lock().expect("lock").len(), 2);
        // The failure is remembered only by this connection, never shared.
        assert_eq!(proxies.verified.lock().expect("lock").len(), 0);
        assert!(proxies.verify_peer(&conn).is_err());
        assert!(users.verify_peer(&conn).is_ok());
        assert_eq!(conn.memo().verdicts.lock().expect("lock").len(), 2);

        // An expired verdict is reached again, replacing the old one.
        for v in conn.memo().verdicts.lock().expect("lock").iter_mut() {
            v.until = Instant::now() - Duration::from_secs(1);
            v.result = Err("stale".into());
        }
        assert!(users.verify_peer(&conn).is_ok());
        assert_eq!(conn.memo().verdicts.lock().expect("lock").len(), 2);

        // The subject is parsed once and shared by every request.
        let first = conn.leaf_subject().expect("subject") as *const _;
        assert_eq!(conn.leaf_subject().expect("subject") as *const _, first);
        assert_eq!(conn.leaf_subject().expect("subject").0, "alice");

        // No certificate: nothing verifies, nothing to name.
        let none = PeerCertificates::default();
        assert!(users.verify_peer(&none).is_err());
        assert!(none.leaf_subject().is_err());
    }

    #[test]
    fn trust_never_outlives_the_certificate() {
        let (_, issuer) = ca("client-ca");
        let leaf = client("bob", &issuer);
        let until = trusted_until(&leaf);
        assert!(until <= Instant::now() + VERIFIED_TTL);
        // Garbage is never trusted beyond now.
        assert!(trusted_until(&CertificateDer::from(vec![1u8, 2, 3])) <= Instant::now());
    }
}
