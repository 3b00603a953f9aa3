//! Controllers kube-core runs itself because nothing else would.

pub mod namespace;
pub mod service_accounts;
