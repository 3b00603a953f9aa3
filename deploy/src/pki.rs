//! The cluster's PKI, in kubeadm's layout: the cluster CA, the front-proxy CA
//! and etcd's CA (`etcd/ca.crt`); serving certificates for the three tiers
//! and etcd; the front-proxy client certificate, the tiers' etcd client
//! certificate (`apiserver-etcd-client.crt`), the admin client certificate
//! and a static token file.
//!
//! [`ensure`] creates whatever is missing in a directory and returns the
//! paths of all files. Existing files are reused as they are; when a CA has
//! to be (re)generated, every certificate it signs is reissued as well so
//! the chain stays consistent.

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SerialNumber, PKCS_ECDSA_P256_SHA256,
};
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Common name of the cluster CA.
pub const CA_COMMON_NAME: &str = "kubernetes-ca";
/// Common name of the front-proxy CA.
pub const FRONT_PROXY_CA_COMMON_NAME: &str = "front-proxy-ca";
/// Common name of the front-proxy client certificate (the value the tiers
/// must accept in `--requestheader-allowed-names`).
pub const FRONT_PROXY_CLIENT_COMMON_NAME: &str = "front-proxy-client";
/// Common name of etcd's CA (kubeadm's).
pub const ETCD_CA_COMMON_NAME: &str = "etcd-ca";
/// Common name of the tiers' etcd client certificate (kubeadm's).
pub const ETCD_CLIENT_COMMON_NAME: &str = "kube-apiserver-etcd-client";
/// Common name of the admin client certificate.
pub const ADMIN_COMMON_NAME: &str = "kubernetes-admin";
/// Organization (group) of the admin client certificate.
pub const ADMIN_ORGANIZATION: &str = "system:masters";
/// User name the static token in `tokens.csv` authenticates as.
pub const TOKEN_USER: &str = "admin";
/// UID of the static token's user.
pub const TOKEN_UID: &str = "admin-uid";

/// Subject alternative names of the aggregator's serving certificate.
pub const AGGREGATOR_SANS: &[&str] = &[
    "localhost",
    "127.0.0.1",
    "::1",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
    "10.96.0.1",
];
/// Subject alternative names of the kube-core and extensions serving certificates.
pub const BACKEND_SANS: &[&str] = &["localhost", "127.0.0.1", "::1"];

const LEAF_VALIDITY_DAYS: i64 = 365;
const CA_VALIDITY_DAYS: i64 = 3650;

/// Paths of every PKI file plus the admin bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pki {
    /// The directory holding all files below.
    pub dir: PathBuf,
    /// Cluster CA certificate (client CA of all tiers, signs serving certs).
    pub ca_cert: PathBuf,
    /// Cluster CA private key.
    pub ca_key: PathBuf,
    /// Front-proxy CA certificate (`--requestheader-client-ca-file`).
    pub front_proxy_ca_cert: PathBuf,
    /// Front-proxy CA private key.
    pub front_proxy_ca_key: PathBuf,
    /// Front-proxy client certificate (`--proxy-client-cert-file`).
    pub front_proxy_client_cert: PathBuf,
    /// Front-proxy client private key (`--proxy-client-key-file`).
    pub front_proxy_client_key: PathBuf,
    /// Aggregator serving certificate.
    pub aggregator_cert: PathBuf,
    /// Aggregator serving key.
    pub aggregator_key: PathBuf,
    /// kube-core serving certificate.
    pub kube_core_cert: PathBuf,
    /// kube-core serving key.
    pub kube_core_key: PathBuf,
    /// Extensions serving certificate.
    pub extensions_cert: PathBuf,
    /// Extensions serving key.
    pub extensions_key: PathBuf,
    /// Admin client certificate (CN=kubernetes-admin, O=system:masters).
    pub admin_cert: PathBuf,
    /// Admin client private key.
    pub admin_key: PathBuf,
    /// Static token file (`--token-auth-file`).
    pub tokens_file: PathBuf,
    /// The bearer token from `tokens.csv` (user `admin`, group `system:masters`).
    pub admin_token: String,
    /// Key signing (kube-core) and verifying (all tiers) service account
    /// tokens (`--service-account-signing-key-file`, `--service-account-key-file`).
    pub service_account_key: PathBuf,
    /// etcd's CA (kubeadm's `etcd/ca.crt`): signs etcd's serving certificate
    /// and the client certificates etcd accepts.
    pub etcd_ca_cert: PathBuf,
    /// etcd CA private key.
    pub etcd_ca_key: PathBuf,
    /// etcd's serving certificate (`etcd/server.crt`).
    pub etcd_server_cert: PathBuf,
    /// etcd serving key.
    pub etcd_server_key: PathBuf,
    /// The tiers' etcd client certificate (`apiserver-etcd-client.crt`).
    pub etcd_client_cert: PathBuf,
    /// The tiers' etcd client key.
    pub etcd_client_key: PathBuf,
}

