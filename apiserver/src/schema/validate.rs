//! Validating a value against a [`Schema`], with upstream's messages: the
//! kube-openapi validator's `<path> in body ...` details wrapped in field
//! errors as apiextensions' `ConvertErrors` does, plus list-type uniqueness.

use serde_json::Value;

use super::compile::{Additional, Schema};
use crate::apimachinery::validation::field_error::{go_format_float, render_go_value};
use crate::apimachinery::validation::format;
use crate::apimachinery::validation::{go_quote, FieldError, FieldPath};

/// The JSON type name of a value, as the validator reports it.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn matches_type(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => is_integer(v),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        _ => true,
    }
}

fn num(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        go_format_float(f)
    }
}

fn in_body(path: &FieldPath) -> String {
    let p = path.to_string();
    if p.is_empty() || path.is_nil() {
        "body".to_string()
    } else {
        format!("{p} in body")
    }
}

impl Schema {
    /// Validates `value` at `path` (the root object's path is empty:
    /// `FieldPath::nil()` children start fresh). Returns every violation.
    pub fn validate(&self, value: &Value, path: &FieldPath) -> Vec<FieldError> {
        let mut errs = Vec::new();
        self.validate_into(value, path, &mut errs);
        errs
    }

    fn validate_into(&self, value: &Value, path: &FieldPath, errs: &mut Vec<FieldError>) {
        if value.is_null() && (self.nullable || self.type_.is_none()) {
            return;
        }
        if self.int_or_string {
            if !(is_integer(value) || value.is_string()) {
                errs.push(FieldError::type_invalid(
                    path,
                    Value::String(type_name(value).into()),
                    format!(
                        "{} must be of type integer-or-string: {}",
                        in_body(path),
                        go_quote(type_name(value))
                    ),
                ));
                return;
            }
        } else if let Some(t) = &self.type_ {
            if !matches_type(t, value) {
                errs.push(FieldError::type_invalid(
                    path,
                    Value::String(type_name(value).into()),
                    format!(
                        "{} must be of type {t}: {}",
                        in_body(path),
                        go_quote(type_name(value))
                    ),
                ));
                return;
            }
        }
        if !self.enum_.is_empty() && !self.enum_.iter().any(|e| json_eq(e, value)) {
            let allowed: Vec<String> = self
                .enum_
                .iter()
                .map(|e| match e {
                    Value::String(s) => s.clone(),
                    other => render_go_value(other),
                })
                .collect();
            let refs: Vec<&str> = allowed.iter().map(String::as_str).collect();
            errs.push(FieldError::not_supported(path, value.clone(), &refs));
        }
        match value {
            Value::Number(n) => self.validate_number(n.as_f64().unwrap_or(0.0), value, path, errs),
            Value::String(s) => self.validate_string(s, value, path, errs),
            Value::Array(items) => self.validate_array(items, value, path, errs),
            Value::Object(map) => self.validate_object(map, value, path, errs),
            _ => {}
        }
        for s in &self.all_of {
            s.validate_into(value, path, errs);
        }
        if !self.any_of.is_empty()
            && !self
                .any_of
                .iter()
                .any(|s| s.validate(value, path).is_empty())
        {
            errs.push(FieldError::invalid(
                path,
                value.clone(),
                format!(
                    "{} must validate at least one schema (anyOf)",
                    in_body(path)
                ),
            ));
        }
        if !self.one_of.is_empty() {
            let ok = self
                .one_of
                .iter()
                .filter(|s| s.validate(value, path).is_empty())
                .count();
            if ok != 1 {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!(
                        "{} must validate one and only one schema (oneOf)",
                        in_body(path)
                    ),
                ));
            }
        }
        if let Some(not) = &self.not {
            if not.validate(value, path).is_empty() {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} must not validate the schema (not)", in_body(path)),
                ));
            }
        }
    }

    fn validate_number(&self, f: f64, value: &Value, path: &FieldPath, errs: &mut Vec<FieldError>) {
        if let Some(min) = self.minimum {
            let (bad, word) = if self.exclusive_minimum {
                (f <= min, "greater than")
            } else {
                (f < min, "greater than or equal to")
            };
            if bad {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} should be {word} {}", in_body(path), num(min)),
                ));
            }
        }
        if let Some(max) = self.maximum {
            let (bad, word) = if self.exclusive_maximum {
                (f >= max, "less than")
            } else {
                (f > max, "less than or equal to")
            };
            if bad {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} should be {word} {}", in_body(path), num(max)),
                ));
            }
        }
        if let Some(m) = self.multiple_of.filter(|m| *m > 0.0) {
            let q = f / m;
            if (q - q.round()).abs() > 1e-9 {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} should be a multiple of {}", in_body(path), num(m)),
                ));
            }
        }
    }

    fn validate_string(
        &self,
        s: &str,
        value: &Value,
        path: &FieldPath,
        errs: &mut Vec<FieldError>,
    ) {
        let len = s.chars().count() as u64;
        if let Some(max) = self.max_length {
            if len > max {
                errs.push(FieldError::too_long(path, value.clone(), max as i64));
            }
        }
        if let Some(min) = self.min_length {
            if len < min {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} should be at least {min} chars long", in_body(path)),
                ));
            }
        }
        if let Some((src, re)) = &self.pattern {
            if re.as_ref().is_some_and(|re| !re.is_match(s)) {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} should match '{src}'", in_body(path)),
                ));
            }
        }
        if let Some(f) = &self.format {
            if format::check(f, s) == Some(false) {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} must be of type {f}: {}", in_body(path), go_quote(s)),
                ));
            }
        }
    }

    fn validate_array(
        &self,
        items: &[Value],
        value: &Value,
        path: &FieldPath,
        errs: &mut Vec<FieldError>,
    ) {
        let n = items.len() as u64;
        if let Some(max) = self.max_items {
            if n > max {
                errs.push(FieldError::too_many(path, Some(n as i64), max as i64));
            }
        }
        if let Some(min) = self.min_items {
            if n < min {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} should have at least {min} items", in_body(path)),
                ));
            }
        }
        if let Some(item) = &self.items {
            for (i, v) in items.iter().enumerate() {
                item.validate_into(v, &path.index(i), errs);
            }
        }
        match self.list_type.as_deref() {
            Some("set") => {
                for (i, v) in items.iter().enumerate() {
                    if items[..i].iter().any(|p| json_eq(p, v)) {
                        errs.push(FieldError::duplicate(path.index(i), v.clone()));
                    }
                }
            }
            Some("map") => {
                let key_of = |v: &Value| -> Value {
                    let mut m = serde_json::Map::new();
                    for k in &self.list_map_keys {
                        if let Some(x) = v.get(k) {
                            m.insert(k.clone(), x.clone());
                        }
                    }
                    Value::Object(m)
                };
                let keys: Vec<Value> = items.iter().map(key_of).collect();
                for (i, k) in keys.iter().enumerate() {
                    if keys[..i].iter().any(|p| json_eq(p, k)) {
                        errs.push(FieldError::duplicate(path.index(i), k.clone()));
                    }
                }
            }
            _ => {}
        }
    }

    fn validate_object(
        &self,
        map: &serde_json::Map<String, Value>,
        value: &Value,
        path: &FieldPath,
        errs: &mut Vec<FieldError>,
    ) {
        let n = map.len() as u64;
        if let Some(max) = self.max_properties {
            if n > max {
                errs.push(FieldError::too_many(path, Some(n as i64), max as i64));
            }
        }
        if let Some(min) = self.min_properties {
            if n < min {
                errs.push(FieldError::invalid(
                    path,
                    value.clone(),
                    format!("{} should have at least {min} properties", in_body(path)),
                ));
            }
        }
        if self.embedded_resource && !map.is_empty() {
            for k in ["apiVersion", "kind"] {
                if map.get(k).and_then(Value::as_str).is_none_or(str::is_empty) {
                    errs.push(FieldError::required(path.child(k), "must not be empty"));
                }
            }
        }
        for r in &self.required {
            if !map.contains_key(r) {
                errs.push(FieldError::required(path.child(r), ""));
            }
        }
        for (k, v) in map {
            let child = path.child(k);
            match self.properties.get(k) {
                Some(s) => s.validate_into(v, &child, errs),
                None => match &self.additional {
                    Some(Additional::Schema(s)) => s.validate_into(v, &child, errs),
                    Some(Additional::Forbidden) => errs.push(FieldError::forbidden(
                        child.clone(),
                        format!("{} is a forbidden property", in_body(&child)),
                    )),
                    _ => {}
                },
            }
        }
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(schema: Value, obj: Value) -> Vec<String> {
        Schema::compile(&schema)
            .validate(&obj, &FieldPath::nil())
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    fn spec(props: Value) -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}})
    }

    #[test]
    fn upstream_messages() {
        let cases: Vec<(Value, Value, &str)> = vec![
            (json!({"size": {"type": "integer", "minimum": 1}}), json!({"size": 0}),
             "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"),
            (json!({"size": {"type": "integer", "maximum": 5, "exclusiveMaximum": true}}), json!({"size": 5}),
             "spec.size: Invalid value: 5: spec.size in body should be less than 5"),
            (json!({"size": {"type": "integer"}}), json!({"size": "x"}),
             "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""),
            (json!({"mode": {"type": "string", "enum": ["a", "b"]}}), json!({"mode": "c"}),
             "spec.mode: Unsupported value: \"c\": supported values: \"a\", \"b\""),
            (json!({"n": {"type": "string", "pattern": "^[a-z]+$"}}), json!({"n": "A1"}),
             "spec.n: Invalid value: \"A1\": spec.n in body should match '^[a-z]+$'"),
            (json!({"n": {"type": "string", "maxLength": 2}}), json!({"n": "abc"}),
             "spec.n: Too long: may not be more than 2 bytes"),
            (json!({"n": {"type": "string", "minLength": 2}}), json!({"n": "a"}),
             "spec.n: Invalid value: \"a\": spec.n in body should be at least 2 chars long"),
            (json!({"l": {"type": "array", "maxItems": 1, "items": {"type": "string"}}}), json!({"l": ["a", "b"]}),
             "spec.l: Too many: 2: must have at most 1 item"),
            (json!({"l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}), json!({"l": ["a", "a"]}),
             "spec.l[1]: Duplicate value: \"a\""),
            (json!({"u": {"type": "string", "format": "uuid"}}), json!({"u": "x"}),
             "spec.u: Invalid value: \"x\": spec.u in body must be of type uuid: \"x\""),
            (json!({"m": {"type": "integer", "multipleOf": 5}}), json!({"m": 7}),
             "spec.m: Invalid value: 7: spec.m in body should be a multiple of 5"),
        ];
        for (props, value, want) in cases {
            let got = errors(spec(props), json!({"spec": value}));
            assert_eq!(got, vec![want.to_string()]);
        }
    }

    #[test]
    fn embedded_resources_need_type_meta() {
        let s = spec(
            json!({"template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}),
        );
        assert!(errors(
            s.clone(),
            json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod"}}})
        )
        .is_empty());
        assert_eq!(
            errors(s, json!({"spec": {"template": {"kind": "Pod"}}})),
            vec!["spec.template.apiVersion: Required value: must not be empty".to_string()]
        );
    }

    #[test]
    fn required_and_int_or_string() {
        let s = json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}});
        assert_eq!(
            errors(s, json!({})),
            vec!["spec: Required value".to_string()]
        );
        let s = spec(json!({"p": {"x-kubernetes-int-or-string": true}}));
        assert!(errors(s.clone(), json!({"spec": {"p": 1}})).is_empty());
        assert!(errors(s.clone(), json!({"spec": {"p": "50%"}})).is_empty());
        assert_eq!(errors(s, json!({"spec": {"p": true}})).len(), 1);
    }
}
