//! Controllers kube-core runs itself because nothing else would.

pub mod apiserver_identity;
pub mod namespace;
pub mod policy_type_checking;
pub mod service_accounts;
