//! PodSecurity: the Pod Security Standards of upstream's
//! `k8s.io/pod-security-admission`, applied per namespace through its
//! `pod-security.kubernetes.io/{enforce,audit,warn}[-version]` labels.
//!
//! - a pod create, or an update that changes a container image or adds an
//!   ephemeral container, in a namespace whose enforce level it violates is
//!   refused: `pods "x" is forbidden: violates PodSecurity
//!   "restricted:latest": <check> (<detail>), ...` (403);
//! - a violation of the warn level is a `Warning: would violate PodSecurity
//!   "<level>:<version>": ...` header (not sent when the request is refused);
//! - pod controllers (Deployments, ReplicaSets, StatefulSets, DaemonSets,
//!   Jobs, CronJobs, ReplicationControllers, PodTemplates) are never refused:
//!   their template meets the warn level only;
//! - a namespace write with a label that does not parse is refused (422);
//!   an update that makes enforce stricter warns about the existing pods
//!   that violate it (see [`namespace`]);
//! - the audit level is parsed but not evaluated: upstream records its
//!   violations as audit annotations, and kube-core has no audit log yet.
//!
//! The checks live in [`baseline`] and [`restricted`], the registry that
//! picks them by level and version in [`evaluator`], label parsing in
//! [`policy`], exemptions in [`config`].

pub mod baseline;
pub mod config;
pub mod evaluator;
pub mod namespace;
pub mod policy;
pub mod restricted;
pub mod spec;

use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use apiserver::apimachinery::validation::{go_quote, FieldError};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use self::config::Configuration;
use self::evaluator::{evaluate, Aggregate};
use self::policy::{policy_to_evaluate, LabelError, Level, Policy};
use self::spec::{str_field, PodView};
use super::forbidden;

/// Pod subresources PodSecurity lets through; any other (notably
/// `ephemeralcontainers`) is evaluated as a pod update, as upstream, so a
/// subresource that can change the spec fails safe.
const IGNORED_POD_SUBRESOURCES: &[&str] = &[
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// The plugin.
pub struct PodSecurity {
    /// Reads namespaces (their labels) and the pods of a namespace.
    pub objects: Arc<ObjectReader>,
    /// Defaults and exemptions.
    pub config: Configuration,
}

impl PodSecurity {
    /// The plugin with upstream's default configuration (privileged for
    /// unlabelled namespaces, no exemptions).
    #[cfg(test)]
    pub fn new(objects: Arc<ObjectReader>) -> Self {
        Self::with_config(objects, Configuration::default())
    }

    /// The plugin with a `PodSecurityConfiguration` (defaults, exemptions).
    pub fn with_config(objects: Arc<ObjectReader>, config: Configuration) -> Self {
        PodSecurity { objects, config }
    }
}

/// What evaluating one pod (or template) decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// The reason of a refusal: `violates PodSecurity "...": ...`.
    pub denied: Option<String>,
    /// Warnings for the client.
    pub warnings: Vec<String>,
}

fn message(prefix: &str, lv: policy::LevelVersion, result: &Aggregate) -> String {
    format!(
        "{prefix} PodSecurity {}: {}",
        go_quote(&lv.to_string()),
        result.forbidden_detail()
    )
}

/// Upstream's `EvaluatePod`: the enforce level (only when `enforce`, that
/// is for pods), then the warn level unless the pod is already refused.
pub fn evaluate_pod(
    config: &Configuration,
    policy: &Policy,
    pod: &PodView<'_>,
    enforce: bool,
) -> Decision {
    let mut decision = Decision::default();
    if config.exempt_runtime_class(str_field(pod.spec, "runtimeClassName")) {
        return decision;
    }
    let mut enforced = None;
    if enforce {
        let result = evaluate(policy.enforce, pod);
        if !result.allowed() {
            decision.denied = Some(message("violates", policy.enforce, &result));
        }
        enforced = Some((policy.enforce, result));
    }
    // The audit level: upstream adds the annotation
    // `pod-security.kubernetes.io/audit-violations: would violate
    // PodSecurity "<audit>": ...` to the audit event. kube-core has no audit
    // log yet, so there is nothing to record and the level is not evaluated.
    if decision.denied.is_none() {
        let result = match enforced {
            Some((lv, result)) if lv == policy.warn => result,
            _ => evaluate(policy.warn, pod),
        };
        if !result.allowed() {
            decision
                .warnings
                .push(message("would violate", policy.warn, &result));
        }
    }
    decision
}

