//! API Priority and Fairness (upstream's `k8s.io/apiserver/pkg/util/flowcontrol`):
//! every request is classified by the FlowSchemas into a priority level and
//! a flow, occupies seats of its level while it executes, and waits in its
//! level's fair queues (or is rejected with 429) when the seats are taken.
//!
//! - [`matching`]: FlowSchemas and classification;
//! - [`queueset`]: one level's seats and shuffle-sharded fair queues;
//! - [`allocation`]: levels lending and borrowing seats by demand;
//! - [`estimate`]: seats per request (LISTs cost more);
//! - [`bootstrap`]: the mandatory and suggested objects created at start;
//! - [`metrics`]: `apiserver_flowcontrol_*`.
//!
//! [`FlowControl`] holds the configuration read from the API (see
//! `server::flowcontrol_config`) and the levels; the filter
//! `filters::priority_and_fairness` asks it to admit each request. The
//! configuration always contains the mandatory objects, so a server serves
//! (under them) before it has read any.

pub mod allocation;
pub mod bootstrap;
pub mod estimate;
pub mod matching;
pub mod metrics;
pub mod queueset;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::authentication::UserInfo;
use crate::request::info::RequestInfo;
use matching::FlowSchema;
use queueset::{Arrival, QueueSet, Queuing, RejectReason};

/// The name of the mandatory catch-all schema and level.
pub const CATCH_ALL: &str = "catch-all";

/// What the server's flow control is sized by.
#[derive(Clone, Copy, Debug)]
pub struct FlowControlConfig {
    /// The server's concurrency limit in seats:
    /// `--max-requests-inflight` + `--max-mutating-requests-inflight`.
    pub server_concurrency_limit: u32,
    /// The longest a request waits in a queue (upstream: a quarter of
    /// `--request-timeout`).
    pub queue_wait_limit: Duration,
}

/// A priority level as configured.
#[derive(Clone, Debug, PartialEq)]
struct LevelSpec {
    uid: String,
    exempt: bool,
    shares: u32,
    lendable_percent: u32,
    borrowing_limit_percent: Option<u32>,
    queuing: Option<Queuing>,
}

impl LevelSpec {
    fn from_object(o: &Value) -> Option<(String, LevelSpec)> {
        let name = o.pointer("/metadata/name")?.as_str()?.to_string();
        let uid = o
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let spec = o.get("spec")?;
        let int = |v: Option<&Value>, d: u64| v.and_then(Value::as_u64).unwrap_or(d);
        if spec.get("type").and_then(Value::as_str) == Some("Exempt") {
            let ex = spec.get("exempt");
            return Some((
                name,
                LevelSpec {
                    uid,
                    exempt: true,
                    shares: int(ex.and_then(|e| e.get("nominalConcurrencyShares")), 0) as u32,
                    lendable_percent: int(ex.and_then(|e| e.get("lendablePercent")), 0) as u32,
                    borrowing_limit_percent: None,
                    queuing: None,
                },
            ));
        }
        let limited = spec.get("limited");
        let get = |k: &str| limited.and_then(|l| l.get(k));
        let response = get("limitResponse");
        let queuing = match response.and_then(|r| r.get("type")).and_then(Value::as_str) {
            Some("Queue") => {
                let q = response.and_then(|r| r.get("queuing"));
                let at = |k: &str, d: u64| int(q.and_then(|q| q.get(k)), d) as usize;
                Some(Queuing {
                    queues: at("queues", 64).max(1),
                    hand_size: at("handSize", 8).max(1),
                    queue_length_limit: at("queueLengthLimit", 50).max(1),
                })
            }
            _ => None,
        };
        Some((
            name,
            LevelSpec {
                uid,
                exempt: false,
                shares: int(get("nominalConcurrencyShares"), 30) as u32,
                lendable_percent: int(get("lendablePercent"), 0).min(100) as u32,
                borrowing_limit_percent: get("borrowingLimitPercent")
                    .and_then(Value::as_u64)
                    .map(|p| p as u32),
                queuing,
            },
        ))
    }
}

/// A level's state: its configuration, derived limits and queues.
struct Level {
    spec: LevelSpec,
    nominal: u32,
    lower: u32,
    upper: u32,
    set: QueueSet,
}

/// Where a request was classified.
#[derive(Clone, Debug)]
pub struct Classification {
    pub flow_schema: String,
    pub flow_schema_uid: String,
    pub priority_level: String,
    pub priority_level_uid: String,
    /// The hash of the schema's name and the flow distinguisher.
    flow: u64,
}

