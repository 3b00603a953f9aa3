//! RBAC's escalation prevention (upstream's `policybased` role and binding
//! storage): a user may only write a Role or ClusterRole whose rules they
//! hold themselves, or with the `escalate` verb on it; and may only bind a
//! role whose rules they hold, or with the `bind` verb on it. Members of
//! `system:masters` and the server's own writes are exempt. Writes that
//! change neither rules (roles) nor role reference and subjects (bindings)
//! are not checked, so metadata edits and finalizer removal always work.

use std::sync::Arc;

use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::{ApiError, GroupResource};
use apiserver::authentication::{UserInfo, SYSTEM_MASTERS};
use apiserver::authorization::rbac::{compact_string, uncovered, PolicyRule, RbacAuthorizer};
use apiserver::authorization::{self, Authorizer, Decision};
use apiserver::request::info::RequestInfo;
use futures_util::future::BoxFuture;
use serde_json::Value;

const GROUP: &str = "rbac.authorization.k8s.io";

/// The admission plugin.
pub struct RbacEscalation {
    pub rbac: Arc<RbacAuthorizer>,
    pub authorizer: Arc<dyn Authorizer>,
}

fn rules_of(obj: &Value) -> Vec<PolicyRule> {
    obj.get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(PolicyRule::from_json)
        .collect()
}

impl RbacEscalation {
    async fn allowed(
        &self,
        user: &UserInfo,
        verb: &str,
        resource: &str,
        ns: &str,
        name: &str,
    ) -> bool {
        let request = RequestInfo {
            is_resource_request: true,
            verb: verb.into(),
            api_group: GROUP.into(),
            api_version: "v1".into(),
            resource: resource.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Default::default()
        };
        self.authorizer
            .authorize(&authorization::Attributes {
                user,
                request: &request,
            })
            .await
            == Decision::Allow
    }

    /// Forbidden unless `user` holds every rule in `wanted` in `ns`.
    fn confirm_no_escalation(
        &self,
        user: &UserInfo,
        ns: &str,
        wanted: &[PolicyRule],
        gr: GroupResource<'_>,
        name: &str,
    ) -> Result<(), ApiError> {
        let (owned, errors) = self.rbac.read(|index| index.rules_for(user, ns));
        let missing: Vec<PolicyRule> = wanted.iter().flat_map(|r| uncovered(&owned, r)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let groups = user
            .groups
            .iter()
            .map(|g| format!("{g:?}"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut msg = format!(
            "user {:?} (groups=[{groups}]) is attempting to grant RBAC permissions not currently held:\n{}",
            user.name,
            compact_string(&missing)
        );
        if !errors.is_empty() {
            msg.push_str(&format!("; resolution errors: [{}]", errors.join(", ")));
        }
        Err(ApiError::forbidden(gr, name, &msg))
    }

    async fn check(
        &self,
        a: &Attributes<'_>,
        user: &UserInfo,
        obj: &Value,
    ) -> Result<(), ApiError> {
        let resource = a.resource.resource.as_str();
        let gr = GroupResource {
            group: GROUP,
            resource,
        };
        let old = a.old_object.filter(|_| a.operation == Operation::Update);
        match resource {
            "roles" | "clusterroles" => {
                let unchanged = |key: &str| old.is_some_and(|o| o.get(key) == obj.get(key));
                if unchanged("rules") && unchanged("aggregationRule") {
                    return Ok(());
                }
                if self
                    .allowed(user, "escalate", resource, a.namespace, a.name)
                    .await
                {
                    return Ok(());
                }
                if resource == "clusterroles"
                    && obj.get("aggregationRule").is_some_and(|r| !r.is_null())
                    && !unchanged("aggregationRule")
                {
                    return Err(ApiError::forbidden(
                        gr,
                        a.name,
                        "must have cluster-admin privileges to use the aggregationRule",
                    ));
                }
                self.confirm_no_escalation(user, a.namespace, &rules_of(obj), gr, a.name)
            }
            "rolebindings" | "clusterrolebindings" => {
                let unchanged = |key: &str| old.is_some_and(|o| o.get(key) == obj.get(key));
                if unchanged("roleRef") && unchanged("subjects") {
                    return Ok(());
                }
                let kind = obj
                    .pointer("/roleRef/kind")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let role = obj
                    .pointer("/roleRef/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let role_resource = if kind == "Role" {
                    "roles"
                } else {
                    "clusterroles"
                };
                if self
                    .allowed(user, "bind", role_resource, a.namespace, role)
                    .await
                {
                    return Ok(());
                }
                let Some(rules) = self
                    .rbac
                    .read(|index| index.role_ref_rules(kind, a.namespace, role))
                else {
                    return Err(ApiError::not_found(
                        GroupResource {
                            group: GROUP,
                            resource: role_resource,
                        },
                        role,
                    ));
                };
                self.confirm_no_escalation(user, a.namespace, &rules, gr, a.name)
            }
            _ => Ok(()),
        }
    }
}

impl AdmissionPlugin for RbacEscalation {
    /// Not an upstream admission plugin: upstream checks escalation in the
    /// RBAC storage; here it runs after the admission chain.
    fn name(&self) -> &'static str {
        "RBACEscalation"
    }

    fn validate<'a>(&'a self, a: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            if a.resource.group != GROUP
                || a.operation == Operation::Delete
                || !a.subresource.is_empty()
            {
                return Ok(());
            }
            let (Some(user), Some(obj)) = (a.user, a.object) else {
                return Ok(());
            };
            if user.in_group(SYSTEM_MASTERS) {
                return Ok(());
            }
            self.check(a, user, obj).await
        })
    }
}
