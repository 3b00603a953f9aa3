//! Whether a schema is structural and uses only keywords CRDs allow, with
//! upstream's messages (apiextensions `ValidateCustomResourceDefinitionOpenAPISchema`
//! and `schema/validation.go`).

use serde_json::Value;

use crate::apimachinery::validation::{FieldError, FieldPath};

/// Keywords that may not appear inside `allOf`/`anyOf`/`oneOf`/`not`.
const FORBIDDEN_IN_JUNCTORS: &[&str] = &[
    "type",
    "additionalProperties",
    "default",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
];

/// Checks a CRD version's `openAPIV3Schema` at `path`; empty means valid.
pub fn check(schema: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !schema.is_object() {
        errs.push(FieldError::required(path.clone(), "must be an object"));
        return errs;
    }
    let t = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if t != "object" && !(t.is_empty() && preserve) {
        if t.is_empty() {
            errs.push(FieldError::required(
                path.child("type"),
                "must not be empty at the root",
            ));
        } else {
            errs.push(FieldError::invalid(
                path.child("type"),
                t,
                "must be object at the root",
            ));
        }
    }
    if let Some(meta) = schema.get("properties").and_then(|p| p.get("metadata")) {
        let extra = meta
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.keys().any(|k| k != "name" && k != "generateName"));
        if extra {
            errs.push(FieldError::forbidden(
                path.child("properties").key("metadata"),
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    walk(schema, path, Ctx::Root, false, &mut errs);
    errs
}

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Root,
    Property,
    Item,
    Additional,
    Junctor,
}

/// `int_or_string_parent`: the junctor's owner has `x-kubernetes-int-or-string`,
/// which upstream lets spell out `anyOf: [{type: integer}, {type: string}]`.
fn walk(
    s: &Value,
    path: &FieldPath,
    ctx: Ctx,
    int_or_string_parent: bool,
    errs: &mut Vec<FieldError>,
) {
    let Some(m) = s.as_object() else {
        return;
    };
    let flag = |k: &str| m.get(k).and_then(Value::as_bool).unwrap_or(false);
    if flag("uniqueItems") {
        errs.push(FieldError::forbidden(
            path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    for (k, msg) in [
        ("$ref", "$ref is not supported"),
        ("definitions", "definitions are not supported"),
        ("dependencies", "dependencies are not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("id", "id is not supported"),
        ("$schema", "$schema is not supported"),
    ] {
        if m.contains_key(k) {
            errs.push(FieldError::forbidden(path.child(k), msg));
        }
    }
    if m.get("additionalItems")
        .is_some_and(|v| v != &Value::Bool(false) && !v.is_null())
    {
        errs.push(FieldError::forbidden(
            path.child("additionalItems"),
            "additionalItems cannot be set to false",
        ));
    }
    if m.contains_key("additionalProperties") && m.contains_key("properties") {
        errs.push(FieldError::forbidden(
            path.child("additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if let Some(Value::Array(_)) = m.get("items") {
        errs.push(FieldError::forbidden(
            path.child("items"),
            "items must be a schema object and not an array",
        ));
    }
    if let Some(p) = m.get("pattern").and_then(Value::as_str) {
        if let Err(e) = regex::Regex::new(p) {
            errs.push(FieldError::invalid(
                path.child("pattern"),
                p,
                format!("must be a valid regular expression, but isn't: {e}"),
            ));
        }
    }
    let int_or_string = flag("x-kubernetes-int-or-string");
    let preserve = flag("x-kubernetes-preserve-unknown-fields");
    let empty_type = m
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if ctx == Ctx::Junctor {
        for k in FORBIDDEN_IN_JUNCTORS {
            if *k == "type" && int_or_string_parent {
                continue;
            }
            if m.contains_key(*k) {
                errs.push(FieldError::forbidden(
                    path.child(k),
                    "must not be used inside of logical junctors",
                ));
            }
        }
    } else if empty_type && !int_or_string && !preserve {
        match ctx {
            Ctx::Property => errs.push(FieldError::required(
                path.child("type"),
                "must not be empty for specified object fields",
            )),
            Ctx::Item => errs.push(FieldError::required(
                path.child("type"),
                "must not be empty for specified array items",
            )),
            _ => {}
        }
    }
    if int_or_string && (preserve || flag("x-kubernetes-embedded-resource")) {
        errs.push(FieldError::forbidden(
            path.child("x-kubernetes-int-or-string"),
            "must be false if x-kubernetes-preserve-unknown-fields or x-kubernetes-embedded-resource is true",
        ));
    }
    if flag("x-kubernetes-embedded-resource")
        && m.get("type").and_then(Value::as_str) != Some("object")
    {
        errs.push(FieldError::forbidden(
            path.child("type"),
            "must be object if x-kubernetes-embedded-resource is true",
        ));
    }
    if let Some(lt) = m.get("x-kubernetes-list-type").and_then(Value::as_str) {
        if !matches!(lt, "atomic" | "set" | "map") {
            errs.push(FieldError::not_supported(
                path.child("x-kubernetes-list-type"),
                lt,
                &["atomic", "set", "map"],
            ));
        }
        if lt == "map"
            && m.get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
        {
            errs.push(FieldError::required(
                path.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        let pp = path.child("properties");
        for (k, v) in props {
            walk(v, &pp.key(k), Ctx::Property, false, errs);
        }
    }
    if let Some(items) = m.get("items").filter(|i| i.is_object()) {
        walk(items, &path.child("items"), Ctx::Item, false, errs);
    }
    if let Some(a) = m.get("additionalProperties").filter(|a| a.is_object()) {
        walk(
            a,
            &path.child("additionalProperties"),
            Ctx::Additional,
            false,
            errs,
        );
    }
    for j in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = m.get(j).and_then(Value::as_array) {
            for (i, v) in list.iter().enumerate() {
                walk(
                    v,
                    &path.child(j).index(i),
                    Ctx::Junctor,
                    int_or_string,
                    errs,
                );
            }
        }
    }
    if let Some(n) = m.get("not") {
        walk(n, &path.child("not"), Ctx::Junctor, int_or_string, errs);
    }
}

/// Checks every `default:` against the schema it sits in (upstream's
/// defaulting validation): errors are at `<path>...default`, with the
/// value's own sub-paths after it.
pub fn check_defaults(schema: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk_defaults(schema, path, &mut errs);
    errs
}

fn walk_defaults(s: &Value, path: &FieldPath, errs: &mut Vec<FieldError>) {
    let Some(m) = s.as_object() else { return };
    if let Some(d) = m.get("default") {
        let compiled = super::Schema::compile(s);
        let mut pruned = d.clone();
        let dropped = compiled.prune_value(&mut pruned);
        if !dropped.is_empty() {
            errs.push(FieldError::invalid(
                path.child("default"),
                d.clone(),
                format!("must not have unknown fields: {}", dropped.join(", ")),
            ));
        }
        // Validated as it will be applied: with the defaults nested in it.
        compiled.apply_defaults(&mut pruned);
        errs.extend(compiled.validate(&pruned, &path.child("default")));
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            walk_defaults(v, &path.child("properties").key(k), errs);
        }
    }
    if let Some(items) = m.get("items") {
        walk_defaults(items, &path.child("items"), errs);
    }
    if let Some(a) = m.get("additionalProperties") {
        walk_defaults(a, &path.child("additionalProperties"), errs);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn msgs(v: Value) -> Vec<String> {
        check(
            &v,
            &FieldPath::new("spec")
                .child("validation")
                .child("openAPIV3Schema"),
        )
        .iter()
        .map(|e| e.to_string())
        .collect()
    }

    #[test]
    fn structural_rules() {
        assert!(
            msgs(json!({"type": "object", "properties": {"spec": {"type": "object"}}})).is_empty()
        );
        assert_eq!(
            msgs(json!({"type": "object", "properties": {"spec": {"properties": {}}}})),
            vec!["spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"]
        );
        assert_eq!(
            msgs(json!({"type": "object", "properties": {"l": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}})),
            vec!["spec.validation.openAPIV3Schema.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"]
        );
        assert_eq!(msgs(json!({"type": "string"})).len(), 1);
        assert_eq!(msgs(json!({"type": "object", "$ref": "#/x"})).len(), 1);
        assert_eq!(
            msgs(json!({"type": "object", "anyOf": [{"type": "string"}]})).len(),
            1
        );
    }

    #[test]
    fn defaults_must_validate() {
        let s = json!({"type": "object", "properties": {"color": {"type": "string", "enum": ["red"], "default": "pink"},
            "n": {"type": "integer", "default": 1, "minimum": 0}}});
        let errs: Vec<String> = check_defaults(&s, &FieldPath::new("schema"))
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errs, vec!["schema.properties[color].default: Unsupported value: \"pink\": supported values: \"red\""]);
    }
}
