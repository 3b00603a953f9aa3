//! MutatingAdmissionWebhook and ValidatingAdmissionWebhook, as upstream's
//! `k8s.io/apiserver/pkg/admission/plugin/webhook`.
//!
//! Every tier reads the webhook configurations straight from the shared
//! etcd (an [`etcd_mirror`](crate::registry::etcd_mirror), so a change takes
//! effect within a watch round trip on every replica of every tier) and
//! sends an `AdmissionReview` to each webhook whose rules, namespace and
//! object selectors and CEL `matchConditions` match the write:
//!
//! - mutating webhooks in the mutating phase, one after the other, each
//!   seeing the previous one's JSON Patch; with `reinvocationPolicy:
//!   IfNeeded` a webhook is called once more when a later webhook changed
//!   the object;
//! - validating webhooks in the validating phase, all at once.
//!
//! Failures follow `failurePolicy` with upstream's messages (`failed calling
//! webhook "<name>": ...` as a 500 when failing closed); a denial is the
//! webhook's `status` prefixed `admission webhook "<name>" denied the
//! request`. A dry-run write reaches only webhooks declaring
//! `sideEffects: None` or `NoneOnDryRun`.
//!
//! Beyond upstream, so that a webhook can never take the control plane down:
//! Leases and the Endpoints/EndpointSlices of a webhook's own Service never
//! go to webhooks; all webhook calls of one request share one time budget
//! ([`REQUEST_BUDGET`]); a Service without ready endpoints fails at once,
//! without a connect timeout.

pub mod client;
pub mod config;
pub mod matching;
pub mod metrics;
pub mod review;
pub mod source;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::OnceCell;

use self::client::WebhookClient;
use self::config::Webhook;
use self::review::{Answer, Gvk};
pub use self::source::WebhookSource;
use super::{AdmissionPlugin, Attributes, Operation};
use crate::apimachinery::errors::{ApiError, GroupResource, StatusCause, StatusDetails};
use crate::registry::resource::ResourceDef;
use crate::storage::EtcdStorage;

/// The time all webhook calls of one request may take together.
pub const REQUEST_BUDGET: Duration = Duration::from_secs(30);
/// Both webhook plugins of a tier, sharing their client.
pub struct Webhooks {
    mutating: WebhookSource,
    validating: WebhookSource,
    client: WebhookClient,
    namespaces: Arc<super::namespaces::Namespaces>,
    /// Every resource the tier serves, for `matchPolicy: Equivalent`.
    resources: std::sync::OnceLock<Vec<Arc<ResourceDef>>>,
    /// The tier's authorizer, for the `authorizer` variable of
    /// `matchConditions`.
    authorizer: std::sync::OnceLock<Arc<dyn crate::authorization::Authorizer>>,
}

/// Which resource a webhook is called as: the request's own, or an
/// equivalent version of it (`matchPolicy: Equivalent`), to which the
/// objects are converted.
struct Invocation {
    sent_as: Gvk,
    equivalent: Option<Arc<ResourceDef>>,
}

/// Converts `obj` (in `from`'s version) to `to`'s version through their
/// shared storage form.
fn convert(obj: &Value, from: &ResourceDef, to: &ResourceDef) -> Result<Value, ApiError> {
    let stored = match &from.conversion {
        Some(c) => (c.to_storage)(obj)?,
        None => obj.clone(),
    };
    match &to.conversion {
        Some(c) => (c.from_storage)(&stored),
        None => Ok(stored),
    }
}

impl Webhooks {
    /// Learns the tier's resources (once its API groups are built), so that
    /// a webhook asking for another version of a resource is sent the
    /// object converted to it. Later calls are ignored.
    pub fn set_resources(&self, defs: Vec<Arc<ResourceDef>>) {
        let _ = self.resources.set(defs);
    }

    /// Gives `matchConditions` the `authorizer` variable (checks as the
    /// requesting user). Later calls are ignored.
    pub fn set_authorizer(&self, authorizer: Arc<dyn crate::authorization::Authorizer>) {
        let _ = self.authorizer.set(authorizer);
    }

    /// The other versions of `def`'s resource over the same storage.
    fn equivalents(&self, def: &ResourceDef) -> Vec<Arc<ResourceDef>> {
        let storage_group = |d: &ResourceDef| {
            d.conversion
                .as_ref()
                .map(|c| c.storage_group.clone())
                .unwrap_or_else(|| d.group.clone())
        };
        self.resources
            .get()
            .into_iter()
            .flatten()
            .filter(|d| {
                d.storage_path == def.storage_path
                    && storage_group(d) == storage_group(def)
                    && (d.group != def.group || d.version != def.version)
            })
            .cloned()
            .collect()
    }

