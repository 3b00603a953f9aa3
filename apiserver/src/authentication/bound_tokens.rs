//! Bound service account tokens stop working when what they are bound to is
//! gone, as upstream's `pkg/serviceaccount` claims validator: the service
//! account, and the pod or secret a TokenRequest bound the token to, must
//! still exist with the uid in the token, and must not have been marked
//! for deletion more than 60 seconds ago. Otherwise the request is
//! unauthorized (401), whatever the signature says.
//!
//! The objects are looked up after the signature has been verified, from a
//! [`BoundObjectSource`] that answers authoritatively: etcd for the tier
//! that stores them ([`EtcdSource`]), the API of the tier behind for one
//! that does not (the aggregator asks kube-core). A server with watch
//! caches (kube-core) first asks a [`BoundObjectLookup`] ([`StoreLookup`]),
//! as upstream reads informer listers; whatever the lookup cannot answer
//! (no cache, cache loading, or object not in the cache, which may be one
//! the cache has not seen yet) goes to the source, as upstream falls back
//! to a live GET.
//!
//! A token found valid stays valid for [`VALIDATED_TTL`] without another
//! lookup, as upstream's token authentication cache keeps successes for
//! 10 seconds (failures are not kept): a deletion takes effect within that
//! time, plus a cache's delay.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::token_file::bearer_token;
use super::UserInfo;
use crate::registry::store::Store;
use crate::storage::EtcdStorage;

/// How long an object marked for deletion keeps its tokens valid
/// (upstream's `invalidIfDeletedBefore`: now minus 60 seconds).
const DELETION_GRACE_SECONDS: i64 = 60;

/// How long a token found valid is not looked up again (upstream's
/// `TokenSuccessCacheTTL`, 10 seconds).
pub const VALIDATED_TTL: Duration = Duration::from_secs(10);

/// Most tokens remembered as valid at once; past it, expired entries are
/// dropped, and all of them if none has expired.
const VALIDATED_CAPACITY: usize = 65_536;

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

