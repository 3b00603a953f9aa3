//! GET of one object and LIST of a collection.

use bytes::Bytes;
use http_body::Frame;
use http_body_util::StreamBody;
use serde_json::{json, Map, Value};

use super::{bytes_response, respond, shape_object, RestRequest};
use crate::apimachinery::errors::ApiError;
use crate::body::{self, BoxError, Response};
use crate::endpoints::negotiation::{Format, Negotiated, Output};
use crate::registry::cache_serving::{list_item, typed_item_prefix, CachedPage};
use crate::registry::list_encoded::EtcdListPager;
use crate::registry::read::{ListForm, ListRead, ObjectRead};
use crate::registry::store::{ListPage, Store};
use crate::registry::table;
use crate::storage::cacher::CachedObject;
use futures_util::StreamExt;
use std::sync::Arc;

/// GET `/.../<resource>/<name>[/status]`.
pub async fn get(
    rest: &RestRequest<'_>,
    namespace: &str,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let rv = rest.query.get("resourceVersion").unwrap_or("");
    Ok(
        match rest.store.read(namespace, &rest.info.name, rv).await? {
            ObjectRead::Encoded(obj) => cached_object_response(rest.store, &obj, neg),
            ObjectRead::Decoded(obj) => respond(200, &shape_object(rest.store, obj, neg), neg),
        },
    )
}

/// One object served from the cache: JSON and protobuf straight from the
/// cached bytes (no decoding, no re-encoding); other shapes decode.
fn cached_object_response(store: &Store, obj: &Arc<CachedObject>, neg: &Negotiated) -> Response {
    if neg.output == Output::Object && !neg.pretty {
        match neg.format {
            Format::Json => return bytes_response(200, "application/json", obj.bytes.clone()),
            Format::Protobuf => {
                let bytes = store.cached_protobuf(obj);
                if !bytes.is_empty() {
                    return bytes_response(200, Format::Protobuf.content_type(), bytes);
                }
            }
            Format::Yaml => {}
        }
    }
    match serde_json::from_slice::<Value>(&obj.bytes) {
        Ok(value) => respond(200, &shape_object(store, value, neg), neg),
        Err(e) => ApiError::internal(e).into_response(),
    }
}

/// The response header of a LIST with the number of objects of its
/// resource in the watch cache: how the front door's priority and fairness
/// estimates the seats of the next LIST (see `flowcontrol::estimate`); the
/// aggregator removes it.
pub const OBJECT_COUNT_HEADER: &str = "x-kubernetes-apf-object-count";

/// GET on a collection: from the watch cache when it can serve it, else etcd.
pub async fn list(
    rest: &RestRequest<'_>,
    namespace: &str,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let count = rest.store.object_count();
    let mut resp = list_objects(rest, namespace, neg).await?;
    if let Some(n) = count {
        resp.headers_mut()
            .insert(OBJECT_COUNT_HEADER, http::HeaderValue::from(n));
    }
    Ok(resp)
}

async fn list_objects(
    rest: &RestRequest<'_>,
    namespace: &str,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    let opts = rest.query.list_options()?;
    // Objects (not Tables or metadata) in JSON or protobuf are written from
    // their served bytes; a JSON list streams.
    let form = match (neg.output, neg.pretty, neg.format) {
        (Output::Object, false, Format::Json) => ListForm::Streamed,
        (Output::Object, false, Format::Protobuf) => ListForm::Encoded,
        _ => ListForm::Decoded,
    };
    Ok(match rest.store.read_list(namespace, &opts, form).await? {
        ListRead::Encoded(page) => cached_list_response(rest.store, page, neg),
        ListRead::Streamed(pager) => streamed_etcd_list(rest.store, pager).await?,
        ListRead::Decoded(page) => respond(200, &list_body(rest.store, page, neg), neg),
    })
}

