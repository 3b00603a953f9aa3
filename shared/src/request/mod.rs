//! What a request is, recognised once at the edge of a tier and read by
//! every layer after it (upstream's `k8s.io/apiserver/pkg/endpoints/request`):
//!
//! - [`info`]: the parsed target ([`info::RequestInfo`]: verb, group, version,
//!   resource, subresource, namespace, name, selectors);
//! - [`peer`]: the client certificate chain of the connection.

pub mod info;
pub mod peer;
