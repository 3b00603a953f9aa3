//! A pod's metadata and spec as the PodSecurity checks read them, straight
//! from the JSON object: a field that is absent or `null` is Go's nil, a
//! missing string is `""`, a missing number `0`. Also the message helpers
//! every check shares (upstream's `joinQuote` and `pluralize`).

use serde_json::Value;

static NULL: Value = Value::Null;

/// The pod (or pod template) a check looks at.
#[derive(Clone, Copy, Debug)]
pub struct PodView<'a> {
    /// `metadata` of the pod or of the template.
    pub metadata: &'a Value,
    /// `spec` of the pod or of the template.
    pub spec: &'a Value,
}

impl<'a> PodView<'a> {
    /// A view of `metadata` and `spec` (either may be missing).
    pub fn new(metadata: Option<&'a Value>, spec: Option<&'a Value>) -> Self {
        PodView {
            metadata: metadata.unwrap_or(&NULL),
            spec: spec.unwrap_or(&NULL),
        }
    }

    /// A pod object's own metadata and spec.
    pub fn of_pod(pod: &'a Value) -> Self {
        PodView::new(pod.get("metadata"), pod.get("spec"))
    }

    /// The containers in upstream's visiting order: init containers, then
    /// containers, then ephemeral containers.
    pub fn containers(&self) -> impl Iterator<Item = &'a Value> + 'a {
        let spec = self.spec;
        ["initContainers", "containers", "ephemeralContainers"]
            .into_iter()
            .filter_map(move |k| spec.get(k).and_then(Value::as_array))
            .flatten()
    }

    /// `spec.securityContext` when set.
    pub fn security_context(&self) -> Option<&'a Value> {
        field(self.spec, "securityContext")
    }

    /// `spec.volumes`.
    pub fn volumes(&self) -> impl Iterator<Item = &'a Value> + 'a {
        self.spec
            .get("volumes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    }

    /// The annotations of the metadata, as `(key, value)`.
    pub fn annotations(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.metadata
            .get("annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
    }

    /// One annotation, `None` when the key is absent.
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.metadata
            .get("annotations")
            .and_then(|a| a.get(key))
            .map(|v| v.as_str().unwrap_or(""))
    }

    /// Whether `spec.os.name` is `windows`.
    pub fn is_windows(&self) -> bool {
        self.spec.pointer("/os/name").and_then(Value::as_str) == Some("windows")
    }

    /// Whether the pod runs in a user namespace (`spec.hostUsers: false`),
    /// upstream's `relaxPolicyForUserNamespacePod`.
    pub fn in_user_namespace(&self) -> bool {
        bool_field(self.spec, "hostUsers") == Some(false)
    }

    /// Whether a boolean of the spec (`hostNetwork`, ...) is true.
    pub fn spec_flag(&self, key: &str) -> bool {
        bool_field(self.spec, key) == Some(true)
    }
}

/// A field that is present and not `null`.
pub fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|f| !f.is_null())
}

/// A string field, `""` when absent.
pub fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A boolean field, `None` when absent or `null`.
pub fn bool_field(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// A container's name.
pub fn name(container: &Value) -> String {
    str_field(container, "name").to_string()
}

/// A container's `securityContext` when set.
pub fn security_context(container: &Value) -> Option<&Value> {
    field(container, "securityContext")
}

/// A string list field (`capabilities.add`, ...).
pub fn strings<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a str> + 'a {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| s.as_str().unwrap_or(""))
}

/// Upstream's `joinQuote`: `"a", "b"` (no escaping).
pub fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let inner: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", inner.join("\", \""))
}

/// Upstream's `pluralize`: the singular only for exactly one.
pub fn pluralize<'s>(singular: &'s str, plural: &'s str, count: usize) -> &'s str {
    if count == 1 {
        singular
    } else {
        plural
    }
}

/// `container "a"` or `containers "a", "b"`.
pub fn containers_phrase(names: &[String]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// Sorted, deduplicated strings (upstream's `sets.String.List()`).
pub fn sorted_set(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items.dedup();
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_are_visited_init_first_then_regular_then_ephemeral() {
        let pod = json!({"spec": {
            "containers": [{"name": "c"}],
            "ephemeralContainers": [{"name": "e"}],
            "initContainers": [{"name": "i"}],
        }});
        let view = PodView::of_pod(&pod);
        let names: Vec<String> = view.containers().map(name).collect();
        assert_eq!(names, ["i", "c", "e"]);
    }

    #[test]
    fn null_is_nil() {
        let v = json!({"a": null, "b": {}});
        assert!(field(&v, "a").is_none());
        assert!(field(&v, "b").is_some());
        assert_eq!(str_field(&v, "c"), "");
        assert_eq!(bool_field(&v, "a"), None);
    }

    #[test]
    fn message_helpers() {
        assert_eq!(join_quote::<&str>(&[]), "");
        assert_eq!(join_quote(&["a"]), "\"a\"");
        assert_eq!(join_quote(&["a", "b"]), "\"a\", \"b\"");
        assert_eq!(pluralize("volume", "volumes", 1), "volume");
        assert_eq!(pluralize("volume", "volumes", 0), "volumes");
        assert_eq!(
            containers_phrase(&["a".into(), "b".into()]),
            "containers \"a\", \"b\""
        );
        assert_eq!(
            sorted_set(vec!["b".into(), "a".into(), "b".into()]),
            ["a", "b"]
        );
    }

    #[test]
    fn pod_properties() {
        let pod = json!({"metadata": {"annotations": {"k": "v"}},
            "spec": {"os": {"name": "windows"}, "hostUsers": false, "hostPID": true}});
        let view = PodView::of_pod(&pod);
        assert!(view.is_windows());
        assert!(view.in_user_namespace());
        assert!(view.spec_flag("hostPID"));
        assert!(!view.spec_flag("hostIPC"));
        assert_eq!(view.annotation("k"), Some("v"));
        assert_eq!(view.annotation("x"), None);
        assert_eq!(view.annotations().count(), 1);
    }
}
