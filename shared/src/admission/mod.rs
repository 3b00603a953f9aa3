//! Admission: plugins that see every write after defaulting and before
//! validation and storage, in the tier that owns the storage.
//!
//! Plugins are run in order by the generic store; the first error rejects the
//! request with that error's Status.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::authentication::UserInfo;
use crate::endpoints::status::ApiError;
use crate::registry::resource::ResourceDef;

/// The kind of write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

/// What a plugin sees of a write.
pub struct Attributes<'a> {
    pub operation: Operation,
    pub resource: &'a ResourceDef,
    pub subresource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub object: Option<&'a Value>,
    pub old_object: Option<&'a Value>,
    pub user: Option<&'a UserInfo>,
    pub dry_run: bool,
}

/// One admission plugin.
pub trait AdmissionPlugin: Send + Sync {
    /// Accepts or rejects the write.
    fn admit<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>>;
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

    /// Runs every plugin; the first rejection wins.
    pub async fn admit(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        for p in &self.plugins {
            p.admit(attrs).await?;
        }
        Ok(())
    }
}
