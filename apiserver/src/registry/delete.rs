//! DELETE on the generic store: preconditions, finalizers, graceful
//! deletion, and deleting collections.

use serde_json::{json, Value};

use super::admit::{Attributes, Operation};
use super::store::{storage_error, Store, WriteContext, MAX_UPDATE_ATTEMPTS};
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::meta;
use crate::storage::{KeyValue, Retry};

use super::list::ListOptions;

/// `DeleteOptions`, from the body and the query.
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    pub grace_period_seconds: Option<i64>,
    pub precondition_uid: Option<String>,
    pub precondition_resource_version: Option<String>,
    pub propagation_policy: Option<String>,
    pub dry_run: bool,
}

/// Upstream's `deletionFinalizersForGarbageCollection`: the propagation
/// policy becomes the garbage collector's finalizers. `Orphan` adds
/// `orphan` (the collector removes the dependents' owner references first),
/// `Foreground` adds `foregroundDeletion` (the owner stays, with
/// `deletionTimestamp` set, until its blocking dependents are gone),
/// `Background` removes both; without a policy the finalizers already on the
/// object stand (every served version's default is background). Returns
/// whether the finalizers changed.
pub fn apply_propagation_policy(obj: &mut Value, policy: Option<&str>) -> bool {
    use crate::apimachinery::validation::object_meta::{
        FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS as FINALIZER_ORPHAN,
    };
    let (add, remove): (Option<&str>, &[&str]) = match policy {
        Some("Orphan") => (Some(FINALIZER_ORPHAN), &[FINALIZER_DELETE_DEPENDENTS]),
        Some("Foreground") => (Some(FINALIZER_DELETE_DEPENDENTS), &[FINALIZER_ORPHAN]),
        Some("Background") => (None, &[FINALIZER_ORPHAN, FINALIZER_DELETE_DEPENDENTS]),
        _ => return false,
    };
    let before = meta::finalizers(obj);
    let mut after: Vec<String> = before
        .iter()
        .filter(|f| !remove.contains(&f.as_str()))
        .cloned()
        .collect();
    if let Some(f) = add {
        if !after.iter().any(|x| x == f) {
            after.push(f.to_string());
        }
    }
    if after == before {
        return false;
    }
    let m = meta::meta_mut(obj);
    if after.is_empty() {
        m.remove("finalizers");
    } else {
        m.insert("finalizers".into(), json!(after));
    }
    true
}

/// What a delete did.
pub enum DeleteOutcome {
    /// The object is gone; this was its last state.
    Deleted(Value),
    /// The object was marked for deletion (finalizers or a grace period) and
    /// still exists in this state.
    Pending(Value),
}

