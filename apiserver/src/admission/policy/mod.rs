//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
//! (`admissionregistration.k8s.io/v1`), as upstream's
//! `k8s.io/apiserver/pkg/admission/plugin/policy/validating`.
//!
//! Policies and bindings are read by every tier straight from the shared
//! etcd (list + watch, recompiled on each change). For a write, each binding
//! whose policy's `matchConstraints` and whose own `matchResources` match
//! (rules with scopes and excludes, namespace and object selectors) is
//! evaluated once per param (`paramKind`/`paramRef` by name or selector,
//! with `parameterNotFoundAction`): the policy's CEL `matchConditions`, then
//! its `variables`, then each of its `validations` with the variables
//! `object`, `oldObject`, `request`, `params`, `namespaceObject` and
//! `variables`. A failed validation is acted on as the binding's
//! `validationActions` say: `Deny` refuses the write with upstream's message
//! (`ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request:
//! <message>`, code from the validation's `reason`, 422 by default), `Warn`
//! returns a `Warning` header (`Validation failed for
//! ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>`), `Audit`
//! is accepted (there is no audit log yet). An expression that cannot be
//! evaluated, and a binding that cannot be configured, follow the policy's
//! `failurePolicy` (default `Fail`).

mod config;
pub mod params;

use std::sync::{Arc, RwLock};

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use self::config::{binding_of, policy_of, Binding, MatchResources, Policy, ResourceRule};
use self::params::{ParamKinds, ParamLocation};
use super::webhook::matching::{exempt, rule_matches, selects_object};
use super::webhook::review::{admission_request, request_namespace, Gvk};
use super::{AdmissionPlugin, Attributes, Operation};
use crate::apimachinery::errors::{ApiError, StatusCause, StatusDetails};
use crate::apimachinery::labels::LabelSelector;
use crate::cel::library::authz::Authorizer as Authz;
use crate::registry::informer::Mirror;
use crate::storage::{EtcdStorage, ListRequest};

/// Upstream's limit on an evaluated `messageExpression`.
const MAX_MESSAGE_LEN: usize = 5 * 1024;

/// Policies and bindings, compiled.
#[derive(Default)]
struct Compiled {
    policies: Vec<Arc<Policy>>,
    bindings: Vec<Arc<Binding>>,
}

/// The `ValidatingAdmissionPolicy` plugin of a tier.
pub struct ValidatingAdmissionPolicy {
    compiled: Arc<RwLock<Arc<Compiled>>>,
    synced: tokio::sync::watch::Receiver<(bool, bool)>,
    storage: EtcdStorage,
    prefix: String,
    namespaces: Arc<super::namespaces::Namespaces>,
    /// The tier's authorizer, for the `authorizer` variable.
    authorizer: std::sync::OnceLock<Arc<dyn crate::authorization::Authorizer>>,
    /// Where param kinds are stored; the tier adds its own kinds once built.
    pub params: Arc<ParamKinds>,
}

impl ValidatingAdmissionPolicy {
    /// Starts reading policies and bindings under `prefix` (`/registry`).
    pub fn start(
        storage: EtcdStorage,
        prefix: &str,
        namespaces: Arc<super::namespaces::Namespaces>,
    ) -> Arc<Self> {
        let prefix = prefix.trim_end_matches('/').to_string();
        let policies = crate::registry::etcd_mirror::spawn(
            storage.clone(),
            format!("{prefix}/validatingadmissionpolicies"),
        );
        let bindings = crate::registry::etcd_mirror::spawn(
            storage.clone(),
            format!("{prefix}/validatingadmissionpolicybindings"),
        );
        let compiled: Arc<RwLock<Arc<Compiled>>> = Arc::default();
        let (synced_tx, synced) = tokio::sync::watch::channel((false, false));
        tokio::spawn(compile_loop(
            policies,
            bindings,
            compiled.clone(),
            synced_tx,
        ));
        Arc::new(ValidatingAdmissionPolicy {
            compiled,
            synced,
            params: Arc::new(ParamKinds::new(storage.clone(), &prefix)),
            storage,
            prefix,
            namespaces,
            authorizer: std::sync::OnceLock::new(),
        })
    }
}

