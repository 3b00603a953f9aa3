//! The Node authorizer (`--authorization-mode=Node`), upstream's
//! `plugin/pkg/auth/authorizer/node`: kubelets may read only the secrets,
//! ConfigMaps, volumes, claims and service accounts of the pods bound to
//! their node.
//!
//! - [`graph`]: the graph of node ← pod ← secret/configmap/pvc/... edges;
//! - [`references`]: what a pod or a PersistentVolume refers to;
//! - [`populator`]: keeps the graph current from kube-core's watches;
//! - [`authorizer`]: the decisions, as upstream's `NodeAuthorizer`.
//!
//! Only kube-core runs it: it alone holds the pods in memory. The
//! aggregator's own decisions reach it through SubjectAccessReviews, and
//! the CRD tier trusts what kube-core authorized, so `Node` applies to
//! every request of the chain, as in upstream's single process.

pub mod authorizer;
pub mod graph;
pub mod populator;
pub mod references;

pub use authorizer::{node_identity, NodeAuthorizer};
pub use graph::Graph;
pub use populator::Populator;