struct Schemas {
    /// Matching order.
    schemas: Vec<FlowSchema>,
}

/// The server's priority and fairness state.
pub struct FlowControl {
    config: FlowControlConfig,
    schemas: RwLock<Arc<Schemas>>,
    levels: Mutex<HashMap<String, Level>>,
    next_id: AtomicU64,
    /// Seats per request.
    pub estimator: estimate::WorkEstimator,
}

/// A request admitted to execute; its seats are given back when dropped.
pub struct Ticket {
    fc: Weak<FlowControl>,
    level: String,
    queue: Option<usize>,
    seats: u32,
    flow_schema: String,
    started: Instant,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let m = metrics::metrics();
        let labels = [self.flow_schema.as_str(), self.level.as_str()];
        m.executing_requests.with_label_values(&labels).dec();
        m.executing_seats
            .with_label_values(&labels)
            .sub(i64::from(self.seats));
        m.execution_seconds
            .with_label_values(&[labels[0], labels[1], "regular"])
            .observe(self.started.elapsed().as_secs_f64());
        if let Some(fc) = self.fc.upgrade() {
            fc.release(&self.level, self.queue, self.seats);
        }
    }
}

fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    // SipHash with fixed keys: the same flow lands in the same hand in
    // every replica and across restarts.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    schema.hash(&mut h);
    distinguisher.hash(&mut h);
    h.finish()
}

impl FlowControl {
    /// Flow control under the mandatory configuration until
    /// [`FlowControl::apply`] gives it the objects read from the API.
    pub fn new(config: FlowControlConfig) -> Arc<FlowControl> {
        let fc = Arc::new(FlowControl {
            config,
            schemas: RwLock::new(Arc::new(Schemas {
                schemas: Vec::new(),
            })),
            levels: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            estimator: estimate::WorkEstimator::default(),
        });
        fc.apply(&[], &[]);
        fc
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Level>> {
        match self.levels.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        }
    }

    /// Replaces the configuration with `schemas` and `levels` (objects of
    /// `flowcontrol.apiserver.k8s.io/v1`), the mandatory ones filled in
    /// where missing. Waiting and executing requests keep their places.
    pub fn apply(&self, schemas: &[Value], levels: &[Value]) {
        let mut level_specs: HashMap<String, LevelSpec> = HashMap::new();
        for o in bootstrap::mandatory_priority_levels()
            .iter()
            .chain(levels.iter())
        {
            if let Some((name, spec)) = LevelSpec::from_object(o) {
                level_specs.insert(name, spec);
            }
        }
        let mut by_name: HashMap<String, FlowSchema> = HashMap::new();
        for o in bootstrap::mandatory_flow_schemas()
            .iter()
            .chain(schemas.iter())
        {
            if let Some(fs) = FlowSchema::from_object(o) {
                by_name.insert(fs.name.clone(), fs);
            }
        }
        // A schema naming a level that does not exist is dangling: ignored.
        let mut ordered: Vec<FlowSchema> = by_name
            .into_values()
            .filter(|fs| level_specs.contains_key(&fs.priority_level))
            .collect();
        matching::sort(&mut ordered);

        let scl = self.config.server_concurrency_limit.max(1);
        let total_shares: u64 = level_specs.values().map(|l| u64::from(l.shares)).sum();
        let mut levels_now = self.lock();
        let m = metrics::metrics();
        let mut next: HashMap<String, Level> = HashMap::new();
        for (name, spec) in level_specs {
            let nominal = if total_shares == 0 {
                0
            } else {
                (u64::from(scl) * u64::from(spec.shares)).div_ceil(total_shares) as u32
            };
            let lendable =
                (f64::from(nominal) * f64::from(spec.lendable_percent) / 100.0).round() as u32;
            let lower = nominal.saturating_sub(lendable);
            let upper = match spec.borrowing_limit_percent {
                Some(p) => nominal + (f64::from(nominal) * f64::from(p) / 100.0).round() as u32,
                None => scl.max(nominal),
            };
            let level = match levels_now.remove(&name) {
                Some(mut old) => {
                    old.set.reshape(spec.queuing, nominal);
                    old.spec = spec;
                    old.nominal = nominal;
                    old.lower = lower;
                    old.upper = upper;
                    old
                }
                None => Level {
                    set: QueueSet::new(spec.queuing, nominal),
                    spec,
                    nominal,
                    lower,
                    upper,
                },
            };
            m.nominal_limit
                .with_label_values(&[&name])
                .set(i64::from(nominal));
            m.concurrency_limit
                .with_label_values(&[&name])
                .set(i64::from(nominal));
            m.lower_limit
                .with_label_values(&[&name])
                .set(i64::from(lower));
            m.upper_limit
                .with_label_values(&[&name])
                .set(i64::from(upper));
            m.current_limit
                .with_label_values(&[&name])
                .set(i64::from(nominal));
            next.insert(name, level);
        }
        // Levels that went away: their waiters are told to run (admitted
        // under the old configuration), so nobody waits forever.
        for (_, mut gone) in levels_now.drain() {
            gone.set.reshape(None, u32::MAX);
        }
        *levels_now = next;
        drop(levels_now);
        let schemas = Arc::new(Schemas { schemas: ordered });
        match self.schemas.write() {
            Ok(mut s) => *s = schemas,
            Err(p) => *p.into_inner() = schemas,
        }
    }

