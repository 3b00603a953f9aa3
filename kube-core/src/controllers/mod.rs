//! Controllers kube-core runs itself because nothing else would.

pub mod namespace;
