//! Admission: plugins that see every write in the tier that owns the
//! storage, as upstream's `k8s.io/apiserver/pkg/admission`.
//!
//! A write meets admission in two phases, as upstream's:
//!
//! 1. **mutating**: after defaulting and before the kind's strategy
//!    validates, every plugin's [`AdmissionPlugin::mutate`] runs in chain
//!    order and may change the object (ServiceAccount adds the token volume,
//!    LimitRanger the default resources, a mutating webhook its patch);
//! 2. **validating**: after validation and right before the write, every
//!    plugin's [`AdmissionPlugin::validate`] runs in chain order and may only
//!    accept or reject (ResourceQuota charges the quota here, last).
//!
//! The first error rejects the request with that error's `Status`. Dry-run
//! writes run both phases; a plugin with side effects (quota) skips them
//! when [`Attributes::dry_run`] is set.
//!
//! Plugins carry upstream's names; [`plugins::ordered`] builds a tier's
//! chain in upstream's order from `--enable-admission-plugins` and
//! `--disable-admission-plugins`.

pub mod namespace_lifecycle;
pub mod namespaces;
pub mod objects;
pub mod plugins;
pub mod policy;
pub mod webhook;

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::apimachinery::errors::ApiError;
use crate::authentication::UserInfo;
use crate::registry::resource::ResourceDef;

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

/// Warnings collected during one request, returned as `Warning` headers.
#[derive(Default, Debug)]
pub struct Warnings(Mutex<Vec<String>>);

impl Warnings {
    /// Adds one warning (duplicates are sent once).
    pub fn add(&self, text: impl Into<String>) {
        let text = text.into();
        if let Ok(mut w) = self.0.lock() {
            if !w.contains(&text) {
                w.push(text);
            }
        }
    }

    /// The warnings so far, in the order they were added.
    pub fn to_vec(&self) -> Vec<String> {
        self.0.lock().map(|w| w.clone()).unwrap_or_default()
    }
}

/// When a request began; the default is now.
#[derive(Clone, Copy, Debug)]
pub struct RequestStart(pub std::time::Instant);

impl Default for RequestStart {
    fn default() -> Self {
        RequestStart(std::time::Instant::now())
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

/// One admission plugin. Both phases default to accepting.
pub trait AdmissionPlugin: Send + Sync {
    /// Upstream's name of the plugin (`LimitRanger`, `ResourceQuota`, ...).
    fn name(&self) -> &'static str;

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

    /// Whether the plugin has a mutating phase.
    fn mutates(&self) -> bool {
        false
    }
}

/// The ordered plugin chain of a server.
#[derive(Clone, Default)]
pub struct AdmissionChain {
    plugins: Vec<Arc<dyn AdmissionPlugin>>,
}

impl AdmissionChain {
    /// A chain running `plugins` in order.
    pub fn new(plugins: Vec<Arc<dyn AdmissionPlugin>>) -> Self {
        AdmissionChain { plugins }
    }

    /// The names of the plugins, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.plugins.iter().map(|p| p.name()).collect()
    }

    /// Whether any plugin has a mutating phase.
    pub fn mutates(&self) -> bool {
        self.plugins.iter().any(|p| p.mutates())
    }

    /// Runs every plugin's mutating phase; the first rejection wins.
    /// Returns whether the object changed.
    pub async fn mutate(
        &self,
        attrs: &Attributes<'_>,
        mut obj: Option<&mut Value>,
    ) -> Result<bool, ApiError> {
        let mut changed = false;
        for p in self.plugins.iter().filter(|p| p.mutates()) {
            changed |= p.mutate(attrs, obj.as_deref_mut()).await?;
        }
        Ok(changed)
    }

    /// Runs every plugin's validating phase; the first rejection wins.
    pub async fn validate(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        for p in &self.plugins {
            p.validate(attrs).await?;
        }
        Ok(())
    }
}
