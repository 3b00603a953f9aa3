//! Asks the authorizer about every request; a denial is upstream's 403, an
//! authorizer that could not decide is a 500.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::apimachinery::errors::{ApiError, GroupResource};
use crate::audit::context::{DECISION_ANNOTATION, REASON_ANNOTATION};
use crate::audit::AuditContext;
use crate::authentication::UserInfo;
use crate::authorization::{forbidden_message, Attributes, Authorizer, Decision};
use crate::body::{Request, Response};
use crate::request::info::RequestInfo;

/// The authorization filter.
#[derive(Clone)]
pub struct Authorization {
    pub authorizer: Arc<dyn Authorizer>,
    /// Pass requests whose identity a trusted front proxy asserted without
    /// asking: the tier in front already authorized them (the extensions
    /// tier behind kube-core, as upstream's in-process apiextensions server
    /// behind kube-apiserver's single authorization filter).
    pub trust_front_proxy: bool,
}

impl Filter for Authorization {
    fn call(&self, mut req: Request, next: Next) -> BoxFuture<'static, Response> {
        if self.trust_front_proxy
            && req
                .extensions()
                .get::<crate::authentication::FrontProxied>()
                .is_some()
        {
            return next.run(req);
        }
        // Taken out while the authorizer looks at them (it may await) and
        // put back for the handler: moved, not copied, on every request.
        let (Some(user), Some(info)) = (
            req.extensions_mut().remove::<UserInfo>(),
            req.extensions_mut().remove::<RequestInfo>(),
        ) else {
            return Box::pin(async {
                ApiError::internal("no user or request info on the request").into_response()
            });
        };
        let authorizer = self.authorizer.clone();
        Box::pin(async move {
            let decision = authorizer
                .authorize(&Attributes {
                    user: &user,
                    request: &info,
                })
                .await;
            if let Some(audit) = AuditContext::of(&req) {
                match &decision {
                    Decision::Allow => audit.annotate(DECISION_ANNOTATION, "allow"),
                    Decision::Deny(reason) | Decision::NoOpinion(reason) => {
                        audit.annotate(DECISION_ANNOTATION, "forbid");
                        if !reason.is_empty() {
                            audit.annotate(REASON_ANNOTATION, reason.clone());
                        }
                    }
                    Decision::Error(_) => {}
                }
            }
            match decision {
                Decision::Allow => {
                    req.extensions_mut().insert(user);
                    req.extensions_mut().insert(info);
                    next.run(req).await
                }
                Decision::Error(e) => {
                    tracing::warn!(user = %user.name, path = %info.path, error = %e, "authorization failed");
                    ApiError::internal(e).into_response()
                }
                Decision::Deny(reason) | Decision::NoOpinion(reason) => {
                    forbidden(&user, &info, &reason)
                }
            }
        })
    }
}

/// Upstream's 403 for a request the authorizer did not allow.
pub fn forbidden(user: &UserInfo, info: &RequestInfo, reason: &str) -> Response {
    let gr = GroupResource {
        group: &info.api_group,
        resource: &info.resource,
    };
    let why = forbidden_message(user, info, reason);
    if info.resource.is_empty() {
        // Upstream's NewForbidden with an empty resource.
        return ApiError::forbidden_message(gr, "", format!("forbidden: {why}")).into_response();
    }
    ApiError::forbidden(gr, &info.name, &why).into_response()
}
