//! The availability controller: sets each APIService's `Available` condition
//! with upstream's reasons. Local APIServices are always available (`Local`);
//! remote ones are resolved (`ServiceNotFound`, `ServicePortError`,
//! `EndpointsNotFound`, `MissingEndpoints`) and probed with a discovery GET
//! (`FailedDiscoveryCheck`), and `Passed` when one probe answers 2xx. The
//! status is written only when it changes; the outcome, with the addresses
//! found, is kept in memory for the proxy.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

use std::time::Duration;
use tokio::sync::Notify;

use apiserver::registry::resource::Subresource;
use apiserver::registry::store::{UpdateKind, WriteContext};
use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::apiservice::available_condition;
use crate::remote::{resolve, Clients, ServiceRef, Unresolved};
use crate::state::{internal_user, State};

/// Per-probe deadline (upstream: 5 s client timeout, 6 s guard).
const PROBE_TIMEOUT: Duration = Duration::from_secs(6);
/// At most this many endpoints are probed at once (upstream: 5).
const PROBES: usize = 5;

/// What the controller last concluded about one APIService.
#[derive(Clone, Debug)]
pub struct Health {
    pub available: bool,
    /// Addresses of a remote APIService's server (empty for local ones).
    pub addrs: Vec<String>,
}

/// The controller's in-memory results.
#[derive(Default)]
pub struct Availability {
    health: RwLock<HashMap<String, Health>>,
    pub clients: Clients,
    /// Signalled when some APIService's availability changed.
    pub changed: Notify,
}

impl Availability {
    /// The last result for `name`.
    pub fn health(&self, name: &str) -> Option<Health> {
        self.health.read().ok()?.get(name).cloned()
    }

    fn set(&self, all: HashMap<String, Health>) {
        let Ok(mut h) = self.health.write() else {
            return;
        };
        let flipped = all.len() != h.len()
            || all
                .iter()
                .any(|(n, new)| h.get(n).is_none_or(|old| old.available != new.available));
        *h = all;
        drop(h);
        if flipped {
            self.changed.notify_waiters();
        }
    }
}

/// The condition computed for one APIService, and its health.
async fn check(state: &State, avail: &Availability, obj: &Value) -> (Value, Health) {
    let Some(svc) = ServiceRef::of(obj) else {
        return (
            condition("True", "Local", "Local APIServices are always available"),
            Health {
                available: true,
                addrs: vec![],
            },
        );
    };
    let addrs = match resolve(state, &svc).await {
        Ok(a) => a,
        Err(Unresolved {
            status,
            reason,
            message,
        }) => {
            return (
                condition(status, reason, &message),
                Health {
                    available: false,
                    addrs: vec![],
                },
            )
        }
    };
    let group = obj
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = obj
        .pointer("/spec/version")
        .and_then(Value::as_str)
        .unwrap_or("");
    let path = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    let probes = addrs.iter().take(PROBES).map(|addr| {
        let path = path.clone();
        async move {
            let url = format!("https://{addr}{path}");
            let client = avail.clients.get(state, obj, addr)?;
            let user = internal_user();
            let probe = crate::state::get_json(&client, &path, Some(&user));
            match tokio::time::timeout(PROBE_TIMEOUT, probe).await {
                Ok(Ok((code, _))) if (200..300).contains(&code) => Ok(()),
                Ok(Ok((code, _))) => Err(format!(
                    "failing or missing response from {url}: bad status from {url}: {code}"
                )),
                Ok(Err(e)) => Err(format!("failing or missing response from {url}: {e}")),
                Err(_) => Err(format!(
                    "failing or missing response from {url}: context deadline exceeded"
                )),
            }
        }
    });
    let results = join_all(probes).await;
    if results.iter().any(Result::is_ok) {
        return (
            condition("True", "Passed", "all checks passed"),
            Health {
                available: true,
                addrs,
            },
        );
    }
    let last = results
        .into_iter()
        .filter_map(Result::err)
        .next_back()
        .unwrap_or_default();
    (
        condition("False", "FailedDiscoveryCheck", &last),
        Health {
            available: false,
            addrs,
        },
    )
}

fn condition(status: &str, reason: &str, message: &str) -> Value {
    json!({"type": "Available", "status": status, "reason": reason, "message": message})
}

/// Whether `new` differs from the stored condition in status, reason or message.
fn differs(obj: &Value, new: &Value) -> bool {
    match available_condition(obj) {
        None => true,
        Some(old) => ["status", "reason", "message"]
            .iter()
            .any(|k| old.get(*k) != new.get(*k)),
    }
}

/// `status` with the `Available` condition replaced by `cond`; the
/// transition time changes only when the status does.
pub fn with_condition(obj: &Value, cond: &Value) -> Value {
    let mut obj = obj.clone();
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default();
    let mut cond = cond.clone();
    let old = available_condition(&obj).cloned();
    let ltt = match &old {
        Some(o) if o.get("status") == cond.get("status") => {
            o.get("lastTransitionTime").cloned().unwrap_or(json!(now))
        }
        _ => json!(now),
    };
    cond["lastTransitionTime"] = ltt;
    let mut conditions: Vec<Value> = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.get("type").and_then(Value::as_str) != Some("Available"))
        .collect();
    conditions.push(cond);
    if !obj.get("status").is_some_and(Value::is_object) {
        obj["status"] = json!({});
    }
    obj["status"]["conditions"] = Value::Array(conditions);
    obj
}

