//! kube-core's own authorizers (the library's RBAC and the simple modes are
//! in [`apiserver::authorization`]): the Node authorizer, which needs the pods
//! and volumes only this server holds in memory.

pub mod node;
