//! Leader election over `coordination.k8s.io/v1` Leases, as client-go's
//! `leaderelection` with its `--leader-elect*` flags: the singleton loops of
//! a tier (allocator repair, the namespace controller, ...) run in one
//! replica at a time, and move to another within a lease duration when
//! their holder dies.
//!
//! A candidate reads the Lease every `--leader-elect-retry-period`. It takes
//! it when there is none, when it is its own, or when the holder has not
//! renewed it for `leaseDurationSeconds` as this candidate observed (local
//! time since the record last changed, so clocks need not agree), writing
//! `holderIdentity`, `renewTime` (and `acquireTime`, `leaseTransitions` on a
//! change of holder) with the read `resourceVersion`: of two candidates one
//! write wins. The leader renews every retry period; when it has not
//! renewed for `--leader-elect-renew-deadline` it stops leading (its loops
//! are aborted) before anyone else may take over. A leader that shuts down
//! releases the Lease (empty holder, one-second duration) so another replica
//! takes over at once. `leader_election_master_status{name}` is 1 where the
//! Lease is held.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use prometheus::IntGaugeVec;
use serde_json::{json, Value};

use crate::authentication::UserInfo;
use crate::proxy::Delegate;
use crate::registry::store::{Store, UpdateKind, WriteContext};
use crate::request::WatchTermination;

/// `--leader-elect*`, with client-go's defaults.
#[derive(clap::Args, Clone, Debug)]
pub struct LeaderElectionOptions {
    /// Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, help_heading = "Leader election flags")]
    pub leader_elect: bool,
    /// The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot.
    #[arg(long, default_value = "15s", value_parser = super::options::parse_duration, help_heading = "Leader election flags")]
    pub leader_elect_lease_duration: Duration,
    /// The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration.
    #[arg(long, default_value = "10s", value_parser = super::options::parse_duration, help_heading = "Leader election flags")]
    pub leader_elect_renew_deadline: Duration,
    /// The duration the clients should wait between attempting acquisition and renewal of a leadership.
    #[arg(long, default_value = "2s", value_parser = super::options::parse_duration, help_heading = "Leader election flags")]
    pub leader_elect_retry_period: Duration,
    /// The type of resource object that is used for locking during leader election. Supported options are 'leases'.
    #[arg(long, default_value = "leases", help_heading = "Leader election flags")]
    pub leader_elect_resource_lock: String,
    /// The name of resource object that is used for locking during leader election (the tier's own by default).
    #[arg(long, help_heading = "Leader election flags")]
    pub leader_elect_resource_name: Option<String>,
    /// The namespace of resource object that is used for locking during leader election.
    #[arg(
        long,
        default_value = "kube-system",
        help_heading = "Leader election flags"
    )]
    pub leader_elect_resource_namespace: String,
}

impl LeaderElectionOptions {
    /// The election's configuration, `default_name` being the tier's Lease.
    pub fn config(&self, default_name: &str, identity: String) -> anyhow::Result<ElectionConfig> {
        anyhow::ensure!(
            self.leader_elect_resource_lock == "leases",
            "--leader-elect-resource-lock: only \"leases\" is served"
        );
        anyhow::ensure!(
            self.leader_elect_renew_deadline < self.leader_elect_lease_duration,
            "--leader-elect-renew-deadline must be less than --leader-elect-lease-duration"
        );
        anyhow::ensure!(
            self.leader_elect_retry_period < self.leader_elect_renew_deadline,
            "--leader-elect-retry-period must be less than --leader-elect-renew-deadline"
        );
        Ok(ElectionConfig {
            name: self
                .leader_elect_resource_name
                .clone()
                .unwrap_or_else(|| default_name.to_string()),
            namespace: self.leader_elect_resource_namespace.clone(),
            identity,
            lease_duration: self.leader_elect_lease_duration,
            renew_deadline: self.leader_elect_renew_deadline,
            retry_period: self.leader_elect_retry_period,
        })
    }
}

/// One election.
#[derive(Clone, Debug)]
pub struct ElectionConfig {
    pub name: String,
    pub namespace: String,
    /// This candidate (`<hostname>_<uuid>`, as client-go's users build it).
    pub identity: String,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

/// A candidate's identity: the host name and a fresh UUID.
pub fn candidate_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".to_string());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// Where Leases are read and written.
pub trait LeaseStore: Send + Sync + 'static {
    /// The Lease `namespace/name`, or `None`.
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, String>>;
    /// Creates a Lease; `Ok(false)` when it exists already.
    fn create<'a>(
        &'a self,
        namespace: &'a str,
        lease: Value,
    ) -> BoxFuture<'a, Result<bool, String>>;
    /// Replaces a Lease at its `resourceVersion`; `Ok(false)` on a conflict.
    fn update<'a>(
        &'a self,
        namespace: &'a str,
        lease: Value,
    ) -> BoxFuture<'a, Result<bool, String>>;
}