/// `aggregator_unavailable_apiservice` (1 for each APIService whose
/// `Available` condition is not `True`) and
/// `aggregator_unavailable_apiservice_total` (transitions to unavailable, by
/// reason), as upstream's availability controller exports them.
struct UnavailableMetrics {
    gauge: apiserver::metrics::prometheus::IntGaugeVec,
    total: apiserver::metrics::prometheus::IntCounterVec,
    /// The names the gauge reports, so that deleted APIServices leave it.
    known: std::sync::Mutex<std::collections::HashSet<String>>,
}

fn unavailable_metrics() -> &'static UnavailableMetrics {
    static M: std::sync::OnceLock<UnavailableMetrics> = std::sync::OnceLock::new();
    M.get_or_init(|| UnavailableMetrics {
        gauge: apiserver::metrics::register(
            apiserver::metrics::prometheus::IntGaugeVec::new(
                apiserver::metrics::prometheus::Opts::new(
                    "aggregator_unavailable_apiservice",
                    "Gauge of APIServices which are marked as unavailable broken down by APIService name.",
                ),
                &["name"],
            )
            .expect("static metric definition"),
        ),
        total: apiserver::metrics::register(
            apiserver::metrics::prometheus::IntCounterVec::new(
                apiserver::metrics::prometheus::Opts::new(
                    "aggregator_unavailable_apiservice_total",
                    "Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
                ),
                &["name", "reason"],
            )
            .expect("static metric definition"),
        ),
        known: Default::default(),
    })
}

fn record_availability(checked: &[(&String, &Value, Value, Health)]) {
    let m = unavailable_metrics();
    let mut known = match m.known.lock() {
        Ok(k) => k,
        Err(p) => p.into_inner(),
    };
    let now: std::collections::HashSet<String> =
        checked.iter().map(|(n, ..)| (*n).clone()).collect();
    for gone in known.difference(&now) {
        let _ = m.gauge.remove_label_values(&[gone]);
    }
    for (name, obj, cond, health) in checked {
        m.gauge
            .with_label_values(&[name.as_str()])
            .set(i64::from(!health.available));
        let was_available = available_condition(obj)
            .and_then(|c| c.get("status").and_then(Value::as_str).map(|s| s == "True"))
            .unwrap_or(true);
        if !health.available && was_available {
            let reason = cond.get("reason").and_then(Value::as_str).unwrap_or("");
            m.total.with_label_values(&[name.as_str(), reason]).inc();
        }
    }
    *known = now;
}

async fn pass(state: &State, avail: &Availability, leading: &AtomicBool) {
    let services = state.services();
    let checked = join_all(services.iter().map(|(name, obj)| async move {
        let (cond, health) = check(state, avail, obj).await;
        (name, obj, cond, health)
    }))
    .await;
    // What the proxy and discovery read is updated first: once a status
    // says unavailable (and the discovery rebuild it triggers runs), the
    // health says so too.
    avail.set(
        checked
            .iter()
            .map(|(name, _, _, health)| ((*name).clone(), health.clone()))
            .collect(),
    );
    record_availability(&checked);
    // Every replica probes (its proxy and discovery read the health); only
    // the leader writes the statuses.
    if !leading.load(std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    let writes = checked
        .iter()
        .filter(|(_, obj, cond, _)| differs(obj, cond))
        .map(|(name, _, cond, _)| async move {
            let patch = |cur: &Value| Ok(with_condition(cur, cond));
            let ctx = WriteContext {
                user: Some(internal_user()),
                dry_run: false,
                ..Default::default()
            };
            match state
                .store
                .update(
                    "",
                    name,
                    Some(Subresource::Status),
                    UpdateKind::Patch(&patch),
                    &ctx,
                )
                .await
            {
                Ok(_) => tracing::info!(
                    apiservice = %name,
                    status = %cond["status"],
                    reason = %cond["reason"],
                    "APIService availability changed"
                ),
                Err(e) if e.code == 404 => {}
                Err(e) => tracing::warn!(apiservice = %name, error = %e, "writing status"),
            }
        });
    join_all(writes).await;
}

/// Checks every APIService every `period`, and at once when they change;
/// writes their statuses while `leading`.
pub async fn run(
    state: Arc<State>,
    avail: Arc<Availability>,
    period: Duration,
    leading: Arc<AtomicBool>,
) {
    let mut changes = state.subscribe();
    loop {
        changes.borrow_and_update();
        pass(&state, &avail, &leading).await;
        tokio::select! {
            _ = changes.changed() => {}
            _ = tokio::time::sleep(period) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let old = json!({"status": {"conditions": [{"type": "Available", "status": "True",
            "reason": "Passed", "message": "all checks passed", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}});
        let same = with_condition(&old, &condition("True", "Local", "x"));
        assert_eq!(
            same["status"]["conditions"][0]["lastTransitionTime"],
            "2020-01-01T00:00:00Z"
        );
        let flipped = with_condition(&old, &condition("False", "MissingEndpoints", "y"));
        assert_ne!(
            flipped["status"]["conditions"][0]["lastTransitionTime"],
            "2020-01-01T00:00:00Z"
        );
        assert!(differs(&old, &condition("True", "Passed", "other")));
        assert!(!differs(
            &old,
            &condition("True", "Passed", "all checks passed")
        ));
    }
}
