//! Delegated authentication of bearer tokens: ask the cluster with a
//! TokenReview, as upstream's aggregated API servers do
//! (`--authentication-kubeconfig`). Answers, good and bad, are cached for
//! `ttl` (upstream's default: 10 s) under the token's SHA-256, so a client's
//! token costs one review per ten seconds. A review that fails is not
//! cached and leaves the request unauthenticated.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::UserInfo;
use crate::authorization::delegating::ReviewClient;

/// Upstream's default TTL of cached token reviews.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);
const MAX_CACHED: usize = 10_000;

/// Authenticates bearer tokens with TokenReviews.
pub struct TokenReviewAuthenticator {
    client: Arc<dyn ReviewClient>,
    audiences: Vec<String>,
    ttl: Duration,
    cache: Mutex<HashMap<[u8; 32], (Result<UserInfo, String>, Instant)>>,
}

impl TokenReviewAuthenticator {
    /// Reviews through `client`, asking for `audiences` (empty: the
    /// cluster's default audiences).
    pub fn new(client: Arc<dyn ReviewClient>, audiences: Vec<String>) -> Self {
        TokenReviewAuthenticator {
            client,
            audiences,
            ttl: DEFAULT_TTL,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Caches answers for `ttl` instead (zero: not cached).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    fn key(token: &str) -> [u8; 32] {
        let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        let mut k = [0u8; 32];
        k.copy_from_slice(d.as_ref());
        k
    }

    /// The user `token` belongs to, or why it is not accepted.
    pub async fn review(&self, token: &str) -> Result<UserInfo, String> {
        let key = Self::key(token);
        if let Ok(cache) = self.cache.lock() {
            if let Some((answer, until)) = cache.get(&key) {
                if Instant::now() < *until {
                    return answer.clone();
                }
            }
        }
        let mut spec = json!({"token": token});
        if !self.audiences.is_empty() {
            spec["audiences"] = json!(self.audiences);
        }
        let review = json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": spec,
        });
        let answer = match self
            .client
            .post_json("/apis/authentication.k8s.io/v1/tokenreviews", &review)
            .await
        {
            Ok((200 | 201, v)) => user_of(v.get("status").unwrap_or(&Value::Null)),
            Ok((code, v)) => {
                let msg = v.get("message").and_then(Value::as_str).unwrap_or("");
                return Err(format!("TokenReview failed with status {code}: {msg}"));
            }
            Err(e) => return Err(format!("TokenReview failed: {e}")),
        };
        if self.ttl.is_zero() {
            return answer;
        }
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
            cache.insert(key, (answer.clone(), Instant::now() + self.ttl));
        }
        answer
    }
}

/// The user a TokenReview's status describes.
pub fn user_of(status: &Value) -> Result<UserInfo, String> {
    if status.get("authenticated").and_then(Value::as_bool) != Some(true) {
        let e = status.get("error").and_then(Value::as_str).unwrap_or("");
        return Err(if e.is_empty() {
            "token not authenticated".into()
        } else {
            e.to_string()
        });
    }
    let u = status.get("user").cloned().unwrap_or(Value::Null);
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let extra: BTreeMap<String, Vec<String>> = u
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), strings(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    Ok(UserInfo {
        name: u
            .get("username")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        uid: u
            .get("uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        groups: strings(u.get("groups")),
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_to_user() {
        let u = user_of(&json!({"authenticated": true, "user": {
            "username": "system:serviceaccount:ns:sa", "uid": "1",
            "groups": ["system:serviceaccounts"], "extra": {"k": ["v"]}}}))
        .unwrap();
        assert_eq!(u.name, "system:serviceaccount:ns:sa");
        assert_eq!(u.extra["k"], ["v"]);
        assert_eq!(
            user_of(&json!({"authenticated": false, "error": "expired"})),
            Err("expired".to_string())
        );
    }
}
