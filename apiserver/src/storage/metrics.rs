//! The storage metrics of upstream's `storage/etcd3/metrics` and
//! `storage/cacher/metrics`, with their names and labels:
//!
//! - `etcd_request_duration_seconds`, `etcd_requests_total` and
//!   `etcd_request_errors_total` per operation, group and resource, for every
//!   call to etcd ([`crate::storage::EtcdStorage`] funnels them all through one
//!   function);
//! - `apiserver_watch_cache_events_received_total`,
//!   `apiserver_watch_cache_events_dispatched_total`,
//!   `apiserver_watch_cache_initializations_total`,
//!   `apiserver_watch_cache_resource_version`, per group and resource;
//! - `apiserver_storage_objects` (by `resource.group`, as upstream) and
//!   `apiserver_resource_objects` (by group and resource), read from the watch
//!   caches when scraped.
//!
//! Which group and resource a key belongs to is learnt from the stores: each
//! names its key prefix once ([`ResourceNames::name`]).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock, Weak};

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts};

use crate::metrics::register;

/// The group and resource of a key prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupResource {
    pub group: Arc<str>,
    pub resource: Arc<str>,
}

impl GroupResource {
    /// Upstream's `GroupResource.String()`: `pods`, `deployments.apps`.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// Key prefix → group and resource, filled by the stores of one storage.
#[derive(Default)]
pub struct ResourceNames(RwLock<HashMap<String, GroupResource>>);

impl ResourceNames {
    /// Records that keys under `prefix` (`/registry/pods/`) hold `group`'s
    /// `resource`.
    pub fn name(&self, prefix: &str, group: &str, resource: &str) {
        let prefix = format!("{}/", prefix.trim_end_matches('/'));
        let names = GroupResource {
            group: group.into(),
            resource: resource.into(),
        };
        match self.0.write() {
            Ok(mut m) => m.insert(prefix, names),
            Err(p) => p.into_inner().insert(prefix, names),
        };
    }

    /// The group and resource of `key` (an object's key or a list prefix),
    /// or empty ones when no store named its prefix. A resource's prefix is
    /// two segments (`/registry/pods/`) or three (`/registry/apps/...`
    /// style `/registry/<group>/<resource>/`).
    pub fn of(&self, key: &str) -> GroupResource {
        let map = match self.0.read() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if map.is_empty() {
            return GroupResource::default();
        }
        let mut ends = key.match_indices('/').map(|(i, _)| i);
        let (_, second, third, fourth) = (ends.next(), ends.next(), ends.next(), ends.next());
        for end in [third, fourth].into_iter().flatten() {
            if let Some(names) = map.get(&key[..=end]) {
                return names.clone();
            }
        }
        // A list prefix without its trailing slash (`/registry/pods`).
        if second.is_some() && third.is_none() {
            if let Some(names) = map.get(&format!("{key}/")) {
                return names.clone();
            }
        }
        GroupResource::default()
    }
}

struct EtcdMetrics {
    duration: HistogramVec,
    total: IntCounterVec,
    errors: IntCounterVec,
}

fn etcd_metrics() -> &'static EtcdMetrics {
    static M: OnceLock<EtcdMetrics> = OnceLock::new();
    M.get_or_init(|| {
        let labels = ["operation", "group", "resource"];
        EtcdMetrics {
            duration: register(
                HistogramVec::new(
                    HistogramOpts::new(
                        "etcd_request_duration_seconds",
                        "Etcd request latency in seconds for each operation and object type.",
                    )
                    .buckets(crate::metrics::LATENCY_BUCKETS.to_vec()),
                    &labels,
                )
                .expect("static metric definition"),
            ),
            total: register(
                IntCounterVec::new(
                    Opts::new(
                        "etcd_requests_total",
                        "Etcd request counts for each operation and object type.",
                    ),
                    &labels,
                )
                .expect("static metric definition"),
            ),
            errors: register(
                IntCounterVec::new(
                    Opts::new(
                        "etcd_request_errors_total",
                        "Etcd failed request counts for each operation and object type.",
                    ),
                    &labels,
                )
                .expect("static metric definition"),
            ),
        }
    })
}