impl ValidatingAdmissionPolicy {
    /// Gives expressions the `authorizer` variable (checks as the
    /// requesting user). Later calls are ignored.
    pub fn set_authorizer(&self, authorizer: Arc<dyn crate::authorization::Authorizer>) {
        let _ = self.authorizer.set(authorizer);
    }
}

async fn compile_loop(
    mut policies: tokio::sync::watch::Receiver<Mirror>,
    mut bindings: tokio::sync::watch::Receiver<Mirror>,
    out: Arc<RwLock<Arc<Compiled>>>,
    synced: tokio::sync::watch::Sender<(bool, bool)>,
) {
    loop {
        let (p_synced, p): (bool, Vec<Arc<Policy>>) = {
            let m = policies.borrow_and_update();
            (
                m.synced,
                m.objects.values().map(|o| Arc::new(policy_of(o))).collect(),
            )
        };
        let (b_synced, b): (bool, Vec<Arc<Binding>>) = {
            let m = bindings.borrow_and_update();
            (
                m.synced,
                m.objects
                    .values()
                    .map(|o| Arc::new(binding_of(o)))
                    .collect(),
            )
        };
        if let Ok(mut cur) = out.write() {
            *cur = Arc::new(Compiled {
                policies: p,
                bindings: b,
            });
        }
        let _ = synced.send((p_synced, b_synced));
        tokio::select! {
            r = policies.changed() => if r.is_err() { return },
            r = bindings.changed() => if r.is_err() { return },
        }
    }
}

/// Why one binding could not be evaluated or refused the write.
struct Failure {
    message: String,
    reason: &'static str,
}

fn reason_and_code(reason: &str) -> (&'static str, u16) {
    match reason {
        "Unauthorized" => ("Unauthorized", 401),
        "Forbidden" => ("Forbidden", 403),
        "RequestEntityTooLarge" => ("RequestEntityTooLarge", 413),
        _ => ("Invalid", 422),
    }
}

