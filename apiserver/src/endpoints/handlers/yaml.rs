//! YAML response bodies (`Accept: application/yaml`), written as upstream's
//! `sigs.k8s.io/yaml` writes them: block mappings in the JSON key order,
//! block sequences, and scalars plain where YAML reads them back as the same
//! string, double-quoted (with JSON escapes, which YAML shares) otherwise.

use serde_json::Value;

/// The YAML document for `value`, ending with a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(map, 0, &mut out),
        Value::Array(items) if !items.is_empty() => sequence(items, 0, &mut out),
        scalar => {
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
    out
}

fn indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn mapping(map: &serde_json::Map<String, Value>, level: usize, out: &mut String) {
    for (key, value) in map {
        indent(level, out);
        out.push_str(&string(key));
        out.push(':');
        nested(value, level, true, out);
    }
}

fn sequence(items: &[Value], level: usize, out: &mut String) {
    for item in items {
        indent(level, out);
        out.push('-');
        match item {
            // A mapping inside a sequence starts on the dash's line.
            Value::Object(map) if !map.is_empty() => {
                let mut inner = String::new();
                mapping(map, level + 1, &mut inner);
                out.push(' ');
                out.push_str(inner.trim_start());
            }
            other => nested(other, level, false, out),
        }
    }
}

/// Writes the value after `key:` or `-`.
fn nested(value: &Value, level: usize, in_mapping: bool, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            mapping(map, level + 1, out);
        }
        // Sequences under a key sit at the key's indentation, as
        // sigs.k8s.io/yaml writes them.
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            sequence(items, if in_mapping { level } else { level + 1 }, out);
        }
        scalar => {
            out.push(' ');
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
}

fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(_) => "[]".to_owned(),
        Value::Object(_) => "{}".to_owned(),
    }
}

/// A string scalar: plain when that reads back as the same string.
fn string(s: &str) -> String {
    if is_plain_safe(s) {
        s.to_owned()
    } else {
        // JSON string syntax is valid YAML double-quoted syntax.
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
    }
}

fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == '/' || first == '_') {
        return false;
    }
    if s.ends_with(' ') || s.contains(": ") || s.contains(" #") {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:= ()+@".contains(c))
    {
        return false;
    }
    // Words YAML 1.1 or 1.2 readers take for booleans or null.
    let lower = s.to_ascii_lowercase();
    !matches!(
        lower.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~" | ".nan" | ".inf"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents() {
        let value = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"app": "web"}, "creationTimestamp": null,
                "annotations": {}},
            "data": {"a": "1", "b": "yes", "c": "", "d": "x: y", "e": "line\nbreak", "f": "true"},
            "items": [{"name": "a", "ports": [80, 443]}, "plain", [1], []],
            "n": 1.5, "t": true});
        let want = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  labels:
    app: web
  creationTimestamp: null
  annotations: {}
data:
  a: "1"
  b: "yes"
  c: ""
  d: "x: y"
  e: "line\nbreak"
  f: "true"
items:
- name: a
  ports:
  - 80
  - 443
- plain
-
  - 1
- []
"n": 1.5
t: true
"#;
        assert_eq!(to_yaml(&value), want);
    }

    #[test]
    fn scalars_and_empty_documents() {
        assert_eq!(to_yaml(&json!({})), "{}\n");
        assert_eq!(to_yaml(&json!("s")), "s\n");
        assert_eq!(to_yaml(&json!(["a"])), "- a\n");
    }
}
