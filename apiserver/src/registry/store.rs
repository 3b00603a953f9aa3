//! The generic store: every verb of every declared resource, over etcd.
//!
//! What holds for all kinds lives here, as in upstream's
//! `registry/generic/registry.Store`: server-set metadata (`uid`,
//! `creationTimestamp`, `generation`, `generateName`), metadata validation,
//! optimistic concurrency (client `resourceVersion` → 409, none → retried),
//! the status/spec split, finalizers and `deletionTimestamp`, dry runs.
//! Objects are JSON; `metadata.resourceVersion` is never stored: it is the etcd
//! mod revision, filled in on every read.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};

use super::admit::{Admit, Attributes, Operation, SharedAdmit};
use super::cache_serving::CachedReads;
use super::read::{EtcdReads, ReadPath};
use super::resource::{ResourceDef, Subresource};
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::meta;
use crate::apimachinery::validation::{validate_object_meta, FieldError, FieldPath};
use crate::authentication::UserInfo;
use crate::storage::{EtcdStorage, KeyValue, StorageError};

/// How many times an update without a client `resourceVersion` is retried
/// when it races with another writer.
pub(crate) const MAX_UPDATE_ATTEMPTS: usize = 32;
/// How many names `generateName` tries before giving up.
const GENERATE_NAME_ATTEMPTS: usize = 8;
/// Upstream's limit for the generateName prefix.
const MAX_GENERATED_NAME_PREFIX: usize = 58;

/// Who is writing and how.
#[derive(Clone, Default)]
pub struct WriteContext {
    pub user: Option<UserInfo>,
    pub dry_run: bool,
    /// The manager `managedFields` records the write under (`fieldManager`
    /// or the User-Agent's prefix); `None` records no entry.
    pub field_manager: Option<String>,
    /// The write is a server-side apply whose object already carries its
    /// `managedFields` (see [`crate::fieldmanager::apply`]).
    pub applying: bool,
    /// Warnings admission leaves for the client (`Warning` headers).
    pub warnings: Arc<crate::request::Warnings>,
    /// When the write began (its admission webhooks share one time budget).
    pub started: crate::request::RequestStart,
}

pub use super::delete::{DeleteOptions, DeleteOutcome};
pub use super::list::{field_value, ListOptions, ListPage};

/// How an update computes the new object from the current one.
pub enum UpdateKind<'a> {
    /// PUT: the new object as sent.
    Replace(Value),
    /// PATCH: a function applying the patch to the current object.
    Patch(&'a (dyn Fn(&Value) -> Result<Value, ApiError> + Send + Sync)),
}

/// The generic store of one resource.
#[derive(Clone)]
pub struct Store {
    pub def: Arc<ResourceDef>,
    pub(crate) storage: EtcdStorage,
    pub(crate) prefix: String,
    pub(crate) admission: SharedAdmit,
    /// What GET, LIST and WATCH are answered from: etcd, or the watch
    /// cache in front of it (see [`super::read`]).
    reads: Arc<dyn ReadPath>,
}

/// Maps storage failures that are not about the object itself.
pub fn storage_error(e: StorageError) -> ApiError {
    match e {
        StorageError::Unavailable(m) => {
            ApiError::service_unavailable(format!("etcd is unavailable: {m}"))
        }
        StorageError::Expired { .. } => {
            ApiError::expired("The resourceVersion for the provided list is too old.")
        }
        StorageError::InvalidContinue(m) => {
            ApiError::bad_request(format!("invalid continue token: {m}"))
        }
        StorageError::TooLarge => ApiError::stored_object_too_large(),
        other => ApiError::internal(other),
    }
}

impl Store {
    /// A store for `def` under the etcd key prefix `prefix` (`/registry`).
    pub fn new(
        def: ResourceDef,
        storage: EtcdStorage,
        prefix: &str,
        admission: impl Admit + 'static,
    ) -> Self {
        let prefix = prefix.trim_end_matches('/').to_string();
        storage.name_resource(
            &format!("{prefix}/{}/", def.storage_path),
            &def.group,
            &def.resource,
        );
        Store {
            def: Arc::new(def),
            storage,
            prefix,
            admission: Arc::new(admission),
            reads: Arc::new(EtcdReads),
        }
    }