/// Leases in this process's own store (kube-core).
pub struct StoreLeases(pub Store);

impl LeaseStore for StoreLeases {
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            match self.0.get(namespace, name).await {
                Ok(v) => Ok(Some(v)),
                Err(e) if e.code == 404 => Ok(None),
                Err(e) => Err(e.message),
            }
        })
    }

    fn create<'a>(
        &'a self,
        namespace: &'a str,
        lease: Value,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            match self
                .0
                .create(namespace, lease, &WriteContext::default())
                .await
            {
                Ok(_) => Ok(true),
                Err(e) if e.code == 409 => Ok(false),
                Err(e) => Err(e.message),
            }
        })
    }

    fn update<'a>(
        &'a self,
        namespace: &'a str,
        lease: Value,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let name = lease["metadata"]["name"].as_str().unwrap_or("").to_string();
            match self
                .0
                .update(
                    namespace,
                    &name,
                    None,
                    UpdateKind::Replace(lease),
                    &WriteContext::default(),
                )
                .await
            {
                Ok(_) => Ok(true),
                Err(e) if e.code == 409 => Ok(false),
                Err(e) => Err(e.message),
            }
        })
    }
}

/// Leases through the API of the next tier (the aggregator's, in
/// kube-core), as `user`.
pub struct RemoteLeases {
    pub delegate: Delegate,
    pub user: UserInfo,
}

impl RemoteLeases {
    fn path(namespace: &str, name: Option<&str>) -> String {
        let base = format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases");
        match name {
            Some(n) => format!("{base}/{n}"),
            None => base,
        }
    }

    async fn call(
        &self,
        method: http::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        self.delegate
            .call_json(
                method,
                path,
                body,
                Some(&self.user),
                None,
                Duration::from_secs(5),
            )
            .await
    }
}

impl LeaseStore for RemoteLeases {
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            match self
                .call(http::Method::GET, &Self::path(namespace, Some(name)), None)
                .await?
            {
                (200, v) => Ok(Some(v)),
                (404, _) => Ok(None),
                (code, v) => Err(format!("GET lease: {code} {v}")),
            }
        })
    }

    fn create<'a>(
        &'a self,
        namespace: &'a str,
        lease: Value,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            match self
                .call(
                    http::Method::POST,
                    &Self::path(namespace, None),
                    Some(&lease),
                )
                .await?
            {
                (201, _) => Ok(true),
                (409, _) => Ok(false),
                (code, v) => Err(format!("POST lease: {code} {v}")),
            }
        })
    }

    fn update<'a>(
        &'a self,
        namespace: &'a str,
        lease: Value,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let name = lease["metadata"]["name"].as_str().unwrap_or("").to_string();
            match self
                .call(
                    http::Method::PUT,
                    &Self::path(namespace, Some(&name)),
                    Some(&lease),
                )
                .await?
            {
                (200, _) => Ok(true),
                (409, _) => Ok(false),
                (code, v) => Err(format!("PUT lease: {code} {v}")),
            }
        })
    }
}

fn status_gauge() -> &'static IntGaugeVec {
    static G: OnceLock<IntGaugeVec> = OnceLock::new();
    G.get_or_init(|| {
        crate::metrics::register(
            IntGaugeVec::new(
                prometheus::Opts::new(
                    "leader_election_master_status",
                    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
                ),
                &["name"],
            )
            .expect("static metric definition"),
        )
    })
}

fn micro_now() -> String {
    let t = jiff::Timestamp::now();
    format!(
        "{}.{:06}Z",
        t.strftime("%Y-%m-%dT%H:%M:%S"),
        t.subsec_microsecond()
    )
}

/// What a candidate last saw of the Lease, and when (local time).
struct Observed {
    record: (String, String),
    at: Instant,
    lease_duration: Duration,
}

/// A candidate in one election.
pub struct LeaderElector {
    cfg: ElectionConfig,
    store: Arc<dyn LeaseStore>,
    observed: Option<Observed>,
}

