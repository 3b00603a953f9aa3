//! The objects bound service account tokens name (service accounts, secrets,
//! pods, nodes), read through kube-core's API: the aggregator stores none of
//! them and does not read another tier's etcd keys.
//!
//! A lookup first asks for `resourceVersion=0` (kube-core answers from its
//! watch cache, as upstream's informer listers); what that does not find is
//! asked again with a consistent read (upstream's live GET after a lister
//! miss), since the object may be newer than the cache. The validator keeps
//! tokens it found valid for 10 seconds, so a client's stream of requests
//! costs one pair of reads per token and period.

use std::time::Duration;

use apiserver::authentication::bound_tokens::{
    BoundObject, BoundObjectLookup, BoundObjectSource, BoundTokenValidator,
};
use apiserver::authentication::UserInfo;
use apiserver::proxy::Delegate;
use futures_util::future::BoxFuture;

use crate::state;

/// How long one read of a bound object may take before the token is
/// refused (kube-core unreachable).
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The bound token validator of the front door, reading through `delegate`.
pub fn validator(delegate: Delegate) -> BoundTokenValidator {
    let reader = std::sync::Arc::new(ApiReader {
        delegate,
        user: state::internal_user(),
    });
    BoundTokenValidator::new(reader.clone()).with_lookup(reader)
}

/// Reads bound objects from the tier behind as the aggregator's own user.
struct ApiReader {
    delegate: Delegate,
    user: UserInfo,
}

/// The path of one core/v1 object; `None` when a name could not be a path
/// segment (the claims come from a verified token, so only a bug or a
/// foreign signer gets there).
fn object_path(resource: &str, namespace: &str, name: &str) -> Option<String> {
    let segment = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':'))
    };
    if !segment(resource) || !segment(name) {
        return None;
    }
    if namespace.is_empty() {
        return Some(format!("/api/v1/{resource}/{name}"));
    }
    segment(namespace).then(|| format!("/api/v1/namespaces/{namespace}/{resource}/{name}"))
}

impl ApiReader {
    /// GETs the object at `path`: `Ok(None)` on 404.
    async fn read(&self, path: &str) -> Result<Option<BoundObject>, String> {
        let (code, body) = self
            .delegate
            .call(
                http::Method::GET,
                path,
                None,
                Some(&self.user),
                None,
                READ_TIMEOUT,
            )
            .await?;
        match code {
            200 => BoundObject::from_json(&body)
                .map(Some)
                .ok_or_else(|| format!("GET {path}: the answer is not an object")),
            404 => Ok(None),
            code => Err(format!("GET {path}: {code}")),
        }
    }
}

impl BoundObjectLookup for ApiReader {
    fn lookup<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Option<BoundObject>> {
        Box::pin(async move {
            let path = object_path(resource, namespace, name)?;
            self.read(&format!("{path}?resourceVersion=0"))
                .await
                .ok()
                .flatten()
        })
    }
}

impl BoundObjectSource for ApiReader {
    fn get<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<BoundObject>, String>> {
        Box::pin(async move {
            let path = object_path(resource, namespace, name)
                .ok_or_else(|| format!("{resource} {namespace}/{name}: not a valid name"))?;
            self.read(&path).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::object_path;

    #[test]
    fn paths_of_bound_objects() {
        assert_eq!(
            object_path("pods", "default", "web-0").as_deref(),
            Some("/api/v1/namespaces/default/pods/web-0")
        );
        assert_eq!(
            object_path("nodes", "", "node-1.example").as_deref(),
            Some("/api/v1/nodes/node-1.example")
        );
        assert_eq!(object_path("pods", "default", "a/../b"), None);
        assert_eq!(object_path("pods", "default", "a?watch=1"), None);
        assert_eq!(object_path("pods", "default", ".."), None);
        assert_eq!(object_path("pods", "de fault", "p"), None);
        assert_eq!(object_path("secrets", "default", ""), None);
    }
}
