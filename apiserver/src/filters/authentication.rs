//! Authenticates every request with the union authenticator, stores the
//! [`UserInfo`] in the request, and strips the credentials (`Authorization`
//! and every identity header) so nothing downstream can be fooled by them.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::apimachinery::errors::ApiError;
use crate::authentication::request_header::RequestHeaderNames;
use crate::authentication::union::UnionAuthenticator;
use crate::authentication::AuthRequest;
use crate::body::{Request, Response};
use crate::request::peer::PeerCertificates;

/// The authentication filter.
#[derive(Clone)]
pub struct Authentication {
    pub authenticator: Arc<UnionAuthenticator>,
    pub header_names: Arc<RequestHeaderNames>,
    /// Records requests that fail authentication, when auditing is on.
    pub auditor: Option<Arc<crate::audit::Auditor>>,
}

impl Filter for Authentication {
    fn call(&self, req: Request, next: Next) -> BoxFuture<'static, Response> {
        let result = {
            let auth_req = AuthRequest {
                headers: req.headers(),
                peer_certificates: req.extensions().get::<PeerCertificates>(),
                peer_credentials: req
                    .extensions()
                    .get::<crate::request::peer::PeerCredentials>(),
                path: req.uri().path(),
                audiences: None,
            };
            self.authenticator.authenticate_with_source(&auth_req)
        };
        let front_proxied = matches!(result, Ok((_, true)));
        let result = result.map(|(user, _)| user);
        let authenticator = self.authenticator.clone();
        let header_names = self.header_names.clone();
        let auditor = self.auditor.clone();
        Box::pin(async move {
            let result = authenticator.review_if_needed(req.headers(), result).await;
            let result = match result {
                Ok(user) => authenticator
                    .validate(req.headers(), &user)
                    .await
                    .map(|()| user),
                Err(e) => Err(e),
            };
            Authentication::finish(req, result, front_proxied, &header_names, auditor, next).await
        })
    }
}

impl Authentication {
    /// Strips the credentials and passes an authenticated request on, or
    /// answers 401.
    async fn finish(
        mut req: Request,
        result: Result<crate::authentication::UserInfo, String>,
        front_proxied: bool,
        header_names: &RequestHeaderNames,
        auditor: Option<Arc<crate::audit::Auditor>>,
        next: Next,
    ) -> Response {
        match result {
            Ok(user) => {
                let headers = req.headers_mut();
                headers.remove(http::header::AUTHORIZATION);
                let identity: Vec<http::HeaderName> = headers
                    .keys()
                    .filter(|k| header_names.is_identity_header(k.as_str()))
                    .cloned()
                    .collect();
                for k in identity {
                    headers.remove(k);
                }
                req.extensions_mut().insert(user);
                if front_proxied {
                    req.extensions_mut()
                        .insert(crate::authentication::FrontProxied);
                }
                next.run(req).await
            }
            Err(reason) => {
                tracing::debug!(path = %req.uri().path(), %reason, "unauthorized");
                let resp = ApiError::unauthorized().into_response();
                if let Some(a) = &auditor {
                    super::audit::Audit::record_unauthenticated(a, &req, resp.status().as_u16());
                }
                resp
            }
        }
    }
}
