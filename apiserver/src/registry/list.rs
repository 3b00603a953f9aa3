//! LIST on the generic store: selectors, `limit`/`continue` paging from etcd.

use serde_json::Value;

use super::store::Store;
use crate::apimachinery::errors::ApiError;
use crate::apimachinery::fields::FieldSelector;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::meta;
use crate::storage::ListRequest;

/// Parsed list/watch selection options.
#[derive(Clone, Default)]
pub struct ListOptions {
    pub label_selector: Option<LabelSelector>,
    pub field_selector: Option<FieldSelector>,
    pub limit: Option<i64>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
}

impl ListOptions {
    /// Whether any selector restricts the result.
    pub fn has_selector(&self) -> bool {
        self.label_selector.as_ref().is_some_and(|s| !s.is_empty())
            || self.field_selector.as_ref().is_some_and(|s| !s.is_empty())
    }
}

/// One page of a list.
pub struct ListPage {
    pub items: Vec<Value>,
    pub resource_version: i64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

impl Store {
    /// Checks that every field of a field selector is selectable here.
    pub fn check_field_selector(&self, sel: &FieldSelector) -> Result<(), ApiError> {
        for f in sel.fields() {
            if f != "metadata.name"
                && f != "metadata.namespace"
                && !self.def.selectable_fields.iter().any(|s| s == f)
            {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {f}"
                )));
            }
        }
        Ok(())
    }

    /// Whether an object matches the selectors of `opts`.
    pub fn matches(&self, obj: &Value, opts: &ListOptions) -> bool {
        if let Some(ls) = &opts.label_selector {
            if !ls.matches(meta::labels(obj)) {
                return false;
            }
        }
        if let Some(fs) = &opts.field_selector {
            return fs.matches(|field| Some(field_value(obj, field)));
        }
        true
    }

    /// LIST with selectors and `limit`/`continue`.
    pub async fn list(&self, namespace: &str, opts: &ListOptions) -> Result<ListPage, ApiError> {
        if let Some(fs) = &opts.field_selector {
            self.check_field_selector(fs)?;
        }
        let prefix = self.list_prefix(namespace);
        let (mut start_key, mut revision) = super::list_encoded::list_start(&prefix, opts)?;
        let single_key = self.single_key(namespace, opts);
        if let Some(key) = &single_key {
            start_key = Some(key.clone());
        }
        let limit = opts.limit.filter(|l| *l > 0);
        let selecting = opts.has_selector();
        let mut items = Vec::new();
        loop {
            let page_size = match limit {
                _ if single_key.is_some() => Some(1),
                Some(l) if selecting => Some((l * 2).clamp(l, 10_000)),
                other => other,
            };
            let req = ListRequest {
                prefix: prefix.clone(),
                start_key: start_key.clone(),
                revision,
                limit: page_size,
            };
            let resp = self
                .storage
                .list(&req)
                .await
                .map_err(|e| super::list_encoded::list_range_error(e, opts, &prefix))?;
            revision = Some(resp.revision);
            let mut last_key = None;
            let mut examined = 0;
            let decoded = self.decode_many(&resp.items)?;
            for (kv, obj) in resp.items.iter().zip(decoded) {
                examined += 1;
                last_key = Some(kv.key.clone());
                if self.matches(&obj, opts) {
                    items.push(obj);
                    if limit.is_some_and(|l| items.len() as i64 >= l) {
                        break;
                    }
                }
            }
            let rv = resp.revision;
            let more = resp.more || examined < resp.items.len();
            let full = limit.is_some_and(|l| items.len() as i64 >= l);
            if !more || limit.is_none() || single_key.is_some() {
                return Ok(ListPage {
                    items,
                    resource_version: rv,
                    continue_token: None,
                    remaining_item_count: None,
                });
            }
            let Some(last) = last_key else {
                return Ok(ListPage {
                    items,
                    resource_version: rv,
                    continue_token: None,
                    remaining_item_count: None,
                });
            };
            let next = format!("{last}\u{0}");
            if full {
                let suffix = next.strip_prefix(&prefix).unwrap_or(&next);
                let remaining = (!selecting)
                    .then(|| resp.remaining + (resp.items.len() - examined) as i64)
                    .filter(|r| *r > 0);
                return Ok(ListPage {
                    items,
                    resource_version: rv,
                    continue_token: Some(crate::storage::encode_continue(rv, suffix)),
                    remaining_item_count: remaining,
                });
            }
            start_key = Some(next);
        }
    }
}

impl Store {
    /// The one etcd key a LIST can be narrowed to, as upstream's store does
    /// for a `metadata.name=<name>` field selector (`MatchesSingle`): a
    /// kind whose key ends at the name here (cluster-scoped, or namespaced
    /// and listed in one namespace), without a continue token. Only that
    /// key is read; the selectors still decide whether it is listed, so
    /// the answer is the full scan's. (`kubectl wait`, `kubectl get -w
    /// NAME` and every informer on one object list this way.)
    pub(crate) fn single_key(&self, namespace: &str, opts: &ListOptions) -> Option<String> {
        if opts
            .continue_token
            .as_deref()
            .is_some_and(|t| !t.is_empty())
            || (self.def.namespaced && namespace.is_empty())
        {
            return None;
        }
        let name = opts
            .field_selector
            .as_ref()?
            .requires_exact_match("metadata.name")?;
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return None;
        }
        Some(format!("{}{name}", self.list_prefix(namespace)))
    }
}

