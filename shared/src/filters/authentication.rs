//! Authenticates every request with the union authenticator, stores the
//! [`UserInfo`] in the request, and strips the credentials (`Authorization`
//! and every identity header) so nothing downstream can be fooled by them.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::authentication::request_header::RequestHeaderNames;
use crate::authentication::union::UnionAuthenticator;
use crate::authentication::AuthRequest;
use crate::body::{Request, Response};
use crate::endpoints::status::ApiError;
use crate::server::tls::PeerCertificates;

/// The authentication filter.
#[derive(Clone)]
pub struct Authentication {
    pub authenticator: Arc<UnionAuthenticator>,
    pub header_names: Arc<RequestHeaderNames>,
}

impl Filter for Authentication {
    fn call(&self, mut req: Request, next: Next) -> BoxFuture<'static, Response> {
        let result = {
            let auth_req = AuthRequest {
                headers: req.headers(),
                peer_certificates: req.extensions().get::<PeerCertificates>(),
                path: req.uri().path(),
            };
            self.authenticator.authenticate(&auth_req)
        };
        match result {
            Ok(user) => {
                let headers = req.headers_mut();
                headers.remove(http::header::AUTHORIZATION);
                let identity: Vec<http::HeaderName> = headers
                    .keys()
                    .filter(|k| self.header_names.is_identity_header(k.as_str()))
                    .cloned()
                    .collect();
                for k in identity {
                    headers.remove(k);
                }
                req.extensions_mut().insert(user);
                Box::pin(next.run(req))
            }
            Err(reason) => {
                tracing::debug!(path = %req.uri().path(), %reason, "unauthorized");
                Box::pin(async move { ApiError::unauthorized().into_response() })
            }
        }
    }
}