/// What the validator needs of a bound object: its uid and, when it is
/// being deleted, its `deletionTimestamp`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundObject {
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.deletionTimestamp`, when set.
    pub deletion_timestamp: Option<String>,
}

#[derive(Deserialize)]
struct MetadataOnly {
    #[serde(default)]
    metadata: ObjectMetaPart,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ObjectMetaPart {
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    deletion_timestamp: Option<String>,
}

impl BoundObject {
    /// The uid and deletion timestamp of an object's JSON encoding (only
    /// `metadata` is decoded); `None` when the bytes are not an object.
    pub fn from_json(bytes: &[u8]) -> Option<BoundObject> {
        let m: MetadataOnly = serde_json::from_slice(bytes).ok()?;
        Some(BoundObject {
            uid: m.metadata.uid.unwrap_or_default(),
            deletion_timestamp: m.metadata.deletion_timestamp,
        })
    }

    fn from_value(obj: &Value) -> BoundObject {
        let meta = obj.get("metadata");
        let field = |f: &str| {
            meta.and_then(|m| m.get(f))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        BoundObject {
            uid: field("uid").unwrap_or_default(),
            deletion_timestamp: field("deletionTimestamp"),
        }
    }
}

/// Looks bound objects up somewhere cheaper than etcd (watch caches).
pub trait BoundObjectLookup: Send + Sync {
    /// The object `name` of `resource` (`serviceaccounts`, `secrets`,
    /// `pods` or `nodes`; `namespace` is empty for nodes). `None` when the
    /// lookup cannot answer, including when it does not hold the object:
    /// the validator then reads etcd.
    fn lookup<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Option<BoundObject>>;
}

/// A [`BoundObjectLookup`] over the watch caches of a server's stores:
/// answers with the cached object (`resourceVersion=0` semantics) when the
/// cache is ready and holds it.
#[derive(Default)]
pub struct StoreLookup {
    stores: HashMap<String, Arc<Store>>,
}

impl StoreLookup {
    /// An empty lookup (answers nothing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves lookups of `resource` from `store`.
    pub fn with_store(mut self, resource: &str, store: Arc<Store>) -> Self {
        self.stores.insert(resource.to_string(), store);
        self
    }
}

impl BoundObjectLookup for StoreLookup {
    fn lookup<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Option<BoundObject>> {
        Box::pin(async move {
            let store = self.stores.get(resource)?;
            // Not found in the cache is no answer: the object may be newer
            // than the cache (upstream's lister miss, then a live GET).
            let cached = store.get_from_cache(namespace, name, "0").await.ok()??;
            BoundObject::from_json(&cached.bytes)
        })
    }
}

/// Where the objects a token is bound to are read when no
/// [`BoundObjectLookup`] answers: an authoritative (consistent) read.
pub trait BoundObjectSource: Send + Sync {
    /// The object `name` of `resource` (`serviceaccounts`, `secrets`,
    /// `pods` or `nodes`; `namespace` is empty for nodes): `Ok(None)` when
    /// it does not exist, `Err` when it could not be read.
    fn get<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<BoundObject>, String>>;
}

/// Reads bound objects from etcd under a key prefix, for the tiers that
/// store them.
pub struct EtcdSource {
    storage: EtcdStorage,
    prefix: String,
}

impl EtcdSource {
    /// Reads objects under the etcd key prefix `prefix` (`/registry`).
    pub fn new(storage: EtcdStorage, prefix: &str) -> Self {
        EtcdSource {
            storage,
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }
}

impl BoundObjectSource for EtcdSource {
    fn get<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<BoundObject>, String>> {
        Box::pin(async move {
            // Nodes are stored under upstream's historical `minions`.
            let key = if resource == "nodes" {
                format!("{}/minions/{name}", self.prefix)
            } else {
                format!("{}/{resource}/{namespace}/{name}", self.prefix)
            };
            let kv = self
                .storage
                .get(&key)
                .await
                .map_err(|e| format!("looking up {key}: {e}"))?;
            let Some(kv) = kv else {
                return Ok(None);
            };
            let obj = crate::protobuf::decode_from_storage(&kv.value)
                .map_err(|e| format!("decoding {key}: {e}"))?;
            Ok(Some(BoundObject::from_value(&obj)))
        })
    }
}

/// Tokens recently found valid, by the SHA-256 of the token (the tokens
/// themselves are not kept), with when that finding expires.
struct RecentlyValidated {
    ttl: Duration,
    entries: Mutex<HashMap<[u8; 32], Instant>>,
}

impl RecentlyValidated {
    fn new(ttl: Duration) -> Self {
        RecentlyValidated {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn key(token: &str) -> [u8; 32] {
        let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        let mut key = [0u8; 32];
        key.copy_from_slice(digest.as_ref());
        key
    }

    /// Whether `token` was found valid less than the TTL ago.
    fn contains(&self, token: &str) -> bool {
        let key = Self::key(token);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match entries.get(&key) {
            Some(until) if *until > Instant::now() => true,
            Some(_) => {
                entries.remove(&key);
                false
            }
            None => false,
        }
    }

    /// Remembers `token` as valid for the TTL.
    fn insert(&self, token: &str) {
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= VALIDATED_CAPACITY {
            entries.retain(|_, until| *until > now);
            if entries.len() >= VALIDATED_CAPACITY {
                entries.clear();
            }
        }
        entries.insert(Self::key(token), now + self.ttl);
    }
}

/// Validates bound service account tokens against the objects they name.
pub struct BoundTokenValidator {
    source: Arc<dyn BoundObjectSource>,
    lookup: Option<Arc<dyn BoundObjectLookup>>,
    validated: RecentlyValidated,
}

impl BoundTokenValidator {
    /// Reads bound objects from `source`.
    pub fn new(source: Arc<dyn BoundObjectSource>) -> Self {
        BoundTokenValidator {
            source,
            lookup: None,
            validated: RecentlyValidated::new(VALIDATED_TTL),
        }
    }

    /// Reads bound objects from etcd under `prefix` (`/registry`).
    pub fn over_etcd(storage: EtcdStorage, prefix: &str) -> Self {
        Self::new(Arc::new(EtcdSource::new(storage, prefix)))
    }

    /// Asks `lookup` first and the source only for what it cannot answer.
    pub fn with_lookup(mut self, lookup: Arc<dyn BoundObjectLookup>) -> Self {
        self.lookup = Some(lookup);
        self
    }

    /// Keeps tokens found valid for `ttl` instead of [`VALIDATED_TTL`]
    /// (zero: every request looks its objects up).
    pub fn with_validated_ttl(mut self, ttl: Duration) -> Self {
        self.validated = RecentlyValidated::new(ttl);
        self
    }

    /// The object `name` of `resource`; `None` when absent.
    async fn object(
        &self,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BoundObject>, String> {
        if let Some(lookup) = &self.lookup {
            if let Some(found) = lookup.lookup(resource, namespace, name).await {
                return Ok(Some(found));
            }
        }
        self.source.get(resource, namespace, name).await
    }

    /// Checks one bound object: present, same uid, not deleted too long ago.
    async fn check(
        &self,
        (resource, namespace, name): (&str, &str, &str),
        claimed_uid: &str,
        mismatch: impl FnOnce(&str) -> String,
    ) -> Result<(), String> {
        let Some(found) = self.object(resource, namespace, name).await? else {
            tracing::debug!(resource, namespace, name, "object of a bound token is gone");
            return Err(INVALIDATED.into());
        };
        if deleted_too_long_ago(found.deletion_timestamp.as_deref()) {
            return Err(INVALIDATED.into());
        }
        if !claimed_uid.is_empty() && found.uid != claimed_uid {
            return Err(mismatch(&found.uid));
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
        self.check(("serviceaccounts", ns, sa), sa_uid, |uid| {
            format!("service account UID ({uid}) does not match claim ({sa_uid})")
        })
        .await?;
        let secret = s("/secret/name");
        if !secret.is_empty() {
            let claimed = s("/secret/uid");
            self.check(
                ("secrets", ns, secret),
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
            self.check(("pods", ns, pod), claimed, |uid| {
                format!("pod UID ({uid}) does not match service account pod ref claim ({claimed})")
            })
            .await?;
        }
        let node = s("/node/name");
        if !node.is_empty() {
            let claimed = s("/node/uid");
            self.check(("nodes", "", node), claimed, |uid| {
                format!(
                    "node UID ({uid}) does not match service account node ref claim ({claimed})"
                )
            })
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
            let Some(token) = bearer_token(headers) else {
                return Ok(());
            };
            if self.validated.contains(token) {
                return Ok(());
            }
            let Some(claims) = claims_of(token) else {
                return Ok(());
            };
            if super::service_account::user_of(&claims).map(|u| u.name) != Some(user.name.clone()) {
                return Ok(());
            }
            self.validate_claims(&claims).await?;
            if !self.validated.ttl.is_zero() {
                self.validated.insert(token);
            }
            Ok(())
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
    fn metadata_of_cached_bytes() {
        let o = BoundObject::from_json(
            br#"{"kind":"Pod","metadata":{"name":"p","uid":"u1","deletionTimestamp":"2026-01-01T00:00:00Z"},"spec":{"x":[1,2]}}"#,
        )
        .expect("object");
        assert_eq!(o.uid, "u1");
        assert_eq!(
            o.deletion_timestamp.as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            BoundObject::from_json(br#"{"metadata":{}}"#),
            Some(BoundObject::default())
        );
        assert_eq!(BoundObject::from_json(b"[1]"), None);
    }

    #[test]
    fn valid_tokens_are_remembered_for_the_ttl_only() {
        let kept = RecentlyValidated::new(Duration::from_secs(60));
        assert!(!kept.contains("t1"));
        kept.insert("t1");
        assert!(kept.contains("t1"));
        assert!(!kept.contains("t2"), "another token is not valid by it");
        let expired = RecentlyValidated::new(Duration::ZERO);
        expired.insert("t1");
        assert!(!expired.contains("t1"));
        assert!(expired.entries.lock().expect("lock").is_empty());
    }

    #[test]
    fn remembered_tokens_stay_bounded() {
        let kept = RecentlyValidated::new(Duration::from_secs(60));
        for i in 0..VALIDATED_CAPACITY + 10 {
            kept.insert(&format!("token-{i}"));
        }
        let len = kept.entries.lock().expect("lock").len();
        assert!(len <= VALIDATED_CAPACITY, "{len}");
        assert!(kept.contains(&format!("token-{}", VALIDATED_CAPACITY + 9)));
    }

    #[test]
    fn claims_are_read_from_the_payload() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"kubernetes.io":{"namespace":"d"}}"#);
        let claims = claims_of(&format!("h.{payload}.s")).expect("claims");
        assert_eq!(claims["kubernetes.io"]["namespace"], "d");
        assert!(claims_of("nodots").is_none());
    }
}