    /// The schema and level of `user`'s request `info`: the first matching
    /// schema, else the mandatory catch-all.
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Classification {
        let schemas = match self.schemas.read() {
            Ok(s) => s.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let found = schemas.schemas.iter().find(|fs| fs.matches(user, info));
        let (name, uid, level, distinguisher) = match found {
            Some(fs) => (
                fs.name.clone(),
                fs.uid.clone(),
                fs.priority_level.clone(),
                fs.distinguish(user, info).to_string(),
            ),
            None => (
                CATCH_ALL.to_string(),
                String::new(),
                CATCH_ALL.to_string(),
                user.name.clone(),
            ),
        };
        let level_uid = self
            .lock()
            .get(&level)
            .map(|l| l.spec.uid.clone())
            .unwrap_or_default();
        Classification {
            flow: flow_hash(&name, &distinguisher),
            flow_schema: name,
            flow_schema_uid: uid,
            priority_level: level,
            priority_level_uid: level_uid,
        }
    }

    fn ticket(self: &Arc<Self>, c: &Classification, queue: Option<usize>, seats: u32) -> Ticket {
        let m = metrics::metrics();
        let labels = [c.flow_schema.as_str(), c.priority_level.as_str()];
        m.dispatched.with_label_values(&labels).inc();
        m.executing_requests.with_label_values(&labels).inc();
        m.executing_seats
            .with_label_values(&labels)
            .add(i64::from(seats));
        Ticket {
            fc: Arc::downgrade(self),
            level: c.priority_level.clone(),
            queue,
            seats,
            flow_schema: c.flow_schema.clone(),
            started: Instant::now(),
        }
    }

    fn reject(c: &Classification, reason: RejectReason) -> RejectReason {
        metrics::metrics()
            .rejected
            .with_label_values(&[&c.flow_schema, &c.priority_level, reason.label()])
            .inc();
        reason
    }

    /// Admits a request of `seats` seats classified as `c`: at once when
    /// its level has the seats and nobody waits, after waiting its turn in
    /// a queue, or not at all (the reason for the 429).
    pub async fn admit(
        self: &Arc<Self>,
        c: &Classification,
        seats: u32,
    ) -> Result<Ticket, RejectReason> {
        let m = metrics::metrics();
        let labels = [c.flow_schema.as_str(), c.priority_level.as_str()];
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let (arrival, seats) = {
            let mut levels = self.lock();
            let Some(level) = levels.get_mut(&c.priority_level) else {
                // Configuration changed since classification: run.
                drop(levels);
                return Ok(self.ticket(c, None, seats));
            };
            if level.spec.exempt {
                level.set.seats_in_use += seats;
                drop(levels);
                m.wait_duration
                    .with_label_values(&["true", labels[0], labels[1]])
                    .observe(0.0);
                return Ok(self.ticket(c, None, seats));
            }
            let seats = seats.clamp(1, level.set.limit.max(1));
            m.estimated_seats
                .with_label_values(&labels)
                .observe(f64::from(seats));
            (level.set.arrive(id, seats, c.flow, tx).0, seats)
        };
        match arrival {
            Arrival::Dispatched { queue } => {
                m.wait_duration
                    .with_label_values(&["true", labels[0], labels[1]])
                    .observe(0.0);
                Ok(self.ticket(c, queue, seats))
            }
            Arrival::Rejected(r) => Err(Self::reject(c, r)),
            Arrival::Queued { .. } => {
                let waited = Instant::now();
                m.inqueue.with_label_values(&labels).inc();
                let mut pending = Pending {
                    fc: self,
                    level: &c.priority_level,
                    id,
                    seats,
                    rx: Some(rx),
                };
                let queue = pending.wait(self.config.queue_wait_limit).await;
                m.inqueue.with_label_values(&labels).dec();
                let elapsed = waited.elapsed().as_secs_f64();
                match queue {
                    Some(q) => {
                        m.wait_duration
                            .with_label_values(&["true", labels[0], labels[1]])
                            .observe(elapsed);
                        Ok(self.ticket(c, (q != usize::MAX).then_some(q), seats))
                    }
                    None => {
                        m.wait_duration
                            .with_label_values(&["false", labels[0], labels[1]])
                            .observe(elapsed);
                        Err(Self::reject(c, RejectReason::TimeOut))
                    }
                }
            }
        }
    }

    fn release(&self, level: &str, queue: Option<usize>, seats: u32) {
        let mut levels = self.lock();
        if let Some(l) = levels.get_mut(level) {
            l.set.release(queue, seats);
            if !l.spec.exempt {
                l.set.dispatch();
            }
        }
    }

    /// One borrowing pass: each limited level's seats for the next period,
    /// by its demand since the last pass (see [`allocation`]).
    pub fn adjust_limits(&self) {
        let mut levels = self.lock();
        let mut names: Vec<&String> = levels
            .iter()
            .filter(|(_, l)| !l.spec.exempt)
            .map(|(n, _)| n)
            .collect();
        names.sort();
        let names: Vec<String> = names.into_iter().cloned().collect();
        let bounds: Vec<allocation::Bounds> = names
            .iter()
            .filter_map(|n| levels.get(n))
            .map(|l| allocation::Bounds {
                lower: f64::from(l.lower),
                upper: f64::from(l.upper),
                target: f64::from(l.set.demand_high_water)
                    .clamp(f64::from(l.lower), f64::from(l.upper.max(l.lower))),
            })
            .collect();
        let alloc = allocation::allocate(&bounds, f64::from(self.config.server_concurrency_limit));
        let m = metrics::metrics();
        for (name, seats) in names.iter().zip(alloc) {
            if let Some(l) = levels.get_mut(name) {
                m.seat_demand_high_watermark
                    .with_label_values(&[name])
                    .set(i64::from(l.set.demand_high_water));
                l.set.limit = seats.round().max(1.0) as u32;
                l.set.demand_high_water = l.set.current_demand();
                m.current_limit
                    .with_label_values(&[name])
                    .set(i64::from(l.set.limit));
                l.set.dispatch();
            }
        }
    }

    /// Runs [`FlowControl::adjust_limits`] every `period` while `self` lives.
    pub async fn run_borrowing(self: Arc<Self>, period: Duration) {
        let weak = Arc::downgrade(&self);
        drop(self);
        loop {
            tokio::time::sleep(period).await;
            match weak.upgrade() {
                Some(fc) => fc.adjust_limits(),
                None => return,
            }
        }
    }

    /// The current limit of `level` in seats (for tests and status).
    pub fn current_limit(&self, level: &str) -> Option<u32> {
        self.lock().get(level).map(|l| l.set.limit)
    }
}

/// A request waiting in a queue. If the wait is abandoned (the client went
/// away, the filter's future was dropped), it leaves its queue, or gives
/// back the seats it was dispatched with meanwhile: nothing leaks.
struct Pending<'a> {
    fc: &'a Arc<FlowControl>,
    level: &'a str,
    id: u64,
    seats: u32,
    rx: Option<oneshot::Receiver<usize>>,
}

impl Pending<'_> {
    /// The queue the request was dispatched from, or `None` when it waited
    /// `limit` without being dispatched (it has left its queue then).
    async fn wait(&mut self, limit: Duration) -> Option<usize> {
        let rx = self.rx.as_mut()?;
        let outcome = tokio::time::timeout(limit, rx).await;
        let dispatched = match outcome {
            Ok(Ok(q)) => Some(q),
            Ok(Err(_)) => None,
            Err(_) => {
                if self.withdraw() {
                    None
                } else {
                    self.rx.as_mut().and_then(|rx| rx.try_recv().ok())
                }
            }
        };
        self.rx = None;
        dispatched
    }

    fn withdraw(&self) -> bool {
        let mut levels = self.fc.lock();
        levels.get_mut(self.level).is_some_and(|l| {
            l.set
                .queue_of(self.id)
                .is_some_and(|q| l.set.withdraw(q, self.id))
        })
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        if self.withdraw() {
            return;
        }
        if let Ok(q) = rx.try_recv() {
            self.fc
                .release(self.level, (q != usize::MAX).then_some(q), self.seats);
        }
    }
}

#[cfg(test)]
mod tests;
