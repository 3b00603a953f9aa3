//! The request metrics of upstream's `k8s.io/apiserver/pkg/endpoints/metrics`,
//! with its names, labels, buckets and label values, so that the dashboards
//! and alerts written for kube-apiserver (the API call latency SLOs among
//! them) read a tier unchanged:
//!
//! - `apiserver_request_total` and `apiserver_request_duration_seconds` per
//!   reported verb, dry run, group, version, resource, subresource, scope and
//!   component (and code, `system_client` for the counter);
//! - `apiserver_response_sizes` of reads (GET and LIST);
//! - `apiserver_longrunning_requests` (watches and connections, by the same
//!   labels) and `apiserver_current_inflight_requests` (the others, by
//!   `readOnly`/`mutating`);
//! - `apiserver_watch_events_total` and `apiserver_watch_events_sizes`.
//!
//! Each request is counted once, by the tier that answers it: a request a
//! tier forwards to the next one (or to an aggregated API server) is counted
//! where it is served, so summing a metric over the tiers of one cluster
//! gives what one kube-apiserver would report.

use std::sync::OnceLock;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts};

use crate::metrics::register;
use crate::request::info::{NonResource, RequestInfo};

/// Upstream's `APIServerComponent`: the component label of resource requests.
pub const APISERVER_COMPONENT: &str = "apiserver";

/// Subresources reported with the verb `CONNECT`.
const CONNECT_SUBRESOURCES: [&str; 5] = ["log", "exec", "portforward", "attach", "proxy"];

struct RequestMetrics {
    total: IntCounterVec,
    duration: HistogramVec,
    response_sizes: HistogramVec,
    longrunning: IntGaugeVec,
    inflight: IntGaugeVec,
    watch_events: IntCounterVec,
    watch_event_sizes: HistogramVec,
}

fn metrics() -> &'static RequestMetrics {
    static METRICS: OnceLock<RequestMetrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let labels = [
            "verb",
            "dry_run",
            "group",
            "version",
            "resource",
            "subresource",
            "scope",
            "component",
        ];
        let read_labels = [
            "verb",
            "group",
            "version",
            "resource",
            "subresource",
            "scope",
            "component",
        ];
        let gvr = ["group", "version", "resource"];
        let mut total_labels = labels.to_vec();
        total_labels.extend(["code", "system_client"]);
        RequestMetrics {
            total: register(counter_vec(
                "apiserver_request_total",
                "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
                &total_labels,
            )),
            duration: register(histogram_vec(
                HistogramOpts::new(
                    "apiserver_request_duration_seconds",
                    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
                )
                .buckets(crate::metrics::LATENCY_BUCKETS.to_vec()),
                &labels,
            )),
            response_sizes: register(histogram_vec(
                HistogramOpts::new(
                    "apiserver_response_sizes",
                    "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
                )
                .buckets(crate::metrics::exponential_buckets(1000.0, 10.0, 7)),
                &read_labels,
            )),
            longrunning: register(gauge_vec(
                "apiserver_longrunning_requests",
                "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
                &read_labels,
            )),
            inflight: register(gauge_vec(
                "apiserver_current_inflight_requests",
                "Number of requests currently being served by this apiserver, per request kind (readOnly or mutating); long-running requests are not counted.",
                &["request_kind"],
            )),
            watch_events: register(counter_vec(
                "apiserver_watch_events_total",
                "Number of events sent in watch clients",
                &gvr,
            )),
            watch_event_sizes: register(histogram_vec(
                HistogramOpts::new(
                    "apiserver_watch_events_sizes",
                    "Watch event size distribution in bytes",
                )
                .buckets(crate::metrics::exponential_buckets(1024.0, 2.0, 8)),
                &gvr,
            )),
        }
    })
}

fn counter_vec(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    IntCounterVec::new(Opts::new(name, help), labels).expect("static metric definition")
}

fn gauge_vec(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), labels).expect("static metric definition")
}

