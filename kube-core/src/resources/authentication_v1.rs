//! `authentication.k8s.io/v1`: SelfSubjectReview (`kubectl auth whoami`).

use std::sync::Arc;

use serde_json::json;
use shared::authentication::UserInfo;
use shared::endpoints::discovery::GroupSet;
use shared::endpoints::handlers::{json_response, read_body};
use shared::endpoints::status::ApiError;
use shared::registry::resource::ResourceDef;

/// Registers the review resources.
pub fn register(groups: &mut GroupSet) {
    let def = ResourceDef::new(
        "authentication.k8s.io",
        "v1",
        "SelfSubjectReview",
        "selfsubjectreviews",
    )
    .cluster_scoped()
    .verbs(&["create"]);
    groups.add_handler(
        def,
        Arc::new(|req, info| {
            Box::pin(async move {
                if info.verb != "create" || !info.name.is_empty() {
                    return ApiError::method_not_supported(
                        shared::endpoints::status::GroupResource {
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
                json_response(201, &review, false)
            })
        }),
    );
}
