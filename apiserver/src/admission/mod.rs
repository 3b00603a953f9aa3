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

pub mod metrics;
pub mod namespace_lifecycle;
pub mod namespaces;
pub mod objects;
pub mod plugins;
pub mod policy;
pub mod webhook;

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::apimachinery::errors::ApiError;
use metrics::Phase;

/// What plugins see of a write; defined with the generic store that fills
/// it in ([`crate::registry::admit`]).
pub use crate::registry::admit::{Attributes, Operation};

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
    /// `timers[i]` records `plugins[i]`'s runs.
    timers: Arc<[metrics::Timers]>,
    steps: Arc<metrics::Timers>,
}

impl AdmissionChain {
    /// A chain running `plugins` in order.
    pub fn new(plugins: Vec<Arc<dyn AdmissionPlugin>>) -> Self {
        let timers = plugins
            .iter()
            .map(|p| metrics::Timers::plugin(p.name()))
            .collect();
        AdmissionChain {
            plugins,
            timers,
            steps: Arc::new(metrics::Timers::step()),
        }
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
        let step = Instant::now();
        let mut changed = false;
        for (p, timers) in self.plugins.iter().zip(self.timers.iter()) {
            if !p.mutates() {
                continue;
            }
            let start = Instant::now();
            let result = p.mutate(attrs, obj.as_deref_mut()).await;
            let rejected = result.is_err();
            timers.observe(attrs.operation, Phase::Admit, rejected, start.elapsed());
            match result {
                Ok(c) => changed |= c,
                Err(e) => {
                    self.steps
                        .observe(attrs.operation, Phase::Admit, true, step.elapsed());
                    return Err(e);
                }
            }
        }
        self.steps
            .observe(attrs.operation, Phase::Admit, false, step.elapsed());
        Ok(changed)
    }

    /// Runs every plugin's validating phase; the first rejection wins.
    pub async fn validate(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        let step = Instant::now();
        for (p, timers) in self.plugins.iter().zip(self.timers.iter()) {
            let start = Instant::now();
            let result = p.validate(attrs).await;
            let rejected = result.is_err();
            timers.observe(attrs.operation, Phase::Validate, rejected, start.elapsed());
            if let Err(e) = result {
                self.steps
                    .observe(attrs.operation, Phase::Validate, true, step.elapsed());
                return Err(e);
            }
        }
        self.steps
            .observe(attrs.operation, Phase::Validate, false, step.elapsed());
        Ok(())
    }
}

/// The chain is what a tier's stores call on every write.
impl crate::registry::admit::Admit for AdmissionChain {
    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(AdmissionChain::mutate(self, attrs, obj))
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(AdmissionChain::validate(self, attrs))
    }
}
