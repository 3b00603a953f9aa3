//! The generic Kubernetes API-server library.
//!
//! The three tiers of this project (aggregator, kube-core, extensions) are
//! built from it, and so can external (aggregated) API servers. The layout
//! follows upstream's `k8s.io/apiserver`:
//!
//! - [`server`]: listeners, TLS, the handler chain, running a tier;
//! - [`filters`]: one tower layer per filter (panic recovery, request info,
//!   authentication, authorization, timeouts, body limits, ...);
//! - [`authentication`] and [`authorization`]: who is calling, may they;
//! - [`endpoints`]: request info, REST handlers, negotiation, discovery, Status;
//! - [`registry`]: resource declarations and the generic store;
//! - [`storage`]: etcd;
//! - [`admission`]: plugins that see every write;
//! - [`audit`]: the audit policy, records and their backends (log, webhook);
//! - [`metrics`]: the Prometheus registry served at `/metrics`;
//! - [`logging`]: `--logging-format` and klog's `-v`;
//! - [`traces`]: spans per request across the tiers, exported over OTLP;
//! - [`proxy`]: delegation to the next tier with the caller's identity.

pub mod admission;
pub mod apimachinery;
pub mod audit;
pub mod authentication;
pub mod authorization;
pub mod body;
pub mod cel;
pub mod client;
pub mod endpoints;
pub mod fieldmanager;
pub mod filters;
pub mod flowcontrol;
pub mod fuzzing;
pub mod logging;
pub mod metrics;
pub mod openapi;
pub mod pki;
pub mod protobuf;
pub mod proxy;
pub mod registry;
pub mod request;
pub mod schema;
pub mod server;
pub mod storage;
pub mod traces;
pub mod transport;
