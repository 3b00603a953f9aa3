//! events.k8s.io/v1 messages: Event.

use super::*;

/// events.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "events.v1.Event",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            mtime(2, "eventTime"),
            m(3, "series", "events.v1.EventSeries"),
            s(4, "reportingController"),
            s(5, "reportingInstance"),
            s(6, "action"),
            s(7, "reason"),
            m(8, "regarding", "core.v1.ObjectReference"),
            m(9, "related", "core.v1.ObjectReference"),
            s(10, "note"),
            s(11, "type"),
            m(12, "deprecatedSource", "core.v1.EventSource"),
            time(13, "deprecatedFirstTimestamp"),
            time(14, "deprecatedLastTimestamp"),
            int32(15, "deprecatedCount"),
        ],
    ),
    msg(
        "events.v1.EventSeries",
        &[int32p(1, "count"), mtime(2, "lastObservedTime")],
    ),
];
