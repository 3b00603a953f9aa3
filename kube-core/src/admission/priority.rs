//! Priority: a new pod's `spec.priority` comes from its PriorityClass (or
//! the cluster's global default class, else 0), with the class's
//! preemption policy; a pod may not name a class that does not exist or
//! set a priority that differs; only one PriorityClass may be the global
//! default (upstream's `plugin/pkg/admission/priority`).

use std::sync::Arc;

use apiserver::admission::objects::ObjectReader;
use apiserver::admission::{AdmissionPlugin, Attributes, Operation};
use apiserver::apimachinery::errors::ApiError;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::forbidden;

const GROUP: &str = "scheduling.k8s.io";

/// The plugin.
pub struct Priority {
    pub objects: Arc<ObjectReader>,
}

impl Priority {
    /// The global default class with the lowest value, as upstream picks.
    async fn default_class(&self) -> Result<Option<Value>, ApiError> {
        let classes = self.objects.list(GROUP, "priorityclasses", "").await?;
        Ok(classes
            .into_iter()
            .filter(|c| c.get("globalDefault").and_then(Value::as_bool) == Some(true))
            .min_by_key(|c| c.get("value").and_then(Value::as_i64).unwrap_or(0)))
    }

    async fn admit_pod(&self, attrs: &Attributes<'_>, pod: &mut Value) -> Result<bool, ApiError> {
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(false);
        };
        if attrs.operation == Operation::Update {
            // Server-set values survive an update that omits them.
            let old = attrs.old_object.and_then(|o| o.get("spec"));
            let mut changed = false;
            for k in ["priority", "preemptionPolicy"] {
                if !spec.contains_key(k) {
                    if let Some(v) = old.and_then(|o| o.get(k)) {
                        spec.insert(k.into(), v.clone());
                        changed = true;
                    }
                }
            }
            return Ok(changed);
        }
        let class_name = spec
            .get("priorityClassName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let (name, value, policy) = if class_name.is_empty() {
            match self.default_class().await? {
                Some(c) => class_values(&c),
                None => (String::new(), 0, Some("PreemptLowerPriority".to_string())),
            }
        } else {
            match self
                .objects
                .get(GROUP, "priorityclasses", "", &class_name)
                .await?
            {
                Some(c) => class_values(&c),
                None => {
                    return Err(forbidden(
                        attrs,
                        &format!("no PriorityClass with name {class_name} was found"),
                    ))
                }
            }
        };
        if let Some(given) = spec.get("priority").and_then(Value::as_i64) {
            if given != value {
                return Err(forbidden(
                    attrs,
                    &format!(
                        "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
                    ),
                ));
            }
        }
        if !name.is_empty() {
            spec.insert("priorityClassName".into(), json!(name));
        }
        spec.insert("priority".into(), json!(value));
        if let Some(policy) = policy {
            if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str) {
                if given != policy {
                    return Err(forbidden(
                        attrs,
                        &format!(
                            "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                        ),
                    ));
                }
            }
            spec.insert("preemptionPolicy".into(), json!(policy));
        }
        Ok(true)
    }

    async fn validate_class(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        let Some(pc) = attrs.object else {
            return Ok(());
        };
        if pc.get("globalDefault").and_then(Value::as_bool) != Some(true) {
            return Ok(());
        }
        if let Some(existing) = self.default_class().await? {
            let existing_name = existing
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            if attrs.operation == Operation::Create || existing_name != attrs.name {
                return Err(forbidden(
                    attrs,
                    &format!(
                        "PriorityClass {existing_name} is already marked as default. Only one default can exist"
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn class_values(c: &Value) -> (String, i64, Option<String>) {
    (
        c.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        c.get("value").and_then(Value::as_i64).unwrap_or(0),
        c.get("preemptionPolicy")
            .and_then(Value::as_str)
            .map(str::to_string),
    )
}

impl AdmissionPlugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    fn mutates(&self) -> bool {
        true
    }

    fn mutate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        obj: Option<&'a mut Value>,
    ) -> BoxFuture<'a, Result<bool, ApiError>> {
        Box::pin(async move {
            match obj {
                Some(pod)
                    if attrs.is("", "pods")
                        && attrs.subresource.is_empty()
                        && matches!(attrs.operation, Operation::Create | Operation::Update) =>
                {
                    self.admit_pod(attrs, pod).await
                }
                _ => Ok(false),
            }
        })
    }

    fn validate<'a>(&'a self, attrs: &'a Attributes<'a>) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            if attrs.is(GROUP, "priorityclasses")
                && matches!(attrs.operation, Operation::Create | Operation::Update)
            {
                return self.validate_class(attrs).await;
            }
            Ok(())
        })
    }
}
