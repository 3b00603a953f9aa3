//! Per-kind behaviour plugged into the generic store: defaulting, validation,
//! generation tracking and graceful deletion, as upstream's `RESTCreateStrategy`
//! / `RESTUpdateStrategy` / `RESTDeleteStrategy`.
//!
//! Everything common to all kinds (server-set metadata, metadata validation,
//! the status/spec split, finalizers) is done by the store itself; a strategy
//! only adds what is particular to its kind.

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::apimachinery::errors::ApiError;
use crate::apimachinery::validation::FieldError;

/// Behaviour of one kind. All methods have neutral defaults.
pub trait Strategy: Send + Sync {
    /// Defaults and clears fields on create (after the store set metadata).
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// Adjusts an update (e.g. keeps fields the caller may not change).
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// Kind-specific validation on create (metadata is validated by the store).
    fn validate(&self, _obj: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Kind-specific validation on update.
    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        self.validate(new)
    }

    /// Whether `metadata.generation` is set to 1 on create and bumped when
    /// anything but metadata and status changes.
    fn tracks_generation(&self) -> bool {
        false
    }

    /// Whether a create keeps the `status` the client sent, for a kind with
    /// a `/status` subresource (whose creates otherwise start without one).
    /// Upstream's Node strategy is the one that keeps it: a kubelet
    /// registers its Node with its status (conditions, capacity, node info).
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// Whether a PUT without `resourceVersion` may overwrite the object.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// The grace period a delete of `obj` gets when the client gave none, or
    /// `None` to delete at once (upstream's `CheckGracefulDelete`). The store
    /// applies the client's `gracePeriodSeconds` when present.
    fn default_grace_period(&self, _obj: &Value) -> Option<i64> {
        None
    }

    /// Whether the kind is deleted gracefully at all (upstream's
    /// `RESTGracefulDeleteStrategy`, which only pods implement): for any
    /// other kind a client's `gracePeriodSeconds` is ignored and the object
    /// goes at once (unless finalizers hold it).
    fn graceful_delete(&self) -> bool {
        false
    }

    /// Called on DELETE of an object not yet being deleted: returns true when
    /// the object must stay (marked with `deletionTimestamp`) because the kind
    /// has its own pending work, e.g. a namespace with `spec.finalizers`. May
    /// adjust the object (a namespace's phase becomes `Terminating`).
    fn retain_on_delete(&self, _obj: &mut Value) -> bool {
        false
    }

    /// Adjusts an object read from storage before anyone sees it (custom
    /// resources are converted to the served version, pruned and defaulted
    /// on read, as upstream's decoder does). An error fails the read.
    fn on_read(&self, _obj: &mut Value) -> Result<(), crate::apimachinery::errors::ApiError> {
        Ok(())
    }

    /// [`Strategy::on_read`] for the objects of one storage page of a LIST,
    /// so that work can be batched (a CRD's conversion webhook converts a
    /// list in one ConversionReview, as upstream).
    fn on_read_many(
        &self,
        objs: &mut [Value],
    ) -> Result<(), crate::apimachinery::errors::ApiError> {
        for obj in objs {
            self.on_read(obj)?;
        }
        Ok(())
    }

    /// The form an object is stored in, when it differs from the object
    /// (custom resources are stored in their CRD's storage version);
    /// `None` stores the object as it is.
    fn for_storage(
        &self,
        _obj: &Value,
    ) -> Result<Option<Value>, crate::apimachinery::errors::ApiError> {
        Ok(None)
    }

    /// Adjusts a `/status` update after the store kept everything but
    /// `.status` from the old object.
    fn prepare_for_status_update(&self, _new: &mut Value, _old: &Value) {}

    /// Validation of a `/status` update (the whole new object is given).
    fn validate_status_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Storage-backed work done after validation and admission, just before
    /// a (non dry-run) create is written: e.g. a Service's cluster IP and
    /// node ports, which must be unique across API server replicas. An error
    /// aborts the create; when the write then fails, [`Strategy::release`]
    /// undoes it.
    fn allocate<'a>(&'a self, _obj: &'a mut Value) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async { Ok(()) })
    }

    /// Like [`Strategy::allocate`] for an update that is about to be
    /// written (e.g. node ports when a Service becomes `NodePort`).
    fn allocate_update<'a>(
        &'a self,
        _new: &'a mut Value,
        _old: &'a Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async { Ok(()) })
    }

    /// After an update's write: when `committed`, releases what `old` held
    /// and `new` no longer does; otherwise releases what
    /// [`Strategy::allocate_update`] took for `new`.
    fn release_update<'a>(
        &'a self,
        _new: &'a Value,
        _old: &'a Value,
        _committed: bool,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// Releases what [`Strategy::allocate`] took, once the object is gone
    /// from storage (or its create failed).
    fn release<'a>(&'a self, _obj: &'a Value) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// The strategy of kinds with nothing particular.
pub struct DefaultStrategy;

impl Strategy for DefaultStrategy {}

/// Kinds with a spec whose changes bump `metadata.generation`.
pub struct SpecStrategy;

impl Strategy for SpecStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }
}
