//! Service account tokens: signing (TokenRequest, `serviceaccounts/<n>/token`)
//! and the bearer-token authenticator that accepts them, as upstream's
//! `pkg/serviceaccount` (JWTs with the `kubernetes.io` claim, ES256 or RS256,
//! `--service-account-key-file`, `--service-account-issuer`, `--api-audiences`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{json, Value};

use super::token_file::bearer_token;
use super::{AuthOutcome, AuthRequest, Authenticator, UserInfo};

enum SigningKey {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

/// Signs service account tokens with `--service-account-signing-key-file`.
pub struct TokenSigner {
    key: SigningKey,
    kid: String,
    pub issuer: String,
}

/// SPKI DER of a public key, for the key ID (`kid`) upstream derives from it.
fn spki_der(key: &SigningKey) -> Vec<u8> {
    match key {
        SigningKey::Ecdsa(k) => {
            let mut der = hex_bytes("3059301306072a8648ce3d020106082a8648ce3d030107034200");
            der.extend_from_slice(k.public_key().as_ref());
            der
        }
        SigningKey::Rsa(k) => {
            let pkcs1 = k.public().as_ref();
            let mut bitstring = vec![0u8];
            bitstring.extend_from_slice(pkcs1);
            let alg = hex_bytes("300d06092a864886f70d0101010500");
            let mut body = alg;
            body.extend(der_tlv(0x03, &bitstring));
            der_tlv(0x30, &body)
        }
    }
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

fn der_tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 128 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .iter()
            .copied()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

/// The private keys in a PEM file (PKCS#8 ECDSA P-256 or RSA, PKCS#1 RSA).
fn signing_keys(pem: &[u8]) -> Vec<SigningKey> {
    let mut out = Vec::new();
    for p in x509_parser::pem::Pem::iter_from_buffer(pem).flatten() {
        match p.label.as_str() {
            "PRIVATE KEY" => {
                let rng = ring::rand::SystemRandom::new();
                if let Ok(k) = EcdsaKeyPair::from_pkcs8(
                    &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                    &p.contents,
                    &rng,
                ) {
                    out.push(SigningKey::Ecdsa(k));
                } else if let Ok(k) = RsaKeyPair::from_pkcs8(&p.contents) {
                    out.push(SigningKey::Rsa(k));
                }
            }
            "RSA PRIVATE KEY" => {
                if let Ok(k) = RsaKeyPair::from_der(&p.contents) {
                    out.push(SigningKey::Rsa(k));
                }
            }
            _ => {}
        }
    }
    out
}

impl TokenSigner {
    /// Loads the first private key of a PEM file.
    pub fn from_pem(pem: &[u8], issuer: &str) -> anyhow::Result<Self> {
        let key = signing_keys(pem)
            .into_iter()
            .next()
            .ok_or_else(|| anyhow::anyhow!("no ECDSA P-256 or RSA private key found"))?;
        let digest = ring::digest::digest(&ring::digest::SHA256, &spki_der(&key));
        Ok(TokenSigner {
            kid: URL_SAFE_NO_PAD.encode(digest.as_ref()),
            key,
            issuer: issuer.to_string(),
        })
    }

    /// A signed JWT of `claims` (`iss` is added).
    pub fn sign(&self, mut claims: Value) -> anyhow::Result<String> {
        claims["iss"] = json!(self.issuer);
        let alg = match self.key {
            SigningKey::Ecdsa(_) => "ES256",
            SigningKey::Rsa(_) => "RS256",
        };
        let header = json!({"alg": alg, "kid": self.kid});
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header)?),
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims)?)
        );
        let rng = ring::rand::SystemRandom::new();
        let sig = match &self.key {
            SigningKey::Ecdsa(k) => k
                .sign(&rng, signing_input.as_bytes())
                .map_err(|_| anyhow::anyhow!("signing failed"))?
                .as_ref()
                .to_vec(),
            SigningKey::Rsa(k) => {
                let mut sig = vec![0; k.public().modulus_len()];
                k.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    signing_input.as_bytes(),
                    &mut sig,
                )
                .map_err(|_| anyhow::anyhow!("signing failed"))?;
                sig
            }
        };
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }
}

enum VerifyKey {
    Ecdsa(Vec<u8>),
    Rsa(Vec<u8>),
}

/// Accepts service account JWTs signed by one of `--service-account-key-file`.
pub struct ServiceAccountAuthenticator {
    keys: Vec<VerifyKey>,
    issuers: Vec<String>,
    audiences: Vec<String>,
}

