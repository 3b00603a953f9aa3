//! HTTP endpoints: request info, REST handlers, negotiation, discovery,
//! Status errors, version.

pub mod aggregated_discovery;
pub mod discovery;
pub mod handlers;
pub mod metrics;
pub mod negotiation;
pub mod status;
pub mod version;
