//! What the layers after the audit filter add to a request's record: the
//! impersonated user, and annotations (the authorizer's decision and
//! reason, or any a handler or admission plugin sets).
//!
//! The audit filter puts an [`AuditContext`] in the request's extensions
//! when the request is recorded; the others find it there. Absent, nothing
//! is recorded, and adding costs nothing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::authentication::UserInfo;

/// The annotation holding the authorizer's decision (`allow`, `forbid`).
pub const DECISION_ANNOTATION: &str = "authorization.k8s.io/decision";
/// The annotation holding the reason the authorizer gave.
pub const REASON_ANNOTATION: &str = "authorization.k8s.io/reason";

/// A request's audit additions, shared by the filter that writes the record.
#[derive(Clone, Debug, Default)]
pub struct AuditContext(Arc<Mutex<Additions>>);

/// What has been added so far.
#[derive(Clone, Debug, Default)]
pub struct Additions {
    pub annotations: BTreeMap<String, String>,
    pub impersonated_user: Option<UserInfo>,
}

impl AuditContext {
    /// Sets an annotation; the first value set for a key is kept, as upstream.
    pub fn annotate(&self, key: &str, value: impl Into<String>) {
        if let Ok(mut a) = self.0.lock() {
            a.annotations
                .entry(key.to_string())
                .or_insert_with(|| value.into());
        }
    }

    /// Records the user the request acts as.
    pub fn impersonate(&self, user: &UserInfo) {
        if let Ok(mut a) = self.0.lock() {
            a.impersonated_user = Some(user.clone());
        }
    }

    /// A copy of what has been added.
    pub fn additions(&self) -> Additions {
        self.0.lock().map(|a| a.clone()).unwrap_or_default()
    }

    /// The context of a request, if it is recorded.
    pub fn of<B>(req: &http::Request<B>) -> Option<&AuditContext> {
        req.extensions().get::<AuditContext>()
    }
}
