//! Unknown-field detection against OpenAPI schemas, for `fieldValidation`
//! (`Strict` rejects, `Warn` warns), with upstream's field paths
//! (`spec.template.spec.containers[0].foo`).

use serde_json::{Map, Value};

const REF_PREFIX: &str = "#/components/schemas/";

/// Resolves `$ref` (directly or through a one-element `allOf`) against the
/// document's `components.schemas`, at most 16 levels deep; the schema
/// itself when it names no known component. Shared by unknown-field
/// detection, strategic merge and server-side apply.
pub fn resolve<'a>(schema: &'a Value, components: &'a Map<String, Value>) -> &'a Value {
    let mut cur = schema;
    for _ in 0..16 {
        let r = cur.get("$ref").and_then(Value::as_str).or_else(|| {
            cur.get("allOf")
                .and_then(Value::as_array)
                .filter(|a| a.len() == 1)
                .and_then(|a| a[0].get("$ref"))
                .and_then(Value::as_str)
        });
        match r
            .and_then(|r| r.strip_prefix(REF_PREFIX))
            .and_then(|n| components.get(n))
        {
            Some(next) => cur = next,
            None => return cur,
        }
    }
    cur
}

/// Paths of the fields of `value` its schema does not declare, in document
/// order. Keys starting with `$` (strategic-merge-patch directives) are
/// skipped; schemas without `properties` accept anything.
pub fn unknown_fields(
    value: &Value,
    schema: &Value,
    components: &Map<String, Value>,
) -> Vec<String> {
    let mut out = Vec::new();
    walk(value, schema, components, "", &mut out, 0);
    out
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn walk(
    value: &Value,
    schema: &Value,
    components: &Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > 64 {
        return;
    }
    let schema = resolve(schema, components);
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    match value {
        Value::Object(m) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, v) in m {
                    if k.starts_with('$') {
                        continue;
                    }
                    match props.get(k) {
                        Some(s) => walk(v, s, components, &join(path, k), out, depth + 1),
                        None => out.push(join(path, k)),
                    }
                }
            } else if let Some(extra) = schema.get("additionalProperties").filter(|a| a.is_object())
            {
                for (k, v) in m {
                    walk(v, extra, components, &join(path, k), out, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(
                        v,
                        item_schema,
                        components,
                        &format!("{path}[{i}]"),
                        out,
                        depth + 1,
                    );
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_unknown_fields_with_paths() {
        let components: Map<String, Value> = serde_json::from_value(json!({
            "D": {"type": "object", "properties": {
                "spec": {"allOf": [{"$ref": "#/components/schemas/S"}], "description": "x"},
                "metadata": {"type": "object", "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}},
            "S": {"type": "object", "properties": {
                "containers": {"type": "array", "items": {"$ref": "#/components/schemas/C"}},
                "raw": {"type": "object"}}},
            "C": {"type": "object", "properties": {"name": {"type": "string"}}}
        }))
        .unwrap();
        let root = json!({"$ref": "#/components/schemas/D"});
        let obj = json!({"metadata": {"labels": {"a": "b"}, "nope": 1},
            "spec": {"foo": 1, "raw": {"anything": 1}, "containers": [{"name": "a", "bar": 2}], "$setElementOrder/containers": []}});
        assert_eq!(
            unknown_fields(&obj, &root, &components),
            ["metadata.nope", "spec.foo", "spec.containers[0].bar"]
        );
    }
}
