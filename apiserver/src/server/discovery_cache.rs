//! Aggregated discovery (`/api`, `/apis`) served from prepared documents:
//! what a tier serves itself is turned into a serialized
//! [`Document`](crate::endpoints::aggregated_discovery::Document) with its
//! ETag once per set of groups (a new [`Catalog`] replaces the old one
//! when routes change), and the merge with the delegate's `/apis` is kept
//! with the delegate's ETag it was made from. A request, typically the
//! aggregator's poll with `If-None-Match`, then costs a conditional request
//! to the delegate (answered 304 from its own cache) and no serialization.

use std::sync::{Arc, Mutex};

use http_body_util::BodyExt;
use serde_json::Value;

use crate::authentication::UserInfo;
use crate::body;
use crate::endpoints::aggregated_discovery::{self as ad, Document};
use crate::proxy::Delegate;
use crate::registry::catalog::Catalog;

/// This tier's own entries and their document, for one [`Catalog`].
struct Own {
    groups: Arc<Catalog>,
    items: Arc<Vec<Value>>,
    doc: Document,
}

/// The merge of [`Own`] with the delegate's document of a given ETag.
struct Merged {
    groups: Arc<Catalog>,
    delegate_etag: String,
    doc: Document,
}

/// The prepared aggregated discovery documents of one server.
#[derive(Default)]
pub struct DiscoveryCache {
    core: Mutex<Option<Arc<Own>>>,
    apis: Mutex<Option<Arc<Own>>>,
    merged: Mutex<Option<Arc<Merged>>>,
}

fn get<T>(m: &Mutex<Option<Arc<T>>>) -> Option<Arc<T>> {
    match m.lock() {
        Ok(v) => v.clone(),
        Err(p) => p.into_inner().clone(),
    }
}

fn put<T>(m: &Mutex<Option<Arc<T>>>, value: Arc<T>) {
    match m.lock() {
        Ok(mut v) => *v = Some(value),
        Err(p) => *p.into_inner() = Some(value),
    }
}

/// What the delegate answered for its aggregated `/apis`.
enum Delegated {
    /// Same document as the ETag sent.
    NotModified,
    /// A new document: its ETag (if any) and group entries.
    Changed(Option<String>, Vec<Value>),
}

impl DiscoveryCache {
    /// This server's own document of `groups`: the core group (`/api`) or
    /// its named groups (`/apis`), built once per set of groups.
    fn own(&self, groups: &Arc<Catalog>, core: bool) -> Arc<Own> {
        let slot = if core { &self.core } else { &self.apis };
        if let Some(own) = get(slot).filter(|o| Arc::ptr_eq(&o.groups, groups)) {
            return own;
        }
        let items = ad::groups_of(groups, core);
        let doc = Document::new(&ad::list(items.clone()));
        let own = Arc::new(Own {
            groups: groups.clone(),
            items: Arc::new(items),
            doc,
        });
        put(slot, own.clone());
        own
    }

    /// The document to serve for `/api` (`core`) or `/apis`: for `/apis`
    /// with a delegate, this server's groups followed by the delegate's
    /// (its own alone when the delegate cannot be read, as before).
    pub async fn document(
        &self,
        groups: &Arc<Catalog>,
        core: bool,
        delegate: Option<&Delegate>,
        user: Option<&UserInfo>,
    ) -> Document {
        let own = self.own(groups, core);
        let Some(d) = delegate.filter(|_| !core) else {
            return own.doc.clone();
        };
        let merged = get(&self.merged).filter(|m| Arc::ptr_eq(&m.groups, groups));
        let inm = merged.as_ref().map(|m| m.delegate_etag.as_str());
        match fetch(d, user, inm).await {
            Ok(Delegated::NotModified) => match merged {
                Some(m) => m.doc.clone(),
                // Not asked conditionally, so not expected; serve what is known.
                None => own.doc.clone(),
            },
            Ok(Delegated::Changed(etag, theirs)) => {
                let items = ad::merge(own.items.as_ref().clone(), theirs);
                let doc = Document::new(&ad::list(items));
                if let Some(delegate_etag) = etag {
                    put(
                        &self.merged,
                        Arc::new(Merged {
                            groups: groups.clone(),
                            delegate_etag,
                            doc: doc.clone(),
                        }),
                    );
                }
                doc
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read the delegate's aggregated /apis");
                own.doc.clone()
            }
        }
    }
}

/// GETs the delegate's aggregated `/apis` as `user`, with `If-None-Match`.
async fn fetch(
    d: &Delegate,
    user: Option<&UserInfo>,
    if_none_match: Option<&str>,
) -> Result<Delegated, String> {
    let mut b = http::Request::builder()
        .method("GET")
        .uri("/apis")
        .header(http::header::ACCEPT, ad::CONTENT_TYPE);
    if let Some(tag) = if_none_match {
        b = b.header(http::header::IF_NONE_MATCH, tag);
    }
    let req = b.body(body::empty()).map_err(|e| e.to_string())?;
    let resp = d.forward(req, user).await;
    if resp.status() == http::StatusCode::NOT_MODIFIED && if_none_match.is_some() {
        return Ok(Delegated::NotModified);
    }
    if !resp.status().is_success() {
        return Err(format!("status {}", resp.status()));
    }
    let (content_type, etag) = {
        let header = |h: http::header::HeaderName| {
            resp.headers()
                .get(h)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        (
            header(http::header::CONTENT_TYPE),
            header(http::header::ETAG),
        )
    };
    if !ad::is_aggregated(content_type.as_deref()) {
        return Err("not an aggregated discovery document".into());
    }
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    let items = ad::parse_items(&bytes).ok_or("malformed APIGroupDiscoveryList")?;
    Ok(Delegated::Changed(etag, items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn own_documents_are_built_once_per_group_set() {
        let cache = DiscoveryCache::default();
        let groups = Arc::new(Catalog::default());
        let a = cache.document(&groups, false, None, None).await;
        let b = cache.document(&groups, false, None, None).await;
        assert_eq!(a.etag(), b.etag());
        let first = cache.own(&groups, false);
        assert!(Arc::ptr_eq(&first, &cache.own(&groups, false)));
        let other = Arc::new(Catalog::default());
        assert!(!Arc::ptr_eq(&first, &cache.own(&other, false)));
        assert_eq!(a.etag(), cache.own(&other, false).doc.etag());
    }
}