/// Upstream's `isSignificantPodUpdate`: only a changed number of
/// containers, a changed image, or a new or changed ephemeral container is
/// evaluated (the other mutable pod fields cannot affect the policy).
pub fn significant_pod_update(pod: &Value, old: &Value) -> bool {
    let list = |p: &'_ Value, k: &str| -> Vec<Value> {
        p.pointer(&format!("/spec/{k}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for key in ["containers", "initContainers"] {
        let (new, old) = (list(pod, key), list(old, key));
        if new.len() != old.len() {
            return true;
        }
        if new
            .iter()
            .zip(&old)
            .any(|(n, o)| str_field(n, "image") != str_field(o, "image"))
        {
            return true;
        }
    }
    let old_ephemeral = list(old, "ephemeralContainers");
    list(pod, "ephemeralContainers").iter().any(|c| {
        match old_ephemeral
            .iter()
            .find(|o| str_field(o, "name") == str_field(c, "name"))
        {
            None => true,
            Some(o) => str_field(o, "image") != str_field(c, "image"),
        }
    })
}

/// Where a pod controller keeps its pod template, for upstream's
/// `DefaultPodSpecExtractor` kinds.
pub fn template_pointer(group: &str, resource: &str) -> Option<&'static str> {
    match (group, resource) {
        ("", "podtemplates") => Some("/template"),
        ("", "replicationcontrollers") => Some("/spec/template"),
        ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets") => {
            Some("/spec/template")
        }
        ("batch", "jobs") => Some("/spec/template"),
        ("batch", "cronjobs") => Some("/spec/jobTemplate/spec/template"),
        _ => None,
    }
}

fn labels(obj: Option<&Value>) -> Option<&Map<String, Value>> {
    obj?.pointer("/metadata/labels")?.as_object()
}

fn user_name<'a>(attrs: &'a Attributes<'a>) -> &'a str {
    attrs.user.map(|u| u.name.as_str()).unwrap_or("")
}

fn invalid_labels(name: &str, errs: &[LabelError]) -> ApiError {
    let errs: Vec<FieldError> = errs.iter().map(LabelError::to_field_error).collect();
    ApiError::invalid("", "Namespace", name, &errs)
}