    /// Starts reading the configurations under `prefix` (`/registry`).
    pub fn start(
        storage: EtcdStorage,
        prefix: &str,
        namespaces: Arc<super::namespaces::Namespaces>,
    ) -> Arc<Webhooks> {
        let prefix = prefix.trim_end_matches('/').to_string();
        Arc::new(Webhooks {
            mutating: WebhookSource::spawn(
                storage.clone(),
                format!("{prefix}/mutatingwebhookconfigurations"),
                true,
            ),
            validating: WebhookSource::spawn(
                storage.clone(),
                format!("{prefix}/validatingwebhookconfigurations"),
                false,
            ),
            client: WebhookClient::new(storage.clone(), &prefix),
            namespaces,
            resources: std::sync::OnceLock::new(),
            authorizer: std::sync::OnceLock::new(),
        })
    }

    /// The two plugins, under upstream's names.
    pub fn plugins(self: &Arc<Self>) -> Vec<Arc<dyn AdmissionPlugin>> {
        vec![
            Arc::new(MutatingAdmissionWebhook(self.clone())),
            Arc::new(ValidatingAdmissionWebhook(self.clone())),
        ]
    }

    /// The labels of namespace `name`; 404 when it does not exist.
    async fn namespace_labels(&self, name: &str) -> Result<Map<String, Value>, ApiError> {
        let ns = read_namespace(&self.namespaces, name).await?;
        Ok(ns
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default())
    }
}

/// Namespace `name`; 404 when it does not exist.
pub(crate) async fn read_namespace(
    namespaces: &super::namespaces::Namespaces,
    name: &str,
) -> Result<Value, ApiError> {
    namespaces.get(name).await?.ok_or_else(|| {
        ApiError::not_found(
            GroupResource {
                group: "",
                resource: "namespaces",
            },
            name,
        )
    })
}

/// Why a call did not yield an answer to act on.
enum HookError {
    /// The webhook could not be called or answered wrongly (`reason`); its
    /// failure policy decides.
    Calling(String),
    /// A final error (a denial, a dry run the webhook does not support).
    Final(ApiError),
}

/// Per-request state shared by the webhooks of one phase.
struct Request<'a> {
    attrs: &'a Attributes<'a>,
    namespace_labels: OnceCell<Result<Map<String, Value>, ApiError>>,
    deadline: Instant,
}

impl<'a> Request<'a> {
    fn new(attrs: &'a Attributes<'a>) -> Self {
        Request {
            attrs,
            namespace_labels: OnceCell::new(),
            deadline: attrs.started.unwrap_or_else(Instant::now) + REQUEST_BUDGET,
        }
    }
}

impl Webhooks {
    /// Whether `hook` is to be called, and as which resource.
    async fn should_call(
        &self,
        hook: &Webhook,
        req: &Request<'_>,
        object: Option<&Value>,
    ) -> Result<Option<Invocation>, ApiError> {
        let attrs = req.attrs;
        if matching::is_own_endpoints(hook, attrs, object) {
            return Ok(None);
        }
        let gvr = Gvk::of(attrs);
        let invocation = if hook
            .rules
            .iter()
            .any(|r| matching::rule_matches(r, attrs, &gvr))
        {
            Invocation {
                sent_as: gvr.clone(),
                equivalent: None,
            }
        } else if hook.match_equivalent {
            // Earlier rules first, as upstream.
            let equivalents = self.equivalents(attrs.resource);
            let found = hook.rules.iter().find_map(|r| {
                equivalents.iter().find_map(|d| {
                    let g = Gvk {
                        group: d.group.clone(),
                        version: d.version.clone(),
                        resource: d.resource.clone(),
                        kind_group: d.group.clone(),
                        kind_version: d.version.clone(),
                        kind: d.kind.clone(),
                    };
                    matching::rule_matches(r, attrs, &g).then(|| Invocation {
                        sent_as: g,
                        equivalent: Some(d.clone()),
                    })
                })
            });
            match found {
                Some(i) => i,
                None => return Ok(None),
            }
        } else {
            return Ok(None);
        };
        if !self.namespace_matches(hook, req, object).await? {
            return Ok(None);
        }
        if !matching::object_selector_matches(hook, object, attrs.old_object)
            .map_err(ApiError::internal)?
        {
            return Ok(None);
        }
        if !hook.match_conditions.is_empty() {
            let request = review::admission_request(attrs, "", &invocation.sent_as, None, None);
            let null = Value::Null;
            let vars = [
                ("object", object.unwrap_or(&null)),
                ("oldObject", attrs.old_object.unwrap_or(&null)),
                ("request", &request),
            ];
            let authz = crate::cel::library::authz::Authorizer::new(
                self.authorizer.get().cloned(),
                attrs.user.cloned().unwrap_or_default(),
            );
            let mut errors = Vec::new();
            for c in &hook.match_conditions {
                match c.expression.eval_bool_as(&vars, Some(&authz)) {
                    Ok(true) => {}
                    Ok(false) => return Ok(None),
                    Err(e) => errors.push(format!(
                        "failed to evaluate matchCondition {:?}: {e}",
                        c.name
                    )),
                }
            }
            if !errors.is_empty() {
                if hook.fail_open {
                    return Ok(None);
                }
                return Err(ApiError::forbidden_message(
                    GroupResource {
                        group: &attrs.resource.group,
                        resource: &attrs.resource.resource,
                    },
                    attrs.name,
                    format!(
                        "{} \"{}\" is forbidden: {}",
                        gr_string(attrs),
                        attrs.name,
                        join_errors(&errors)
                    ),
                ));
            }
        }
        Ok(Some(invocation))
    }

