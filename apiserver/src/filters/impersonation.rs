//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`): upstream's
//! `WithImpersonation`. Each requested identity part must be allowed to the
//! caller with the verb `impersonate` (users or serviceaccounts, groups,
//! `authentication.k8s.io` uids and userextras/<key>); the request then runs
//! as the impersonated user and the `Impersonate-*` headers are dropped.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{Filter, Next};
use crate::apimachinery::errors::ApiError;
use crate::authentication::{UserInfo, ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS};
use crate::authorization::{Attributes, Authorizer, Decision};
use crate::body::{Request, Response};
use crate::request::info::RequestInfo;

const USER: &str = "impersonate-user";
const UID: &str = "impersonate-uid";
const GROUP: &str = "impersonate-group";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// The impersonation filter.
#[derive(Clone)]
pub struct Impersonation {
    pub authorizer: Arc<dyn Authorizer>,
}

/// What a request asks to impersonate.
#[derive(Debug, Default, PartialEq)]
struct Requested {
    user: Option<String>,
    uid: Option<String>,
    groups: Vec<String>,
    extra: BTreeMap<String, Vec<String>>,
}

fn requested(headers: &http::HeaderMap) -> Result<Option<Requested>, String> {
    let mut r = Requested::default();
    let mut any = false;
    for (name, value) in headers {
        let n = name.as_str();
        if !n.starts_with("impersonate-") {
            continue;
        }
        any = true;
        let v = value
            .to_str()
            .map_err(|_| format!("invalid value of header {n}"))?
            .to_string();
        match n {
            USER => r.user = Some(v),
            UID => r.uid = Some(v),
            GROUP => r.groups.push(v),
            _ => {
                if let Some(key) = n.strip_prefix(EXTRA_PREFIX) {
                    let key = percent_encoding::percent_decode_str(key)
                        .decode_utf8_lossy()
                        .to_lowercase();
                    r.extra.entry(key).or_default().push(v);
                }
            }
        }
    }
    if !any {
        return Ok(None);
    }
    if r.user.as_deref().is_none_or(str::is_empty) {
        return Err(
            "requested impersonation of groups, uid or extra without impersonating a user".into(),
        );
    }
    Ok(Some(r))
}

/// The checks, one RequestInfo per impersonated part.
fn checks(r: &Requested) -> Vec<RequestInfo> {
    let check = |group: &str, resource: &str, sub: &str, ns: &str, name: &str| RequestInfo {
        is_resource_request: true,
        verb: "impersonate".into(),
        api_group: group.into(),
        resource: resource.into(),
        subresource: sub.into(),
        namespace: ns.into(),
        name: name.into(),
        ..Default::default()
    };
    let mut out = Vec::new();
    let user = r.user.as_deref().unwrap_or("");
    match service_account(user) {
        Some((ns, name)) => out.push(check("", "serviceaccounts", "", ns, name)),
        None => out.push(check("", "users", "", "", user)),
    }
    for g in &r.groups {
        out.push(check("", "groups", "", "", g));
    }
    if let Some(uid) = &r.uid {
        out.push(check("authentication.k8s.io", "uids", "", "", uid));
    }
    for (k, vs) in &r.extra {
        for v in vs {
            out.push(check("authentication.k8s.io", "userextras", k, "", v));
        }
    }
    out
}

fn service_account(user: &str) -> Option<(&str, &str)> {
    user.strip_prefix("system:serviceaccount:")?.split_once(':')
}

/// The user the request runs as.
fn impersonated(r: Requested) -> UserInfo {
    let name = r.user.unwrap_or_default();
    let mut groups = Vec::new();
    if let Some((ns, _)) = service_account(&name) {
        groups.push("system:serviceaccounts".to_string());
        groups.push(format!("system:serviceaccounts:{ns}"));
    }
    groups.extend(r.groups);
    if name == ANONYMOUS {
        if !groups.iter().any(|g| g == ALL_UNAUTHENTICATED) {
            groups.push(ALL_UNAUTHENTICATED.into());
        }
    } else if !groups
        .iter()
        .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
    {
        groups.push(ALL_AUTHENTICATED.into());
    }
    UserInfo {
        name,
        uid: r.uid.unwrap_or_default(),
        groups,
        extra: r.extra,
    }
}

impl Filter for Impersonation {
    fn call(&self, mut req: Request, next: Next) -> BoxFuture<'static, Response> {
        let wanted = match requested(req.headers()) {
            Ok(None) => return next.run(req),
            Ok(Some(w)) => w,
            Err(e) => return Box::pin(async move { ApiError::bad_request(e).into_response() }),
        };
        let Some(caller) = req.extensions().get::<UserInfo>().cloned() else {
            return Box::pin(async {
                ApiError::internal("no user on the request").into_response()
            });
        };
        let authorizer = self.authorizer.clone();
        Box::pin(async move {
            for check in checks(&wanted) {
                let decision = authorizer
                    .authorize(&Attributes {
                        user: &caller,
                        request: &check,
                    })
                    .await;
                match decision {
                    Decision::Allow => {}
                    Decision::Error(e) => return ApiError::internal(e).into_response(),
                    Decision::Deny(reason) | Decision::NoOpinion(reason) => {
                        return super::authorization::forbidden(&caller, &check, &reason)
                    }
                }
            }
            let headers = req.headers_mut();
            let names: Vec<http::HeaderName> = headers
                .keys()
                .filter(|k| k.as_str().starts_with("impersonate-"))
                .cloned()
                .collect();
            for n in names {
                headers.remove(n);
            }
            let user = impersonated(wanted);
            if let Some(audit) = crate::audit::AuditContext::of(&req) {
                audit.impersonate(&user);
            }
            req.extensions_mut().insert(user);
            next.run(req).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn parses_and_checks_every_part() {
        assert_eq!(requested(&headers(&[("accept", "x")])), Ok(None));
        assert!(requested(&headers(&[("impersonate-group", "g")])).is_err());
        let r = requested(&headers(&[
            ("impersonate-user", "system:serviceaccount:ns:sa"),
            ("impersonate-group", "devs"),
            ("impersonate-extra-scopes%2Fx", "a"),
        ]))
        .unwrap()
        .unwrap();
        let c = checks(&r);
        assert_eq!(c.len(), 3);
        assert_eq!(
            (
                c[0].resource.as_str(),
                c[0].namespace.as_str(),
                c[0].name.as_str()
            ),
            ("serviceaccounts", "ns", "sa")
        );
        assert_eq!(
            (c[1].resource.as_str(), c[1].name.as_str()),
            ("groups", "devs")
        );
        assert_eq!(
            (c[2].resource.as_str(), c[2].subresource.as_str()),
            ("userextras", "scopes/x")
        );
        let u = impersonated(r);
        assert_eq!(
            u.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "devs",
                "system:authenticated"
            ]
        );
    }
}