impl ServiceAccountAuthenticator {
    /// Keys from PEM files holding public keys, certificates or private keys.
    pub fn from_pems(
        pems: &[Vec<u8>],
        issuers: Vec<String>,
        audiences: Vec<String>,
    ) -> anyhow::Result<Self> {
        let mut keys = Vec::new();
        for pem in pems {
            for k in signing_keys(pem) {
                keys.push(match k {
                    SigningKey::Ecdsa(k) => VerifyKey::Ecdsa(k.public_key().as_ref().to_vec()),
                    SigningKey::Rsa(k) => VerifyKey::Rsa(k.public().as_ref().to_vec()),
                });
            }
            for p in x509_parser::pem::Pem::iter_from_buffer(pem).flatten() {
                let spki_der = match p.label.as_str() {
                    "PUBLIC KEY" => p.contents.clone(),
                    "CERTIFICATE" => match x509_parser::parse_x509_certificate(&p.contents) {
                        Ok((_, c)) => c.tbs_certificate.subject_pki.raw.to_vec(),
                        Err(_) => continue,
                    },
                    _ => continue,
                };
                use x509_parser::prelude::FromDer;
                if let Ok((_, spki)) = x509_parser::x509::SubjectPublicKeyInfo::from_der(&spki_der)
                {
                    let raw = spki.subject_public_key.data.to_vec();
                    if spki.algorithm.algorithm
                        == x509_parser::oid_registry::OID_KEY_TYPE_EC_PUBLIC_KEY
                    {
                        keys.push(VerifyKey::Ecdsa(raw));
                    } else {
                        keys.push(VerifyKey::Rsa(raw));
                    }
                }
            }
        }
        if keys.is_empty() {
            anyhow::bail!("no public or private key found");
        }
        Ok(ServiceAccountAuthenticator {
            keys,
            issuers,
            audiences,
        })
    }

    /// Verifies a token for this server's audiences; the claims when valid.
    pub fn verify(&self, token: &str) -> Result<Value, String> {
        self.verify_for(token, &self.audiences)
    }

    /// Verifies a token for `audiences` (none: any audience); the claims
    /// when valid.
    pub fn verify_for(&self, token: &str, audiences: &[String]) -> Result<Value, String> {
        let mut parts = token.split('.');
        let (Some(h), Some(c), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("not a JWT".into());
        };
        let header = decode_part(h).ok_or("malformed JWT header")?;
        let sig = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| "malformed JWT signature")?;
        let input = format!("{h}.{c}");
        let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
        let ok = self.keys.iter().any(|k| match (k, alg) {
            (VerifyKey::Ecdsa(pk), "ES256") => {
                signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, pk)
                    .verify(input.as_bytes(), &sig)
                    .is_ok()
            }
            (VerifyKey::Rsa(pk), "RS256") => {
                signature::UnparsedPublicKey::new(&signature::RSA_PKCS1_2048_8192_SHA256, pk)
                    .verify(input.as_bytes(), &sig)
                    .is_ok()
            }
            _ => false,
        });
        if !ok {
            return Err("invalid signature".into());
        }
        let claims = decode_part(c).ok_or("malformed JWT claims")?;
        let iss = claims.get("iss").and_then(Value::as_str).unwrap_or("");
        if !self.issuers.iter().any(|i| i == iss) {
            return Err(format!("invalid issuer {iss:?}"));
        }
        let now = jiff::Timestamp::now().as_second();
        if claims
            .get("exp")
            .and_then(Value::as_i64)
            .is_some_and(|e| e < now)
        {
            return Err("token has expired".into());
        }
        if claims
            .get("nbf")
            .and_then(Value::as_i64)
            .is_some_and(|n| n > now + 60)
        {
            return Err("token is not valid yet".into());
        }
        if !audiences.is_empty() {
            let aud = token_audiences(&claims);
            if !aud.iter().any(|a| audiences.contains(a)) {
                return Err(format!(
                    "token audiences {aud:?} is invalid for the target audiences {audiences:?}"
                ));
            }
        }
        Ok(claims)
    }
}

/// One base64url JSON part of a JWT.
fn decode_part(part: &str) -> Option<Value> {
    URL_SAFE_NO_PAD
        .decode(part)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// The claims of a JWT, read without checking its signature: only for a
/// token [`ServiceAccountAuthenticator::verify_for`] has accepted. `None`
/// for a token that is not a JWT.
pub fn unverified_claims(token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(claims), Some(_), None) => decode_part(claims),
        _ => None,
    }
}