    /// The watch cache, when one serves this store.
    pub fn cache(&self) -> Option<&Arc<crate::storage::cacher::WatchCache>> {
        self.reads.cached().map(CachedReads::cache)
    }

    /// The store's read path.
    pub(crate) fn reads(&self) -> &Arc<dyn ReadPath> {
        &self.reads
    }

    /// Puts `cache` in front of etcd's reads (replacing a cache already
    /// there).
    pub(crate) fn set_cache(
        &mut self,
        cache: Arc<crate::storage::cacher::WatchCache>,
        in_storage_version: bool,
    ) {
        let etcd = match self.reads.cached() {
            Some(cached) => cached.next().clone(),
            None => self.reads.clone(),
        };
        self.reads = Arc::new(CachedReads::new(cache, in_storage_version, etcd));
    }

    /// The storage this store writes to.
    pub fn storage(&self) -> &EtcdStorage {
        &self.storage
    }

    /// The etcd key prefix of every resource (`/registry`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The etcd key of an object.
    pub fn key(&self, namespace: &str, name: &str) -> String {
        if self.def.namespaced {
            format!(
                "{}/{}/{}/{}",
                self.prefix, self.def.storage_path, namespace, name
            )
        } else {
            format!("{}/{}/{}", self.prefix, self.def.storage_path, name)
        }
    }

    /// The key prefix of a list (all namespaces when `namespace` is empty).
    pub fn list_prefix(&self, namespace: &str) -> String {
        if self.def.namespaced && !namespace.is_empty() {
            format!("{}/{}/{}/", self.prefix, self.def.storage_path, namespace)
        } else {
            format!("{}/{}/", self.prefix, self.def.storage_path)
        }
    }

    /// Decodes a stored object (protobuf or JSON, see
    /// [`crate::protobuf::decode_from_storage`]) and fills in
    /// `resourceVersion`.
    pub fn decode(&self, kv: &KeyValue) -> Result<Value, ApiError> {
        let mut obj = crate::protobuf::decode_from_storage(&kv.value)
            .map_err(|e| ApiError::internal(format!("decoding {}: {e}", kv.key)))?;
        self.def.strategy.on_read(&mut obj)?;
        meta::set(
            &mut obj,
            "resourceVersion",
            Value::String(kv.mod_revision.to_string()),
        );
        Ok(obj)
    }

