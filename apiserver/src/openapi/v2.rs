//! Merging `/openapi/v2` documents along the delegation chain: a tier with a
//! delegate serves its own document merged with the delegate's (kube-core
//! adds the CRD tier's custom resources, as upstream's kube-apiserver
//! publishes CRD schemas beside the built-ins). The merged document is kept
//! with the delegate's ETag it was made from, so a request whose delegate
//! answers 304 costs no parsing or serialization.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::BodyExt;
use serde_json::Value;

use crate::authentication::UserInfo;
use crate::body::{self, Response};
use crate::proxy::Delegate;

/// `into` with every path, definition, parameter and response of `from`
/// that `into` lacks (what `into` has wins, as upstream ignores conflicting
/// paths).
pub fn merge(into: &mut Value, from: &Value) {
    for section in ["paths", "definitions", "parameters", "responses"] {
        let Some(theirs) = from.get(section).and_then(Value::as_object) else {
            continue;
        };
        if !into.get(section).is_some_and(Value::is_object) {
            into[section] = Value::Object(Default::default());
        }
        if let Some(mine) = into.get_mut(section).and_then(Value::as_object_mut) {
            for (k, v) in theirs {
                mine.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

/// The strong ETag (quoted SHA-512, upper-case hex) of a document.
pub fn etag_of(bytes: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA512, bytes);
    let hex: String = d.as_ref().iter().map(|b| format!("{b:02X}")).collect();
    format!("\"{hex}\"")
}

/// The media types of the protobuf form (`@` is the one kubectl sends).
const PROTOBUF_TYPES: &[&str] = &[
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
];

/// The protobuf form of the last `/openapi/v2` document served, by its JSON
/// ETag, so that a document is encoded once per version. Whoever serves a
/// document holds one.
#[derive(Default)]
pub struct ProtobufForm {
    last: Mutex<Option<(String, Bytes, String)>>,
}

impl ProtobufForm {
    /// The protobuf form of `bytes` (whose ETag is `etag`) and its own ETag;
    /// `None` when `bytes` is not a JSON document.
    fn of(&self, bytes: &Bytes, etag: &str) -> Option<(Bytes, String)> {
        if let Ok(last) = self.last.lock() {
            if let Some((e, pb, pb_etag)) = last.as_ref() {
                if e == etag {
                    return Some((pb.clone(), pb_etag.clone()));
                }
            }
        }
        let doc: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let pb = Bytes::from(super::v2_proto::encode(&doc));
        let pb_etag = etag_of(&pb);
        if let Ok(mut last) = self.last.lock() {
            *last = Some((etag.to_string(), pb.clone(), pb_etag.clone()));
        }
        Some((pb, pb_etag))
    }
}

/// A `/openapi/v2` answer in JSON, or in protobuf when `accept` asks for
/// it (each form with its own ETag, `Vary: Accept`, as upstream); 304 when
/// `if_none_match` names the ETag. `protobuf` is the server's memo of the
/// document's protobuf form.
pub fn respond(
    bytes: &Bytes,
    etag: &str,
    if_none_match: Option<&str>,
    accept: Option<&str>,
    protobuf: &ProtobufForm,
) -> Response {
    let wants_pb = accept.is_some_and(|a| {
        a.split(',')
            .any(|r| PROTOBUF_TYPES.iter().any(|t| r.trim().starts_with(t)))
    });
    let (bytes, etag, content_type) = match wants_pb.then(|| protobuf.of(bytes, etag)).flatten() {
        // The `.v1.0` form: Go cannot parse the `@` as a media type.
        Some((pb, pb_etag)) => (pb, pb_etag, PROTOBUF_TYPES[1]),
        None => (bytes.clone(), etag.to_string(), "application/json"),
    };
    let etag = etag.as_str();
    let not_modified = if_none_match.is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    http::Response::builder()
        .status(if not_modified { 304 } else { 200 })
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::VARY, "Accept")
        .header(http::header::CACHE_CONTROL, "no-cache, private")
        .header(http::header::ETAG, etag)
        .body(body::full(if not_modified {
            Bytes::new()
        } else {
            bytes.clone()
        }))
        .unwrap_or_else(|_| {
            crate::apimachinery::errors::ApiError::internal("building response").into_response()
        })
}

/// One merged document and the delegate ETag it was made from.
struct Entry {
    delegate_etag: String,
    bytes: Bytes,
    etag: String,
}

/// This tier's `/openapi/v2` merged with its delegate's, cached (see the
/// module documentation).
#[derive(Default)]
pub struct MergedV2 {
    cached: Mutex<Option<Arc<Entry>>>,
    /// The merged document's protobuf form.
    pub protobuf: ProtobufForm,
}

impl MergedV2 {
    fn current(&self) -> Option<Arc<Entry>> {
        match self.cached.lock() {
            Ok(c) => c.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// The document made of `own` (this tier's `/openapi/v2` bytes) and
    /// the delegate's, as `(bytes, etag)`; `None` when the delegate has no
    /// usable document (the caller then serves its own alone).
    pub async fn document(
        &self,
        own: &Bytes,
        d: &Delegate,
        user: Option<&UserInfo>,
    ) -> Option<(Bytes, String)> {
        let cached = self.current();
        let mut b = http::Request::builder()
            .method("GET")
            .uri("/openapi/v2")
            .header(http::header::ACCEPT, "application/json");
        if let Some(c) = &cached {
            b = b.header(http::header::IF_NONE_MATCH, c.delegate_etag.as_str());
        }
        let req = b.body(body::empty()).ok()?;
        let resp = d.forward(req, user).await;
        let status = resp.status().as_u16();
        if status == 304 {
            let c = cached?;
            return Some((c.bytes.clone(), c.etag.clone()));
        }
        if status != 200 {
            tracing::debug!(status, "the delegate serves no OpenAPI v2 document");
            return None;
        }
        let delegate_etag = resp
            .headers()
            .get(http::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = resp.into_body().collect().await.ok()?.to_bytes();
        if let (Some(c), Some(tag)) = (&cached, &delegate_etag) {
            if *tag == c.delegate_etag {
                return Some((c.bytes.clone(), c.etag.clone()));
            }
        }
        let theirs: Value = serde_json::from_slice(&bytes).ok()?;
        theirs.get("swagger")?;
        let mut doc: Value = serde_json::from_slice(own).ok()?;
        merge(&mut doc, &theirs);
        let merged = Bytes::from(serde_json::to_vec(&doc).ok()?);
        let etag = etag_of(&merged);
        if let Some(tag) = delegate_etag {
            let entry = Arc::new(Entry {
                delegate_etag: tag,
                bytes: merged.clone(),
                etag: etag.clone(),
            });
            match self.cached.lock() {
                Ok(mut c) => *c = Some(entry),
                Err(p) => *p.into_inner() = Some(entry),
            }
        }
        Some((merged, etag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_document_wins_conflicts_and_gains_the_rest() {
        let mut local = json!({"swagger": "2.0",
            "paths": {"/api/v1/pods": {"get": {}}},
            "definitions": {"io.k8s.api.core.v1.Pod": {"type": "object"}}});
        let remote = json!({"swagger": "2.0",
            "paths": {"/api/v1/pods": {"post": {}}, "/apis/example.com/v1/widgets": {"get": {}}},
            "definitions": {"io.k8s.api.core.v1.Pod": {"type": "string"},
                            "com.example.v1.Widget": {"type": "object"}}});
        merge(&mut local, &remote);
        assert_eq!(local["paths"]["/api/v1/pods"], json!({"get": {}}));
        assert!(local["paths"]["/apis/example.com/v1/widgets"].is_object());
        assert_eq!(
            local["definitions"]["io.k8s.api.core.v1.Pod"]["type"],
            "object"
        );
        assert!(local["definitions"]["com.example.v1.Widget"].is_object());
    }

    #[test]
    fn etags_answer_if_none_match() {
        let bytes = Bytes::from_static(b"{}");
        let tag = etag_of(&bytes);
        let form = ProtobufForm::default();
        assert_eq!(respond(&bytes, &tag, Some(&tag), None, &form).status(), 304);
        assert_eq!(
            respond(&bytes, &tag, Some("\"other\""), None, &form).status(),
            200
        );
        assert_eq!(respond(&bytes, &tag, None, None, &form).status(), 200);
        let protobuf = Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
        let pb = respond(&bytes, &tag, None, protobuf, &form);
        assert_eq!(
            pb.headers()[http::header::CONTENT_TYPE],
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        );
        assert_ne!(pb.headers()[http::header::ETAG], tag.as_str());
        // The second answer comes from the memo, with the same ETag.
        let again = respond(&bytes, &tag, None, protobuf, &form);
        assert_eq!(
            again.headers()[http::header::ETAG],
            pb.headers()[http::header::ETAG]
        );
    }
}