impl PodSecurity {
    /// The labels of the request's namespace; `None` when it cannot be read.
    async fn namespace_labels(&self, namespace: &str) -> Option<Map<String, Value>> {
        match self.objects.get("", "namespaces", "", namespace).await {
            Ok(Some(ns)) => Some(labels(Some(&ns)).cloned().unwrap_or_default()),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(namespace, error = %e, "PodSecurity: failed to fetch namespace");
                None
            }
        }
    }

    fn exempt(&self, attrs: &Attributes<'_>) -> bool {
        self.config.exempt_namespace(attrs.namespace) || self.config.exempt_user(user_name(attrs))
    }

    async fn validate_pod(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        if IGNORED_POD_SUBRESOURCES.contains(&attrs.subresource) || self.exempt(attrs) {
            return Ok(());
        }
        let Some(labels) = self.namespace_labels(attrs.namespace).await else {
            return Err(ApiError::internal(format!(
                "failed to lookup namespace {}",
                go_quote(attrs.namespace)
            )));
        };
        let (policy, errs) = policy_to_evaluate(Some(&labels), &self.config.defaults);
        if errs.is_empty() && policy.fully_privileged() {
            return Ok(());
        }
        // A subresource whose body is not a Pod cannot be evaluated.
        let is_pod = attrs.kind.is_none_or(|(_, _, kind)| kind == "Pod");
        let Some(pod) = attrs.object.filter(|_| is_pod) else {
            return Ok(());
        };
        if attrs.operation == Operation::Update {
            if let Some(old) = attrs.old_object {
                if !significant_pod_update(pod, old) {
                    return Ok(());
                }
            }
        }
        let decision = evaluate_pod(&self.config, &policy, &PodView::of_pod(pod), true);
        for w in decision.warnings {
            attrs.warn(w);
        }
        match decision.denied {
            Some(why) => Err(forbidden(attrs, &why)),
            None => Ok(()),
        }
    }

    /// Pod controllers are only warned about (and audited upstream); a
    /// namespace that cannot be read lets the write through.
    async fn validate_controller(&self, attrs: &Attributes<'_>, pointer: &str) {
        if !attrs.subresource.is_empty() || self.exempt(attrs) {
            return;
        }
        let Some(labels) = self.namespace_labels(attrs.namespace).await else {
            return;
        };
        let (policy, errs) = policy_to_evaluate(Some(&labels), &self.config.defaults);
        if errs.is_empty()
            && policy.warn.level == Level::Privileged
            && policy.audit.level == Level::Privileged
        {
            return;
        }
        let Some(template) = attrs
            .object
            .and_then(|o| o.pointer(pointer))
            .filter(|t| !t.is_null())
        else {
            return;
        };
        let view = PodView::new(template.get("metadata"), template.get("spec"));
        for w in evaluate_pod(&self.config, &policy, &view, false).warnings {
            attrs.warn(w);
        }
    }

    async fn validate_namespace(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        if !attrs.subresource.is_empty() {
            return Ok(());
        }
        let Some(ns) = attrs.object else {
            return Ok(());
        };
        let name = ns
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or(attrs.name);
        let new_labels = labels(Some(ns));
        let (new_policy, new_errs) = policy_to_evaluate(new_labels, &self.config.defaults);
        let exempt_warning = || {
            if !self.config.exempt_namespace(name) {
                return None;
            }
            self.config
                .exempt_namespace_warning(name, &new_policy, new_labels)
        };
        match attrs.operation {
            Operation::Create => {
                if !new_errs.is_empty() {
                    return Err(invalid_labels(name, &new_errs));
                }
                if let Some(w) = exempt_warning() {
                    attrs.warn(w);
                }
                Ok(())
            }
            Operation::Update => {
                let (old_policy, old_errs) =
                    policy_to_evaluate(labels(attrs.old_object), &self.config.defaults);
                if !new_errs.is_empty() && (old_errs.is_empty() || new_errs != old_errs) {
                    return Err(invalid_labels(name, &new_errs));
                }
                let (new, old) = (new_policy.enforce, old_policy.enforce);
                // Nothing to check when enforce is unchanged, privileged,
                // or relaxed at the same version.
                if new == old
                    || new.level == Level::Privileged
                    || (new.version == old.version && new.level <= old.level)
                {
                    return Ok(());
                }
                if self.config.exempt_namespace(name) {
                    if let Some(w) = exempt_warning() {
                        attrs.warn(w);
                    }
                    return Ok(());
                }
                for w in
                    namespace::existing_pod_warnings(&self.objects, &self.config, name, new).await
                {
                    attrs.warn(w);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl AdmissionPlugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            if !matches!(attrs.operation, Operation::Create | Operation::Update) {
                return Ok(());
            }
            let (group, resource) = (
                attrs.resource.group.as_str(),
                attrs.resource.resource.as_str(),
            );
            match (group, resource) {
                ("", "namespaces") => self.validate_namespace(attrs).await,
                ("", "pods") => self.validate_pod(attrs).await,
                _ => {
                    if let Some(pointer) = template_pointer(group, resource) {
                        self.validate_controller(attrs, pointer).await;
                    }
                    Ok(())
                }
            }
        })
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
