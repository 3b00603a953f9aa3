//! Updates of the generic store: PUT and PATCH (main resource or a
//! subresource) and the raw read-modify-write of [`Store::guaranteed_update`],
//! each attempt run by [`crate::storage::EtcdStorage::guaranteed_update`], the server's one
//! compare-and-swap loop.

use serde_json::{json, Value};

use super::admit::{Attributes, Operation};
use super::resource::Subresource;
use super::store::{
    grace_elapsed, storage_error, Store, UpdateKind, WriteContext, MAX_UPDATE_ATTEMPTS,
};
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::meta;
use crate::apimachinery::validation::{validate_object_meta_update, FieldError, FieldPath};
use crate::storage::{KeyValue, Retry, StorageError};

impl Store {
    /// PUT or PATCH, on the main resource or a subresource, retried on races
    /// when the client did not pin a `resourceVersion`.
    pub async fn update(
        &self,
        namespace: &str,
        name: &str,
        subresource: Option<Subresource>,
        update: UpdateKind<'_>,
        ctx: &WriteContext,
    ) -> Result<Value, ApiError> {
        let key = self.key(namespace, name);
        self.storage
            .guaranteed_update(
                &key,
                MAX_UPDATE_ATTEMPTS,
                |current| {
                    self.update_once(current, &key, namespace, name, subresource, &update, ctx)
                },
                storage_error,
                || self.conflict(name),
            )
            .await
    }

