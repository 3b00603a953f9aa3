//! Reaching other servers: how the TLS identity of a remote server is
//! trusted ([`remote`]: a `caBundle` for `<service>.<namespace>.svc`, or
//! none), and which addresses a Service resolves to ([`service`]: its ready
//! EndpointSlice endpoints). The aggregator (APIServices), admission
//! webhooks and conversion webhooks all use them.

pub mod remote;
pub mod service;
