//! Subresources a kubelet or the cluster network answers (`pods/exec`,
//! `attach`, `portforward`, `proxy`, `log`; `nodes/proxy`,
//! `services/proxy`): declared as upstream declares them (discovery, verbs,
//! admission as CONNECT), answered 503 while this server has no connection
//! to kubelets or cluster addresses.

use std::sync::Arc;

use apiserver::apimachinery::errors::ApiError;
use apiserver::registry::resource::{CustomSubresource, SubresourceCall};

/// A pod subresource served by the kubelet.
pub fn kubelet_subresource(name: &'static str, kind: &'static str) -> CustomSubresource {
    CustomSubresource {
        name,
        verbs: match name {
            "log" => &["get"],
            "proxy" => &["create", "delete", "get", "patch", "update"],
            _ => &["create", "get"],
        },
        kind: ("", "v1", kind),
        handler: Arc::new(move |call: SubresourceCall<'_>| {
            Box::pin(async move {
                // Existence first, as upstream.
                call.store.get(call.namespace, call.name).await?;
                Err(ApiError::service_unavailable(format!(
                    "pods/{name} is not available: this API server has no connection to kubelets yet"
                )))
            })
        }),
    }
}

/// A `proxy` subresource of nodes (`NodeProxyOptions`) or services
/// (`ServiceProxyOptions`): declared as upstream's, answered 503 while this
/// server cannot reach kubelets or cluster addresses.
pub fn proxy_subresource(kind: &'static str, what: &'static str) -> CustomSubresource {
    CustomSubresource {
        name: "proxy",
        verbs: &["create", "delete", "get", "patch", "update"],
        kind: ("", "v1", kind),
        handler: Arc::new(move |call: SubresourceCall<'_>| {
            Box::pin(async move {
                call.store.get(call.namespace, call.name).await?;
                Err(ApiError::service_unavailable(format!(
                    "{what}/proxy is not available: this API server cannot reach kubelets or cluster addresses yet"
                )))
            })
        }),
    }
}