impl Pki {
    /// The file paths inside `dir`, without touching the file system
    /// (`admin_token` is left empty).
    pub fn paths(dir: &Path) -> Pki {
        let p = |name: &str| dir.join(name);
        Pki {
            dir: dir.to_path_buf(),
            ca_cert: p("ca.crt"),
            ca_key: p("ca.key"),
            front_proxy_ca_cert: p("front-proxy-ca.crt"),
            front_proxy_ca_key: p("front-proxy-ca.key"),
            front_proxy_client_cert: p("front-proxy-client.crt"),
            front_proxy_client_key: p("front-proxy-client.key"),
            aggregator_cert: p("aggregator.crt"),
            aggregator_key: p("aggregator.key"),
            kube_core_cert: p("kube-core.crt"),
            kube_core_key: p("kube-core.key"),
            extensions_cert: p("extensions.crt"),
            extensions_key: p("extensions.key"),
            admin_cert: p("admin.crt"),
            admin_key: p("admin.key"),
            tokens_file: p("tokens.csv"),
            admin_token: String::new(),
            service_account_key: p("sa.key"),
            etcd_ca_cert: p("etcd/ca.crt"),
            etcd_ca_key: p("etcd/ca.key"),
            etcd_server_cert: p("etcd/server.crt"),
            etcd_server_key: p("etcd/server.key"),
            etcd_client_cert: p("apiserver-etcd-client.crt"),
            etcd_client_key: p("apiserver-etcd-client.key"),
        }
    }
}