/// A list served from the cache. Plain JSON is streamed item by item from
/// the cached bytes (no copy, no re-encoding); other shapes decode.
fn cached_list_response(store: &Store, page: CachedPage, neg: &Negotiated) -> Response {
    let list_page = ListPage {
        items: Vec::new(),
        resource_version: page.resource_version,
        continue_token: page.continue_token.clone(),
        remaining_item_count: page.remaining_item_count,
    };
    if neg.output == Output::Object && neg.format == Format::Protobuf {
        return cached_protobuf_list(store, page, &list_page);
    }
    if neg.output != Output::Object || neg.pretty || neg.format != Format::Json {
        let items = page
            .objects
            .iter()
            .filter_map(|o| serde_json::from_slice(&o.bytes).ok())
            .collect();
        let list_page = ListPage { items, ..list_page };
        return respond(200, &list_body(store, list_page, neg), neg);
    }
    let head = json_list_head(store, &list_page);
    let typed_prefix: Option<Arc<[u8]>> = typed_item_prefix(&store.def).map(Into::into);
    let frames = std::iter::once(head)
        .chain(json_item_parts(page.objects, typed_prefix, false))
        .chain(std::iter::once(Bytes::from_static(b"]}\n")));
    let frames =
        body::coalesce(frames, body::COALESCED_FRAME).map(|b| Ok::<_, BoxError>(Frame::data(b)));
    json_stream_response(StreamBody::new(futures_util::stream::iter(frames)))
}

/// A JSON LIST without `limit` that etcd answers, sent page by page as the
/// client reads it: the first etcd page is read before answering (so a
/// compacted revision or an unavailable etcd still gets its status), each
/// later one only when the previous has been written. A failure after the
/// first page ends the body early, which clients see as a broken response,
/// never as a short list.
async fn streamed_etcd_list(store: &Store, mut pager: EtcdListPager) -> Result<Response, ApiError> {
    let first = pager.next_page().await?.unwrap_or_default();
    let list_page = ListPage {
        items: Vec::new(),
        resource_version: pager.revision().unwrap_or_default(),
        continue_token: None,
        remaining_item_count: None,
    };
    let head = json_list_head(store, &list_page);
    let typed_prefix: Option<Arc<[u8]>> = typed_item_prefix(&store.def).map(Into::into);
    let written = first.len();
    let first = std::iter::once(head).chain(json_item_parts(first, typed_prefix.clone(), false));
    let first: Vec<Result<Frame<Bytes>, BoxError>> = body::coalesce(first, body::COALESCED_FRAME)
        .map(|b| Ok(Frame::data(b)))
        .collect();
    // The state: the pager, and how many items have been written.
    let rest = futures_util::stream::unfold(Some((pager, written)), move |state| {
        let typed_prefix = typed_prefix.clone();
        async move {
            let (mut pager, mut written) = state?;
            let frames: Vec<Result<Frame<Bytes>, BoxError>> = match pager.next_page().await {
                Ok(None) => return None,
                Ok(Some(objects)) => {
                    let leading_comma = written > 0;
                    written += objects.len();
                    let parts = json_item_parts(objects, typed_prefix, leading_comma);
                    body::coalesce(parts, body::COALESCED_FRAME)
                        .map(|b| Ok(Frame::data(b)))
                        .collect()
                }
                Err(e) => {
                    tracing::warn!(error = %e.message, "LIST from etcd failed after the first page");
                    return Some((vec![Err(BoxError::from(e.message))], None));
                }
            };
            Some((frames, Some((pager, written))))
        }
    })
    .flat_map(futures_util::stream::iter);
    let tail = futures_util::stream::once(async { Ok(Frame::data(Bytes::from_static(b"]}\n"))) });
    let frames = futures_util::stream::iter(first).chain(rest).chain(tail);
    Ok(json_stream_response(StreamBody::new(frames)))
}

/// `{"kind":"<Kind>List","apiVersion":…,"metadata":{…},"items":[`: the
/// head of a JSON list whose items follow.
fn json_list_head(store: &Store, list_page: &ListPage) -> Bytes {
    let head = json!({
        "kind": format!("{}List", store.def.kind),
        "apiVersion": store.def.api_version(),
        "metadata": list_meta(list_page),
    });
    let mut head = serde_json::to_vec(&head).unwrap_or_default();
    // Reopen the object to append the items array.
    head.pop();
    head.extend_from_slice(b",\"items\":[");
    Bytes::from(head)
}