    /// [`Store::decode`] for a page of stored objects, with the strategy's
    /// read hook run once for all of them ([`crate::registry::strategy::Strategy::on_read_many`]).
    pub fn decode_many(&self, kvs: &[KeyValue]) -> Result<Vec<Value>, ApiError> {
        let mut objs = kvs
            .iter()
            .map(|kv| {
                crate::protobuf::decode_from_storage(&kv.value)
                    .map_err(|e| ApiError::internal(format!("decoding {}: {e}", kv.key)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.def.strategy.on_read_many(&mut objs)?;
        for (obj, kv) in objs.iter_mut().zip(kvs) {
            meta::set(
                obj,
                "resourceVersion",
                Value::String(kv.mod_revision.to_string()),
            );
        }
        Ok(objs)
    }

    /// Encodes an object for storage, without `resourceVersion`: built-in
    /// kinds as upstream's protobuf, others as JSON (see
    /// [`crate::protobuf::encode_for_storage`]). A value a built-in kind's
    /// field cannot hold is a 400, as upstream's decoder rejects it.
    pub(crate) fn encode(&self, obj: &mut Value) -> Result<Bytes, ApiError> {
        if let Some(mut stored) = self.def.strategy.for_storage(obj)? {
            meta::remove(&mut stored, "resourceVersion");
            // Another version of a built-in kind is stored as protobuf too;
            // custom resources stay JSON.
            return crate::protobuf::encode_for_storage(&stored)
                .map(Bytes::from)
                .map_err(|e| match e {
                    crate::protobuf::EncodeError::Invalid { .. } => {
                        ApiError::bad_request(e.to_string())
                    }
                    other => ApiError::internal(other),
                });
        }
        let rv = meta::remove(obj, "resourceVersion");
        let bytes = crate::protobuf::encode_for_storage(obj).map_err(|e| match e {
            crate::protobuf::EncodeError::Invalid { .. } => ApiError::bad_request(e.to_string()),
            other => ApiError::internal(other),
        });
        if let Some(rv) = rv {
            meta::set(obj, "resourceVersion", rv);
        }
        bytes.map(Bytes::from)
    }

    pub(crate) fn set_type_meta(&self, obj: &mut Value) {
        if let Value::Object(m) = obj {
            m.insert("apiVersion".into(), Value::String(self.def.api_version()));
            m.insert("kind".into(), Value::String(self.def.kind.clone()));
        }
    }

    pub(crate) fn not_found(&self, name: &str) -> ApiError {
        ApiError::not_found(self.def.group_resource(), name)
    }

    pub(crate) fn invalid(&self, name: &str, errors: &[FieldError]) -> ApiError {
        ApiError::invalid(&self.def.group, &self.def.kind, name, errors)
    }

    pub(crate) fn conflict(&self, name: &str) -> ApiError {
        ApiError::conflict(
            self.def.group_resource(),
            name,
            ApiError::OPTIMISTIC_LOCK_MSG,
        )
    }

    /// GET one object.
    pub async fn get(&self, namespace: &str, name: &str) -> Result<Value, ApiError> {
        match self
            .storage
            .get(&self.key(namespace, name))
            .await
            .map_err(storage_error)?
        {
            Some(kv) => self.decode(&kv),
            None => Err(self.not_found(name)),
        }
    }

    /// Checks the namespace of a body against the request's.
    pub(crate) fn reconcile_namespace(
        &self,
        obj: &mut Value,
        namespace: &str,
    ) -> Result<(), ApiError> {
        if self.def.namespaced {
            let body_ns = meta::namespace(obj);
            if body_ns.is_empty() {
                meta::set(obj, "namespace", Value::String(namespace.to_string()));
            } else if body_ns != namespace {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
        } else if !meta::namespace(obj).is_empty() {
            meta::remove(obj, "namespace");
        }
        Ok(())
    }

    /// POST: creates an object in `namespace`.
    pub async fn create(
        &self,
        namespace: &str,
        mut obj: Value,
        ctx: &WriteContext,
    ) -> Result<Value, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be an object",
            ));
        }
        self.reconcile_namespace(&mut obj, namespace)?;
        if !meta::resource_version(&obj).is_empty() {
            return Err(ApiError::internal(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        self.set_type_meta(&mut obj);
        let generate =
            meta::name(&obj).is_empty() && !meta::meta_str(&obj, "generateName").is_empty();
        {
            let m = meta::meta_mut(&mut obj);
            m.remove("deletionTimestamp");
            m.remove("deletionGracePeriodSeconds");
            m.remove("selfLink");
            m.insert(
                "uid".into(),
                Value::String(uuid::Uuid::new_v4().to_string()),
            );
            m.insert(
                "creationTimestamp".into(),
                Value::String(meta::now_rfc3339()),
            );
            if self.def.strategy.tracks_generation() {
                m.insert("generation".into(), json!(1));
            } else {
                m.remove("generation");
            }
        }
        if self.def.has_subresource(Subresource::Status)
            && !self.def.strategy.keeps_status_on_create()
        {
            if let Value::Object(m) = &mut obj {
                m.remove("status");
            }
        }
        self.def.strategy.prepare_for_create(&mut obj);
        if !ctx.applying {
            crate::fieldmanager::track_update(
                &self.field_operation(None),
                None,
                &mut obj,
                ctx.field_manager.as_deref(),
            );
        }
        // Mutating admission sees the defaulted object; what it changes is
        // defaulted again (a webhook's patch, LimitRanger's resources feed
        // the pod's QoS class).
        let name_for_admission = meta::name(&obj).to_string();
        let attrs = Attributes {
            operation: Operation::Create,
            resource: &self.def,
            subresource: "",
            namespace,
            name: &name_for_admission,
            object: None,
            old_object: None,
            user: ctx.user.as_ref(),
            dry_run: ctx.dry_run,
            warnings: Some(&ctx.warnings),
            started: Some(ctx.started.0),
            kind: None,
        };
        if self.admission.mutate(&attrs, Some(&mut obj)).await? {
            self.reconcile_namespace(&mut obj, namespace)?;
            self.set_type_meta(&mut obj);
            self.def.strategy.prepare_for_create(&mut obj);
        }

        let attempts = if generate { GENERATE_NAME_ATTEMPTS } else { 1 };
        for attempt in 0..attempts {
            if generate {
                let prefix: String = meta::meta_str(&obj, "generateName")
                    .chars()
                    .take(MAX_GENERATED_NAME_PREFIX)
                    .collect();
                meta::set(
                    &mut obj,
                    "name",
                    Value::String(format!("{prefix}{}", random_suffix())),
                );
            }
            let name = meta::name(&obj).to_string();
            let mut errors = validate_object_meta(
                obj.get("metadata").unwrap_or(&Value::Null),
                self.def.namespaced,
                self.def.name_rule,
                &FieldPath::new("metadata"),
            );
            errors.extend(self.def.strategy.validate(&obj));
            if !errors.is_empty() {
                return Err(self.invalid(&name, &errors));
            }
            if attempt == 0 {
                let attrs = Attributes {
                    operation: Operation::Create,
                    resource: &self.def,
                    subresource: "",
                    namespace,
                    name: &name,
                    object: Some(&obj),
                    old_object: None,
                    user: ctx.user.as_ref(),
                    dry_run: ctx.dry_run,
                    warnings: Some(&ctx.warnings),
                    started: Some(ctx.started.0),
                    kind: None,
                };
                self.admission.validate(&attrs).await?;
            }
            if ctx.dry_run {
                return Ok(obj);
            }
            self.def.strategy.allocate(&mut obj).await?;
            let bytes = match self.encode(&mut obj) {
                Ok(b) => b,
                Err(e) => {
                    self.def.strategy.release(&obj).await;
                    return Err(e);
                }
            };
            let result = self
                .storage
                .create(&self.key(namespace, &name), bytes)
                .await;
            if result.is_err() {
                self.def.strategy.release(&obj).await;
            }
            match result {
                Ok(rev) => {
                    meta::set(&mut obj, "resourceVersion", Value::String(rev.to_string()));
                    return Ok(obj);
                }
                Err(StorageError::AlreadyExists) if generate && attempt + 1 < attempts => continue,
                Err(StorageError::AlreadyExists) => {
                    return Err(ApiError::already_exists(self.def.group_resource(), &name))
                }
                Err(e) => return Err(storage_error(e)),
            }
        }
        Err(ApiError::already_exists(
            self.def.group_resource(),
            meta::name(&obj),
        ))
    }

    /// What the field manager needs to know about a write to this kind.
    pub fn field_operation(
        &self,
        subresource: Option<Subresource>,
    ) -> crate::fieldmanager::Operation<'_> {
        crate::fieldmanager::Operation {
            types: match &self.def.field_types {
                Some(t) => t.as_ref(),
                None => &crate::fieldmanager::typeinfo::DeducedTypes,
            },
            api_version: self.def.api_version(),
            subresource: subresource.map(Subresource::name).unwrap_or(""),
            has_status: self.def.has_subresource(Subresource::Status),
        }
    }

    /// Carries over what an update may not change and bumps `generation`.
    pub(crate) fn prepare_update(
        &self,
        new: &mut Value,
        old: &Value,
        subresource: Option<Subresource>,
    ) {
        // System fields are owned by the server.
        for field in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ] {
            if field == "uid" && !meta::uid(new).is_empty() {
                continue; // a changed uid is rejected by validation
            }
            match old.get("metadata").and_then(|m| m.get(field)) {
                Some(v) => meta::set(new, field, v.clone()),
                None => {
                    meta::remove(new, field);
                }
            }
        }
        meta::remove(new, "selfLink");
        let has_status = self.def.has_subresource(Subresource::Status);
        match subresource {
            Some(Subresource::Status) => {
                // Only .status changes; metadata as upstream's ResetObjectMetaForStatus.
                let status = new.get("status").cloned();
                let rv = meta::resource_version(new).to_string();
                let mut merged = old.clone();
                if let Value::Object(m) = &mut merged {
                    match status {
                        Some(s) => m.insert("status".into(), s),
                        None => m.remove("status"),
                    };
                }
                use super::resource::StatusMetadata;
                let policy = self.def.status_metadata;
                if let Some(Value::Object(new_meta)) = new.get("metadata") {
                    let keep = meta::meta_mut(&mut merged);
                    let reset: &[&str] = match policy {
                        StatusMetadata::Reset => {
                            &["labels", "annotations", "finalizers", "ownerReferences"]
                        }
                        StatusMetadata::KeepExceptLabels => &["labels"],
                        StatusMetadata::Keep => &[],
                    };
                    if policy != StatusMetadata::Reset {
                        // Metadata the write leaves out is removed, as any update.
                        for k in ["labels", "annotations", "finalizers", "ownerReferences"] {
                            if !reset.contains(&k) && !new_meta.contains_key(k) {
                                keep.remove(k);
                            }
                        }
                    }
                    for (k, v) in new_meta {
                        let k = k.as_str();
                        if !reset.contains(&k)
                            && !matches!(k, "generation" | "deletionTimestamp" | "selfLink")
                        {
                            keep.insert(k.to_string(), v.clone());
                        }
                    }
                }
                meta::set(&mut merged, "resourceVersion", Value::String(rv));
                *new = merged;
                self.def.strategy.prepare_for_status_update(new, old);
            }
            Some(Subresource::Finalize) => {
                let finalizers = new.get("spec").and_then(|s| s.get("finalizers")).cloned();
                let rv = meta::resource_version(new).to_string();
                let mut merged = old.clone();
                if let Value::Object(m) = &mut merged {
                    let spec = m.entry("spec").or_insert_with(|| json!({}));
                    if let Value::Object(spec) = spec {
                        match finalizers {
                            Some(f) => spec.insert("finalizers".into(), f),
                            None => spec.remove("finalizers"),
                        };
                    }
                }
                meta::set(&mut merged, "resourceVersion", Value::String(rv));
                *new = merged;
            }
            None | Some(Subresource::Scale) => {
                if has_status {
                    if let Value::Object(m) = new {
                        match old.get("status") {
                            Some(s) => m.insert("status".into(), s.clone()),
                            None => m.remove("status"),
                        };
                    }
                }
                self.def.strategy.prepare_for_update(new, old);
                if self.def.strategy.tracks_generation() && spec_changed(new, old) {
                    let g = old
                        .get("metadata")
                        .and_then(|m| m.get("generation"))
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    meta::set(new, "generation", json!(g + 1));
                }
            }
        }
    }
}

/// Whether anything but metadata and status differs.
fn spec_changed(new: &Value, old: &Value) -> bool {
    let (Value::Object(n), Value::Object(o)) = (new, old) else {
        return true;
    };
    let relevant =
        |k: &String| !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind");
    n.iter()
        .filter(|(k, _)| relevant(k))
        .any(|(k, v)| o.get(k) != Some(v))
        || o.keys().filter(|k| relevant(k)).any(|k| !n.contains_key(k))
}

/// Whether a graceful deletion's period is over (finalizer-driven deletes
/// have period 0).
pub(crate) fn grace_elapsed(obj: &Value) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("deletionGracePeriodSeconds"))
        .and_then(Value::as_i64)
        .is_none_or(|g| g == 0)
}

/// Five characters from upstream's generateName alphabet (no vowels, no
/// look-alikes), as `generateName` and generated volume names use.
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    use rand::Rng;
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_change_detection() {
        let a = json!({"metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"y": 1}});
        let b = json!({"metadata": {"name": "a", "labels": {"l": "v"}}, "spec": {"x": 1}, "status": {"y": 2}});
        assert!(!spec_changed(&b, &a));
        let c = json!({"metadata": {"name": "a"}, "spec": {"x": 2}});
        assert!(spec_changed(&c, &a));
        let d = json!({"metadata": {"name": "a"}});
        assert!(spec_changed(&d, &a));
    }

    #[test]
    fn generated_suffix_alphabet() {
        let s = random_suffix();
        assert_eq!(s.len(), 5);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }
}