/// Creates the missing parts of the PKI in `dir` (created if needed) and
/// returns the paths of all files together with the admin token.
pub fn ensure(dir: &Path) -> anyhow::Result<Pki> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut pki = Pki::paths(dir);

    let (ca, ca_new) = ensure_ca(&pki.ca_cert, &pki.ca_key, CA_COMMON_NAME)?;
    let (fp_ca, fp_new) = ensure_ca(
        &pki.front_proxy_ca_cert,
        &pki.front_proxy_ca_key,
        FRONT_PROXY_CA_COMMON_NAME,
    )?;

    let server = |cn: &str, sans: &[&str]| leaf_params(cn, None, sans, Usage::Server);
    ensure_leaf(
        &pki.aggregator_cert,
        &pki.aggregator_key,
        &ca,
        ca_new,
        || server("kube-aggregator", AGGREGATOR_SANS),
    )?;
    ensure_leaf(&pki.kube_core_cert, &pki.kube_core_key, &ca, ca_new, || {
        server("kube-core-apiserver", BACKEND_SANS)
    })?;
    ensure_leaf(
        &pki.extensions_cert,
        &pki.extensions_key,
        &ca,
        ca_new,
        || server("kube-extensions-apiserver", BACKEND_SANS),
    )?;
    ensure_leaf(&pki.admin_cert, &pki.admin_key, &ca, ca_new, || {
        leaf_params(
            ADMIN_COMMON_NAME,
            Some(ADMIN_ORGANIZATION),
            &[],
            Usage::Client,
        )
    })?;
    ensure_leaf(
        &pki.front_proxy_client_cert,
        &pki.front_proxy_client_key,
        &fp_ca,
        fp_new,
        || leaf_params(FRONT_PROXY_CLIENT_COMMON_NAME, None, &[], Usage::Client),
    )?;

    fs::create_dir_all(dir.join("etcd"))
        .with_context(|| format!("creating {}", dir.join("etcd").display()))?;
    let (etcd_ca, etcd_new) = ensure_ca(&pki.etcd_ca_cert, &pki.etcd_ca_key, ETCD_CA_COMMON_NAME)?;
    ensure_leaf(
        &pki.etcd_server_cert,
        &pki.etcd_server_key,
        &etcd_ca,
        etcd_new,
        || leaf_params("kube-etcd", None, BACKEND_SANS, Usage::ServerAndClient),
    )?;
    ensure_leaf(
        &pki.etcd_client_cert,
        &pki.etcd_client_key,
        &etcd_ca,
        etcd_new,
        || leaf_params(ETCD_CLIENT_COMMON_NAME, None, &[], Usage::Client),
    )?;

    pki.admin_token = ensure_tokens(&pki.tokens_file)?;
    if !pki.service_account_key.exists() {
        let key = rcgen::KeyPair::generate().context("generating the service account key")?;
        write_file(
            &pki.service_account_key,
            key.serialize_pem().as_bytes(),
            0o600,
        )?;
    }
    Ok(pki)
}

/// Issues a serving certificate for an add-on API server (such as the
/// example metrics server) from the cluster CA, for `sans` (e.g.
/// `metrics-server.kube-system.svc`), so an APIService can trust it through
/// `caBundle` (the cluster CA). Writes `cert` and `key`.
pub fn issue_serving_cert(
    pki: &Pki,
    cert: &Path,
    key: &Path,
    common_name: &str,
    sans: &[&str],
) -> anyhow::Result<()> {
    let (ca, _) = ensure_ca(&pki.ca_cert, &pki.ca_key, CA_COMMON_NAME)?;
    let key_pair = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let certificate =
        leaf_params(common_name, None, sans, Usage::Server)?.signed_by(&key_pair, &ca)?;
    write_file(key, key_pair.serialize_pem().as_bytes(), 0o600)?;
    write_file(cert, certificate.pem().as_bytes(), 0o644)?;
    Ok(())
}

/// Reads the first token of an upstream-format static token CSV file.
pub fn read_admin_token(tokens_file: &Path) -> anyhow::Result<String> {
    let text = fs::read_to_string(tokens_file)
        .with_context(|| format!("reading {}", tokens_file.display()))?;
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .with_context(|| format!("{} contains no token", tokens_file.display()))?;
    let token = line.split(',').next().unwrap_or_default().trim();
    anyhow::ensure!(
        !token.is_empty(),
        "{} has an empty token",
        tokens_file.display()
    );
    Ok(token.to_string())
}

fn ensure_tokens(path: &Path) -> anyhow::Result<String> {
    if path.exists() {
        return read_admin_token(path);
    }
    let token = random_hex(16);
    let line = format!("{token},{TOKEN_USER},{TOKEN_UID},\"{ADMIN_ORGANIZATION}\"\n");
    write_file(path, line.as_bytes(), 0o600)?;
    Ok(token)
}

/// Whether the certificate must serve TLS or authenticate a client.
#[derive(Clone, Copy)]
enum Usage {
    Server,
    Client,
    /// Serving and client authentication: etcd's serving certificate, which
    /// its own gRPC gateway also presents when it dials etcd (as kubeadm
    /// issues it).
    ServerAndClient,
}

fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

fn random_serial() -> SerialNumber {
    let mut bytes: [u8; 16] = rand::random();
    // Keep the DER INTEGER positive and non-zero.
    bytes[0] = (bytes[0] & 0x7f) | 0x01;
    SerialNumber::from_slice(&bytes)
}