/// The parts of JSON list items, comma-separated (and after a comma when
/// `leading_comma`), from the cached bytes without copies.
fn json_item_parts(
    objects: Vec<Arc<CachedObject>>,
    typed_prefix: Option<Arc<[u8]>>,
    leading_comma: bool,
) -> impl Iterator<Item = Bytes> {
    objects.into_iter().enumerate().flat_map(move |(i, o)| {
        let sep = (i > 0 || leading_comma).then(|| Bytes::from_static(b","));
        let [open, rest] = list_item(&o.bytes, typed_prefix.as_deref());
        sep.into_iter().chain([open, rest])
    })
}

/// A `200` JSON response streamed from `body`.
fn json_stream_response<B>(body: B) -> Response
where
    B: http_body::Body<Data = Bytes, Error = BoxError> + Send + 'static,
{
    http::Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body::boxed(body))
        .unwrap_or_else(|_| ApiError::internal("building list response").into_response())
}

/// A protobuf list from the cache: each object's protobuf encoding is made
/// once and shared; the list is streamed from those bytes without copies.
fn cached_protobuf_list(store: &Store, page: CachedPage, list_page: &ListPage) -> Response {
    let items: Vec<Bytes> = page
        .objects
        .iter()
        .map(|o| store.cached_protobuf(o))
        .collect();
    if items.iter().any(Bytes::is_empty) {
        return ApiError::internal("an object cannot be encoded as protobuf").into_response();
    }
    let list_kind = format!("{}List", store.def.kind);
    let chunks = match crate::protobuf::encode_list(
        &store.def.api_version(),
        &list_kind,
        &list_meta(list_page),
        &items,
    ) {
        Ok(chunks) => chunks,
        Err(e) => return ApiError::internal(e).into_response(),
    };
    let frames = body::coalesce(chunks.into_iter(), body::COALESCED_FRAME)
        .map(|b| Ok::<_, BoxError>(Frame::data(b)));
    http::Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, Format::Protobuf.content_type())
        .body(body::boxed(StreamBody::new(futures_util::stream::iter(
            frames,
        ))))
        .unwrap_or_else(|_| ApiError::internal("building list response").into_response())
}

/// `metadata` of a list.
pub fn list_meta(page: &ListPage) -> Value {
    let mut m = Map::new();
    m.insert(
        "resourceVersion".into(),
        Value::String(page.resource_version.to_string()),
    );
    if let Some(c) = &page.continue_token {
        m.insert("continue".into(), Value::String(c.clone()));
    }
    if let Some(r) = page.remaining_item_count {
        m.insert("remainingItemCount".into(), json!(r));
    }
    Value::Object(m)
}

/// A list response in the negotiated shape. Items of built-in lists carry
/// no `kind`/`apiVersion`, as upstream serializes them; custom resources
/// keep theirs.
pub fn list_body(store: &Store, page: ListPage, neg: &Negotiated) -> Value {
    let meta = list_meta(&page);
    let typed = typed_item_prefix(&store.def).is_some();
    match neg.output {
        Output::Table => table::table(&store.def, &page.items, meta, neg.include_object, true),
        Output::PartialObjectMetadataList | Output::PartialObjectMetadata => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "items": page.items.iter().map(table::partial_object_metadata).collect::<Vec<_>>(),
        }),
        Output::Object => {
            let items: Vec<Value> = page
                .items
                .into_iter()
                .map(|mut o| {
                    if let (true, Value::Object(m)) = (typed, &mut o) {
                        m.remove("kind");
                        m.remove("apiVersion");
                    }
                    o
                })
                .collect();
            json!({
                "kind": format!("{}List", store.def.kind),
                "apiVersion": store.def.api_version(),
                "metadata": meta,
                "items": items,
            })
        }
    }
}