fn histogram_vec(opts: HistogramOpts, labels: &[&str]) -> HistogramVec {
    HistogramVec::new(opts, labels).expect("static metric definition")
}

/// The labels of one request, computed as upstream's `MonitorRequest` does.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestLabels {
    /// The reported verb: `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`,
    /// `APPLY`, `DELETE`, `CONNECT` (or `other`).
    pub verb: &'static str,
    /// The sorted, deduplicated `dryRun` values (`All`), empty for none.
    pub dry_run: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    /// The subresource; for a non-resource request, the path it is served
    /// under (`/readyz`, `/apis`, `openapi/v3`), as upstream's handlers
    /// register it.
    pub subresource: String,
    /// `resource`, `namespace`, `cluster`, or empty for non-resource requests.
    pub scope: &'static str,
    pub component: &'static str,
    /// `kube-controller-manager`, `kube-scheduler` or `kube-apiserver` when
    /// the user agent names one, else empty.
    pub system_client: &'static str,
}

impl RequestLabels {
    /// The labels of a request with this method, content type and user
    /// agent, recognised as `info`.
    pub fn of(
        info: &RequestInfo,
        method: &http::Method,
        content_type: Option<&str>,
        user_agent: Option<&str>,
    ) -> RequestLabels {
        let scope = scope(info);
        let mut verb = match *method {
            http::Method::GET | http::Method::HEAD => {
                if scope != "resource" && !scope.is_empty() {
                    "LIST"
                } else {
                    "GET"
                }
            }
            http::Method::POST => "POST",
            http::Method::PUT => "PUT",
            http::Method::PATCH => "PATCH",
            http::Method::DELETE => "DELETE",
            _ => "other",
        };
        if info.verb == "watch" {
            verb = "WATCH";
        }
        if verb == "PATCH" && content_type == Some("application/apply-patch+yaml") {
            verb = "APPLY";
        }
        if info.is_resource_request && CONNECT_SUBRESOURCES.contains(&info.subresource.as_str()) {
            verb = "CONNECT";
        }
        let dry_run = {
            let mut values: Vec<&str> = info
                .query
                .iter()
                .filter(|(k, _)| k == "dryRun")
                .map(|(_, v)| v.as_str())
                .collect();
            values.sort_unstable();
            values.dedup();
            if values.iter().any(|v| *v != "All") {
                "invalid".to_string()
            } else {
                values.join(",")
            }
        };
        let system_client = match user_agent.and_then(|ua| ua.split_once('/')).map(|(c, _)| c) {
            Some("kube-apiserver") => "kube-apiserver",
            Some("kube-controller-manager") => "kube-controller-manager",
            Some("kube-scheduler") => "kube-scheduler",
            Some("cluster-policy-controller") => "cluster-policy-controller",
            _ => "",
        };
        if info.is_resource_request {
            return RequestLabels {
                verb,
                dry_run,
                group: info.api_group.clone(),
                version: info.api_version.clone(),
                resource: info.resource.clone(),
                subresource: info.subresource.clone(),
                scope,
                component: APISERVER_COMPONENT,
                system_client,
            };
        }
        let (subresource, component) = match &info.non_resource {
            NonResource::Health { endpoint, .. } => (format!("/{endpoint}"), ""),
            NonResource::OpenApiV3 | NonResource::OpenApiV3GroupVersion { .. } => {
                ("openapi/v3".to_string(), "")
            }
            NonResource::OpenApiV2 => ("/openapi/v2".to_string(), ""),
            NonResource::Api | NonResource::ApiVersion(_) => {
                ("/api".to_string(), APISERVER_COMPONENT)
            }
            NonResource::Apis | NonResource::ApiGroup(_) | NonResource::ApiGroupVersion(..) => {
                ("/apis".to_string(), APISERVER_COMPONENT)
            }
            NonResource::Version => ("/version".to_string(), ""),
            NonResource::Metrics => ("/metrics".to_string(), ""),
            NonResource::Other => (String::new(), ""),
        };
        RequestLabels {
            verb,
            dry_run,
            group: String::new(),
            version: String::new(),
            resource: String::new(),
            subresource,
            scope,
            component,
            system_client,
        }
    }

