//! End-to-end tests: etcd plus the three tiers as separate processes, driven
//! through the aggregator by kubectl (as a subprocess), kube-rs and raw HTTPS.

mod addon;
mod admission;
mod admission_policy;
mod aggregator;
mod aggregator_discovery;
mod allocation_repair;
mod apply;
mod auth;
mod bound_tokens;
mod builtins;
mod builtins_subresources;
mod client_go_writes;
mod control_plane;
mod crd_conversion;
mod crd_namespaces;
mod crd_protobuf;
mod crd_runtime;
mod crds;
mod errors;
mod handler_openapi;
mod harness;
mod kopf_admission;
mod kubectl;
mod list_options;
mod multiversion;
mod node_authorization;
mod pod_security;
mod protobuf;
mod rbac;
mod resilience;
mod rest;
mod services;
mod watch;
mod watch_cache;
mod webhooks;
