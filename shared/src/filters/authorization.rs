//! Asks the authorizer about every request; a denial is upstream's 403.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::authentication::UserInfo;
use crate::authorization::{forbidden_message, Attributes, Authorizer, Decision};
use crate::body::{Request, Response};
use crate::endpoints::request_info::RequestInfo;
use crate::endpoints::status::{ApiError, GroupResource};

/// The authorization filter.
#[derive(Clone)]
pub struct Authorization {
    pub authorizer: Arc<dyn Authorizer>,
}

impl Filter for Authorization {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let (Some(user), Some(info)) = (
            req.extensions().get::<UserInfo>(),
            req.extensions().get::<RequestInfo>(),
        ) else {
            return Box::pin(async {
                ApiError::internal("no user or request info on the request").into_response()
            });
        };
        let denied = match self.authorizer.authorize(&Attributes {
            user,
            request: info,
        }) {
            Decision::Allow => None,
            Decision::Deny(reason) | Decision::NoOpinion(reason) => {
                let gr = GroupResource {
                    group: &info.api_group,
                    resource: &info.resource,
                };
                Some(ApiError::forbidden_message(
                    gr,
                    &info.name,
                    forbidden_message(user, info, &reason),
                ))
            }
        };
        match denied {
            None => Box::pin(next.run(req)),
            Some(err) => Box::pin(async move { err.into_response() }),
        }
    }
}
