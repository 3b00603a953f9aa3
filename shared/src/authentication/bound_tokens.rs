//! Bound service account tokens stop working when what they are bound to is
//! gone, as upstream's `pkg/serviceaccount` claims validator: the service
//! account, and the pod or secret a TokenRequest bound the token to, must
//! still exist with the uid in the token, and must not have been marked
//! for deletion more than 60 seconds ago. Otherwise the request is
//! unauthorized (401), whatever the signature says.
//!
//! The objects are read from etcd (one GET each) after the signature has
//! been verified; upstream reads them from informer caches with a live
//! fallback, which this trades for always-current answers.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use futures_util::future::BoxFuture;
use serde_json::Value;

use super::token_file::bearer_token;
use super::UserInfo;
use crate::storage::EtcdStorage;

/// How long an object marked for deletion keeps its tokens valid
/// (upstream's `invalidIfDeletedBefore`: now minus 60 seconds).
const DELETION_GRACE_SECONDS: i64 = 60;

/// Upstream's message for tokens whose objects are gone.
pub const INVALIDATED: &str = "service account token has been invalidated";

/// Checks an authenticated request further, after the authenticators
/// accepted its credentials; an error makes the request unauthorized.
pub trait CredentialValidator: Send + Sync {
    /// `Err(reason)` when the credentials must not be honoured.
    fn validate<'a>(
        &'a self,
        headers: &'a http::HeaderMap,
        user: &'a UserInfo,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// Validates bound service account tokens against etcd.
pub struct BoundTokenValidator {
    storage: EtcdStorage,
    prefix: String,
}

impl BoundTokenValidator {
    /// Reads objects under the etcd key prefix `prefix` (`/registry`).
    pub fn new(storage: EtcdStorage, prefix: &str) -> Self {
        BoundTokenValidator {
            storage,
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }

    /// The object at `key` as (uid, deletionTimestamp); `None` when absent.
    async fn object(&self, key: &str) -> Result<Option<(String, Option<String>)>, String> {
        let kv = self
            .storage
            .get(key)
            .await
            .map_err(|e| format!("looking up {key}: {e}"))?;
        let Some(kv) = kv else {
            return Ok(None);
        };
        let obj = crate::protobuf::decode_from_storage(&kv.value)
            .map_err(|e| format!("decoding {key}: {e}"))?;
        let meta = obj.get("metadata");
        let field = |f: &str| {
            meta.and_then(|m| m.get(f))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Ok(Some((
            field("uid").unwrap_or_default(),
            field("deletionTimestamp"),
        )))
    }

    /// Checks one bound object: present, same uid, not deleted too long ago.
    async fn check(
        &self,
        what: &str,
        key: String,
        claimed_uid: &str,
        mismatch: impl FnOnce(&str) -> String,
    ) -> Result<(), String> {
        let Some((uid, deleting)) = self.object(&key).await? else {
            tracing::debug!(%key, "{what} of a bound token is gone");
            return Err(INVALIDATED.into());
        };
        if deleted_too_long_ago(deleting.as_deref()) {
            return Err(INVALIDATED.into());
        }
        if !claimed_uid.is_empty() && uid != claimed_uid {
            return Err(mismatch(&uid));
        }
        Ok(())
    }

    async fn validate_claims(&self, claims: &Value) -> Result<(), String> {
        let Some(k) = claims.get("kubernetes.io") else {
            return Ok(());
        };
        let s = |p: &str| k.pointer(p).and_then(Value::as_str).unwrap_or("");
        let ns = s("/namespace");
        let sa = s("/serviceaccount/name");
        if ns.is_empty() || sa.is_empty() {
            return Err("service account token is missing its namespace or name".into());
        }
        let sa_uid = s("/serviceaccount/uid");
        self.check(
            "service account",
            format!("{}/serviceaccounts/{ns}/{sa}", self.prefix),
            sa_uid,
            |uid| format!("service account UID ({uid}) does not match claim ({sa_uid})"),
        )
        .await?;
        let secret = s("/secret/name");
        if !secret.is_empty() {
            let claimed = s("/secret/uid");
            self.check(
                "secret",
                format!("{}/secrets/{ns}/{secret}", self.prefix),
                claimed,
                |uid| {
                    format!(
                        "secret UID ({uid}) does not match service account secret ref claim ({claimed})"
                    )
                },
            )
            .await?;
        }
        let pod = s("/pod/name");
        if !pod.is_empty() {
            let claimed = s("/pod/uid");
            self.check(
                "pod",
                format!("{}/pods/{ns}/{pod}", self.prefix),
                claimed,
                |uid| {
                    format!(
                        "pod UID ({uid}) does not match service account pod ref claim ({claimed})"
                    )
                },
            )
            .await?;
        }
        let node = s("/node/name");
        if !node.is_empty() {
            let claimed = s("/node/uid");
            self.check(
                "node",
                format!("{}/minions/{node}", self.prefix),
                claimed,
                |uid| {
                    format!("node UID ({uid}) does not match service account node ref claim ({claimed})")
                },
            )
            .await?;
        }
        Ok(())
    }
}

/// Whether a `deletionTimestamp` lies more than the grace period back.
fn deleted_too_long_ago(deletion_timestamp: Option<&str>) -> bool {
    let Some(ts) = deletion_timestamp.and_then(|t| t.parse::<jiff::Timestamp>().ok()) else {
        return false;
    };
    ts.as_second() < jiff::Timestamp::now().as_second() - DELETION_GRACE_SECONDS
}

/// The claims of a JWT, unverified (the authenticator verified them).
fn claims_of(token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (_, Some(c), _) = (parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    URL_SAFE_NO_PAD
        .decode(c)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

impl CredentialValidator for BoundTokenValidator {
    fn validate<'a>(
        &'a self,
        headers: &'a http::HeaderMap,
        user: &'a UserInfo,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            // Only requests a service account token authenticated.
            if !user.name.starts_with("system:serviceaccount:") {
                return Ok(());
            }
            let Some(claims) = bearer_token(headers).and_then(claims_of) else {
                return Ok(());
            };
            if super::service_account::user_of(&claims).map(|u| u.name) != Some(user.name.clone()) {
                return Ok(());
            }
            self.validate_claims(&claims).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletion_grace() {
        assert!(!deleted_too_long_ago(None));
        let now = jiff::Timestamp::now();
        assert!(!deleted_too_long_ago(Some(&now.to_string())));
        let old = jiff::Timestamp::from_second(now.as_second() - 120).expect("ts");
        assert!(deleted_too_long_ago(Some(&old.to_string())));
        assert!(!deleted_too_long_ago(Some("garbage")));
    }

    #[test]
    fn claims_are_read_from_the_payload() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"kubernetes.io":{"namespace":"d"}}"#);
        let claims = claims_of(&format!("h.{payload}.s")).expect("claims");
        assert_eq!(claims["kubernetes.io"]["namespace"], "d");
        assert!(claims_of("nodots").is_none());
    }
}