    /// Records a finished request: its status `code`, the bytes of its
    /// response body (`None` when unknown) and how long it took.
    pub fn observe(&self, code: u16, response_bytes: Option<u64>, elapsed: std::time::Duration) {
        let m = metrics();
        let code = code.to_string();
        let labels = self.labels();
        let [verb, dry_run, group, version, resource, subresource, scope, component] = labels;
        m.total
            .with_label_values(&[
                verb,
                dry_run,
                group,
                version,
                resource,
                subresource,
                scope,
                component,
                &code,
                self.system_client,
            ])
            .inc();
        m.duration
            .with_label_values(&labels)
            .observe(elapsed.as_secs_f64());
        if let (Some(bytes), "GET" | "LIST") = (response_bytes, self.verb) {
            m.response_sizes
                .with_label_values(&self.read_labels())
                .observe(bytes as f64);
        }
    }

    /// The labels of the latency histogram (the counter adds code and
    /// system_client).
    fn labels(&self) -> [&str; 8] {
        [
            self.verb,
            &self.dry_run,
            &self.group,
            &self.version,
            &self.resource,
            &self.subresource,
            self.scope,
            self.component,
        ]
    }

    /// The labels of the read and long-running metrics (no dry_run).
    fn read_labels(&self) -> [&str; 7] {
        [
            self.verb,
            &self.group,
            &self.version,
            &self.resource,
            &self.subresource,
            self.scope,
            self.component,
        ]
    }

    /// Counts a long-running request until the returned guard is dropped.
    pub fn long_running(&self) -> GaugeGuard {
        GaugeGuard::inc(metrics().longrunning.with_label_values(&self.read_labels()))
    }
}

/// Counts an in-flight request of `mutating` kind or not until the guard
/// is dropped.
pub fn in_flight(mutating: bool) -> GaugeGuard {
    let kind = if mutating { "mutating" } else { "readOnly" };
    GaugeGuard::inc(metrics().inflight.with_label_values(&[kind]))
}

/// Whether a request with this verb changes state (upstream's
/// read-only verbs are `get`, `list` and `watch`).
pub fn is_mutating(info: &RequestInfo) -> bool {
    !matches!(info.verb.as_str(), "get" | "list" | "watch" | "head")
}

/// Upstream's `CleanScope`.
pub fn scope(info: &RequestInfo) -> &'static str {
    if !info.name.is_empty() || info.verb == "create" {
        "resource"
    } else if !info.namespace.is_empty() {
        "namespace"
    } else if info.is_resource_request {
        "cluster"
    } else {
        ""
    }
}

/// The watch-event counters of one resource, resolved once per watch so
/// that each event costs two atomic updates.
#[derive(Clone)]
pub struct WatchEventMetrics {
    events: prometheus::IntCounter,
    sizes: prometheus::Histogram,
}

impl WatchEventMetrics {
    /// The counters of `group`/`version`/`resource`.
    pub fn of(group: &str, version: &str, resource: &str) -> Self {
        let m = metrics();
        let labels = [group, version, resource];
        WatchEventMetrics {
            events: m.watch_events.with_label_values(&labels),
            sizes: m.watch_event_sizes.with_label_values(&labels),
        }
    }

    /// Records one event of `bytes` sent.
    pub fn sent(&self, bytes: usize) {
        self.events.inc();
        self.sizes.observe(bytes as f64);
    }
}

/// Decrements a gauge when dropped.
pub struct GaugeGuard(prometheus::IntGauge);

