//! kube-core's admission plugins.

pub mod namespace_lifecycle;