impl LeaderElector {
    /// A candidate of `cfg` over `store`.
    pub fn new(cfg: ElectionConfig, store: Arc<dyn LeaseStore>) -> Self {
        LeaderElector {
            cfg,
            store,
            observed: None,
        }
    }

    /// One acquire-or-renew round: whether this candidate holds the Lease
    /// afterwards.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, String> {
        let cfg = &self.cfg;
        let now = micro_now();
        let duration_secs = cfg.lease_duration.as_secs().max(1);
        let Some(mut lease) = self.store.get(&cfg.namespace, &cfg.name).await? else {
            let lease = json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": {
                    "holderIdentity": cfg.identity,
                    "leaseDurationSeconds": duration_secs,
                    "acquireTime": now, "renewTime": now, "leaseTransitions": 0,
                },
            });
            return self.store.create(&cfg.namespace, lease).await;
        };
        let spec = lease.get("spec").cloned().unwrap_or(Value::Null);
        let holder = spec["holderIdentity"].as_str().unwrap_or("").to_string();
        let renew = spec["renewTime"].as_str().unwrap_or("").to_string();
        let their_duration = Duration::from_secs(
            spec["leaseDurationSeconds"]
                .as_u64()
                .unwrap_or(duration_secs),
        );
        let record = (holder.clone(), renew);
        match &self.observed {
            Some(o) if o.record == record => {}
            _ => {
                self.observed = Some(Observed {
                    record,
                    at: Instant::now(),
                    lease_duration: their_duration,
                })
            }
        }
        let mine = holder == cfg.identity;
        let expired = self
            .observed
            .as_ref()
            .is_none_or(|o| o.at.elapsed() > o.lease_duration);
        if !mine && !holder.is_empty() && !expired {
            return Ok(false);
        }
        let transitions = spec["leaseTransitions"].as_i64().unwrap_or(0);
        let s = &mut lease["spec"];
        if !mine {
            s["acquireTime"] = json!(now);
            s["leaseTransitions"] = json!(if holder.is_empty() && transitions == 0 {
                0
            } else {
                transitions + 1
            });
        }
        s["holderIdentity"] = json!(cfg.identity);
        s["leaseDurationSeconds"] = json!(duration_secs);
        s["renewTime"] = json!(now);
        let won = self.store.update(&cfg.namespace, lease).await?;
        if won {
            self.observed = None;
        }
        Ok(won)
    }

    /// Gives the Lease up (at shutdown), if held.
    pub async fn release(&mut self) {
        let cfg = &self.cfg;
        if let Ok(Some(mut lease)) = self.store.get(&cfg.namespace, &cfg.name).await {
            if lease["spec"]["holderIdentity"] == cfg.identity.as_str() {
                lease["spec"]["holderIdentity"] = json!("");
                lease["spec"]["leaseDurationSeconds"] = json!(1);
                lease["spec"]["renewTime"] = json!(micro_now());
                let _ = self.store.update(&cfg.namespace, lease).await;
            }
        }
    }

    /// Runs forever (until `shutdown`): leads by running `lead()` as a task
    /// for as long as the Lease is held, aborting it when leadership is
    /// lost, and candidates again.
    pub async fn run<F, Fut>(mut self, lead: F, mut shutdown: Option<WatchTermination>)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let gauge = status_gauge().with_label_values(&[&self.cfg.name]);
        gauge.set(0);
        loop {
            // Candidate.
            loop {
                match self.try_acquire_or_renew().await {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::warn!(lease = %self.cfg.name, error = %e, "leader election: reading the lease failed")
                    }
                }
                tokio::select! {
                    _ = tokio::time::sleep(self.cfg.retry_period) => {}
                    _ = wait(&mut shutdown) => return,
                }
            }
            tracing::info!(lease = %self.cfg.name, identity = %self.cfg.identity, "leader election: leading");
            gauge.set(1);
            let task = tokio::spawn(lead());
            let mut renewed = Instant::now();
            let stop = loop {
                tokio::select! {
                    _ = tokio::time::sleep(self.cfg.retry_period) => {}
                    _ = wait(&mut shutdown) => break true,
                }
                match self.try_acquire_or_renew().await {
                    Ok(true) => renewed = Instant::now(),
                    Ok(false) => {
                        tracing::warn!(lease = %self.cfg.name, "leader election: the lease was taken");
                        break false;
                    }
                    Err(e) => {
                        tracing::warn!(lease = %self.cfg.name, error = %e, "leader election: renewing failed")
                    }
                }
                if renewed.elapsed() > self.cfg.renew_deadline {
                    tracing::warn!(lease = %self.cfg.name, "leader election: not renewed within the deadline");
                    break false;
                }
            };
            task.abort();
            gauge.set(0);
            tracing::info!(lease = %self.cfg.name, "leader election: stopped leading");
            if stop {
                self.release().await;
                return;
            }
        }
    }
}