impl GaugeGuard {
    fn inc(gauge: prometheus::IntGauge) -> Self {
        gauge.inc();
        GaugeGuard(gauge)
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::info::parse_request_info;

    fn labels(method: &str, path: &str, query: Option<&str>, ct: Option<&str>) -> RequestLabels {
        let info = parse_request_info(method, path, query);
        let method = http::Method::from_bytes(method.as_bytes()).expect("method");
        RequestLabels::of(
            &info,
            &method,
            ct,
            Some("kube-scheduler/v1.36.2 (linux/amd64)"),
        )
    }

    #[test]
    fn verbs_and_scopes_are_upstreams() {
        let l = labels("GET", "/api/v1/namespaces/default/pods", None, None);
        assert_eq!(
            (l.verb, l.scope, l.resource.as_str()),
            ("LIST", "namespace", "pods")
        );
        assert_eq!(l.system_client, "kube-scheduler");
        let l = labels("GET", "/api/v1/pods", Some("watch=true"), None);
        assert_eq!((l.verb, l.scope), ("WATCH", "cluster"));
        let l = labels("GET", "/api/v1/watch/namespaces/a/pods", None, None);
        assert_eq!(l.verb, "WATCH");
        let l = labels("GET", "/api/v1/namespaces/a/pods/p", None, None);
        assert_eq!((l.verb, l.scope), ("GET", "resource"));
        let l = labels("POST", "/api/v1/namespaces/a/pods", None, None);
        assert_eq!((l.verb, l.scope), ("POST", "resource"));
        let l = labels(
            "PATCH",
            "/apis/apps/v1/namespaces/a/deployments/d",
            Some("dryRun=All&dryRun=All"),
            Some("application/apply-patch+yaml"),
        );
        assert_eq!(
            (l.verb, l.group.as_str(), l.dry_run.as_str()),
            ("APPLY", "apps", "All")
        );
        let l = labels("GET", "/api/v1/namespaces/a/pods/p/log", None, None);
        assert_eq!((l.verb, l.subresource.as_str()), ("CONNECT", "log"));
        let l = labels("GET", "/readyz", None, None);
        assert_eq!(
            (l.verb, l.subresource.as_str(), l.scope),
            ("GET", "/readyz", "")
        );
        let l = labels(
            "DELETE",
            "/api/v1/namespaces/a/pods",
            Some("dryRun=bogus"),
            None,
        );
        assert_eq!((l.verb, l.dry_run.as_str()), ("DELETE", "invalid"));
    }

    #[test]
    fn observed_requests_appear_in_the_text_format() {
        let l = labels("GET", "/apis/metricstest.example/v1/widgets", None, None);
        l.observe(200, Some(2048), std::time::Duration::from_millis(3));
        let text = String::from_utf8(crate::metrics::render()).expect("utf-8");
        assert!(text.contains(
            "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"metricstest.example\",resource=\"widgets\",scope=\"cluster\",subresource=\"\",system_client=\"kube-scheduler\",verb=\"LIST\",version=\"v1\"} 1"
        ), "{text}");
        assert!(text.contains("apiserver_request_duration_seconds_bucket{component=\"apiserver\",dry_run=\"\",group=\"metricstest.example\",resource=\"widgets\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\",le=\"0.005\"} 1"), "{text}");
        assert!(text.contains("apiserver_response_sizes_bucket{component=\"apiserver\",group=\"metricstest.example\",resource=\"widgets\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\",le=\"10000\"} 1"), "{text}");
        {
            let _g = l.long_running();
            let text = String::from_utf8(crate::metrics::render()).expect("utf-8");
            assert!(text.contains("apiserver_longrunning_requests{component=\"apiserver\",group=\"metricstest.example\",resource=\"widgets\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 1"), "{text}");
        }
        let text = String::from_utf8(crate::metrics::render()).expect("utf-8");
        assert!(text.contains("apiserver_longrunning_requests{component=\"apiserver\",group=\"metricstest.example\",resource=\"widgets\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 0"), "{text}");
    }
}
