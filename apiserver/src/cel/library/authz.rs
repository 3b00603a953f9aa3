//! The authorizer library (upstream `library.Authz`): the `authorizer`
//! variable of admission expressions (webhook `matchConditions`,
//! ValidatingAdmissionPolicy), asking the tier's authorizer about the
//! requesting user:
//!
//! ```text
//! authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('delete').allowed()
//! authorizer.path('/healthz').check('get').allowed()
//! authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list').reason()
//! ```
//!
//! A check is decided when it is evaluated (expressions are synchronous):
//! the authorizer's future is driven to completion on the current worker
//! with `block_in_place`; a tier without a multi-threaded runtime, or without
//! an authorizer, reports the check as errored.

use std::sync::Arc;

use ::cel::common::types::{CelBool, CelString};
use ::cel::{DeclarationError, Env};

use super::object_type;
use crate::authentication::UserInfo;
use crate::authorization::{Attributes, Authorizer as AuthorizerTrait, Decision as Verdict};
use crate::request::info::RequestInfo;

/// The `authorizer` variable: the authorizer and the user it asks about.
#[derive(Clone)]
pub struct Authorizer {
    authorizer: Option<Arc<dyn AuthorizerTrait>>,
    user: UserInfo,
}

impl Authorizer {
    /// The variable for `user`; without an authorizer every check errors.
    pub fn new(authorizer: Option<Arc<dyn AuthorizerTrait>>, user: UserInfo) -> Self {
        Authorizer { authorizer, user }
    }
}

impl PartialEq for Authorizer {
    fn eq(&self, other: &Self) -> bool {
        self.user == other.user
    }
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("user", &self.user.name)
            .finish()
    }
}

object_type!(
    Authorizer,
    AUTHORIZER_TYPE,
    "kubernetes.authorization.Authorizer"
);

/// `authorizer.path(p)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PathCheck {
    authz: Authorizer,
    path: String,
}

object_type!(
    PathCheck,
    PATH_CHECK_TYPE,
    "kubernetes.authorization.PathCheck"
);

/// `authorizer.group(g)`.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupCheck {
    authz: Authorizer,
    group: String,
}

object_type!(
    GroupCheck,
    GROUP_CHECK_TYPE,
    "kubernetes.authorization.GroupCheck"
);

/// `authorizer.group(g).resource(r)` and its refinements.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceCheck {
    authz: Authorizer,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
}

object_type!(
    ResourceCheck,
    RESOURCE_CHECK_TYPE,
    "kubernetes.authorization.ResourceCheck"
);

/// The outcome of a check.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    allowed: bool,
    reason: String,
    error: String,
}

object_type!(Decision, DECISION_TYPE, "kubernetes.authorization.Decision");

fn decide(authz: &Authorizer, request: RequestInfo) -> Decision {
    let errored = |e: &str| Decision {
        allowed: false,
        reason: String::new(),
        error: e.to_string(),
    };
    let Some(authorizer) = authz.authorizer.clone() else {
        return errored("no authorizer is available in this server");
    };
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return errored("no runtime to run the authorizer on");
    };
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return errored("the authorizer needs a multi-threaded runtime");
    }
    let user = authz.user.clone();
    let verdict = tokio::task::block_in_place(|| {
        handle.block_on(async move {
            authorizer
                .authorize(&Attributes {
                    user: &user,
                    request: &request,
                })
                .await
        })
    });
    match verdict {
        Verdict::Allow => Decision {
            allowed: true,
            reason: String::new(),
            error: String::new(),
        },
        Verdict::Deny(r) | Verdict::NoOpinion(r) => Decision {
            allowed: false,
            reason: r,
            error: String::new(),
        },
        Verdict::Error(e) => errored(&e),
    }
}

fn path(a: &Authorizer, p: &CelString<'_>) -> PathCheck {
    PathCheck {
        authz: a.clone(),
        path: p.to_string(),
    }
}

fn group(a: &Authorizer, g: &CelString<'_>) -> GroupCheck {
    GroupCheck {
        authz: a.clone(),
        group: g.to_string(),
    }
}

fn service_account(a: &Authorizer, ns: &CelString<'_>, name: &CelString<'_>) -> Authorizer {
    let (ns, name) = (ns.to_string(), name.to_string());
    Authorizer {
        authorizer: a.authorizer.clone(),
        user: UserInfo {
            name: format!("system:serviceaccount:{ns}:{name}"),
            uid: String::new(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{ns}"),
                "system:authenticated".into(),
            ],
            extra: Default::default(),
        },
    }
}

fn resource(g: &GroupCheck, r: &CelString<'_>) -> ResourceCheck {
    ResourceCheck {
        authz: g.authz.clone(),
        group: g.group.clone(),
        resource: r.to_string(),
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
    }
}

fn subresource(c: &ResourceCheck, s: &CelString<'_>) -> ResourceCheck {
    ResourceCheck {
        subresource: s.to_string(),
        ..c.clone()
    }
}