/// Records one etcd call.
pub fn etcd_request(operation: &str, of: &GroupResource, ok: bool, elapsed: std::time::Duration) {
    let m = etcd_metrics();
    let labels = [operation, &of.group, &of.resource];
    m.duration
        .with_label_values(&labels)
        .observe(elapsed.as_secs_f64());
    m.total.with_label_values(&labels).inc();
    if !ok {
        m.errors.with_label_values(&labels).inc();
    }
}

/// The counters of one watch cache, resolved once when it starts.
pub struct WatchCacheMetrics {
    pub events_received: prometheus::IntCounter,
    pub events_dispatched: prometheus::IntCounter,
    pub initializations: prometheus::IntCounter,
    pub resource_version: prometheus::IntGauge,
}

struct CacheVecs {
    received: IntCounterVec,
    dispatched: IntCounterVec,
    initializations: IntCounterVec,
    resource_version: IntGaugeVec,
}

fn cache_vecs() -> &'static CacheVecs {
    static M: OnceLock<CacheVecs> = OnceLock::new();
    M.get_or_init(|| {
        let labels = ["group", "resource"];
        let counter = |name: &str, help: &str| {
            register(
                IntCounterVec::new(Opts::new(name, help), &labels)
                    .expect("static metric definition"),
            )
        };
        CacheVecs {
            received: counter(
                "apiserver_watch_cache_events_received_total",
                "Counter of events received in watch cache broken by resource type.",
            ),
            dispatched: counter(
                "apiserver_watch_cache_events_dispatched_total",
                "Counter of events dispatched in watch cache broken by resource type.",
            ),
            initializations: counter(
                "apiserver_watch_cache_initializations_total",
                "Counter of watch cache initializations broken by resource type.",
            ),
            resource_version: register(
                IntGaugeVec::new(
                    Opts::new(
                        "apiserver_watch_cache_resource_version",
                        "Current resource version of watch cache broken by resource type.",
                    ),
                    &labels,
                )
                .expect("static metric definition"),
            ),
        }
    })
}

impl WatchCacheMetrics {
    /// The counters of `of`'s cache.
    pub fn of(of: &GroupResource) -> Self {
        let m = cache_vecs();
        let labels = [&*of.group, &*of.resource];
        WatchCacheMetrics {
            events_received: m.received.with_label_values(&labels),
            events_dispatched: m.dispatched.with_label_values(&labels),
            initializations: m.initializations.with_label_values(&labels),
            resource_version: m.resource_version.with_label_values(&labels),
        }
    }
}

/// What the object-count collector reads at each scrape (a watch cache).
pub trait CountObjects: Send + Sync {
    /// The number of objects held, or `None` while unknown (not loaded).
    fn count_objects(&self) -> Option<usize>;
}

/// A source of object counts, followed until it is dropped.
pub type ObjectCount = Weak<dyn CountObjects>;

/// `apiserver_storage_objects` and `apiserver_resource_objects`, computed
/// when scraped from the watch caches that registered with [`count_objects`].
struct ObjectCounts {
    sources: RwLock<Vec<(GroupResource, ObjectCount)>>,
    descs: Vec<Desc>,
}