/// The value of a selectable field (`""` when absent, as upstream).
pub fn field_value(obj: &Value, field: &str) -> String {
    // Upstream's field label sets render Go values: a field that is unset
    // reads as its zero value, and a few labels name a field by another
    // path (Jobs' `status.successful`, the legacy bare `name`).
    // Events: `source` is the source's component, else the reporting
    // controller (upstream's `ToSelectableFields` for core/v1 Events).
    if field == "source" {
        if let Some(src) = obj.get("source").filter(|s| s.is_object()) {
            let component = src.get("component").and_then(Value::as_str).unwrap_or("");
            return if component.is_empty() {
                obj.get("reportingComponent")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            } else {
                component.to_string()
            };
        }
    }
    let (path, zero) = match field {
        "name" => ("metadata.name", ""),
        "status.successful" => ("status.succeeded", "0"),
        "status.replicas" => (field, "0"),
        "spec.unschedulable" => (field, "false"),
        _ => (field, ""),
    };
    match super::table::lookup(obj, path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => zero.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apimachinery::fields::FieldSelector;
    use crate::apimachinery::labels::LabelSelector;
    use crate::registry::admit::AdmitAll;
    use crate::registry::resource::ResourceDef;
    use crate::registry::store::WriteContext;
    use crate::storage::test_etcd::TestEtcd;
    use crate::storage::{EtcdOptions, EtcdStorage};
    use serde_json::json;

    fn by_name(name: &str) -> ListOptions {
        ListOptions {
            field_selector: Some(FieldSelector::one_term_equal("metadata.name", name)),
            ..Default::default()
        }
    }

    fn names(items: &[Value]) -> Vec<String> {
        let mut n: Vec<String> = items
            .iter()
            .map(|o| format!("{}/{}", meta::namespace(o), meta::name(o)))
            .collect();
        n.sort();
        n
    }

    /// A `metadata.name=` LIST reads one key and answers what the full scan
    /// would: not the names it is a prefix of, nothing for a missing name,
    /// the other selectors still applied, and every namespace's object
    /// when listed across namespaces (where it is not narrowed).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_single_name_list_answers_as_the_full_scan() {
        let etcd = TestEtcd::start();
        let storage = EtcdStorage::connect(&[etcd.endpoint()], EtcdOptions::default())
            .await
            .expect("etcd");
        let def = ResourceDef::new("example.com", "v1", "Gadget", "gadgets");
        let store = Store::new(def, storage, "/registry", AdmitAll);
        for (ns, name, color) in [
            ("ns", "a", "red"),
            ("ns", "ab", "red"),
            ("ns", "b", "red"),
            ("other", "a", "blue"),
        ] {
            let obj = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
                "metadata": {"name": name, "namespace": ns, "labels": {"color": color}}});
            store
                .create(ns, obj, &WriteContext::default())
                .await
                .expect("create");
        }
        assert!(store.single_key("ns", &by_name("a")).is_some());
        assert!(
            store.single_key("", &by_name("a")).is_none(),
            "all namespaces"
        );
        let mut continued = by_name("a");
        continued.continue_token = Some("x".into());
        assert!(store.single_key("ns", &continued).is_none());

        let cases: Vec<(&str, ListOptions, Vec<&str>)> = vec![
            ("ns", by_name("a"), vec!["ns/a"]),
            ("ns", by_name("ab"), vec!["ns/ab"]),
            ("ns", by_name("zz"), vec![]),
            ("other", by_name("b"), vec![]),
            ("", by_name("a"), vec!["ns/a", "other/a"]),
            (
                "ns",
                ListOptions {
                    label_selector: Some(LabelSelector::parse("color=blue").expect("selector")),
                    ..by_name("a")
                },
                vec![],
            ),
            (
                "ns",
                ListOptions {
                    limit: Some(1),
                    ..by_name("b")
                },
                vec!["ns/b"],
            ),
        ];
        for (ns, opts, want) in cases {
            let page = store.list(ns, &opts).await.expect("list");
            assert_eq!(names(&page.items), want, "list {ns:?}, want {want:?}");
            assert!(page.continue_token.is_none());
            let encoded = store.list_encoded(ns, &opts).await.expect("list");
            let items: Vec<Value> = encoded
                .objects
                .iter()
                .map(|o| serde_json::from_slice(&o.bytes).expect("json"))
                .collect();
            assert_eq!(names(&items), want, "list_encoded {ns:?}, want {want:?}");
            assert!(encoded.continue_token.is_none());
        }
    }
}