    async fn namespace_matches(
        &self,
        hook: &Webhook,
        req: &Request<'_>,
        object: Option<&Value>,
    ) -> Result<bool, ApiError> {
        let attrs = req.attrs;
        let is_namespace = attrs.is("", "namespaces") && attrs.subresource.is_empty();
        let namespace = review::request_namespace(attrs);
        if namespace.is_empty() && !is_namespace {
            return Ok(true);
        }
        let sel = hook
            .namespace_selector
            .as_ref()
            .map_err(ApiError::internal)?;
        if sel.is_empty() {
            return Ok(true);
        }
        if is_namespace && matches!(attrs.operation, Operation::Create | Operation::Update) {
            let empty = Map::new();
            let labels = object
                .and_then(|o| o.pointer("/metadata/labels"))
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            return Ok(sel.matches(labels));
        }
        let labels = req
            .namespace_labels
            .get_or_init(|| self.namespace_labels(namespace))
            .await;
        match labels {
            Ok(l) => Ok(sel.matches(l)),
            Err(e) => Err(e.clone()),
        }
    }

    /// Calls one webhook and checks its answer.
    async fn call(
        &self,
        hook: &Webhook,
        req: &Request<'_>,
        invocation: &Invocation,
        object: Option<&Value>,
    ) -> Result<Answer, HookError> {
        let attrs = req.attrs;
        let sent_as = &invocation.sent_as;
        if attrs.dry_run {
            match hook.side_effects.as_str() {
                "None" | "NoneOnDryRun" => {}
                "" => return Err(HookError::Calling("Webhook SideEffects is nil".into())),
                _ => {
                    return Err(HookError::Final(ApiError::bad_request(format!(
                        "admission webhook {:?} does not support dry run",
                        hook.name
                    ))))
                }
            }
        }
        let target = hook
            .target
            .as_ref()
            .map_err(|e| HookError::Calling(e.clone()))?;
        let version = review::review_version(&hook.review_versions)
            .map_err(|e| HookError::Calling(format!("could not create admission objects: {e}")))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let converted = |o: Option<&Value>| -> Result<Option<Value>, HookError> {
            match (&invocation.equivalent, o) {
                (Some(to), Some(o)) => convert(o, attrs.resource, to)
                    .map(Some)
                    .map_err(HookError::Final),
                _ => Ok(None),
            }
        };
        let (object_as, old_as) = (converted(object)?, converted(attrs.old_object)?);
        let request = review::admission_request(
            attrs,
            &uid,
            sent_as,
            object_as.as_ref().or(object),
            old_as.as_ref().or(attrs.old_object),
        );
        let body = serde_json::to_vec(&review::review(version, request))
            .map_err(|e| HookError::Calling(format!("could not create admission objects: {e}")))?;
        let remaining = req.deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(HookError::Calling(format!(
                "failed to call webhook: the request's time budget for webhooks ({}s) is spent",
                REQUEST_BUDGET.as_secs()
            )));
        }
        let started = Instant::now();
        let operation = attrs.operation.as_str();
        let calling_error = |reason: String| {
            metrics::observe(
                &hook.name,
                hook.mutating,
                operation,
                started.elapsed(),
                &metrics::Outcome::CallingError {
                    code: if hook.fail_open { 200 } else { 500 },
                    rejected: !hook.fail_open,
                },
            );
            HookError::Calling(reason)
        };
        let answer = self
            .client
            .post(hook, target, Bytes::from(body), hook.timeout.min(remaining))
            .await
            .map_err(|e| calling_error(format!("failed to call webhook: {e}")))?;
        let answer = review::verify(version, &uid, hook.mutating, &answer)
            .map_err(|e| calling_error(format!("received invalid webhook response: {e}")))?;
        tracing::debug!(
            webhook = %hook.name,
            allowed = answer.allowed,
            latency_ms = started.elapsed().as_millis() as u64,
            "admission webhook called"
        );
        for w in &answer.warnings {
            attrs.warn(w.clone());
        }
        let denied = (!answer.allowed).then(|| denial(&hook.name, answer.status.as_ref()));
        metrics::observe(
            &hook.name,
            hook.mutating,
            operation,
            started.elapsed(),
            &metrics::Outcome::Answered {
                allowed: answer.allowed,
                code: denied.as_ref().map(|d| d.code).unwrap_or(200),
            },
        );
        if let Some(d) = denied {
            return Err(HookError::Final(d));
        }
        Ok(answer)
    }

    /// The error of a failed call under the webhook's failure policy
    /// (`None`: failing open, go on).
    fn failure(&self, hook: &Webhook, err: HookError) -> Option<ApiError> {
        match err {
            HookError::Final(e) => Some(e),
            HookError::Calling(reason) => {
                let msg = format!("failed calling webhook {:?}: {reason}", hook.name);
                if hook.fail_open {
                    tracing::warn!(webhook = %hook.name, "Failed calling webhook, failing open: {msg}");
                    metrics::fail_open(&hook.name, hook.mutating);
                    None
                } else {
                    tracing::warn!(webhook = %hook.name, "Failed calling webhook, failing closed: {msg}");
                    Some(ApiError::internal(msg))
                }
            }
        }
    }

    /// One mutating webhook: calls it and applies its patch to `obj`;
    /// returns whether the object changed.
    async fn mutate_one(
        &self,
        hook: &Webhook,
        req: &Request<'_>,
        invocation: &Invocation,
        obj: &mut Option<&mut Value>,
    ) -> Result<bool, ApiError> {
        let answer = match self.call(hook, req, invocation, obj.as_deref()).await {
            Ok(a) => a,
            Err(e) => return self.failure(hook, e).map_or(Ok(false), Err),
        };
        let Some(patch) = answer.patch else {
            return Ok(false);
        };
        let ops: ::json_patch::Patch = match serde_json::from_slice(&patch) {
            Ok(p) => p,
            Err(e) => {
                let e = HookError::Calling(format!(
                    "received undecodable patch in webhook response: {e}"
                ));
                return self.failure(hook, e).map_or(Ok(false), Err);
            }
        };
        if ops.0.is_empty() {
            return Ok(false);
        }
        let Some(current) = obj.as_deref_mut() else {
            return Err(ApiError::internal(format!(
                "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                hook.name
            )));
        };
        let mut patched = match &invocation.equivalent {
            Some(to) => convert(current, req.attrs.resource, to)?,
            None => current.clone(),
        };
        crate::registry::json_patch::apply_bounded(
            &mut patched,
            &ops,
            crate::body::MAX_REQUEST_BODY_BYTES,
        )
        .map_err(|e| ApiError::internal(format!("admission webhook {:?}: {e}", hook.name)))?;
        if !patched.is_object() {
            return Err(ApiError::internal(format!(
                "admission webhook {:?} patched the object into a non-object",
                hook.name
            )));
        }
        if let Some(from) = &invocation.equivalent {
            patched = convert(&patched, from, req.attrs.resource)?;
        }
        let changed = patched != *current;
        *current = patched;
        Ok(changed)
    }

    async fn mutate(
        &self,
        attrs: &Attributes<'_>,
        mut obj: Option<&mut Value>,
    ) -> Result<bool, ApiError> {
        if matching::exempt(attrs) {
            return Ok(false);
        }
        let hooks = self.mutating.hooks().await?;
        if hooks.is_empty() {
            return Ok(false);
        }
        let req = Request::new(attrs);
        let mut changed_any = false;
        // Upstream's reinvocation: a change made after an IfNeeded webhook
        // ran schedules that webhook for one more call.
        let mut invoked_reinvocable: Vec<&str> = Vec::new();
        let mut reinvoke: HashSet<&str> = HashSet::new();
        for hook in hooks.iter() {
            let Some(invocation) = self.should_call(hook, &req, obj.as_deref()).await? else {
                continue;
            };
            let changed = self.mutate_one(hook, &req, &invocation, &mut obj).await?;
            if changed {
                changed_any = true;
                reinvoke.extend(invoked_reinvocable.drain(..));
            }
            if hook.reinvoke_if_needed {
                invoked_reinvocable.push(&hook.id);
            }
        }
        if !reinvoke.is_empty() {
            for hook in hooks.iter().filter(|h| reinvoke.contains(h.id.as_str())) {
                let Some(invocation) = self.should_call(hook, &req, obj.as_deref()).await? else {
                    continue;
                };
                changed_any |= self.mutate_one(hook, &req, &invocation, &mut obj).await?;
            }
        }
        Ok(changed_any)
    }

    async fn validate(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        if matching::exempt(attrs) {
            return Ok(());
        }
        let hooks = self.validating.hooks().await?;
        if hooks.is_empty() {
            return Ok(());
        }
        let req = Request::new(attrs);
        let mut calls = Vec::new();
        for hook in hooks.iter() {
            if let Some(invocation) = self.should_call(hook, &req, attrs.object).await? {
                calls.push((hook, invocation));
            }
        }
        let results = futures_util::future::join_all(
            calls
                .iter()
                .map(|(hook, invocation)| self.call(hook, &req, invocation, attrs.object)),
        )
        .await;
        for ((hook, _), result) in calls.iter().zip(results) {
            if let Err(e) = result {
                if let Some(err) = self.failure(hook, e) {
                    return Err(err);
                }
            }
        }
        Ok(())
    }
}

