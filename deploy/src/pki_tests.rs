//! Unit tests for the PKI: parse every certificate back with `x509-parser`
//! and check subjects, extensions, validity and the signature chain.

use super::*;
use std::os::unix::fs::PermissionsExt;
use x509_parser::extensions::GeneralName;
use x509_parser::pem::Pem;
use x509_parser::prelude::X509Certificate;

fn read_pem(path: &Path) -> Pem {
    let bytes = fs::read(path).unwrap();
    let (_, pem) = x509_parser::pem::parse_x509_pem(&bytes).unwrap();
    pem
}

fn cn(cert: &X509Certificate<'_>) -> String {
    cert.subject()
        .iter_common_name()
        .next()
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

fn orgs(cert: &X509Certificate<'_>) -> Vec<String> {
    cert.subject()
        .iter_organization()
        .map(|o| o.as_str().unwrap().to_string())
        .collect()
}

fn sans(cert: &X509Certificate<'_>) -> Vec<String> {
    let Some(ext) = cert.subject_alternative_name().unwrap() else {
        return Vec::new();
    };
    ext.value
        .general_names
        .iter()
        .map(|n| match n {
            GeneralName::DNSName(d) => d.to_string(),
            GeneralName::IPAddress(b) if b.len() == 4 => {
                std::net::Ipv4Addr::from(<[u8; 4]>::try_from(*b).unwrap()).to_string()
            }
            GeneralName::IPAddress(b) if b.len() == 16 => {
                std::net::Ipv6Addr::from(<[u8; 16]>::try_from(*b).unwrap()).to_string()
            }
            other => panic!("unexpected SAN {other:?}"),
        })
        .collect()
}

/// (serverAuth, clientAuth)
fn eku(cert: &X509Certificate<'_>) -> (bool, bool) {
    let ext = cert.extended_key_usage().unwrap().unwrap();
    (ext.value.server_auth, ext.value.client_auth)
}

fn days_valid(cert: &X509Certificate<'_>) -> i64 {
    let v = cert.validity();
    (v.not_after.timestamp() - v.not_before.timestamp()) / 86_400
}

struct Checked {
    cn: String,
    orgs: Vec<String>,
    sans: Vec<String>,
    eku: (bool, bool),
}

/// Parses `leaf`, checks it is a non-CA leaf signed by `ca` and valid ~1 year.
fn check_leaf(leaf: &Path, ca: &Path) -> Checked {
    let ca_pem = read_pem(ca);
    let ca_cert = ca_pem.parse_x509().unwrap();
    assert!(ca_cert.is_ca());
    let pem = read_pem(leaf);
    let cert = pem.parse_x509().unwrap();
    assert!(!cert.is_ca(), "{} must not be a CA", leaf.display());
    assert_eq!(cert.issuer(), ca_cert.subject(), "{}", leaf.display());
    cert.verify_signature(Some(ca_cert.public_key()))
        .unwrap_or_else(|e| panic!("{} not signed by {}: {e}", leaf.display(), ca.display()));
    assert!((365..=366).contains(&days_valid(&cert)));
    assert!(cert.validity().is_valid());
    Checked {
        cn: cn(&cert),
        orgs: orgs(&cert),
        sans: sans(&cert),
        eku: eku(&cert),
    }
}

#[test]
fn generates_a_consistent_pki() {
    let dir = tempfile::tempdir().unwrap();
    let pki = ensure(&dir.path().join("pki")).unwrap();

    for (ca, name) in [
        (&pki.ca_cert, CA_COMMON_NAME),
        (&pki.front_proxy_ca_cert, FRONT_PROXY_CA_COMMON_NAME),
    ] {
        let pem = read_pem(ca);
        let cert = pem.parse_x509().unwrap();
        assert!(cert.is_ca());
        assert_eq!(cn(&cert), name);
        cert.verify_signature(None).unwrap(); // self-signed
        assert!((3650..=3651).contains(&days_valid(&cert)));
    }
    let fp_ca = read_pem(&pki.front_proxy_ca_cert);
    let ca = read_pem(&pki.ca_cert);
    assert_ne!(
        fp_ca.parse_x509().unwrap().subject(),
        ca.parse_x509().unwrap().subject()
    );

    let agg = check_leaf(&pki.aggregator_cert, &pki.ca_cert);
    assert_eq!(agg.eku, (true, false));
    let expected: Vec<String> = AGGREGATOR_SANS.iter().map(|s| s.to_string()).collect();
    assert_eq!(agg.sans, expected);

    for cert in [&pki.kube_core_cert, &pki.extensions_cert] {
        let c = check_leaf(cert, &pki.ca_cert);
        assert_eq!(c.eku, (true, false));
        assert_eq!(c.sans, vec!["localhost", "127.0.0.1", "::1"]);
    }

    let admin = check_leaf(&pki.admin_cert, &pki.ca_cert);
    assert_eq!(admin.cn, "kubernetes-admin");
    assert_eq!(admin.orgs, vec!["system:masters"]);
    assert_eq!(admin.eku, (false, true));
    assert!(admin.sans.is_empty());

    let fp = check_leaf(&pki.front_proxy_client_cert, &pki.front_proxy_ca_cert);
    assert_eq!(fp.cn, "front-proxy-client");
    assert_eq!(fp.eku, (false, true));
    // The front-proxy client must not chain to the cluster CA.
    let fp_pem = read_pem(&pki.front_proxy_client_cert);
    let fp_cert = fp_pem.parse_x509().unwrap();
    assert!(fp_cert
        .verify_signature(Some(ca.parse_x509().unwrap().public_key()))
        .is_err());

    // Keys are private and parse back.
    for key in [
        &pki.ca_key,
        &pki.front_proxy_ca_key,
        &pki.front_proxy_client_key,
        &pki.aggregator_key,
        &pki.kube_core_key,
        &pki.extensions_key,
        &pki.admin_key,
        &pki.tokens_file,
    ] {
        let mode = fs::metadata(key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", key.display());
    }
    for key in [&pki.ca_key, &pki.admin_key] {
        let pem = fs::read_to_string(key).unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        KeyPair::from_pem(&pem).unwrap();
    }

    // tokens.csv: `<32 hex>,admin,admin-uid,"system:masters"`.
    let tokens = fs::read_to_string(&pki.tokens_file).unwrap();
    assert_eq!(tokens.lines().count(), 1);
    let fields: Vec<&str> = tokens.trim_end().split(',').collect();
    assert_eq!(fields.len(), 4);
    assert_eq!(fields[0], pki.admin_token);
    assert_eq!(pki.admin_token.len(), 32);
    assert!(pki
        .admin_token
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    assert_eq!(&fields[1..], &["admin", "admin-uid", "\"system:masters\""]);

    // No temporary files left behind.
    for entry in fs::read_dir(&pki.dir).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(!name.to_string_lossy().ends_with(".tmp"), "{name:?}");
    }
}

#[test]
fn existing_files_are_reused() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure(dir.path()).unwrap();
    let snapshot = |pki: &Pki| {
        [
            &pki.ca_cert,
            &pki.ca_key,
            &pki.aggregator_cert,
            &pki.admin_cert,
            &pki.front_proxy_client_cert,
        ]
        .map(|p| fs::read(p).unwrap())
    };
    let before = snapshot(&first);
    let second = ensure(dir.path()).unwrap();
    assert_eq!(first, second);
    assert_eq!(before, snapshot(&second));
}

#[test]
fn missing_leaf_is_reissued_by_the_existing_ca() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure(dir.path()).unwrap();
    let ca_before = fs::read(&first.ca_cert).unwrap();
    let admin_before = fs::read(&first.admin_cert).unwrap();
    fs::remove_file(&first.kube_core_key).unwrap();

    let second = ensure(dir.path()).unwrap();
    assert_eq!(ca_before, fs::read(&second.ca_cert).unwrap());
    assert_eq!(admin_before, fs::read(&second.admin_cert).unwrap());
    let c = check_leaf(&second.kube_core_cert, &second.ca_cert);
    assert_eq!(c.eku, (true, false));
}

#[test]
fn missing_ca_reissues_everything_it_signed() {
    let dir = tempfile::tempdir().unwrap();
    let first = ensure(dir.path()).unwrap();
    let fp_client_before = fs::read(&first.front_proxy_client_cert).unwrap();
    fs::remove_file(&first.ca_key).unwrap();

    let second = ensure(dir.path()).unwrap();
    for leaf in [
        &second.aggregator_cert,
        &second.kube_core_cert,
        &second.extensions_cert,
        &second.admin_cert,
    ] {
        check_leaf(leaf, &second.ca_cert);
    }
    // The front-proxy chain was intact and stays untouched.
    assert_eq!(
        fp_client_before,
        fs::read(&second.front_proxy_client_cert).unwrap()
    );
    assert_eq!(first.admin_token, second.admin_token);
}

#[test]
fn token_file_is_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.csv");
    fs::write(
        &path,
        "# comment\n\nabc123,admin,admin-uid,\"system:masters\"\n",
    )
    .unwrap();
    assert_eq!(read_admin_token(&path).unwrap(), "abc123");
    fs::write(&path, "\n").unwrap();
    assert!(read_admin_token(&path).is_err());
}
