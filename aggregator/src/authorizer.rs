//! Authorization at the front door.
//!
//! Requests the aggregator passes on to kube-core (every group a local
//! APIService serves) are authorized there, by RBAC, on the identity the
//! front proxy carries; asking here too would only add a round trip. What
//! the aggregator answers itself or sends to an external API server
//! (APIServices, merged discovery and OpenAPI, remote groups) and every
//! impersonation check are decided here, by SubjectAccessReviews sent to
//! kube-core and cached for ten seconds (upstream's delegated authorizer).
//! Members of `system:masters` and health probes are always allowed, so the
//! front door's own health never depends on kube-core.

use std::sync::Arc;

use apiserver::authentication::SYSTEM_MASTERS;
use apiserver::authorization::delegating::{DelegatingAuthorizer, ReviewClient};
use apiserver::authorization::rbac::non_resource_url_matches;
use apiserver::authorization::{
    decided, Attributes, Authorizer, Decision, DecisionFuture, HEALTH_PATHS,
};
use apiserver::proxy::Delegate;
use apiserver::request::info::RequestInfo;
use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::apiservice::GROUP;
use crate::remote::ServiceRef;
use crate::state::{internal_user, State};

/// SubjectAccessReviews sent to kube-core as the aggregator itself.
pub struct KubeCoreReviews(pub Delegate);

impl ReviewClient for KubeCoreReviews {
    fn post_json<'a>(
        &'a self,
        path: &'a str,
        body: &'a Value,
    ) -> BoxFuture<'a, Result<(u16, Value), String>> {
        Box::pin(async move {
            let user = internal_user();
            self.0
                .call_json(
                    http::Method::POST,
                    path,
                    Some(body),
                    Some(&user),
                    None,
                    std::time::Duration::from_secs(10),
                )
                .await
        })
    }
}

/// The aggregator's authorizer.
pub struct FrontDoorAuthorizer {
    pub state: Arc<State>,
    pub delegated: DelegatingAuthorizer,
}

impl FrontDoorAuthorizer {
    /// Whether kube-core (or the tier behind it) serves this request and so
    /// authorizes it itself.
    fn served_behind(&self, r: &RequestInfo) -> bool {
        if !r.is_resource_request || r.verb == "impersonate" || r.api_group == GROUP {
            return false;
        }
        let name = format!("{}.{}", r.api_version, r.api_group);
        let services = self.state.services();
        !services
            .get(&name)
            .is_some_and(|o| ServiceRef::of(o).is_some())
    }
}

impl Authorizer for FrontDoorAuthorizer {
    fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
        let r = attrs.request;
        if attrs.user.in_group(SYSTEM_MASTERS)
            || self.served_behind(r)
            || (!r.is_resource_request
                && r.verb == "get"
                && HEALTH_PATHS
                    .iter()
                    .any(|p| non_resource_url_matches(p, &r.path)))
        {
            return decided(Decision::Allow);
        }
        self.delegated.authorize(attrs)
    }
}