/// `<resource>[.<group>]` as messages name it.
fn gr_string(attrs: &Attributes<'_>) -> String {
    GroupResource {
        group: &attrs.resource.group,
        resource: &attrs.resource.resource,
    }
    .to_string()
}

/// Several errors as upstream's aggregate prints them.
fn join_errors(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Upstream's `ToStatusErr`: the webhook's status, at least a 400, its
/// message prefixed with who denied.
fn denial(webhook: &str, status: Option<&Value>) -> ApiError {
    let empty = Value::Null;
    let status = status.unwrap_or(&empty);
    let s = |k: &str| status.get(k).and_then(Value::as_str).unwrap_or("");
    let code = status
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .unwrap_or(400);
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = match (s("message"), s("reason")) {
        (m, _) if !m.is_empty() => format!("{denied_by}: {m}"),
        (_, r) if !r.is_empty() => format!("{denied_by}: {r}"),
        _ => format!("{denied_by} without explanation"),
    };
    let details = status.get("details").filter(|d| d.is_object()).map(|d| {
        let ds = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        StatusDetails {
            name: ds("name"),
            group: ds("group"),
            kind: ds("kind"),
            uid: ds("uid"),
            causes: d
                .get("causes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    let cs = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    StatusCause {
                        reason: cs("reason"),
                        message: cs("message"),
                        field: cs("field"),
                    }
                })
                .collect(),
            retry_after_seconds: d
                .get("retryAfterSeconds")
                .and_then(Value::as_u64)
                .and_then(|r| u32::try_from(r).ok())
                .unwrap_or(0),
        }
    });
    ApiError {
        code,
        reason: known_reason(s("reason")),
        message,
        details: details.map(Box::new),
        continue_token: None,
    }
}

