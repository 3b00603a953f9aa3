//! Work estimates: how many seats a request occupies while it executes
//! (upstream's `WorkEstimator`). A LIST, and a WATCH while it sends its
//! initial events, cost one seat per 100 objects it has to go through, at
//! least 1 and at most 10; everything else costs one seat.
//!
//! The aggregator does not hold the objects, so it learns how many of each
//! resource there are from the tiers behind it: their LIST and WATCH
//! responses carry [`OBJECT_COUNT_HEADER`] (the watch cache's count), which
//! the priority-and-fairness filter records here and strips. A resource
//! never listed counts as empty (upstream's estimate for an unknown count
//! of a kind without objects: the minimum).

use std::collections::HashMap;
use std::sync::RwLock;

use crate::request::info::RequestInfo;

/// The response header with the number of stored objects of a listed
/// resource, from a tier behind the front door to it.
pub use crate::endpoints::handlers::OBJECT_COUNT_HEADER;

/// Upstream's `minimumSeats`, `maximumSeats` and `objectsPerSeat`.
pub const MINIMUM_SEATS: u32 = 1;
pub const MAXIMUM_SEATS: u32 = 10;
const OBJECTS_PER_SEAT: u64 = 100;

/// Estimates seats from the last known object counts.
#[derive(Default)]
pub struct WorkEstimator {
    counts: RwLock<HashMap<(String, String), u64>>,
}

fn query<'a>(info: &'a RequestInfo, key: &str) -> Option<&'a str> {
    info.query
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

impl WorkEstimator {
    /// Records the count of `group`/`resource` objects a tier reported.
    pub fn record(&self, group: &str, resource: &str, count: u64) {
        let mut counts = match self.counts.write() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        match counts.get_mut(&(group.to_string(), resource.to_string())) {
            Some(c) => *c = count,
            None => {
                counts.insert((group.to_string(), resource.to_string()), count);
            }
        }
    }

    fn count(&self, group: &str, resource: &str) -> u64 {
        let counts = match self.counts.read() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        counts
            .get(&(group.to_string(), resource.to_string()))
            .copied()
            .unwrap_or(0)
    }

    /// The seats `info` occupies while executing.
    pub fn seats(&self, info: &RequestInfo) -> u32 {
        if !info.is_resource_request || !info.subresource.is_empty() {
            return MINIMUM_SEATS;
        }
        let listing = match info.verb.as_str() {
            "list" => true,
            // A watch lists first when it starts without a resourceVersion
            // or asks for its initial events.
            "watch" => {
                query(info, "sendInitialEvents") == Some("true")
                    || query(info, "resourceVersion").unwrap_or("").is_empty()
            }
            _ => false,
        };
        if !listing {
            return MINIMUM_SEATS;
        }
        let stored = self.count(&info.api_group, &info.resource);
        let filtered = info
            .label_selector
            .as_deref()
            .is_some_and(|s| !s.is_empty())
            || info
                .field_selector
                .as_deref()
                .is_some_and(|s| !s.is_empty());
        let limit = query(info, "limit")
            .and_then(|l| l.parse::<u64>().ok())
            .filter(|&l| l > 0);
        // A selector means every stored object is looked at; a limit
        // without one bounds the work.
        let processed = match limit {
            Some(l) if !filtered && info.verb == "list" => l.min(stored),
            _ => stored,
        };
        let seats = processed.div_ceil(OBJECTS_PER_SEAT);
        (seats as u32).clamp(MINIMUM_SEATS, MAXIMUM_SEATS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(query: &[(&str, &str)]) -> RequestInfo {
        RequestInfo {
            is_resource_request: true,
            verb: "list".into(),
            resource: "pods".into(),
            query: query
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        }
    }

    #[test]
    fn lists_cost_by_the_objects_they_go_through() {
        let e = WorkEstimator::default();
        assert_eq!(e.seats(&list(&[])), 1);
        e.record("", "pods", 450);
        assert_eq!(e.seats(&list(&[])), 5);
        assert_eq!(e.seats(&list(&[("limit", "100")])), 1);
        e.record("", "pods", 100_000);
        assert_eq!(e.seats(&list(&[])), MAXIMUM_SEATS);
        let mut get = list(&[]);
        get.verb = "get".into();
        assert_eq!(e.seats(&get), 1);
        let mut watch = list(&[("resourceVersion", "12")]);
        watch.verb = "watch".into();
        assert_eq!(e.seats(&watch), 1);
        let mut initial = list(&[]);
        initial.verb = "watch".into();
        assert_eq!(e.seats(&initial), MAXIMUM_SEATS);
    }
}
