//! The admission a store's writes pass through, as the generic store sees
//! it: the [`Attributes`] of a write and the [`Admit`] interface that the
//! store calls with them (upstream's `admission.Attributes`, and the
//! `createValidation`/`updateValidation` hooks its store is handed). The
//! store is given its admission at construction; the admission layer
//! (`crate::admission`, above this one) implements [`Admit`] with its chain
//! of plugins, so the registry never depends on admission.
//!
//! A write meets [`Admit::mutate`] after defaulting, and [`Admit::validate`]
//! after validation, right before the etcd write (inside the conflict-retry
//! loop on update).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::resource::ResourceDef;
use crate::apimachinery::errors::ApiError;
use crate::authentication::UserInfo;
use crate::request::Warnings;

/// The kind of write, as upstream's `admission.Operation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// The name in `AdmissionReview` and in webhook rules (`CREATE`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// What a plugin sees of a write.
///
/// In the mutating phase `object` is `None` and the object is passed to
/// [`AdmissionPlugin::mutate`] by mutable reference; in the validating phase
/// it is the object about to be stored (`None` for deletes).
pub struct Attributes<'a> {
    pub operation: Operation,
    pub resource: &'a ResourceDef,
    /// `""` for the main resource, else `status`, `scale`, `binding`, ...
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub object: Option<&'a Value>,
    pub old_object: Option<&'a Value>,
    pub user: Option<&'a UserInfo>,
    pub dry_run: bool,
    /// Where plugins leave warnings for the client.
    pub warnings: Option<&'a Warnings>,
    /// When the request began: webhook calls of all its admission phases
    /// share one time budget counted from here.
    pub started: Option<std::time::Instant>,
    /// `(group, version, kind)` of the object when it is not the resource's
    /// own kind: a subresource's body (`policy`, `v1`, `Eviction` for
    /// `pods/eviction`); `None` for the resource's kind.
    pub kind: Option<(&'a str, &'a str, &'a str)>,
}

impl Attributes<'_> {
    /// Leaves a warning for the client (a `Warning` header).
    pub fn warn(&self, text: impl Into<String>) {
        if let Some(w) = self.warnings {
            w.add(text);
        }
    }

    /// Whether this is a write of `group`/`resource` itself (no subresource).
    pub fn is(&self, group: &str, resource: &str) -> bool {
        self.resource.group == group && self.resource.resource == resource
    }
}

/// What a store calls on each write. Both phases default to accepting.
pub trait Admit: Send + Sync {
    /// The mutating phase: may change `obj` (`None` for deletes) and says
    /// whether it did, so that the store re-applies defaults only then.
    fn mutate<'a>(
        &'a self,
        _attrs: &'a Attributes<'a>,
        _obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(std::future::ready(Ok(false)))
    }

    /// The validating phase: accepts or rejects the write.
    fn validate<'a>(&'a self, _attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// No admission: what a store without plugins runs.
pub struct AdmitAll;

impl Admit for AdmitAll {}

/// A shared admission handle, as stores hold it.
pub type SharedAdmit = Arc<dyn Admit>;