/// Lowercase hex of `n` random bytes.
pub(crate) fn random_hex(n: usize) -> String {
    (0..n)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect()
}

fn ca_params(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
    ];
    params.not_before = now() - time::Duration::hours(1);
    params.not_after = now() + time::Duration::days(CA_VALIDITY_DAYS);
    params.serial_number = Some(random_serial());
    params
}

fn leaf_params(
    common_name: &str,
    organization: Option<&str>,
    sans: &[&str],
    usage: Usage,
) -> anyhow::Result<CertificateParams> {
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(sans).context("invalid subject alternative name")?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    if let Some(org) = organization {
        params
            .distinguished_name
            .push(DnType::OrganizationName, org);
    }
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = match usage {
        Usage::Server => vec![ExtendedKeyUsagePurpose::ServerAuth],
        Usage::Client => vec![ExtendedKeyUsagePurpose::ClientAuth],
        Usage::ServerAndClient => vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ],
    };
    params.use_authority_key_identifier_extension = true;
    params.not_before = now() - time::Duration::hours(1);
    params.not_after = now() + time::Duration::days(LEAF_VALIDITY_DAYS);
    params.serial_number = Some(random_serial());
    Ok(params)
}

/// Loads the CA at `cert`/`key`, or generates it when either file is
/// missing. Returns the issuer and whether it was newly generated.
fn ensure_ca(
    cert: &Path,
    key: &Path,
    common_name: &str,
) -> anyhow::Result<(Issuer<'static, KeyPair>, bool)> {
    if cert.exists() && key.exists() {
        let key_pem =
            fs::read_to_string(key).with_context(|| format!("reading {}", key.display()))?;
        let cert_pem =
            fs::read_to_string(cert).with_context(|| format!("reading {}", cert.display()))?;
        let key_pair =
            KeyPair::from_pem(&key_pem).with_context(|| format!("parsing {}", key.display()))?;
        let issuer = Issuer::from_ca_cert_pem(&cert_pem, key_pair)
            .with_context(|| format!("parsing {}", cert.display()))?;
        return Ok((issuer, false));
    }
    tracing::info!(cert = %cert.display(), "generating CA {common_name}");
    let key_pair = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let params = ca_params(common_name);
    let certificate = params.self_signed(&key_pair)?;
    write_file(key, key_pair.serialize_pem().as_bytes(), 0o600)?;
    write_file(cert, certificate.pem().as_bytes(), 0o644)?;
    Ok((Issuer::new(params, key_pair), true))
}

/// Issues the leaf certificate at `cert`/`key` unless both files exist and
/// the issuer is not new.
fn ensure_leaf(
    cert: &Path,
    key: &Path,
    issuer: &Issuer<'_, KeyPair>,
    issuer_is_new: bool,
    params: impl FnOnce() -> anyhow::Result<CertificateParams>,
) -> anyhow::Result<()> {
    if !issuer_is_new && cert.exists() && key.exists() {
        return Ok(());
    }
    tracing::info!(cert = %cert.display(), "issuing certificate");
    let key_pair = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let certificate = params()?.signed_by(&key_pair, issuer)?;
    write_file(key, key_pair.serialize_pem().as_bytes(), 0o600)?;
    write_file(cert, certificate.pem().as_bytes(), 0o644)?;
    Ok(())
}

/// Writes `contents` to `path` atomically (temporary file + rename) with the
/// given permission bits.
pub(crate) fn write_file(path: &Path, contents: &[u8], mode: u32) -> anyhow::Result<()> {
    let file_name = path
        .file_name()
        .with_context(|| format!("{} has no file name", path.display()))?;
    let mut tmp_name = file_name.to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let _ = fs::remove_file(&tmp);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .with_context(|| format!("creating {}", tmp.display()))?;
    file.write_all(contents)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    drop(file);
    fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
#[path = "pki_tests.rs"]
mod tests;