    /// One attempt of [`Self::update`] on the stored object `current`.
    #[allow(clippy::too_many_arguments)]
    async fn update_once(
        &self,
        current: Option<KeyValue>,
        key: &str,
        namespace: &str,
        name: &str,
        subresource: Option<Subresource>,
        update: &UpdateKind<'_>,
        ctx: &WriteContext,
    ) -> Result<Value, Retry<ApiError>> {
        let Some(kv) = current else {
            return Err(Retry::Fail(self.not_found(name)));
        };
        let old = self.decode(&kv)?;
        let mut new = match &update {
            UpdateKind::Replace(obj) => obj.clone(),
            UpdateKind::Patch(apply) => apply(&old)?,
        };
        if !new.is_object() {
            return Err(Retry::Fail(ApiError::bad_request(
                "the body of the request must be an object",
            )));
        }
        let client_rv = meta::resource_version(&new).to_string();
        // A PUT is pinned to the revision it names. A patch is applied to
        // the stored object, whose revision it inherits: it is pinned
        // only when it sets another one itself (upstream's patcher), and
        // is otherwise re-applied to the newer object after a conflict.
        let pinned = match &update {
            UpdateKind::Replace(_) => !client_rv.is_empty(),
            UpdateKind::Patch(_) => {
                !client_rv.is_empty() && client_rv != meta::resource_version(&old)
            }
        };
        if pinned && client_rv != kv.mod_revision.to_string() {
            return Err(Retry::Fail(self.conflict(name)));
        }
        let unconditional = client_rv.is_empty();
        if unconditional
            && matches!(update, UpdateKind::Replace(_))
            && !self.def.strategy.allow_unconditional_update()
        {
            let err = FieldError::invalid(
                "metadata.resourceVersion",
                Value::Number(0.into()),
                "must be specified for an update",
            );
            return Err(Retry::Fail(self.invalid(name, &[err])));
        }
        if unconditional {
            // An unconditional update: the object takes the stored
            // revision, as upstream's store does before validation
            // (Helm's release Secrets are written this way).
            meta::set(
                &mut new,
                "resourceVersion",
                Value::String(kv.mod_revision.to_string()),
            );
        }
        let body_name = meta::name(&new);
        if !body_name.is_empty() && body_name != name {
            return Err(Retry::Fail(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            ))));
        }
        meta::set(&mut new, "name", Value::String(name.to_string()));
        self.reconcile_namespace(&mut new, namespace)?;
        self.set_type_meta(&mut new);
        self.prepare_update(&mut new, &old, subresource);
        if !ctx.applying {
            crate::fieldmanager::track_update(
                &self.field_operation(subresource),
                Some(&old),
                &mut new,
                ctx.field_manager.as_deref(),
            );
        }
        let subresource_name = subresource.map(Subresource::name).unwrap_or("");
        let attrs = Attributes {
            operation: Operation::Update,
            resource: &self.def,
            subresource: subresource_name,
            namespace,
            name,
            object: None,
            old_object: Some(&old),
            user: ctx.user.as_ref(),
            dry_run: ctx.dry_run,
            warnings: Some(&ctx.warnings),
            started: Some(ctx.started.0),
            kind: None,
        };
        if self.admission.mutate(&attrs, Some(&mut new)).await? {
            meta::set(&mut new, "name", Value::String(name.to_string()));
            self.reconcile_namespace(&mut new, namespace)?;
            self.set_type_meta(&mut new);
            self.prepare_update(&mut new, &old, subresource);
        }

        let mut errors = validate_object_meta_update(
            new.get("metadata").unwrap_or(&Value::Null),
            old.get("metadata").unwrap_or(&Value::Null),
            &FieldPath::new("metadata"),
        );
        match subresource {
            None | Some(Subresource::Scale) => {
                errors.extend(self.def.strategy.validate_update(&new, &old))
            }
            Some(Subresource::Status) => {
                errors.extend(self.def.strategy.validate_status_update(&new, &old))
            }
            Some(_) => {}
        }
        if !errors.is_empty() {
            return Err(Retry::Fail(self.invalid(name, &errors)));
        }
        let attrs = Attributes {
            operation: Operation::Update,
            resource: &self.def,
            subresource: subresource_name,
            namespace,
            name,
            object: Some(&new),
            old_object: Some(&old),
            user: ctx.user.as_ref(),
            dry_run: ctx.dry_run,
            warnings: Some(&ctx.warnings),
            started: Some(ctx.started.0),
            kind: None,
        };
        self.admission.validate(&attrs).await?;

        meta::set(
            &mut new,
            "resourceVersion",
            Value::String(kv.mod_revision.to_string()),
        );
        if new == old || ctx.dry_run {
            return Ok(new);
        }
        // The update that removes the last finalizer of an object being
        // deleted deletes it.
        if meta::is_deleting(&new)
            && meta::finalizers(&new).is_empty()
            && grace_elapsed(&new)
            && !self.def.strategy.retain_on_delete(&mut new.clone())
        {
            match self.storage.delete(&key, Some(kv.mod_revision)).await {
                Ok((_, rev)) => {
                    self.def.strategy.release(&old).await;
                    meta::set(&mut new, "resourceVersion", Value::String(rev.to_string()));
                    return Ok(new);
                }
                Err(e) => return Err(self.cas_failure(e, name, pinned)),
            }
        }
        self.def.strategy.allocate_update(&mut new, &old).await?;
        let written = match self.encode(&mut new) {
            Ok(bytes) => self.storage.update(&key, kv.mod_revision, bytes).await,
            Err(e) => {
                self.def.strategy.release_update(&new, &old, false).await;
                return Err(Retry::Fail(e));
            }
        };
        self.def
            .strategy
            .release_update(&new, &old, written.is_ok())
            .await;
        match written {
            Ok(rev) => {
                meta::set(&mut new, "resourceVersion", Value::String(rev.to_string()));
                return Ok(new);
            }
            Err(e) => return Err(self.cas_failure(e, name, pinned)),
        }
    }

    /// What a failed compare-and-swap write means for an attempt: a
    /// conflict is retried on the newer object unless the caller pinned the
    /// revision (then 409 Conflict); a vanished object is a 404.
    pub(crate) fn cas_failure(&self, e: StorageError, name: &str, pinned: bool) -> Retry<ApiError> {
        match e {
            StorageError::Conflict { current } if !pinned => Retry::Conflict(current),
            StorageError::Conflict { .. } => Retry::Fail(self.conflict(name)),
            StorageError::NotFound => Retry::Fail(self.not_found(name)),
            e => Retry::Fail(storage_error(e)),
        }
    }

    /// Reads the object, lets `change` modify it and writes it back in the
    /// kind's storage encoding (protobuf for built-in kinds), retried on
    /// concurrent writes through [`EtcdStorage::guaranteed_update`]. For
    /// writes that bypass the kind's update rules, as upstream's registries
    /// do with their own `GuaranteedUpdate` calls (a binding sets the
    /// `spec.nodeName` of an otherwise immutable pod spec). A dry run
    /// returns the changed object unwritten.
    pub async fn guaranteed_update(
        &self,
        namespace: &str,
        name: &str,
        dry_run: bool,
        mut change: impl FnMut(&mut Value) -> Result<(), ApiError>,
    ) -> Result<Value, ApiError> {
        let key = self.key(namespace, name);
        let change = &mut change;
        self.storage
            .guaranteed_update(
                &key,
                MAX_UPDATE_ATTEMPTS,
                |current| {
                    let attempt = (|| {
                        let Some(kv) = current else {
                            return Err(Retry::Fail(self.not_found(name)));
                        };
                        let mut obj = self.decode(&kv)?;
                        change(&mut obj)?;
                        Ok((kv.mod_revision, obj))
                    })();
                    let key = &key;
                    async move {
                        let (revision, mut obj) = attempt?;
                        if dry_run {
                            return Ok(obj);
                        }
                        let bytes = self.encode(&mut obj)?;
                        match self.storage.update(key, revision, bytes).await {
                            Ok(rev) => {
                                meta::set(&mut obj, "resourceVersion", json!(rev.to_string()));
                                Ok(obj)
                            }
                            Err(e) => Err(self.cas_failure(e, name, false)),
                        }
                    }
                },
                storage_error,
                || self.conflict(name),
            )
            .await
    }
}
