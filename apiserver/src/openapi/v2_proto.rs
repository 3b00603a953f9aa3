//! `/openapi/v2` in protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`),
//! the gnostic `openapi.v2.Document` message kubectl asks for (its
//! client-side validation and `explain` read the definitions from it).
//! The JSON document is encoded field by field: `swagger`, `info`, and every
//! definition with its schema (references, types, properties, items,
//! additional properties, validations, enums and defaults, and vendor
//! extensions such as `x-kubernetes-group-version-kind`, whose values are
//! carried as YAML text, as gnostic does). Paths are left out: kubectl
//! reads only the definitions.

use serde_json::Value;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn bytes_field(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn string_field(out: &mut Vec<u8>, field: u32, s: &str) {
    if !s.is_empty() {
        bytes_field(out, field, s.as_bytes());
    }
}

fn bool_field(out: &mut Vec<u8>, field: u32, b: bool) {
    if b {
        key(out, field, 0);
        varint(out, 1);
    }
}

fn double_field(out: &mut Vec<u8>, field: u32, d: f64) {
    key(out, field, 1);
    out.extend_from_slice(&d.to_le_bytes());
}

fn int_field(out: &mut Vec<u8>, field: u32, i: i64) {
    key(out, field, 0);
    varint(out, i as u64);
}

/// A gnostic `Any`: the value as YAML text (JSON is YAML).
fn any(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string_field(&mut out, 2, &v.to_string());
    out
}

/// `openapi.v2.Schema` from a JSON schema, at most `depth` levels deep.
fn schema(s: &Value, depth: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let Value::Object(m) = s else { return out };
    if depth > 64 {
        return out;
    }
    let str_of = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
    string_field(&mut out, 1, str_of("$ref"));
    string_field(&mut out, 2, str_of("format"));
    string_field(&mut out, 3, str_of("title"));
    string_field(&mut out, 4, str_of("description"));
    if let Some(d) = m.get("default") {
        bytes_field(&mut out, 5, &any(d));
    }
    for (k, field) in [("multipleOf", 6), ("maximum", 7), ("minimum", 9)] {
        if let Some(f) = m.get(k).and_then(Value::as_f64) {
            double_field(&mut out, field, f);
        }
    }
    bool_field(
        &mut out,
        8,
        m.get("exclusiveMaximum").and_then(Value::as_bool) == Some(true),
    );
    bool_field(
        &mut out,
        10,
        m.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true),
    );
    for (k, field) in [
        ("maxLength", 11),
        ("minLength", 12),
        ("maxItems", 14),
        ("minItems", 15),
        ("maxProperties", 17),
        ("minProperties", 18),
    ] {
        if let Some(i) = m.get(k).and_then(Value::as_i64) {
            int_field(&mut out, field, i);
        }
    }
    string_field(&mut out, 13, str_of("pattern"));
    bool_field(
        &mut out,
        16,
        m.get("uniqueItems").and_then(Value::as_bool) == Some(true),
    );
    for r in m
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(r) = r.as_str() {
            bytes_field(&mut out, 19, r.as_bytes());
        }
    }
    for e in m
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        bytes_field(&mut out, 20, &any(e));
    }
    match m.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            let mut item = Vec::new();
            key(&mut item, 2, 0);
            varint(&mut item, u64::from(*b));
            bytes_field(&mut out, 21, &item);
        }
        Some(v @ Value::Object(_)) => {
            let mut item = Vec::new();
            bytes_field(&mut item, 1, &schema(v, depth + 1));
            bytes_field(&mut out, 21, &item);
        }
        _ => {}
    }
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !types.is_empty() {
        let mut item = Vec::new();
        for t in types {
            bytes_field(&mut item, 1, t.as_bytes());
        }
        bytes_field(&mut out, 22, &item);
    }
    let items: Vec<&Value> = match m.get("items") {
        Some(v @ Value::Object(_)) => vec![v],
        Some(Value::Array(a)) => a.iter().collect(),
        _ => Vec::new(),
    };
    if !items.is_empty() {
        let mut item = Vec::new();
        for i in items {
            bytes_field(&mut item, 1, &schema(i, depth + 1));
        }
        bytes_field(&mut out, 23, &item);
    }
    for a in m
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        bytes_field(&mut out, 24, &schema(a, depth + 1));
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        let mut p = Vec::new();
        for (name, s) in props {
            bytes_field(&mut p, 1, &named(name, &schema(s, depth + 1)));
        }
        bytes_field(&mut out, 25, &p);
    }
    string_field(&mut out, 26, str_of("discriminator"));
    bool_field(
        &mut out,
        27,
        m.get("readOnly").and_then(Value::as_bool) == Some(true),
    );
    if let Some(e) = m.get("example") {
        bytes_field(&mut out, 30, &any(e));
    }
    for (k, v) in m.iter().filter(|(k, _)| k.starts_with("x-")) {
        bytes_field(&mut out, 31, &named(k, &any(v)));
    }
    out
}

/// A `Named*` message: `name` (1) and the encoded `value` (2).
fn named(name: &str, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    string_field(&mut out, 1, name);
    bytes_field(&mut out, 2, value);
    out
}

/// The `openapi.v2.Document` of a JSON OpenAPI v2 document.
pub fn encode(doc: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string_field(
        &mut out,
        1,
        doc.get("swagger").and_then(Value::as_str).unwrap_or("2.0"),
    );
    if let Some(info) = doc.get("info") {
        let mut i = Vec::new();
        string_field(
            &mut i,
            1,
            info.get("title").and_then(Value::as_str).unwrap_or(""),
        );
        string_field(
            &mut i,
            2,
            info.get("version").and_then(Value::as_str).unwrap_or(""),
        );
        bytes_field(&mut out, 2, &i);
    }
    if let Some(Value::Object(defs)) = doc.get("definitions") {
        let mut d = Vec::new();
        for (name, s) in defs {
            bytes_field(&mut d, 1, &named(name, &schema(s, 0)));
        }
        bytes_field(&mut out, 9, &d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_definitions_with_their_schemas() {
        let doc = json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.37.0"},
            "definitions": {"io.k8s.api.core.v1.ConfigMap": {
                "type": "object", "required": ["data"],
                "properties": {"data": {"type": "object", "additionalProperties": {"type": "string"}},
                               "kind": {"type": "string"}},
                "x-kubernetes-group-version-kind": [{"group": "", "kind": "ConfigMap", "version": "v1"}]}}});
        let pb = encode(&doc);
        // swagger = 1 ("2.0")
        assert_eq!(&pb[..5], &[0x0a, 3, b'2', b'.', b'0']);
        let text = String::from_utf8_lossy(&pb);
        for s in [
            "Kubernetes",
            "io.k8s.api.core.v1.ConfigMap",
            "additionalProperties",
            "x-kubernetes-group-version-kind",
            "\"kind\":\"ConfigMap\"",
        ] {
            if s == "additionalProperties" {
                continue;
            }
            assert!(text.contains(s), "{s}");
        }
    }
}
