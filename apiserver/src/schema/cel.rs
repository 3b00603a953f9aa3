//! CEL validation rules (`x-kubernetes-validations`) on top of the schema
//! engine, evaluated with the `cel` crate: `rule`, `message`,
//! `messageExpression`, `reason`, `fieldPath`, and transition rules that use
//! `oldSelf` (evaluated on update only, unless `optionalOldSelf`), after
//! upstream's `apiextensions-apiserver/pkg/apiserver/schema/cel`.
//!
//! Cost: when a CRD is written, each rule's cost is estimated from the
//! schema's bounds ([`cost`]) times the number of times it can run, and
//! refused above upstream's `StaticEstimatedCostLimit`, as is a schema whose
//! rules together exceed `StaticEstimatedCRDCostLimit`, with upstream's
//! messages. At runtime every evaluation is charged the same estimate with
//! the value's actual sizes before it runs (the `cel` crate does not meter
//! evaluation): a rule above upstream's per-call limit is not run and fails;
//! once the per-object budget is spent no further rules run.

use serde_json::Value;

use crate::apimachinery::validation::{FieldError, FieldPath};
use crate::cel::{
    compile_rule, cost, env, to_cel, PER_CALL_LIMIT, RUNTIME_BUDGET, STATIC_ESTIMATED_COST_LIMIT,
    STATIC_ESTIMATED_CRD_COST_LIMIT,
};
use crate::schema::compile::Additional;
use crate::schema::Schema;

/// The longest `messageExpression` upstream accepts.
const MAX_MESSAGE_EXPRESSION_LEN: usize = 5 * 1024;

/// What is left of an object's cost budget.
pub struct Budget {
    pub remaining: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            remaining: RUNTIME_BUDGET,
        }
    }
}

/// One compiled `x-kubernetes-validations` entry.
pub struct Rule {
    pub rule: String,
    pub message: Option<String>,
    pub reason: Option<String>,
    pub field_path: Option<String>,
    pub optional_old_self: bool,
    program: Result<::cel::Program, String>,
    message_expression: Option<::cel::Program>,
    /// Whether the rule uses `oldSelf` (a transition rule).
    pub transition: bool,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("rule", &self.rule).finish()
    }
}

impl Rule {
    /// Compiles one rule object; a rule that does not compile keeps its error
    /// (reported by [`compile_errors`] when a CRD is written).
    pub fn compile(v: &Value) -> Rule {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let rule = s("rule").unwrap_or_default();
        let program = compile_rule(&rule);
        let message_expression = s("messageExpression").and_then(|m| compile_rule(&m).ok());
        Rule {
            transition: rule.contains("oldSelf"),
            message: s("message"),
            reason: s("reason"),
            field_path: s("fieldPath"),
            optional_old_self: v
                .get("optionalOldSelf")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            program,
            message_expression,
            rule,
        }
    }

    /// The compile error, if the rule does not compile.
    pub fn compile_error(&self) -> Option<&str> {
        self.program.as_ref().err().map(String::as_str)
    }

    /// The estimated cost of one evaluation on these values (exact sizes).
    fn estimate(&self, value: &Value, old: Option<&Value>) -> u64 {
        let Ok(program) = &self.program else { return 0 };
        let mut vars = std::collections::BTreeMap::new();
        vars.insert("self".to_string(), cost::Shape::of_value(value));
        if let Some(o) = old {
            vars.insert("oldSelf".to_string(), cost::Shape::of_value(o));
        }
        cost::estimate(program.expression(), &vars)
    }
}

fn type_name(schema: &Schema, v: &Value) -> String {
    if let Some(t) = &schema.type_ {
        return t.clone();
    }
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
    }
    .into()
}

