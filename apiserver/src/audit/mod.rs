//! Auditing (upstream's `k8s.io/apiserver/pkg/audit` and
//! `plugin/pkg/audit`): a chronological record of what each request did, who
//! asked and what the server answered, written as `audit.k8s.io/v1` `Event`s.
//!
//! - [`policy`] decides per request the [`Level`] and the stages left out;
//! - [`event`] is the record, encoded once per stage and handed to every
//!   backend;
//! - [`context`] is what later filters add to a request's record (the
//!   impersonated user, the authorizer's decision);
//! - [`backends`] write the records: the JSON-lines log with rotation and the
//!   webhook, each blocking or batched, optionally truncating;
//! - the filter that builds records is [`crate::filters::audit`].
//!
//! One request handled by several tiers is recorded by each of them under the
//! same `auditID`: the `Audit-Id` a client sent, or the one the first tier
//! chose, travels with the request (see [`crate::filters::audit_id`]).

pub mod backends;
pub mod context;
pub mod event;
pub mod metrics;
pub mod policy;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use context::AuditContext;
pub use event::Event;
pub use policy::Policy;

/// How much of a request is recorded; ordered from nothing to everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Not recorded.
    None,
    /// Who, what, when and the answer's status; no bodies.
    Metadata,
    /// Metadata and the request body.
    Request,
    /// Metadata, the request body and the response body.
    RequestResponse,
}

impl Level {
    /// The name upstream writes (and labels metrics with).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

/// When in a request's life a record is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// As soon as the request is received, before it is handled.
    RequestReceived,
    /// When the response head is sent (long-running requests only).
    ResponseStarted,
    /// When the response is complete.
    ResponseComplete,
    /// When handling the request panicked.
    Panic,
}

/// Where records go: every backend, in order. `process` returns false when a
/// backend that must not lose records could not take one (only
/// `blocking-strict` backends say so), which fails the request.
pub trait Sink: Send + Sync {
    /// Takes one encoded record.
    fn process(&self, record: &event::Encoded<'_>) -> bool;
    /// Sends what is buffered and stops; called once at shutdown.
    fn shutdown(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// A tier's auditing: its policy and its backends.
pub struct Auditor {
    pub policy: Policy,
    pub sink: Arc<dyn Sink>,
}

impl Auditor {
    /// Hands one record to the backends (unless its stage is omitted),
    /// stamping its stage time. Returns false when a strict backend refused it.
    pub fn emit(&self, event: &mut Event, omit: &[Stage]) -> bool {
        if omit.contains(&event.stage) {
            return true;
        }
        event.stage_timestamp = if event.stage == Stage::RequestReceived {
            event.request_received_timestamp.clone()
        } else {
            event::MicroTime::now()
        };
        metrics::event();
        self.sink.process(&event::Encoded::new(event))
    }
}

/// Several backends as one.
pub struct Union(pub Vec<Arc<dyn Sink>>);

impl Sink for Union {
    fn process(&self, record: &event::Encoded<'_>) -> bool {
        let mut ok = true;
        for s in &self.0 {
            ok &= s.process(record);
        }
        ok
    }

    fn shutdown(&self) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(async move {
            for s in &self.0 {
                s.shutdown().await;
            }
        })
    }
}
