//! End-to-end tests: etcd plus the three tiers as separate processes, driven
//! through the aggregator by kubectl (as a subprocess), kube-rs and raw HTTPS.

mod auth;
mod builtins;
mod errors;
mod harness;
mod kubectl;
mod resilience;
mod rest;
mod services;
mod watch;
