//! The CRD controllers, in one reconcile loop over all CRDs: names
//! (`NamesAccepted`, `status.acceptedNames`), `Established`, the cleanup
//! of a deleted CRD's instances (`Terminating`, then the finalizer is
//! removed), and the routes: after each pass the served groups are rebuilt
//! from the Established CRDs (stores are compiled once per CRD generation).
//!
//! Until the first pass is done the server answers 503 with `Retry-After`
//! instead of 404, so clients see no false 404s after a restart.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::meta;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::read::{ListForm, ListRead};
use apiserver::registry::resource::Subresource;
use apiserver::registry::store::{DeleteOptions, ListOptions, Store, UpdateKind, WriteContext};
use apiserver::registry::watch::WatchOptions;
use apiserver::registry::watch_event::WatchEvent;
use apiserver::server::handler::GenericApiServer;
use apiserver::storage::EtcdStorage;
use serde_json::{json, Value};
use tokio::sync::Notify;

use crate::crd::{self, conditions, CLEANUP_FINALIZER};
use crate::naming;
use crate::serving;

/// How often the loop runs without a change (finalizer retries).
const RESYNC: Duration = Duration::from_secs(5);

/// A resync that would find the CRDs as a quiet pass (one that wrote
/// nothing and left nothing to retry) left them is skipped, but a full pass
/// still runs at least this often.
const FULL_RESYNC: Duration = Duration::from_secs(60);

/// Reconciles CRDs and keeps the served routes in step with them.
pub struct Controller {
    api: Arc<GenericApiServer>,
    crds: Store,
    /// How custom resource stores are made.
    stores: serving::StoreConfig,
    /// uid → (compiled-for key, stores of the served versions).
    served: Mutex<HashMap<String, (String, Vec<serving::Served>)>>,
    /// The CRDs parsed from the cache (see [`Controller::all_crds`]).
    parsed: Mutex<ParsedCrds>,
    wake: Notify,
    openapi: Arc<crate::openapi::OpenApi>,
    /// Set after the first complete pass (readiness).
    synced: Arc<std::sync::atomic::AtomicBool>,
}

/// etcd key → (revision, the CRD parsed from the watch cache at it).
type ParsedCrds = HashMap<Box<str>, (i64, Arc<Value>)>;

/// `crd_obj` with the status of `new` (an object holding only a status).
fn with_status(crd_obj: &Value, new: Value) -> Value {
    let mut full = crd_obj.clone();
    if let (Value::Object(m), Value::Object(mut n)) = (&mut full, new) {
        if let Some(status) = n.remove("status") {
            m.insert("status".into(), status);
        }
    }
    full
}

fn names_of(crd_obj: &Value) -> Value {
    crd_obj
        .get("spec")
        .and_then(|s| s.get("names"))
        .cloned()
        .unwrap_or(Value::Null)
}

impl Controller {
    /// A controller for the CRDs in `crds`, serving through `api` the
    /// custom resources' stores made as `stores` says.
    pub fn new(
        api: Arc<GenericApiServer>,
        crds: Store,
        stores: serving::StoreConfig,
        openapi: Arc<crate::openapi::OpenApi>,
        synced: Arc<std::sync::atomic::AtomicBool>,
    ) -> Arc<Self> {
        Arc::new(Controller {
            api,
            crds,
            stores,
            served: Mutex::new(HashMap::new()),
            parsed: Mutex::new(HashMap::new()),
            wake: Notify::new(),
            openapi,
            synced,
        })
    }

    /// Starts the watch, the reconcile loop and the namespace cleaner.
    pub fn spawn(self: &Arc<Self>) {
        let me = self.clone();
        tokio::spawn(async move { me.watch_loop().await });
        let me = self.clone();
        tokio::spawn(async move { me.reconcile_loop().await });
        let me = self.clone();
        tokio::spawn(async move { crate::namespace_cleanup::run(me).await });
    }