/// The `aud` claim of a token (a string or a list).
pub fn token_audiences(claims: &Value) -> Vec<String> {
    match claims.get("aud") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => vec![],
    }
}

/// The user a service account token names.
pub fn user_of(claims: &Value) -> Option<UserInfo> {
    let k = claims.get("kubernetes.io")?;
    let ns = k.get("namespace").and_then(Value::as_str)?;
    let sa = k.pointer("/serviceaccount/name").and_then(Value::as_str)?;
    let mut user = UserInfo {
        name: format!("system:serviceaccount:{ns}:{sa}"),
        uid: k
            .pointer("/serviceaccount/uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{ns}"),
            "system:authenticated".into(),
        ],
        ..Default::default()
    };
    if let Some(jti) = claims.get("jti").and_then(Value::as_str) {
        user.extra.insert(
            "authentication.kubernetes.io/credential-id".into(),
            vec![format!("JTI={jti}")],
        );
    }
    for (field, extra) in [("pod", "pod"), ("node", "node")] {
        if let Some(name) = k.pointer(&format!("/{field}/name")).and_then(Value::as_str) {
            user.extra.insert(
                format!("authentication.kubernetes.io/{extra}-name"),
                vec![name.to_string()],
            );
        }
        if let Some(uid) = k.pointer(&format!("/{field}/uid")).and_then(Value::as_str) {
            user.extra.insert(
                format!("authentication.kubernetes.io/{extra}-uid"),
                vec![uid.to_string()],
            );
        }
    }
    Some(user)
}

impl Authenticator for ServiceAccountAuthenticator {
    fn authenticate(&self, req: &AuthRequest<'_>) -> AuthOutcome {
        let Some(token) = bearer_token(req.headers) else {
            return AuthOutcome::NotApplicable;
        };
        if token.split('.').count() != 3 {
            return AuthOutcome::NotApplicable;
        }
        match self.verify_for(token, req.audiences.unwrap_or(&self.audiences)) {
            Ok(claims) => match user_of(&claims) {
                Some(u) => AuthOutcome::Authenticated(u),
                None => AuthOutcome::Failed("not a service account token".into()),
            },
            Err(e) => AuthOutcome::Failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_pem() -> String {
        rcgen::KeyPair::generate().expect("key").serialize_pem()
    }

    #[test]
    fn signed_tokens_authenticate() {
        let pem = key_pem();
        let signer = TokenSigner::from_pem(
            pem.as_bytes(),
            "https://kubernetes.default.svc.cluster.local",
        )
        .unwrap();
        let now = jiff::Timestamp::now().as_second();
        let token = signer
            .sign(json!({"aud": ["https://kubernetes.default.svc.cluster.local"], "exp": now + 600, "iat": now, "nbf": now,
                "jti": "j1", "sub": "system:serviceaccount:d:sa",
                "kubernetes.io": {"namespace": "d", "serviceaccount": {"name": "sa", "uid": "u1"}}}))
            .unwrap();
        let auth = ServiceAccountAuthenticator::from_pems(
            &[pem.into_bytes()],
            vec!["https://kubernetes.default.svc.cluster.local".into()],
            vec!["https://kubernetes.default.svc.cluster.local".into()],
        )
        .unwrap();
        let claims = auth.verify(&token).unwrap();
        let user = user_of(&claims).unwrap();
        assert_eq!(user.name, "system:serviceaccount:d:sa");
        assert_eq!(
            user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:d",
                "system:authenticated"
            ]
        );
        assert_eq!(
            user.extra["authentication.kubernetes.io/credential-id"],
            ["JTI=j1"]
        );
        // Tampering, another key, expiry and audience are refused.
        let mut bad = token.clone();
        bad.pop();
        bad.push(if token.ends_with('A') { 'B' } else { 'A' });
        assert!(auth.verify(&bad).is_err());
        let other = ServiceAccountAuthenticator::from_pems(
            &[key_pem().into_bytes()],
            vec![signer.issuer.clone()],
            vec![],
        )
        .unwrap();
        assert_eq!(other.verify(&token).unwrap_err(), "invalid signature");
        let expired = signer
            .sign(json!({"exp": now - 10, "aud": "https://kubernetes.default.svc.cluster.local"}))
            .unwrap();
        assert_eq!(auth.verify(&expired).unwrap_err(), "token has expired");
        let wrong_aud = signer
            .sign(json!({"exp": now + 10, "aud": "other"}))
            .unwrap();
        assert!(auth.verify(&wrong_aud).is_err());
    }
}
