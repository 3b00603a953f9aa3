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
        let limit = opts.limit.filter(|l| *l > 0);
        let selecting = opts.has_selector();
        let mut items = Vec::new();
        loop {
            let page_size = limit.map(|l| {
                if selecting {
                    (l * 2).clamp(l, 10_000)
                } else {
                    l
                }
            });
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
            if !more || limit.is_none() {
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