impl MatchResources {
    fn matches(
        &self,
        attrs: &Attributes<'_>,
        gvr: &Gvk,
        object: Option<&Value>,
    ) -> Result<bool, String> {
        let hit = |rules: &[ResourceRule]| {
            rules.iter().any(|r| {
                rule_matches(&r.rule, attrs, gvr)
                    && (r.names.is_empty() || r.names.iter().any(|n| n == attrs.name))
            })
        };
        // A binding's matchResources without resourceRules narrows by its
        // selectors only (the policy's constraints decide the resources).
        if (!self.rules.is_empty() && !hit(&self.rules)) || hit(&self.excludes) {
            return Ok(false);
        }
        if let Some(sel) = &self.object_selector {
            let sel = sel.as_ref().map_err(Clone::clone)?;
            if !selects_object(sel, object, attrs.old_object) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl ValidatingAdmissionPolicy {
    async fn namespace(&self, attrs: &Attributes<'_>) -> Result<Option<Value>, ApiError> {
        let ns = request_namespace(attrs);
        if ns.is_empty() || attrs.is("", "namespaces") {
            return Ok(None);
        }
        super::webhook::read_namespace(&self.namespaces, ns)
            .await
            .map(Some)
    }

    async fn namespace_selected(
        &self,
        m: &MatchResources,
        attrs: &Attributes<'_>,
        object: Option<&Value>,
        ns: &tokio::sync::OnceCell<Result<Option<Value>, ApiError>>,
    ) -> Result<bool, String> {
        let Some(sel) = &m.namespace_selector else {
            return Ok(true);
        };
        let sel = sel.as_ref().map_err(Clone::clone)?;
        if sel.is_empty() {
            return Ok(true);
        }
        let is_namespace = attrs.is("", "namespaces");
        if request_namespace(attrs).is_empty() && !is_namespace {
            return Ok(true);
        }
        let empty = Map::new();
        if is_namespace {
            let o = object.or(attrs.old_object);
            let labels = o
                .and_then(|o| o.pointer("/metadata/labels"))
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            return Ok(sel.matches(labels));
        }
        let ns = ns.get_or_init(|| self.namespace(attrs)).await;
        match ns {
            Ok(Some(n)) => Ok(sel.matches(
                n.pointer("/metadata/labels")
                    .and_then(Value::as_object)
                    .unwrap_or(&empty),
            )),
            Ok(None) => Ok(true),
            Err(e) => Err(e.message.clone()),
        }
    }

    /// The params a binding is evaluated with (`[None]` without paramKind).
    async fn params(
        &self,
        policy: &Policy,
        binding: &Binding,
        attrs: &Attributes<'_>,
    ) -> Result<Vec<Option<Value>>, String> {
        let (Some((api_version, kind)), Some(pref)) = (&policy.param_kind, &binding.param_ref)
        else {
            return Ok(vec![None]);
        };
        let ParamLocation {
            storage_path,
            namespaced,
        } = self
            .params
            .locate(api_version, kind)
            .ok_or_else(|| format!("paramKind kind `{api_version}, Kind={kind}` not known"))?;
        let base = if namespaced {
            let ns = if !pref.namespace.is_empty() {
                pref.namespace.clone()
            } else {
                let ns = request_namespace(attrs);
                if ns.is_empty() {
                    return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
                }
                ns.to_string()
            };
            format!("{}/{storage_path}/{ns}", self.prefix)
        } else {
            if !pref.namespace.is_empty() {
                return Err(
                    "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
                        .into(),
                );
            }
            format!("{}/{storage_path}", self.prefix)
        };
        let decode = |b: &[u8]| crate::protobuf::decode_from_storage(b);
        let found: Vec<Option<Value>> = if !pref.name.is_empty() {
            let kv = self
                .storage
                .get(&format!("{base}/{}", pref.name))
                .await
                .map_err(|e| e.to_string())?;
            kv.map(|kv| decode(&kv.value))
                .transpose()?
                .into_iter()
                .map(Some)
                .collect()
        } else {
            let sel = match &pref.selector {
                Some(s) => LabelSelector::from_json(s)?,
                None => return Err("one of name or selector must be provided".into()),
            };
            let listed = self
                .storage
                .list(&ListRequest {
                    prefix: format!("{base}/"),
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?;
            let empty = Map::new();
            listed
                .items
                .iter()
                .filter_map(|kv| decode(&kv.value).ok())
                .filter(|o| {
                    sel.matches(
                        o.pointer("/metadata/labels")
                            .and_then(Value::as_object)
                            .unwrap_or(&empty),
                    )
                })
                .map(Some)
                .collect()
        };
        if found.is_empty() && pref.deny_if_missing {
            return Err(
                "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
            );
        }
        Ok(found)
    }

    /// Evaluates one policy with one param: `Ok(None)` admits, `Ok(Some)` is
    /// a failed validation, `Err` an evaluation error.
    fn evaluate(
        &self,
        policy: &Policy,
        vars: &mut Vec<(&str, Value)>,
        authz: &Authz,
    ) -> Result<Option<Failure>, String> {
        {
            let bound: Vec<(&str, &Value)> = vars.iter().map(|(n, v)| (*n, v)).collect();
            for (name, cond) in &policy.match_conditions {
                match cond.eval_bool_as(&bound, Some(authz)) {
                    Ok(true) => {}
                    Ok(false) => return Ok(None),
                    Err(e) => {
                        return Err(format!("failed to evaluate matchCondition {name:?}: {e}"))
                    }
                }
            }
        }
        let mut variables = Map::new();
        // Each variable sees the ones before it.
        for (name, expr) in &policy.variables {
            let so_far = Value::Object(variables.clone());
            let mut bound: Vec<(&str, &Value)> = vars.iter().map(|(n, v)| (*n, v)).collect();
            bound.push(("variables", &so_far));
            if let Ok(v) = expr.eval_as(&bound, Some(authz)) {
                if let Some(j) = cel_to_json(&v) {
                    variables.insert(name.clone(), j);
                }
            }
        }
        vars.push(("variables", Value::Object(variables)));
        let bound: Vec<(&str, &Value)> = vars.iter().map(|(n, v)| (*n, v)).collect();
        for v in &policy.validations {
            match v.expression.eval_bool_as(&bound, Some(authz)) {
                Ok(true) => {}
                Ok(false) => {
                    let mut message = v
                        .message_expression
                        .as_ref()
                        .and_then(|m| match m.eval(&bound) {
                            Ok(::cel::Value::String(s)) => Some(s.trim().to_string()),
                            _ => None,
                        })
                        .filter(|m| {
                            !m.is_empty() && m.len() <= MAX_MESSAGE_LEN && !m.contains('\n')
                        })
                        .unwrap_or_default();
                    if message.is_empty() {
                        message = v.message.clone();
                    }
                    if message.is_empty() {
                        message = format!("failed expression: {}", v.expression.source.trim());
                    }
                    return Ok(Some(Failure {
                        message,
                        reason: reason_and_code(&v.reason).0,
                    }));
                }
                Err(e) => {
                    return Err(format!(
                        "expression '{}' resulted in error: {e}",
                        v.expression.source.trim()
                    ))
                }
            }
        }
        Ok(None)
    }

    async fn validate(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        if exempt(attrs) || attrs.operation == Operation::Connect {
            return Ok(());
        }
        let synced = *self.synced.borrow();
        if !(synced.0 && synced.1) {
            let mut rx = self.synced.clone();
            let ready = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                rx.wait_for(|(p, b)| *p && *b),
            )
            .await
            .map(|r| r.is_ok())
            .unwrap_or(false);
            if !ready {
                return Err(forbidden(
                    attrs,
                    "not yet ready to handle request".into(),
                    "Forbidden",
                ));
            }
        }
        let compiled = self.compiled.read().map(|c| c.clone()).unwrap_or_default();
        if compiled.bindings.is_empty() {
            return Ok(());
        }
        let gvr = Gvk::of(attrs);
        let object = attrs.object;
        let ns = tokio::sync::OnceCell::new();
        let mut denied: Option<ApiError> = None;
        for binding in &compiled.bindings {
            let Some(policy) = compiled.policies.iter().find(|p| p.name == binding.policy) else {
                continue;
            };
            let outcome = self
                .check_binding(policy, binding, attrs, &gvr, object, &ns)
                .await;
            let failure = match outcome {
                Ok(None) => continue,
                Ok(Some(f)) => f,
                Err(_) if policy.fail_open => continue,
                Err(message) => Failure {
                    message,
                    reason: "Invalid",
                },
            };
            if binding.warn {
                attrs.warn(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                    policy.name, binding.name, failure.message
                ));
            }
            if binding.deny && denied.is_none() {
                let message = format!(
                    "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
                    policy.name, binding.name, failure.message
                );
                denied = Some(forbidden(attrs, message, failure.reason));
            }
        }
        match denied {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// One binding: `Ok(None)` admits, `Ok(Some)` failed a validation,
    /// `Err` could not be evaluated (the failure policy decides).
    async fn check_binding(
        &self,
        policy: &Policy,
        binding: &Binding,
        attrs: &Attributes<'_>,
        gvr: &Gvk,
        object: Option<&Value>,
        ns: &tokio::sync::OnceCell<Result<Option<Value>, ApiError>>,
    ) -> Result<Option<Failure>, String> {
        if !policy.constraints.matches(attrs, gvr, object)?
            || !self
                .namespace_selected(&policy.constraints, attrs, object, ns)
                .await?
        {
            return Ok(None);
        }
        if let Some(m) = &binding.resources {
            if !m.matches(attrs, gvr, object)?
                || !self.namespace_selected(m, attrs, object, ns).await?
            {
                return Ok(None);
            }
        }
        let params = self
            .params(policy, binding, attrs)
            .await
            .map_err(|e| format!("failed to configure binding: {e}"))?;
        let request = admission_request(attrs, "", gvr, None, None);
        let namespace_object = if policy.uses_namespace {
            match ns.get_or_init(|| self.namespace(attrs)).await {
                Ok(Some(n)) => {
                    json!({"metadata": n.get("metadata").cloned().unwrap_or(Value::Null),
                                      "spec": n.get("spec").cloned().unwrap_or(Value::Null),
                                      "status": n.get("status").cloned().unwrap_or(Value::Null)})
                }
                _ => Value::Null,
            }
        } else {
            Value::Null
        };
        let authz = Authz::new(
            self.authorizer.get().cloned(),
            attrs.user.cloned().unwrap_or_default(),
        );
        for param in params {
            let mut vars: Vec<(&str, Value)> = vec![
                ("object", object.cloned().unwrap_or(Value::Null)),
                (
                    "oldObject",
                    attrs.old_object.cloned().unwrap_or(Value::Null),
                ),
                ("request", request.clone()),
                ("params", param.unwrap_or(Value::Null)),
                ("namespaceObject", namespace_object.clone()),
            ];
            if let Some(f) = self.evaluate(policy, &mut vars, &authz)? {
                return Ok(Some(f));
            }
        }
        Ok(None)
    }
}

/// A CEL result as JSON, for `variables` (`None` for values JSON cannot hold).
fn cel_to_json(v: &::cel::Value) -> Option<Value> {
    use ::cel::Value as C;
    Some(match v {
        C::Null => Value::Null,
        C::Bool(b) => json!(b),
        C::Int(i) => json!(i),
        C::UInt(u) => json!(u),
        C::Float(f) => json!(f),
        C::String(s) => json!(s.as_str()),
        C::List(l) => Value::Array(l.iter().map(cel_to_json).collect::<Option<_>>()?),
        C::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m.map.iter() {
                let key = match k {
                    ::cel::objects::Key::String(s) => s.to_string(),
                    ::cel::objects::Key::Int(i) => i.to_string(),
                    ::cel::objects::Key::Uint(u) => u.to_string(),
                    ::cel::objects::Key::Bool(b) => b.to_string(),
                };
                out.insert(key, cel_to_json(v)?);
            }
            Value::Object(out)
        }
        _ => return None,
    })
}

/// Upstream's `admission.NewForbidden` with the policy's reason and code.
fn forbidden(attrs: &Attributes<'_>, message: String, reason: &str) -> ApiError {
    let (reason, code) = reason_and_code(reason);
    let (reason, code) = if message == "not yet ready to handle request" {
        ("Forbidden", 403)
    } else {
        (reason, code)
    };
    let gr = crate::apimachinery::errors::GroupResource {
        group: &attrs.resource.group,
        resource: &attrs.resource.resource,
    };
    ApiError {
        code,
        reason,
        message: format!("{gr} \"{}\" is forbidden: {message}", attrs.name),
        details: Some(Box::new(StatusDetails {
            name: attrs.name.to_string(),
            group: attrs.resource.group.clone(),
            kind: attrs.resource.resource.clone(),
            causes: vec![StatusCause {
                reason: String::new(),
                message,
                field: String::new(),
            }],
            ..Default::default()
        })),
        continue_token: None,
    }
}

impl AdmissionPlugin for ValidatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(ValidatingAdmissionPolicy::validate(self, attrs))
    }
}

/// The plugin as a chain entry.
pub fn plugin(p: &Arc<ValidatingAdmissionPolicy>) -> Arc<dyn AdmissionPlugin> {
    p.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_policies_and_bindings() {
        let p = policy_of(&json!({"metadata": {"name": "p"}, "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["deployments"]}]},
            "variables": [{"name": "max", "expression": "int(params.data.max)"}],
            "validations": [{"expression": "namespaceObject.metadata.name != 'x'", "reason": "Forbidden"}]}}));
        assert_eq!(p.param_kind, Some(("v1".into(), "ConfigMap".into())));
        assert!(!p.fail_open && p.uses_namespace);
        assert_eq!(p.constraints.rules[0].rule.scope, "*");
        let b = binding_of(
            &json!({"metadata": {"name": "b"}, "spec": {"policyName": "p",
            "validationActions": ["Warn", "Audit"], "paramRef": {"name": "limits", "parameterNotFoundAction": "Allow"}}}),
        );
        assert!(b.warn && !b.deny);
        assert!(!b
            .param_ref
            .as_ref()
            .map(|r| r.deny_if_missing)
            .unwrap_or(true));
    }

    #[test]
    fn reasons_map_to_upstream_codes() {
        assert_eq!(reason_and_code(""), ("Invalid", 422));
        assert_eq!(reason_and_code("Forbidden"), ("Forbidden", 403));
        assert_eq!(
            reason_and_code("RequestEntityTooLarge"),
            ("RequestEntityTooLarge", 413)
        );
    }

    #[test]
    fn variables_round_trip_through_json() {
        let e = crate::cel::expression::Expression::compile("{'a': [1, 'x', true], 'b': null}");
        let v = e.eval(&[]).expect("eval");
        assert_eq!(
            cel_to_json(&v),
            Some(json!({"a": [1, "x", true], "b": null}))
        );
    }
}