/// A `lead` for [`LeaderElector::run`] that does nothing but hold `flag`
/// true for as long as this replica leads: for loops that must run in every
/// replica but write only in one (the aggregator's APIService statuses).
pub fn hold_flag(
    flag: Arc<std::sync::atomic::AtomicBool>,
) -> impl Fn() -> BoxFuture<'static, ()> + Send + Sync + 'static {
    struct Held(Arc<std::sync::atomic::AtomicBool>);
    impl Drop for Held {
        fn drop(&mut self) {
            self.0.store(false, std::sync::atomic::Ordering::SeqCst);
        }
    }
    move || {
        let flag = flag.clone();
        Box::pin(async move {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            let _held = Held(flag);
            std::future::pending::<()>().await
        })
    }
}

async fn wait(shutdown: &mut Option<WatchTermination>) {
    match shutdown {
        Some(t) => t.wait().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// An in-memory Lease store with resourceVersion conflicts.
    #[derive(Default)]
    struct Memory(Mutex<Option<(u64, Value)>>);

    impl LeaseStore for Memory {
        fn get<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
        ) -> BoxFuture<'a, Result<Option<Value>, String>> {
            let v = self.0.lock().unwrap().as_ref().map(|(rv, v)| {
                let mut v = v.clone();
                v["metadata"]["resourceVersion"] = json!(rv.to_string());
                v
            });
            Box::pin(async move { Ok(v) })
        }
        fn create<'a>(&'a self, _: &'a str, lease: Value) -> BoxFuture<'a, Result<bool, String>> {
            let mut s = self.0.lock().unwrap();
            let ok = s.is_none();
            if ok {
                *s = Some((1, lease));
            }
            Box::pin(async move { Ok(ok) })
        }
        fn update<'a>(&'a self, _: &'a str, lease: Value) -> BoxFuture<'a, Result<bool, String>> {
            let mut s = self.0.lock().unwrap();
            let want = lease["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|r| r.parse().ok());
            let ok = matches!(&*s, Some((rv, _)) if Some(*rv) == want);
            if ok {
                let rv = s.as_ref().map(|(rv, _)| rv + 1).unwrap_or(1);
                *s = Some((rv, lease));
            }
            Box::pin(async move { Ok(ok) })
        }
    }

    fn cfg(id: &str) -> ElectionConfig {
        ElectionConfig {
            name: "x".into(),
            namespace: "kube-system".into(),
            identity: id.into(),
            lease_duration: Duration::from_millis(300),
            renew_deadline: Duration::from_millis(200),
            retry_period: Duration::from_millis(50),
        }
    }

    #[tokio::test]
    async fn one_holder_at_a_time_and_takeover_after_expiry() {
        let store: Arc<dyn LeaseStore> = Arc::new(Memory::default());
        let mut a = LeaderElector::new(cfg("a"), store.clone());
        let mut b = LeaderElector::new(cfg("b"), store.clone());
        assert!(a.try_acquire_or_renew().await.unwrap());
        assert!(!b.try_acquire_or_renew().await.unwrap(), "a holds it");
        assert!(a.try_acquire_or_renew().await.unwrap(), "a renews");
        assert!(!b.try_acquire_or_renew().await.unwrap());
        // a stops renewing: b takes over once it has seen no change for the
        // lease duration.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!b.try_acquire_or_renew().await.unwrap(), "not expired yet");
        tokio::time::sleep(Duration::from_millis(1100)).await;
        assert!(
            b.try_acquire_or_renew().await.unwrap(),
            "expired: b takes it"
        );
        let lease = store.get("", "").await.unwrap().unwrap();
        assert_eq!(lease["spec"]["holderIdentity"], "b");
        assert_eq!(lease["spec"]["leaseTransitions"], 1);
        assert!(!a.try_acquire_or_renew().await.unwrap(), "a lost it");
        b.release().await;
        let lease = store.get("", "").await.unwrap().unwrap();
        assert_eq!(lease["spec"]["holderIdentity"], "");
        assert!(
            a.try_acquire_or_renew().await.unwrap(),
            "a released lease is taken at once"
        );
    }
}
