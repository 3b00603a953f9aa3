//! Cell helpers shared by the built-in Table printers, after upstream's
//! `pkg/printers/internalversion/printers.go`.

use apiserver::registry::table::{human_duration, lookup, Column};
use serde_json::{json, Value};

/// The string at `path`, or `default` when absent or empty.
pub fn str_or(obj: &Value, path: &str, default: &str) -> String {
    match lookup(obj, path) {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => default.to_string(),
    }
}

/// The integer at `path`, 0 when absent.
pub fn int_at(obj: &Value, path: &str) -> i64 {
    lookup(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

/// The array at `path` (empty when absent).
pub fn array_at<'a>(obj: &'a Value, path: &str) -> &'a [Value] {
    lookup(obj, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// An integer column computed from a path.
pub fn int_col(name: &'static str, f: fn(&Value) -> Value) -> Column {
    Column::func(name, "integer", f)
}

/// `CONTAINERS`, `IMAGES` wide columns of a pod template at `spec.template.spec`.
pub fn template_columns() -> [Column; 2] {
    [
        Column::func("Containers", "string", |o| {
            json!(names_of(
                array_at(o, "spec.template.spec.containers"),
                "name"
            ))
        })
        .wide(),
        Column::func("Images", "string", |o| {
            json!(names_of(
                array_at(o, "spec.template.spec.containers"),
                "image"
            ))
        })
        .wide(),
    ]
}

/// The wide `Selector` column of a workload's `spec.selector` label selector.
pub fn selector_column() -> Column {
    Column::func("Selector", "string", |o| {
        json!(format_label_selector(lookup(o, "spec.selector")))
    })
    .wide()
}

/// Comma-joined values of `key` over a list of objects.
pub fn names_of(items: &[Value], key: &str) -> String {
    items
        .iter()
        .map(|c| c.get(key).and_then(Value::as_str).unwrap_or(""))
        .collect::<Vec<_>>()
        .join(",")
}

/// `labels.FormatLabels`: sorted `k=v` pairs, `<none>` when empty.
pub fn format_labels(map: Option<&Value>) -> String {
    let Some(m) = map.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    let mut pairs: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// `metav1.FormatLabelSelector`: requirements sorted by key, `<none>` when
/// the selector is absent or empty.
pub fn format_label_selector(sel: Option<&Value>) -> String {
    let Some(sel) = sel.filter(|s| s.is_object()) else {
        return "<none>".into();
    };
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    for e in sel
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let mut values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort();
        let s = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        reqs.push((key.to_string(), s));
    }
    if reqs.is_empty() {
        return "<none>".into();
    }
    reqs.sort();
    reqs.into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(",")
}

/// Time since an RFC 3339 timestamp at `path`, as kubectl prints it;
/// `<none>` when absent.
pub fn since(obj: &Value, path: &str) -> String {
    let Some(ts) = lookup(obj, path).and_then(Value::as_str) else {
        return "<none>".into();
    };
    match ts.parse::<jiff::Timestamp>() {
        Ok(t) => human_duration(jiff::Timestamp::now().as_second() - t.as_second()),
        Err(_) => "<invalid>".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_format_as_upstream() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                 {"key": "d", "operator": "DoesNotExist"}]});
        assert_eq!(format_label_selector(Some(&sel)), "a=1,b=2,c in (x,y),!d");
        assert_eq!(format_label_selector(Some(&json!({}))), "<none>");
        assert_eq!(format_label_selector(None), "<none>");
        assert_eq!(format_labels(Some(&json!({"z": "1", "a": "2"}))), "a=2,z=1");
    }
}
