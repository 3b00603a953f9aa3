//! WATCH as a streamed event stream, flushed as each event happens, so a
//! watch through several proxies delivers every event at once: JSON, one
//! `{"type":…,"object":…}` per line, or protobuf
//! (`application/vnd.kubernetes.protobuf;stream=watch`), upstream's
//! length-prefixed `WatchEvent` frames. YAML has no stream framing
//! upstream, so a YAML-only watch is 406.

use crate::endpoints::metrics::WatchEventMetrics;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream;
use http_body::Frame;
use http_body_util::StreamBody;
use rand::Rng;
use serde_json::json;

use super::RestRequest;
use crate::apimachinery::errors::ApiError;
use crate::body::{self, BoxError, Response};
use crate::endpoints::negotiation::{Format, Negotiated, Output};
use crate::registry::store::Store;
use crate::registry::table;
use crate::registry::watch::WatchOptions;
use crate::registry::watch_event::{ObjectRead, WatchEvent};

/// Upstream's `--min-request-timeout`: watches without `timeoutSeconds` end
/// after a random time between one and two times this.
const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

/// Serves `?watch=true` (or the legacy `/watch/` path).
pub async fn serve_watch(
    rest: &RestRequest<'_>,
    namespace: &str,
    neg: &Negotiated,
) -> Result<Response, ApiError> {
    if neg.format == Format::Yaml {
        return Err(ApiError::not_acceptable(&[
            "application/json",
            crate::protobuf::WATCH_CONTENT_TYPE,
        ]));
    }
    let mut list = rest.query.list_options_for(true)?;
    if !rest.info.name.is_empty() && list.field_selector.is_none() {
        // legacy /watch/<resource>/<name>
        list.field_selector = Some(
            crate::apimachinery::fields::FieldSelector::parse(&format!(
                "metadata.name={}",
                rest.info.name
            ))
            .map_err(ApiError::bad_request)?,
        );
    }
    let timeout = match rest.query.int("timeoutSeconds")? {
        Some(s) if s > 0 => Duration::from_secs(s as u64),
        _ => {
            let factor: f64 = rand::rng().random_range(1.0..2.0);
            MIN_REQUEST_TIMEOUT.mul_f64(factor)
        }
    };
    let send_initial_events = match rest.query.get("sendInitialEvents") {
        Some("true") | Some("1") => Some(true),
        Some("false") | Some("0") => Some(false),
        _ => None,
    };
    let allow_bookmarks = rest.query.flag("allowWatchBookmarks");
    let opts = WatchOptions {
        list,
        allow_bookmarks,
        send_initial_events,
        timeout: Some(timeout),
    };
    crate::registry::watch::validate_watch_options(&opts)?;
    let ending = Ending {
        termination: rest.termination.clone(),
        allow_bookmarks,
        last_revision: None,
        ended: false,
    };
    let rx = rest.store.watch(namespace, opts).await?;
    Ok(watch_response(rest.store.clone(), rx, *neg, ending))
}

/// How a watch ends when its server shuts down: with a BOOKMARK at the last
/// revision it sent (if the client allowed bookmarks and anything was
/// sent), after which the stream ends cleanly and the client resumes from
/// there. Events still queued are not sent: the client gets them from the
/// server it resumes on.
struct Ending {
    termination: Option<crate::request::WatchTermination>,
    allow_bookmarks: bool,
    last_revision: Option<i64>,
    ended: bool,
}

impl Ending {
    /// Resolves when the server shuts down (never without a signal).
    async fn terminated(&mut self) {
        match &mut self.termination {
            Some(t) => t.wait().await,
            None => std::future::pending().await,
        }
    }

    /// Marks the watch ended; the revision of its final BOOKMARK, if one is
    /// sent.
    fn final_bookmark(&mut self) -> Option<i64> {
        self.ended = true;
        self.last_revision.filter(|_| self.allow_bookmarks)
    }
}

/// The object of a BOOKMARK event at `revision`.
fn bookmark_object(
    def: &crate::registry::resource::ResourceDef,
    revision: &str,
    initial_events_end: bool,
) -> serde_json::Value {
    let mut object = json!({
        "kind": def.kind,
        "apiVersion": def.api_version(),
        "metadata": { "resourceVersion": revision, "creationTimestamp": null },
    });
    if initial_events_end {
        crate::apimachinery::meta::set(
            &mut object,
            "annotations",
            json!({"k8s.io/initial-events-end": "true"}),
        );
    }
    object
}

/// The `apiserver_watch_events_*` counters of the watched resource.
fn event_metrics(def: &crate::registry::resource::ResourceDef) -> WatchEventMetrics {
    WatchEventMetrics::of(&def.group, &def.version, &def.resource)
}

fn stream_response(
    frames: impl futures_util::Stream<Item = Result<Frame<Bytes>, BoxError>> + Send + 'static,
    format: Format,
) -> Response {
    let content_type = match format {
        Format::Protobuf => crate::protobuf::WATCH_CONTENT_TYPE,
        _ => "application/json",
    };
    http::Response::builder()
        .status(200)
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::CACHE_CONTROL, "no-cache, private")
        .body(body::boxed(StreamBody::new(frames)))
        .unwrap_or_else(|_| ApiError::internal("building watch response").into_response())
}