impl Store {
    /// DELETE one object, honouring preconditions, finalizers and grace periods.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
        ctx: &WriteContext,
    ) -> Result<DeleteOutcome, ApiError> {
        let key = self.key(namespace, name);
        self.storage
            .guaranteed_update(
                &key,
                MAX_UPDATE_ATTEMPTS,
                |current| self.delete_once(current, &key, namespace, name, opts, ctx),
                storage_error,
                || self.conflict(name),
            )
            .await
    }

    /// One attempt of [`Self::delete`] on the stored object `current`.
    #[allow(clippy::too_many_arguments)]
    async fn delete_once(
        &self,
        current: Option<KeyValue>,
        key: &str,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
        ctx: &WriteContext,
    ) -> Result<DeleteOutcome, Retry<ApiError>> {
        let Some(kv) = current else {
            return Err(Retry::Fail(self.not_found(name)));
        };
        let mut obj = self.decode(&kv)?;
        if let Some(uid) = &opts.precondition_uid {
            if uid != meta::uid(&obj) {
                return Err(Retry::Fail(ApiError::conflict(
                    self.def.group_resource(),
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        meta::uid(&obj)
                    ),
                )));
            }
        }
        if let Some(rv) = &opts.precondition_resource_version {
            if *rv != kv.mod_revision.to_string() {
                return Err(Retry::Fail(ApiError::conflict(
                        self.def.group_resource(),
                        name,
                        &format!(
                            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in meta: {}",
                            kv.mod_revision
                        ),
                    )));
            }
        }
        let attrs = Attributes {
            operation: Operation::Delete,
            resource: &self.def,
            subresource: "",
            namespace,
            name,
            object: None,
            old_object: Some(&obj),
            user: ctx.user.as_ref(),
            dry_run: ctx.dry_run,
            warnings: Some(&ctx.warnings),
            started: Some(ctx.started.0),
            kind: None,
        };
        self.admission.mutate(&attrs, None).await?;
        self.admission.validate(&attrs).await?;

        let gc_finalizers_changed =
            apply_propagation_policy(&mut obj, opts.propagation_policy.as_deref());
        let grace = if self.def.strategy.graceful_delete() {
            opts.grace_period_seconds
                .or_else(|| self.def.strategy.default_grace_period(&obj))
                .filter(|g| *g > 0)
        } else {
            None
        };
        let already_deleting = meta::is_deleting(&obj);
        // Kept when metadata finalizers remain or the kind has pending work
        // of its own (a namespace's spec.finalizers).
        let has_finalizers = !meta::finalizers(&obj).is_empty() || {
            let mut probe = obj.clone();
            let retain = self.def.strategy.retain_on_delete(&mut probe);
            if retain && !already_deleting {
                obj = probe;
            }
            retain
        };
        if already_deleting {
            if has_finalizers && !gc_finalizers_changed {
                return Ok(DeleteOutcome::Pending(obj));
            }
            // Gracefully deleting: only a shorter grace period changes anything.
            let current = obj
                .get("metadata")
                .and_then(|m| m.get("deletionGracePeriodSeconds"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if grace.is_some_and(|g| g >= current) {
                return Ok(DeleteOutcome::Pending(obj));
            }
        }
        if grace.is_some() || has_finalizers {
            let g = grace.unwrap_or(0);
            if !already_deleting {
                let m = meta::meta_mut(&mut obj);
                m.insert(
                    "deletionTimestamp".into(),
                    Value::String(meta::rfc3339_in(g)),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(g));
                if let Some(gen) = m
                    .get("generation")
                    .and_then(Value::as_i64)
                    .filter(|g| *g > 0)
                {
                    m.insert("generation".into(), json!(gen + 1));
                }
            }
            if g == 0 && !has_finalizers {
                // fall through to the real delete below
            } else {
                if opts.dry_run || ctx.dry_run {
                    return Ok(DeleteOutcome::Pending(obj));
                }
                let bytes = self.encode(&mut obj)?;
                match self.storage.update(&key, kv.mod_revision, bytes).await {
                    Ok(rev) => {
                        meta::set(&mut obj, "resourceVersion", Value::String(rev.to_string()));
                        return Ok(DeleteOutcome::Pending(obj));
                    }
                    Err(e) => return Err(self.cas_failure(e, name, false)),
                }
            }
        }
        if opts.dry_run || ctx.dry_run {
            return Ok(DeleteOutcome::Deleted(obj));
        }
        match self.storage.delete(&key, Some(kv.mod_revision)).await {
            Ok((_, rev)) => {
                self.def.strategy.release(&obj).await;
                meta::set(&mut obj, "resourceVersion", Value::String(rev.to_string()));
                return Ok(DeleteOutcome::Deleted(obj));
            }
            Err(e) => {
                let pinned = opts.precondition_resource_version.is_some();
                return Err(self.cas_failure(e, name, pinned));
            }
        }
    }

    /// DELETE on a collection: deletes every matching object, returning them.
    pub async fn delete_collection(
        &self,
        namespace: &str,
        list: &ListOptions,
        opts: &DeleteOptions,
        ctx: &WriteContext,
    ) -> Result<Vec<Value>, ApiError> {
        let mut all = ListOptions {
            limit: None,
            continue_token: None,
            ..list.clone()
        };
        all.resource_version = None;
        let page = self.list(namespace, &all).await?;
        let mut deleted = Vec::new();
        for obj in page.items {
            let (ns, name) = (
                meta::namespace(&obj).to_string(),
                meta::name(&obj).to_string(),
            );
            match self.delete(&ns, &name, opts, ctx).await {
                Ok(DeleteOutcome::Deleted(o)) | Ok(DeleteOutcome::Pending(o)) => deleted.push(o),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }
}