/// A webhook's `reason` as one of upstream's `StatusReason`s (an unknown
/// one becomes empty, as a client could not act on it anyway).
fn known_reason(r: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    ];
    KNOWN.iter().find(|k| **k == r).copied().unwrap_or("")
}

/// `MutatingAdmissionWebhook`.
pub struct MutatingAdmissionWebhook(Arc<Webhooks>);

impl AdmissionPlugin for MutatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "MutatingAdmissionWebhook"
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(self.0.mutate(attrs, obj))
    }
}

/// `ValidatingAdmissionWebhook`.
pub struct ValidatingAdmissionWebhook(Arc<Webhooks>);

impl AdmissionPlugin for ValidatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionWebhook"
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(self.0.validate(attrs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_denial_reads_as_upstream() {
        let e = denial(
            "deny.example.com",
            Some(&json!({"code": 403, "message": "no way", "reason": "Forbidden"})),
        );
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(
            e.message,
            "admission webhook \"deny.example.com\" denied the request: no way"
        );
        let e = denial("d", Some(&json!({"code": 200})));
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "admission webhook \"d\" denied the request without explanation"
        );
        let e = denial("d", Some(&json!({"reason": "custom"})));
        assert_eq!(
            e.message,
            "admission webhook \"d\" denied the request: custom"
        );
        assert_eq!(e.reason, "");
    }
}
