//! What the store's reads hand out: an object as read ([`ObjectRead`]) and
//! the one event type of the watch pipeline ([`WatchEvent`]), whichever
//! engine produced it (the watch cache, objects in their served bytes, or
//! an etcd watch, objects decoded). The handlers encode either, internal
//! consumers take the object's value; nobody asks which engine ran, as
//! upstream's `watch.Event` carries a `runtime.Object` from the cacher or
//! from etcd alike.

use std::sync::Arc;

use serde_json::Value;

use crate::apimachinery::errors::ApiError;
use crate::storage::cacher::CachedObject;

/// One object as read.
pub enum ObjectRead {
    /// In its served bytes (JSON, with the protobuf encoding made on demand).
    Encoded(Arc<CachedObject>),
    /// Decoded.
    Decoded(Value),
}

impl ObjectRead {
    /// The object as a value (served bytes are decoded; they are JSON the
    /// store wrote, so they decode; `null` otherwise).
    pub fn into_value(self) -> Value {
        match self {
            ObjectRead::Encoded(obj) => serde_json::from_slice(&obj.bytes).unwrap_or(Value::Null),
            ObjectRead::Decoded(v) => v,
        }
    }

    /// The object's `metadata.resourceVersion`, as a number.
    pub fn revision(&self) -> Option<i64> {
        match self {
            ObjectRead::Encoded(obj) => Some(obj.revision),
            ObjectRead::Decoded(v) => v
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .and_then(|rv| rv.parse().ok()),
        }
    }
}

/// What happened to the object of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// It exists now, or now matches the watch's selectors.
    Added,
    /// It changed and matched before and after.
    Modified,
    /// It is gone, or no longer matches the watch's selectors.
    Deleted,
}

impl EventType {
    /// The event's `type` on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One event of a watch.
pub enum WatchEvent {
    /// An object event.
    Object(EventType, ObjectRead),
    /// A BOOKMARK at a revision (`initial_events_end` marks the end of a
    /// streaming list: the `k8s.io/initial-events-end` annotation).
    Bookmark {
        revision: i64,
        initial_events_end: bool,
    },
    /// A terminal error, sent as an `ERROR` event with its `Status`.
    Error(ApiError),
}

impl WatchEvent {
    /// The revision the event brings its watcher to (none for errors).
    pub fn revision(&self) -> Option<i64> {
        match self {
            WatchEvent::Object(_, obj) => obj.revision(),
            WatchEvent::Bookmark { revision, .. } => Some(*revision),
            WatchEvent::Error(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_of_events() {
        let decoded =
            ObjectRead::Decoded(serde_json::json!({"metadata": {"resourceVersion": "42"}}));
        assert_eq!(
            WatchEvent::Object(EventType::Added, decoded).revision(),
            Some(42)
        );
        let bookmark = WatchEvent::Bookmark {
            revision: 7,
            initial_events_end: true,
        };
        assert_eq!(bookmark.revision(), Some(7));
        assert_eq!(WatchEvent::Error(ApiError::internal("x")).revision(), None);
        assert_eq!(EventType::Deleted.as_str(), "DELETED");
    }
}