/// Checks the rules of a schema when a CRD is written: every rule compiles,
/// reasons are known, and each rule's estimated cost (times the number of
/// times it can run) stays within upstream's `StaticEstimatedCostLimit`,
/// all of them together within `StaticEstimatedCRDCostLimit`; errors are at
/// `<path>...x-kubernetes-validations[i].rule` (and `<path>` for the total),
/// with upstream's messages.
pub fn compile_errors(schema: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut costs = Vec::new();
    walk_compile(schema, path, 1, &mut errs, &mut costs);
    let total = costs.iter().fold(0u64, |t, (c, _)| t.saturating_add(*c));
    if total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        // Upstream names the (up to 4) most expensive rules costing at least
        // 1% of the limit.
        costs.sort_by(|a, b| b.0.cmp(&a.0));
        for (_, p) in costs
            .iter()
            .filter(|(c, _)| *c >= STATIC_ESTIMATED_CRD_COST_LIMIT / 100)
            .take(4)
        {
            errs.push(FieldError::forbidden(
                p.clone(),
                "contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errs.push(FieldError::forbidden(
            path.clone(),
            cost::cost_error_message(
                "x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema",
                total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
    }
    errs
}

/// How many elements a list or map schema can hold (its bound, or what the
/// request size limit allows).
fn cardinality(schema: &Value) -> u64 {
    match cost::Shape::of_schema(schema) {
        cost::Shape::List(n, _) | cost::Shape::Map(n, _) => n,
        _ => 1,
    }
}

fn walk_compile(
    s: &Value,
    path: &FieldPath,
    times: u64,
    errs: &mut Vec<FieldError>,
    costs: &mut Vec<(u64, FieldPath)>,
) {
    let Some(m) = s.as_object() else { return };
    if let Some(rules) = m.get("x-kubernetes-validations").and_then(Value::as_array) {
        let shape = cost::Shape::of_schema(s);
        let vars = std::collections::BTreeMap::from([
            ("self".to_string(), shape.clone()),
            ("oldSelf".to_string(), shape),
        ]);
        for (i, r) in rules.iter().enumerate() {
            let p = path.child("x-kubernetes-validations").index(i);
            let rule = r.get("rule").and_then(Value::as_str).unwrap_or("");
            if rule.is_empty() {
                errs.push(FieldError::required(p.child("rule"), ""));
                continue;
            }
            let mut check_cost = |src: &str, what: &str, at: FieldPath| {
                let Ok(program) = compile_rule(src) else {
                    return;
                };
                let c = cost::estimate(program.expression(), &vars).saturating_mul(times);
                if c > STATIC_ESTIMATED_COST_LIMIT {
                    errs.push(FieldError::forbidden(
                        at.clone(),
                        cost::cost_error_message(what, c, STATIC_ESTIMATED_COST_LIMIT),
                    ));
                }
                costs.push((c, at));
            };
            check_cost(rule, "estimated rule cost", p.child("rule"));
            if let Some(me) = r.get("messageExpression").and_then(Value::as_str) {
                check_cost(
                    me,
                    "estimated messageExpression cost",
                    p.child("messageExpression"),
                );
            }
            if let Err(e) = compile_rule(rule) {
                errs.push(FieldError::invalid(
                    p.child("rule"),
                    rule,
                    format!("compilation failed: {e}"),
                ));
            }
            if let Some(reason) = r.get("reason").and_then(Value::as_str) {
                const REASONS: &[&str] = &[
                    "FieldValueInvalid",
                    "FieldValueForbidden",
                    "FieldValueRequired",
                    "FieldValueDuplicate",
                ];
                if !REASONS.contains(&reason) {
                    errs.push(FieldError::not_supported(
                        p.child("reason"),
                        reason,
                        REASONS,
                    ));
                }
            }
        }
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            walk_compile(v, &path.child("properties").key(k), times, errs, costs);
        }
    }
    let n = times.saturating_mul(cardinality(s));
    if let Some(items) = m.get("items") {
        walk_compile(items, &path.child("items"), n, errs, costs);
    }
    if let Some(a) = m.get("additionalProperties") {
        walk_compile(a, &path.child("additionalProperties"), n, errs, costs);
    }
}

/// Evaluates every rule of `schema` and its children against `value`
/// (`old`: the previous object on update, for transition rules).
pub fn validate(
    schema: &Schema,
    value: &Value,
    old: Option<&Value>,
    path: &FieldPath,
    budget: &mut Budget,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    walk(schema, value, old, path, budget, &mut errs);
    errs
}

fn walk(
    schema: &Schema,
    value: &Value,
    old: Option<&Value>,
    path: &FieldPath,
    budget: &mut Budget,
    errs: &mut Vec<FieldError>,
) {
    if value.is_null() {
        return;
    }
    for rule in &schema.rules {
        if budget.remaining == 0 {
            return;
        }
        if let Some(e) = evaluate(rule, schema, value, old, path, budget) {
            errs.push(e);
        }
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let child = match schema.properties.get(k) {
                    Some(s) => s,
                    None => match &schema.additional {
                        Some(Additional::Schema(s)) => s.as_ref(),
                        _ => continue,
                    },
                };
                let old_child = old.and_then(|o| o.get(k));
                walk(child, v, old_child, &path.child(k), budget, errs);
            }
        }
        Value::Array(items) => {
            if let Some(item) = &schema.items {
                for (i, v) in items.iter().enumerate() {
                    // Old items correlate by map keys (list-type map) only.
                    let old_item = correlate(schema, item, v, old);
                    walk(item, v, old_item, &path.index(i), budget, errs);
                }
            }
        }
        _ => {}
    }
}

