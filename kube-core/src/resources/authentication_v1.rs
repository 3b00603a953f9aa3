//! `authentication.k8s.io/v1`: SelfSubjectReview (`kubectl auth whoami`).

use std::sync::Arc;

use apiserver::apimachinery::errors::ApiError;
use apiserver::authentication::UserInfo;
use apiserver::endpoints::handlers::{read_body, Query};
use apiserver::registry::catalog::Catalog;
use k8s_openapi::api::authentication::v1;
use serde_json::json;

use super::kind;

/// Registers the review resources.
pub fn register(groups: &mut Catalog) {
    let def = kind::<v1::SelfSubjectReview>().verbs(&["create"]);
    groups.add_handler(
        def,
        Arc::new(|req, info| {
            Box::pin(async move {
                if info.verb != "create" || !info.name.is_empty() {
                    return ApiError::method_not_supported(
                        apiserver::apimachinery::errors::GroupResource {
                            group: "authentication.k8s.io",
                            resource: "selfsubjectreviews",
                        },
                        &info.verb,
                    )
                    .into_response();
                }
                let user = req
                    .extensions()
                    .get::<UserInfo>()
                    .cloned()
                    .unwrap_or_default();
                let (headers, query) = (req.headers().clone(), Query::of(&info));
                if let Err(e) = read_body(req).await {
                    return e.into_response();
                }
                let mut user_info = json!({ "username": user.name, "groups": user.groups });
                if !user.uid.is_empty() {
                    user_info["uid"] = json!(user.uid);
                }
                if !user.extra.is_empty() {
                    user_info["extra"] = json!(user.extra);
                }
                let review = json!({
                    "kind": "SelfSubjectReview",
                    "apiVersion": "authentication.k8s.io/v1",
                    "metadata": { "creationTimestamp": null },
                    "status": { "userInfo": user_info },
                });
                apiserver::endpoints::handlers::respond_to_object_only(
                    &headers, &query, 201, &review,
                )
            })
        }),
    );
}

/// Registers `TokenReview`: a bearer token is checked with this server's
/// authenticators, as aggregated API servers do through delegated
/// authentication, for the audiences the review names (`spec.audiences`;
/// none: this server's `api_audiences`). `status.audiences` says which of
/// them the token is valid for: a token bound to another audience is not
/// authenticated, and one meant for this server is not accepted by a
/// service that reviews it for its own audience.
pub fn register_token_review(
    groups: &mut Catalog,
    authenticator: Arc<apiserver::authentication::union::UnionAuthenticator>,
    api_audiences: Vec<String>,
) {
    let api_audiences = Arc::new(api_audiences);
    let def = kind::<v1::TokenReview>().verbs(&["create"]);
    groups.add_handler(
        def,
        Arc::new(move |req, info| {
            let authenticator = authenticator.clone();
            let api_audiences = api_audiences.clone();
            Box::pin(async move {
                let gr = apiserver::apimachinery::errors::GroupResource {
                    group: "authentication.k8s.io",
                    resource: "tokenreviews",
                };
                if info.verb != "create" || !info.name.is_empty() {
                    return ApiError::method_not_supported(gr, &info.verb).into_response();
                }
                let (headers, query) = (req.headers().clone(), Query::of(&info));
                let review: serde_json::Value =
                    match apiserver::endpoints::handlers::read_object_body(req).await {
                        Ok(serde_json::Value::Null) => {
                            return ApiError::bad_request("the body of the request was empty")
                                .into_response()
                        }
                        Ok(v) => v,
                        Err(e) => return e.into_response(),
                    };
                let token = review
                    .pointer("/spec/token")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                let spec = review.get("spec").cloned().unwrap_or(json!({}));
                let requested = apiserver::apimachinery::meta::string_list(spec.get("audiences"));
                let status =
                    token_review_status(&authenticator, token, &requested, &api_audiences).await;
                let out = json!({
                    "kind": "TokenReview",
                    "apiVersion": "authentication.k8s.io/v1",
                    "metadata": { "creationTimestamp": null },
                    "spec": spec,
                    "status": status,
                });
                apiserver::endpoints::handlers::respond_to_object_only(&headers, &query, 201, &out)
            })
        }),
    );
}

/// The status of a TokenReview of `token` for the `requested` audiences
/// (empty: `api_audiences`).
async fn token_review_status(
    authenticator: &apiserver::authentication::union::UnionAuthenticator,
    token: &str,
    requested: &[String],
    api_audiences: &[String],
) -> serde_json::Value {
    if token.is_empty() {
        return json!({"user": {}, "error": "token is empty"});
    }
    let Ok(value) = http::HeaderValue::from_str(&format!("Bearer {token}")) else {
        return json!({"user": {}, "error": "invalid bearer token"});
    };
    let target = if requested.is_empty() {
        api_audiences
    } else {
        requested
    };
    let mut headers = http::HeaderMap::new();
    headers.insert(http::header::AUTHORIZATION, value);
    let req = apiserver::authentication::AuthRequest {
        headers: &headers,
        peer_certificates: None,
        peer_credentials: None,
        path: "/apis/authentication.k8s.io/v1/tokenreviews",
        audiences: Some(target),
    };
    let result = match authenticator.authenticate(&req) {
        Ok(user) => authenticator.validate(&headers, &user).await.map(|()| user),
        Err(e) => Err(e),
    };
    let user = match result {
        Ok(user) if !user.is_anonymous() => user,
        Ok(_) => return json!({"user": {}}),
        Err(e) => return json!({"user": {}, "error": e}),
    };
    // The audiences the token is valid for: a service account token's
    // `aud` (verified above) among the target; any other token is valid
    // for this server's audiences only (upstream's audience-agnostic
    // authenticators).
    let valid_for: Vec<String> = match jwt_audiences(token) {
        Some(aud) => target.iter().filter(|a| aud.contains(a)).cloned().collect(),
        None => target
            .iter()
            .filter(|a| api_audiences.contains(a))
            .cloned()
            .collect(),
    };
    if !target.is_empty() && valid_for.is_empty() {
        return json!({"user": {}, "error": format!(
            "token audiences are invalid for the target audiences {target:?}"
        )});
    }
    let mut u = json!({"username": user.name, "groups": user.groups});
    if !user.uid.is_empty() {
        u["uid"] = json!(user.uid);
    }
    if !user.extra.is_empty() {
        u["extra"] = json!(user.extra);
    }
    let mut status = json!({"authenticated": true, "user": u});
    if !valid_for.is_empty() {
        status["audiences"] = json!(valid_for);
    }
    status
}

/// The `aud` claim of a JWT (`None` for a token that is not one).
fn jwt_audiences(token: &str) -> Option<Vec<String>> {
    let claims = apiserver::authentication::service_account::unverified_claims(token)?;
    Some(apiserver::authentication::service_account::token_audiences(
        &claims,
    ))
}
