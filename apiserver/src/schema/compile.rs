//! Compiling a JSON schema value into a [`Schema`] tree.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

/// How `additionalProperties` constrains fields not in `properties`.
#[derive(Clone, Debug)]
pub enum Additional {
    /// `additionalProperties: false`.
    Forbidden,
    /// `additionalProperties: true` (or `{}`): anything.
    Any,
    /// `additionalProperties: <schema>`: every value must match it.
    Schema(Box<Schema>),
}

/// A compiled schema node. Unknown keywords are ignored here; whether a
/// schema may use them at all is [`super::structural::check`]'s business.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    /// `type` (`object`, `array`, `string`, `integer`, `number`, `boolean`).
    pub type_: Option<String>,
    pub format: Option<String>,
    pub nullable: bool,
    pub properties: BTreeMap<String, Schema>,
    pub additional: Option<Additional>,
    pub items: Option<Box<Schema>>,
    pub required: Vec<String>,
    pub enum_: Vec<Value>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: bool,
    pub exclusive_maximum: bool,
    pub multiple_of: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    /// The `pattern` source and its compiled form (`None` when it does not
    /// compile; CRD validation rejects such schemas).
    pub pattern: Option<(String, Option<Arc<regex::Regex>>)>,
    pub default: Option<Value>,
    pub all_of: Vec<Schema>,
    pub any_of: Vec<Schema>,
    pub one_of: Vec<Schema>,
    pub not: Option<Box<Schema>>,
    pub preserve_unknown_fields: bool,
    pub int_or_string: bool,
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`: `granular` or `atomic`.
    pub map_type: Option<String>,
    pub description: Option<String>,
    /// The raw `x-kubernetes-validations` (CEL rules), kept for publishing.
    pub validations: Vec<Value>,
    /// The compiled CEL rules of this node (see [`crate::cel`]).
    pub rules: Vec<Arc<crate::schema::cel::Rule>>,
}

fn u64_of(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn f64_of(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn list_of(v: &Value, key: &str) -> Vec<Schema> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Schema::compile).collect())
        .unwrap_or_default()
}

impl Schema {
    /// Compiles a schema value. Never fails: malformed parts are ignored (a
    /// CRD's schema is checked by [`super::structural::check`] before use).
    pub fn compile(v: &Value) -> Schema {
        if !v.is_object() {
            return Schema::default();
        }
        let properties = v
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, s)| (k.clone(), Schema::compile(s)))
                    .collect()
            })
            .unwrap_or_default();
        let additional = match v.get("additionalProperties") {
            Some(Value::Bool(false)) => Some(Additional::Forbidden),
            Some(Value::Bool(true)) => Some(Additional::Any),
            Some(s @ Value::Object(_)) => Some(Additional::Schema(Box::new(Schema::compile(s)))),
            _ => None,
        };
        let pattern = str_of(v, "pattern").map(|p| {
            let re = regex::Regex::new(&p).ok().map(Arc::new);
            (p, re)
        });
        Schema {
            type_: str_of(v, "type").filter(|t| !t.is_empty()),
            format: str_of(v, "format").filter(|f| !f.is_empty()),
            nullable: bool_of(v, "nullable"),
            properties,
            additional,
            items: v
                .get("items")
                .filter(|i| i.is_object())
                .map(|i| Box::new(Schema::compile(i))),
            required: v
                .get("required")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            enum_: v
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            minimum: f64_of(v, "minimum"),
            maximum: f64_of(v, "maximum"),
            exclusive_minimum: bool_of(v, "exclusiveMinimum"),
            exclusive_maximum: bool_of(v, "exclusiveMaximum"),
            multiple_of: f64_of(v, "multipleOf"),
            min_length: u64_of(v, "minLength"),
            max_length: u64_of(v, "maxLength"),
            min_items: u64_of(v, "minItems"),
            max_items: u64_of(v, "maxItems"),
            min_properties: u64_of(v, "minProperties"),
            max_properties: u64_of(v, "maxProperties"),
            pattern,
            default: v.get("default").cloned(),
            all_of: list_of(v, "allOf"),
            any_of: list_of(v, "anyOf"),
            one_of: list_of(v, "oneOf"),
            not: v
                .get("not")
                .filter(|n| n.is_object())
                .map(|n| Box::new(Schema::compile(n))),
            preserve_unknown_fields: bool_of(v, "x-kubernetes-preserve-unknown-fields"),
            int_or_string: bool_of(v, "x-kubernetes-int-or-string"),
            embedded_resource: bool_of(v, "x-kubernetes-embedded-resource"),
            list_type: str_of(v, "x-kubernetes-list-type"),
            list_map_keys: v
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            map_type: str_of(v, "x-kubernetes-map-type"),
            description: str_of(v, "description"),
            validations: v
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            rules: v
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|r| Arc::new(crate::schema::cel::Rule::compile(r)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The schema of the field `name` of an object: its declared property,
    /// or the `additionalProperties` schema.
    pub fn field(&self, name: &str) -> Option<&Schema> {
        self.properties.get(name).or(match &self.additional {
            Some(Additional::Schema(s)) => Some(s.as_ref()),
            _ => None,
        })
    }
}