    /// One store per namespaced custom resource now served (its first
    /// served version), for deleting a namespace's custom resources.
    pub fn namespaced_stores(&self) -> Vec<Store> {
        let served = match self.served.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        served
            .values()
            .filter_map(|(_, served)| served.first())
            .filter(|s| s.store.def.namespaced)
            .map(|s| s.store.clone())
            .collect()
    }

    /// The etcd client and key prefix the controller works with.
    pub fn storage(&self) -> (&EtcdStorage, &str) {
        (&self.stores.storage, &self.stores.prefix)
    }

    async fn watch_loop(&self) {
        loop {
            match self.crds.watch("", WatchOptions::default()).await {
                Ok(mut rx) => {
                    while let Some(ev) = rx.recv().await {
                        if let WatchEvent::Error(_) = ev {
                            break;
                        }
                        self.wake.notify_one();
                    }
                }
                Err(e) => tracing::warn!(error = %e.message, "watching CRDs"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn reconcile_loop(&self) {
        loop {
            let quiet = match self.reconcile().await {
                Ok(quiet) => {
                    self.api.set_routes_pending(false);
                    self.synced.store(true, std::sync::atomic::Ordering::SeqCst);
                    quiet.map(|revision| (revision, tokio::time::Instant::now()))
                }
                Err(e) => {
                    tracing::warn!(error = %e.message, "reconciling CRDs");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            };
            // Any CRD event wakes the loop (`watch_loop`); a resync without
            // one is skipped while the CRD cache is where the last quiet
            // pass read it: that pass would do nothing again (at 1,000 CRDs
            // it decodes them all and rebuilds every route).
            loop {
                if tokio::time::timeout(RESYNC, self.wake.notified())
                    .await
                    .is_ok()
                {
                    break;
                }
                let unchanged = match (quiet, self.crds.cache_revision()) {
                    (Some((revision, at)), Some(now)) => {
                        now == revision && at.elapsed() < FULL_RESYNC
                    }
                    _ => false,
                };
                if !unchanged {
                    break;
                }
            }
        }
    }

    /// One pass over all CRDs. Returns the revision of the CRDs it read
    /// when the pass was quiet: it wrote nothing and left nothing to retry
    /// (no CRD being deleted, no failed status write).
    pub async fn reconcile(&self) -> Result<Option<i64>, ApiError> {
        let (mut all, revision) = self.all_crds().await?;
        let mut quiet = true;
        all.sort_by(|a, b| {
            (meta::meta_str(a, "creationTimestamp"), meta::name(a))
                .cmp(&(meta::meta_str(b, "creationTimestamp"), meta::name(b)))
        });
        // Names already accepted (in status) by the CRDs of each group.
        let mut taken: HashMap<String, naming::GroupNames> = HashMap::new();
        for obj in &all {
            if let Some(accepted) = obj.get("status").and_then(|s| s.get("acceptedNames")) {
                taken
                    .entry(crd::spec_str(obj, &["group"]).to_string())
                    .or_default()
                    .add(accepted);
            }
        }
        let mut serving = Vec::new();
        let mut newly_established = Vec::new();
        for obj in all {
            let group = crd::spec_str(&obj, &["group"]).to_string();
            let wanted = names_of(&obj);
            let t = taken.entry(group.clone()).or_default();
            let previous = obj
                .get("status")
                .and_then(|s| s.get("acceptedNames"))
                .cloned()
                .unwrap_or(Value::Null);
            let naming::Decision { accepted, conflict } = naming::decide(&wanted, &previous, t);
            // The status this pass wants, in an object of its own: the CRD
            // is copied only when it is written.
            let mut status = obj
                .get("status")
                .filter(|s| s.is_object())
                .cloned()
                .unwrap_or_else(|| json!({}));
            if let Some(st) = status.as_object_mut() {
                st.insert("acceptedNames".into(), accepted.clone());
            }
            let mut new = json!({ "status": status });
            match &conflict {
                None => {
                    conditions::set(
                        &mut new,
                        "NamesAccepted",
                        "True",
                        "NoConflicts",
                        "no conflicts found",
                    );
                }
                Some((reason, msg)) => {
                    conditions::set(&mut new, "NamesAccepted", "False", reason, msg);
                }
            }
            t.add(&accepted);
            if conflict.is_none() {
                conditions::set(
                    &mut new,
                    "Established",
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                );
            } else if !conditions::is_true(&new, "Established") {
                conditions::set(
                    &mut new,
                    "Established",
                    "False",
                    "NotAccepted",
                    "not all names are accepted",
                );
            }
            // A CRD that becomes Established is served before its
            // condition says so: whoever reacts to the condition (the
            // aggregator's discovery, `kubectl wait`) finds it routed.
            if conditions::is_true(&new, "Established")
                && !conditions::is_true(&obj, "Established")
                && !meta::is_deleting(&obj)
            {
                let new = Arc::new(with_status(&obj, new));
                serving.push(new.clone());
                newly_established.push(new);
                continue;
            }
            let mut current = obj;
            if new.get("status") != current.get("status") {
                quiet = false;
                let name = meta::name(&current).to_string();
                match self
                    .crds
                    .update(
                        "",
                        &name,
                        Some(Subresource::Status),
                        UpdateKind::Replace(with_status(&current, new)),
                        &WriteContext::default(),
                    )
                    .await
                {
                    Ok(updated) => current = Arc::new(updated),
                    Err(e) => {
                        tracing::debug!(crd = %name, error = %e.message, "updating CRD status");
                        continue;
                    }
                }
            }
            if meta::is_deleting(&current) {
                quiet = false;
                self.clean_up(&current).await;
            }
            if conditions::is_true(&current, "Established") {
                serving.push(current);
            }
        }
        self.rebuild_routes(&serving);
        self.openapi.set_crds(serving);
        quiet &= newly_established.is_empty();
        for new in newly_established {
            let name = meta::name(&new).to_string();
            if let Err(e) = self
                .crds
                .update(
                    "",
                    &name,
                    Some(Subresource::Status),
                    UpdateKind::Replace(Arc::unwrap_or_clone(new)),
                    &WriteContext::default(),
                )
                .await
            {
                // The next pass writes it (the CRD is already served).
                tracing::debug!(crd = %name, error = %e.message, "updating CRD status");
                self.wake.notify_one();
            }
        }
        Ok(quiet.then_some(revision))
    }

    /// Deletes a terminating CRD's instances, then its finalizer.
    async fn clean_up(&self, crd_obj: &Value) {
        if !meta::finalizers(crd_obj)
            .iter()
            .any(|f| f == CLEANUP_FINALIZER)
        {
            return;
        }
        let name = meta::name(crd_obj).to_string();
        // Uncached: these stores live for one cleanup pass.
        let stores = serving::stores_for(crd_obj, &self.stores.uncached());
        let mut remaining = 0;
        if let Some(store) = stores.first().map(|s| &s.store) {
            let ctx = WriteContext::default();
            if let Err(e) = store
                .delete_collection("", &ListOptions::default(), &DeleteOptions::default(), &ctx)
                .await
            {
                self.set_terminating(
                    crd_obj,
                    "InstanceDeletionFailed",
                    &format!("could not delete instances: {}", e.message),
                )
                .await;
                return;
            }
            remaining = match store.list("", &ListOptions::default()).await {
                Ok(p) => p.items.len(),
                Err(_) => 1,
            };
        }
        if remaining > 0 {
            self.set_terminating(
                crd_obj,
                "InstanceDeletionCheck",
                &format!("could not confirm zero CustomResources remaining: {remaining} remaining"),
            )
            .await;
            return;
        }
        let remove = |old: &Value| -> Result<Value, ApiError> {
            let mut new = old.clone();
            let keep: Vec<String> = meta::finalizers(old)
                .into_iter()
                .filter(|f| f != CLEANUP_FINALIZER)
                .collect();
            meta::set(&mut new, "finalizers", json!(keep));
            Ok(new)
        };
        if let Err(e) = self
            .crds
            .update(
                "",
                &name,
                None,
                UpdateKind::Patch(&remove),
                &WriteContext::default(),
            )
            .await
        {
            tracing::debug!(crd = %name, error = %e.message, "removing the cleanup finalizer");
        }
    }

    async fn set_terminating(&self, crd_obj: &Value, reason: &str, message: &str) {
        let mut new = crd_obj.clone();
        if conditions::set(&mut new, "Terminating", "True", reason, message) {
            let _ = self
                .crds
                .update(
                    "",
                    meta::name(crd_obj),
                    Some(Subresource::Status),
                    UpdateKind::Replace(new),
                    &WriteContext::default(),
                )
                .await;
        }
    }

    /// Every CRD, current (a consistent LIST), and the revision of the
    /// read: from the CRD watch cache once it has proved itself current,
    /// from etcd otherwise. A cached CRD is parsed once per revision: a
    /// pass over 1,000 CRDs after one changed parses one.
    async fn all_crds(&self) -> Result<(Vec<Arc<Value>>, i64), ApiError> {
        match self
            .crds
            .read_list("", &ListOptions::default(), ListForm::Decoded)
            .await?
        {
            ListRead::Encoded(page) => {
                let mut parsed = match self.parsed.lock() {
                    Ok(p) => p,
                    Err(p) => p.into_inner(),
                };
                let mut all = Vec::with_capacity(page.objects.len());
                for o in &page.objects {
                    let value = match parsed.get(&o.key) {
                        Some((revision, v)) if *revision == o.revision => v.clone(),
                        _ => {
                            let v: Arc<Value> = Arc::new(
                                serde_json::from_slice(&o.bytes).map_err(ApiError::internal)?,
                            );
                            parsed.insert(o.key.clone(), (o.revision, v.clone()));
                            v
                        }
                    };
                    all.push(value);
                }
                if parsed.len() > all.len() {
                    let live: HashSet<&str> = page.objects.iter().map(|o| &*o.key).collect();
                    parsed.retain(|k, _| live.contains(&**k));
                }
                Ok((all, page.resource_version))
            }
            ListRead::Decoded(page) => Ok((
                page.items.into_iter().map(Arc::new).collect(),
                page.resource_version,
            )),
            // Only asked for by `ListForm::Streamed`.
            ListRead::Streamed(_) => Err(ApiError::internal("a streamed list of CRDs")),
        }
    }

    /// Replaces the served groups: the CRD resource, then every served
    /// version of every Established CRD.
    fn rebuild_routes(&self, established: &[Arc<Value>]) {
        let mut groups = Catalog::default();
        groups.add(self.crds.clone());
        let mut served = match self.served.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        let mut live = HashSet::new();
        for obj in established {
            let uid = meta::uid(obj).to_string();
            let key = format!(
                "{}/{}",
                obj.get("metadata")
                    .and_then(|m| m.get("generation"))
                    .cloned()
                    .unwrap_or(Value::Null),
                obj.get("status")
                    .and_then(|s| s.get("acceptedNames"))
                    .cloned()
                    .unwrap_or(Value::Null)
            );
            let stale = served.get(&uid).is_none_or(|(k, _)| *k != key);
            if stale {
                let stores = serving::stores_for(obj, &self.stores);
                if let Some((_, old)) = served.insert(uid.clone(), (key, stores)) {
                    old.iter().for_each(serving::Served::stop_cache);
                }
            }
            if let Some((_, stores)) = served.get(&uid) {
                for s in stores {
                    s.register(&mut groups);
                }
            }
            live.insert(uid);
        }
        served.retain(|uid, (_, stores)| {
            let keep = live.contains(uid);
            if !keep {
                stores.iter().for_each(serving::Served::stop_cache);
            }
            keep
        });
        drop(served);
        self.api.set_groups(groups);
    }
}