fn object_counts() -> &'static ObjectCounts {
    static C: OnceLock<&'static ObjectCounts> = OnceLock::new();
    C.get_or_init(|| {
        let desc = |name: &str, help: &str, labels: &[&str]| {
            Desc::new(
                name.to_string(),
                help.to_string(),
                labels.iter().map(|l| l.to_string()).collect(),
                HashMap::new(),
            )
            .expect("static metric definition")
        };
        let counts: &'static ObjectCounts = Box::leak(Box::new(ObjectCounts {
            sources: RwLock::new(Vec::new()),
            descs: vec![
                desc("apiserver_storage_objects", LEGACY_HELP, &["resource"]),
                desc(
                    "apiserver_resource_objects",
                    CURRENT_HELP,
                    &["group", "resource"],
                ),
            ],
        }));
        if let Err(e) = crate::metrics::registry().register(Box::new(ObjectCountsCollector(counts)))
        {
            tracing::debug!(error = %e, "object counts already registered");
        }
        counts
    })
}

/// Publishes the object count of `of`, read from `count` at each scrape
/// until it is dropped.
pub fn count_objects(of: GroupResource, count: ObjectCount) {
    let counts = object_counts();
    match counts.sources.write() {
        Ok(mut s) => s.push((of, count)),
        Err(p) => p.into_inner().push((of, count)),
    }
}

const LEGACY_HELP: &str = "[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.";
const CURRENT_HELP: &str = "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.";

struct ObjectCountsCollector(&'static ObjectCounts);

impl Collector for ObjectCountsCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.0.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let legacy = IntGaugeVec::new(
            Opts::new("apiserver_storage_objects", LEGACY_HELP),
            &["resource"],
        )
        .expect("static metric definition");
        let current = IntGaugeVec::new(
            Opts::new("apiserver_resource_objects", CURRENT_HELP),
            &["group", "resource"],
        )
        .expect("static metric definition");
        let mut sources = match self.0.sources.write() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        sources.retain(|(of, count)| {
            let Some(count) = count.upgrade() else {
                return false;
            };
            let n = count.count_objects().map(|n| n as i64).unwrap_or(-1);
            legacy.with_label_values(&[&of.qualified()]).set(n);
            current
                .with_label_values(&[&*of.group, &*of.resource])
                .set(n);
            true
        });
        let mut out = legacy.collect();
        out.extend(current.collect());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_attributed_to_the_store_that_named_their_prefix() {
        let names = ResourceNames::default();
        names.name("/registry/pods", "", "pods");
        names.name(
            "/registry/apiregistration.k8s.io/apiservices/",
            "apiregistration.k8s.io",
            "apiservices",
        );
        assert_eq!(&*names.of("/registry/pods/default/p").resource, "pods");
        assert_eq!(&*names.of("/registry/pods/").resource, "pods");
        assert_eq!(&*names.of("/registry/pods").resource, "pods");
        let svc = names.of("/registry/apiregistration.k8s.io/apiservices/v1.apps");
        assert_eq!(
            (&*svc.group, &*svc.resource),
            ("apiregistration.k8s.io", "apiservices")
        );
        assert_eq!(svc.qualified(), "apiservices.apiregistration.k8s.io");
        assert_eq!(names.of("/registry/unknown/x"), GroupResource::default());
        assert_eq!(names.of(""), GroupResource::default());
    }

    #[test]
    fn object_counts_follow_their_caches() {
        struct Three;
        impl CountObjects for Three {
            fn count_objects(&self) -> Option<usize> {
                Some(3)
            }
        }
        let count: Arc<dyn CountObjects> = Arc::new(Three);
        let of = GroupResource {
            group: "objtest.example".into(),
            resource: "widgets".into(),
        };
        count_objects(of, Arc::downgrade(&count));
        let text = String::from_utf8(crate::metrics::render()).expect("utf-8");
        assert!(
            text.contains("apiserver_storage_objects{resource=\"widgets.objtest.example\"} 3"),
            "{text}"
        );
        assert!(
            text.contains(
                "apiserver_resource_objects{group=\"objtest.example\",resource=\"widgets\"} 3"
            ),
            "{text}"
        );
        drop(count);
        let text = String::from_utf8(crate::metrics::render()).expect("utf-8");
        assert!(!text.contains("widgets.objtest.example"), "{text}");
    }
}