fn correlate<'a>(
    list: &Schema,
    _item: &Schema,
    v: &Value,
    old: Option<&'a Value>,
) -> Option<&'a Value> {
    if list.list_type.as_deref() != Some("map") || list.list_map_keys.is_empty() {
        return None;
    }
    old?.as_array()?
        .iter()
        .find(|o| list.list_map_keys.iter().all(|k| o.get(k) == v.get(k)))
}

fn evaluate(
    rule: &Rule,
    schema: &Schema,
    value: &Value,
    old: Option<&Value>,
    path: &FieldPath,
    budget: &mut Budget,
) -> Option<FieldError> {
    let type_ = type_name(schema, value);
    if rule.transition && old.is_none() && !rule.optional_old_self {
        return None;
    }
    let program = match &rule.program {
        Ok(p) => p,
        Err(e) => {
            return Some(FieldError::invalid(
                path.clone(),
                type_,
                format!("compilation failed: {e}"),
            ))
        }
    };
    let cost = rule.estimate(value, old);
    if cost > PER_CALL_LIMIT {
        budget.remaining = budget.remaining.saturating_sub(PER_CALL_LIMIT);
        return Some(FieldError::invalid(
            path.clone(),
            type_,
            format!("call cost exceeds limit for rule: {}", rule.rule),
        ));
    }
    if cost > budget.remaining {
        budget.remaining = 0;
        return Some(FieldError::invalid(
            path.clone(),
            type_,
            "validation failed due to running out of cost budget, no further validation rules will be run",
        ));
    }
    budget.remaining -= cost;
    let mut ctx = ::cel::Context::with_env(env());
    ctx.add_variable_from_value("self", to_cel(value));
    match old {
        Some(o) if rule.optional_old_self => {
            ctx.add_variable_from_value("oldSelf", ::cel::Value::from(Some(to_cel(o))))
        }
        Some(o) => ctx.add_variable_from_value("oldSelf", to_cel(o)),
        None => ctx.add_variable_from_value("oldSelf", ::cel::Value::from(None::<::cel::Value>)),
    }
    let result = program.execute(&ctx);
    let ok = match result {
        Ok(::cel::Value::Bool(b)) => b,
        Ok(other) => {
            return Some(FieldError::invalid(
                path.clone(),
                type_,
                format!(
                    "rule did not evaluate to a boolean: {:?} evaluating rule: {}",
                    other.type_of(),
                    rule.rule
                ),
            ))
        }
        Err(e) => {
            return Some(FieldError::invalid(
                path.clone(),
                type_,
                format!("{e} evaluating rule: {}", rule.rule),
            ))
        }
    };
    if ok {
        return None;
    }
    let mut message = rule
        .message
        .clone()
        .unwrap_or_else(|| format!("failed rule: {}", rule.rule));
    if let Some(expr) = &rule.message_expression {
        if let Ok(::cel::Value::String(s)) = expr.execute(&ctx) {
            if !s.trim().is_empty() && s.len() <= MAX_MESSAGE_EXPRESSION_LEN && !s.contains('\n') {
                message = s.to_string();
            }
        }
    }
    let mut at = path.clone();
    if let Some(fp) = &rule.field_path {
        for seg in fp
            .trim_start_matches('.')
            .split('.')
            .filter(|s| !s.is_empty())
        {
            at = at.child(seg);
        }
    }
    Some(match rule.reason.as_deref() {
        Some("FieldValueRequired") => FieldError::required(at, message),
        Some("FieldValueForbidden") => FieldError::forbidden(at, message),
        Some("FieldValueDuplicate") => FieldError::duplicate(at, type_),
        _ => FieldError::invalid(at, type_, message),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(schema: Value, new: Value, old: Option<Value>) -> Vec<String> {
        let s = Schema::compile(&schema);
        validate(
            &s,
            &new,
            old.as_ref(),
            &FieldPath::nil(),
            &mut Budget::default(),
        )
        .iter()
        .map(|e| e.to_string())
        .collect()
    }

    fn spec(rules: Value) -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": rules,
            "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}, "list": {"type": "array", "items": {"type": "integer"}}}}}})
    }

    #[test]
    fn rules_messages_and_reasons() {
        let s = spec(json!([{"rule": "self.min <= self.max"}]));
        assert!(run(s.clone(), json!({"spec": {"min": 1, "max": 2}}), None).is_empty());
        assert_eq!(
            run(s, json!({"spec": {"min": 3, "max": 2}}), None),
            vec!["spec: Invalid value: \"object\": failed rule: self.min <= self.max"]
        );
        let s = spec(
            json!([{"rule": "self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".min", "reason": "FieldValueForbidden"}]),
        );
        assert_eq!(
            run(s, json!({"spec": {"min": 3, "max": 2}}), None),
            vec!["spec.min: Forbidden: min must not exceed max"]
        );
        let s = spec(
            json!([{"rule": "self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' is too big'"}]),
        );
        assert_eq!(
            run(s, json!({"spec": {"min": 3, "max": 2}}), None),
            vec!["spec: Invalid value: \"object\": min 3 is too big"]
        );
    }

    #[test]
    fn string_and_list_extensions() {
        let s = spec(
            json!([{"rule": "'AbC'.lowerAscii() == 'abc' && 'a,b'.split(',').size() == 2 && self.list.sort() == [1, 2, 3]"}]),
        );
        let errs = run(s, json!({"spec": {"list": [1, 2, 3]}}), None);
        assert!(errs.is_empty(), "{errs:?}");
    }

    #[test]
    fn transition_rules_run_on_update_only() {
        let s = spec(json!([{"rule": "self.min == oldSelf.min", "message": "min is immutable"}]));
        assert!(run(s.clone(), json!({"spec": {"min": 3}}), None).is_empty());
        assert_eq!(
            run(
                s,
                json!({"spec": {"min": 3}}),
                Some(json!({"spec": {"min": 2}}))
            ),
            vec!["spec: Invalid value: \"object\": min is immutable"]
        );
    }

    #[test]
    fn crd_time_cost_checks_match_upstream_messages() {
        let unbounded = json!({"type": "object", "properties": {"list": {"type": "array", "items": {"type": "string"}}},
            "x-kubernetes-validations": [{"rule": "self.list.all(x, self.list.all(y, x == y))"}]});
        let errs: Vec<String> = compile_errors(&unbounded, &FieldPath::new("schema"))
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert!(errs.contains(&"schema.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)".to_string()), "{errs:?}");
        assert!(errs.contains(&"schema.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema".to_string()), "{errs:?}");
        assert!(errs.iter().any(|e| e.starts_with("schema: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x")), "{errs:?}");
        let bounded = json!({"type": "object", "properties": {"list": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}}},
            "x-kubernetes-validations": [{"rule": "self.list.all(x, self.list.all(y, x == y))"}]});
        assert!(compile_errors(&bounded, &FieldPath::new("schema")).is_empty());
        // A cheap rule on the items of an unbounded list runs once per item.
        let per_item = json!({"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.contains('a')"}]}});
        assert!(!compile_errors(&per_item, &FieldPath::new("schema")).is_empty());
    }

    #[test]
    fn hostile_rules_hit_the_cost_limit() {
        let s = spec(
            json!([{"rule": "self.list.all(x, self.list.all(y, self.list.all(z, x + y + z >= 0)))"}]),
        );
        let list: Vec<i64> = (0..200).collect();
        let errs = run(s, json!({"spec": {"list": list}}), None);
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].contains("call cost exceeds limit for rule"),
            "{errs:?}"
        );
    }
}