fn namespace(c: &ResourceCheck, s: &CelString<'_>) -> ResourceCheck {
    ResourceCheck {
        namespace: s.to_string(),
        ..c.clone()
    }
}

fn name(c: &ResourceCheck, s: &CelString<'_>) -> ResourceCheck {
    ResourceCheck {
        name: s.to_string(),
        ..c.clone()
    }
}

fn check_path(c: &PathCheck, verb: &CelString<'_>) -> Decision {
    decide(
        &c.authz,
        RequestInfo {
            is_resource_request: false,
            path: c.path.clone(),
            verb: verb.to_string(),
            ..Default::default()
        },
    )
}

fn check_resource(c: &ResourceCheck, verb: &CelString<'_>) -> Decision {
    decide(
        &c.authz,
        RequestInfo {
            is_resource_request: true,
            verb: verb.to_string(),
            api_group: c.group.clone(),
            api_version: "*".into(),
            resource: c.resource.clone(),
            subresource: c.subresource.clone(),
            namespace: c.namespace.clone(),
            name: c.name.clone(),
            ..Default::default()
        },
    )
}

fn allowed(d: &Decision) -> CelBool {
    d.allowed.into()
}

fn reason(d: &Decision) -> CelString<'static> {
    d.reason.clone().into()
}

fn errored(d: &Decision) -> CelBool {
    (!d.error.is_empty()).into()
}

fn error(d: &Decision) -> CelString<'static> {
    d.error.clone().into()
}

/// Registers the library.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    ::cel::add_member_overload!(env, fn path: (Authorizer, CelString) -> PathCheck)?;
    ::cel::add_member_overload!(env, fn group: (Authorizer, CelString) -> GroupCheck)?;
    ::cel::add_member_overload!(env, fn service_account: (Authorizer, CelString, CelString) -> Authorizer)?;
    ::cel::add_member_overload!(env, fn resource: (GroupCheck, CelString) -> ResourceCheck)?;
    ::cel::add_member_overload!(env, fn subresource: (ResourceCheck, CelString) -> ResourceCheck)?;
    ::cel::add_member_overload!(env, fn namespace: (ResourceCheck, CelString) -> ResourceCheck)?;
    ::cel::add_member_overload!(env, fn name: (ResourceCheck, CelString) -> ResourceCheck)?;
    ::cel::add_member_overload!(env, fn check_path: (PathCheck, CelString) -> Decision, name = "check")?;
    ::cel::add_member_overload!(env, fn check_resource: (ResourceCheck, CelString) -> Decision, name = "check")?;
    ::cel::add_member_overload!(env, fn allowed: (Decision) -> CelBool)?;
    ::cel::add_member_overload!(env, fn reason: (Decision) -> CelString)?;
    ::cel::add_member_overload!(env, fn errored: (Decision) -> CelBool)?;
    ::cel::add_member_overload!(env, fn error: (Decision) -> CelString)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authorization::DecisionFuture;
    use crate::cel::expression::Expression;

    /// Allows `get` of anything, and `list` of pods in `ns` only.
    struct Fake;

    impl AuthorizerTrait for Fake {
        fn authorize<'a>(&'a self, attrs: &'a Attributes<'a>) -> DecisionFuture<'a> {
            let r = attrs.request;
            let allow = r.verb == "get"
                || (r.verb == "list" && r.resource == "pods" && r.namespace == "ns");
            crate::authorization::decided(if allow {
                Verdict::Allow
            } else {
                Verdict::NoOpinion(format!("{} may not", attrs.user.name))
            })
        }
    }

    fn eval(expr: &str, authz: &Authorizer) -> Result<bool, String> {
        Expression::compile(expr).eval_bool_as(&[], Some(authz))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn checks_go_to_the_authorizer() {
        let user = UserInfo {
            name: "alice".into(),
            ..Default::default()
        };
        let a = Authorizer::new(Some(Arc::new(Fake)), user);
        assert_eq!(
            eval("authorizer.path('/healthz').check('get').allowed()", &a),
            Ok(true)
        );
        assert_eq!(
            eval(
                "authorizer.group('').resource('pods').namespace('ns').check('list').allowed()",
                &a
            ),
            Ok(true)
        );
        assert_eq!(
            eval(
                "authorizer.group('').resource('pods').namespace('other').check('list').allowed()",
                &a
            ),
            Ok(false)
        );
        assert_eq!(
            eval("authorizer.group('apps').resource('deployments').check('delete').reason() == 'alice may not'", &a),
            Ok(true)
        );
        assert_eq!(
            eval("authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('delete').reason() == 'system:serviceaccount:ns:sa may not'", &a),
            Ok(true)
        );
        let none = Authorizer::new(None, UserInfo::default());
        assert_eq!(
            eval("authorizer.path('/x').check('get').errored()", &none),
            Ok(true)
        );
    }
}