/// The response of a watch: each event one frame. An object in its served
/// bytes (from the cache) is copied once into the frame around its envelope
/// (its JSON, or its protobuf encoded once and shared by every watcher); a
/// decoded one (from etcd), and every other output (Tables, partial
/// metadata), is encoded here. One frame per event matters: every frame
/// becomes its own chunk, TLS record and write at this tier and again at
/// each proxy in front of it, so three frames per event would triple the
/// syscalls and records of a fan-out to many watchers.
fn watch_response(
    store: Store,
    rx: tokio::sync::mpsc::Receiver<WatchEvent>,
    neg: Negotiated,
    ending: Ending,
) -> Response {
    let mut first = true;
    let sent = event_metrics(&store.def);
    // The store travels in the state: nothing is cloned per event.
    let frames = stream::unfold((rx, ending, store), move |(mut rx, mut ending, store)| {
        let headers = std::mem::replace(&mut first, false);
        let sent = sent.clone();
        async move {
            let def = &store.def;
            if ending.ended {
                return None;
            }
            let ev = tokio::select! {
                biased;
                _ = ending.terminated() => WatchEvent::Bookmark {
                    revision: ending.final_bookmark()?,
                    initial_events_end: false,
                },
                ev = rx.recv() => {
                    let ev = ev?;
                    if let Some(revision) = ev.revision() {
                        ending.last_revision = Some(revision);
                    }
                    ev
                }
            };
            let frame = match ev {
                WatchEvent::Object(type_, ObjectRead::Encoded(obj))
                    if neg.output == Output::Object && neg.format == Format::Protobuf =>
                {
                    // Encoded once per object, shared by every watcher.
                    let object = store.cached_protobuf(&obj);
                    if object.is_empty() {
                        let error = ApiError::internal("an object cannot be encoded as protobuf");
                        encode_event(def, "ERROR", error.to_status(), &neg, headers)
                    } else {
                        let mut frame =
                            crate::protobuf::watch_frame_head(type_.as_str(), object.len());
                        frame.extend_from_slice(&object);
                        Bytes::from(frame)
                    }
                }
                WatchEvent::Object(type_, ObjectRead::Encoded(obj))
                    if neg.output == Output::Object =>
                {
                    json_watch_frame(type_.as_str(), &obj.bytes)
                }
                WatchEvent::Object(type_, obj) => {
                    encode_event(def, type_.as_str(), obj.into_value(), &neg, headers)
                }
                WatchEvent::Bookmark {
                    revision,
                    initial_events_end,
                } => {
                    let object = bookmark_object(def, &revision.to_string(), initial_events_end);
                    encode_event(def, "BOOKMARK", object, &neg, headers)
                }
                WatchEvent::Error(e) => encode_event(def, "ERROR", e.to_status(), &neg, headers),
            };
            sent.sent(frame.len());
            Some((Ok::<_, BoxError>(Frame::data(frame)), (rx, ending, store)))
        }
    });
    stream_response(frames, neg.format)
}

/// `{"type":"<type_>","object":<object>}` and a newline, in one buffer.
fn json_watch_frame(type_: &str, object: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(object.len() + type_.len() + 24);
    frame.extend_from_slice(b"{\"type\":\"");
    frame.extend_from_slice(type_.as_bytes());
    frame.extend_from_slice(b"\",\"object\":");
    frame.extend_from_slice(object);
    frame.extend_from_slice(b"}\n");
    Bytes::from(frame)
}

/// One event's frame, its object encoded for the negotiated output.
fn encode_event(
    def: &crate::registry::resource::ResourceDef,
    type_: &str,
    object: serde_json::Value,
    neg: &Negotiated,
    headers: bool,
) -> Bytes {
    let object = match (neg.output, type_) {
        (_, "ERROR") | (Output::Object, _) => object,
        (Output::Table, "BOOKMARK") => {
            let rv = crate::apimachinery::meta::resource_version(&object).to_string();
            table::table(
                def,
                &[],
                json!({ "resourceVersion": rv }),
                neg.include_object,
                false,
            )
        }
        (Output::Table, _) => {
            let rv = crate::apimachinery::meta::resource_version(&object).to_string();
            table::table(
                def,
                &[object],
                json!({ "resourceVersion": rv }),
                neg.include_object,
                headers,
            )
        }
        (Output::PartialObjectMetadata | Output::PartialObjectMetadataList, _) => {
            table::partial_object_metadata(&object)
        }
    };
    if neg.format == Format::Protobuf {
        let (type_, encoded) = match crate::protobuf::encode_object(&object) {
            Ok(bytes) => (type_, bytes),
            Err(e) => (
                "ERROR",
                crate::protobuf::encode_object(&ApiError::internal(e).to_status())
                    .unwrap_or_default(),
            ),
        };
        let mut frame = crate::protobuf::watch_frame_head(type_, encoded.len());
        frame.extend_from_slice(&encoded);
        return Bytes::from(frame);
    }
    let mut bytes =
        serde_json::to_vec(&json!({ "type": type_, "object": object })).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_watch_event_is_one_frame() {
        let object = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"}}"#;
        let frame = json_watch_frame("MODIFIED", object);
        assert!(frame.ends_with(b"}\n"));
        let event: serde_json::Value =
            serde_json::from_slice(&frame[..frame.len() - 1]).expect("one JSON document");
        assert_eq!(event["type"], "MODIFIED");
        assert_eq!(event["object"]["metadata"]["name"], "c");
    }
}
