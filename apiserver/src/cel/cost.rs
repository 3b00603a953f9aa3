//! Cost estimation of CEL rules, in the spirit of cel-go's checker cost
//! model that upstream uses: every node costs about 1, string operations
//! cost a tenth of the string's length, list operations the list's length,
//! and a comprehension (`all`, `exists`, `map`, `filter`, ...) its body times
//! the number of elements it iterates over.
//!
//! Sizes come from a [`Shape`]: built from a schema (`maxLength`, `maxItems`,
//! `maxProperties`; unbounded ones are bounded by the 3 MiB request limit, as
//! upstream does) when a CRD is written, or from the actual value before a
//! rule runs (the `cel` crate has no runtime cost tracking, so the runtime
//! limit is enforced on this estimate with exact sizes).
//!
//! What differs from upstream: the model follows cel-go's shape but not its
//! exact per-function constants, so figures are close to, not equal to,
//! upstream's; a rule near a limit may be accepted by one and refused by the
//! other.

use std::collections::BTreeMap;

use ::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use serde_json::Value;

/// Upstream's `maxRequestSizeBytes`, which bounds unbounded sizes.
pub const MAX_REQUEST_SIZE: u64 = 3 * 1024 * 1024;

/// The size and structure of a value a rule may see.
#[derive(Clone, Debug)]
pub enum Shape {
    /// A number, boolean or null.
    Scalar,
    /// A string of at most this many bytes.
    Str(u64),
    /// A list of at most this many items.
    List(u64, Box<Shape>),
    /// A map (`additionalProperties`) of at most this many entries.
    Map(u64, Box<Shape>),
    /// An object with known properties.
    Object(BTreeMap<String, Shape>),
    /// Anything (preserve-unknown-fields, int-or-string) of at most this
    /// serialised size.
    Dyn(u64),
}

/// Smallest serialised size of a value of this schema (upstream's
/// `estimateMinSizeJSON`), used to bound unbounded lists and maps.
fn min_size(schema: &Value) -> u64 {
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => 2,
        Some("boolean") => 4,
        Some("integer") | Some("number") => 1,
        Some("array") | Some("object") => 2,
        _ => 1,
    }
}

impl Shape {
    /// The shape of values of a (raw JSON) schema.
    pub fn of_schema(schema: &Value) -> Shape {
        let n = |k: &str| schema.get(k).and_then(Value::as_u64);
        let flag = |k: &str| schema.get(k).and_then(Value::as_bool).unwrap_or(false);
        if flag("x-kubernetes-int-or-string") {
            return Shape::Dyn(n("maxLength").unwrap_or(MAX_REQUEST_SIZE));
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => Shape::Str(n("maxLength").unwrap_or(MAX_REQUEST_SIZE - 2)),
            Some("array") => {
                let items = schema.get("items").cloned().unwrap_or(Value::Null);
                let max = n("maxItems").unwrap_or((MAX_REQUEST_SIZE - 2) / (min_size(&items) + 1));
                Shape::List(max, Box::new(Shape::of_schema(&items)))
            }
            Some("object") => {
                if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                    if !props.is_empty() {
                        return Shape::Object(
                            props
                                .iter()
                                .map(|(k, v)| (k.clone(), Shape::of_schema(v)))
                                .collect(),
                        );
                    }
                }
                match schema.get("additionalProperties") {
                    Some(a @ Value::Object(_)) => {
                        let max = n("maxProperties")
                            .unwrap_or((MAX_REQUEST_SIZE - 2) / (min_size(a) + 4 + 1));
                        Shape::Map(max, Box::new(Shape::of_schema(a)))
                    }
                    _ => Shape::Dyn(MAX_REQUEST_SIZE),
                }
            }
            Some(_) => Shape::Scalar,
            None => Shape::Dyn(MAX_REQUEST_SIZE),
        }
    }

    /// The exact shape of a value.
    pub fn of_value(v: &Value) -> Shape {
        match v {
            Value::String(s) => Shape::Str(s.len() as u64),
            Value::Array(a) => Shape::List(
                a.len() as u64,
                Box::new(
                    a.iter()
                        .map(Shape::of_value)
                        .reduce(Shape::merge)
                        .unwrap_or(Shape::Scalar),
                ),
            ),
            Value::Object(m) => Shape::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), Shape::of_value(v)))
                    .collect(),
            ),
            _ => Shape::Scalar,
        }
    }

    /// A shape covering both.
    fn merge(self, other: Shape) -> Shape {
        match (self, other) {
            (Shape::Scalar, Shape::Scalar) => Shape::Scalar,
            (Shape::Str(a), Shape::Str(b)) => Shape::Str(a.max(b)),
            (Shape::List(a, x), Shape::List(b, y)) => Shape::List(a.max(b), Box::new(x.merge(*y))),
            (Shape::Object(mut a), Shape::Object(b)) => {
                for (k, v) in b {
                    let merged = match a.remove(&k) {
                        Some(x) => x.merge(v),
                        None => v,
                    };
                    a.insert(k, merged);
                }
                Shape::Object(a)
            }
            (a, b) => Shape::Dyn(a.size().max(b.size())),
        }
    }

    /// An upper bound of the serialised size.
    fn size(&self) -> u64 {
        match self {
            Shape::Scalar => 8,
            Shape::Str(n) | Shape::Dyn(n) => *n,
            Shape::List(n, i) | Shape::Map(n, i) => n.saturating_mul(i.size().saturating_add(1)),
            Shape::Object(m) => m.values().map(Shape::size).fold(2, u64::saturating_add),
        }
    }

    /// How many elements iterating over a value of this shape visits.
    fn count(&self) -> u64 {
        match self {
            Shape::List(n, _) | Shape::Map(n, _) => *n,
            Shape::Object(m) => m.len() as u64,
            Shape::Dyn(n) => *n / 2,
            _ => 1,
        }
    }

    /// The shape of an element (list item, map value) or field.
    fn element(&self) -> Shape {
        match self {
            Shape::List(_, i) | Shape::Map(_, i) => (**i).clone(),
            Shape::Object(m) => m
                .values()
                .cloned()
                .reduce(Shape::merge)
                .unwrap_or(Shape::Scalar),
            Shape::Dyn(n) => Shape::Dyn(*n),
            _ => Shape::Scalar,
        }
    }

    fn field(&self, name: &str) -> Shape {
        match self {
            Shape::Object(m) => m.get(name).cloned().unwrap_or(Shape::Scalar),
            Shape::Map(_, v) => (**v).clone(),
            Shape::Dyn(n) => Shape::Dyn(*n),
            _ => Shape::Scalar,
        }
    }

    /// The length the cost of an operation on this value scales with.
    fn length(&self) -> u64 {
        match self {
            Shape::Str(n) | Shape::Dyn(n) => *n,
            Shape::List(n, _) | Shape::Map(n, _) => *n,
            Shape::Object(m) => m.len() as u64,
            Shape::Scalar => 1,
        }
    }
}

/// A tenth of `n`, rounded up (cel-go's `common.StringTraversalCostFactor`).
fn tenth(n: u64) -> u64 {
    n.div_ceil(10)
}

/// Estimates the cost of one evaluation of `expr` with the given variables.
pub fn estimate(expr: &IdedExpr, vars: &BTreeMap<String, Shape>) -> u64 {
    Estimator { vars: vars.clone() }.visit(expr).0
}

struct Estimator {
    vars: BTreeMap<String, Shape>,
}

/// String functions whose cost scales with the receiver's (or first
/// argument's) length.
const STRING_TRAVERSALS: &[&str] = &[
    "contains",
    "startsWith",
    "endsWith",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "substring",
    "indexOf",
    "lastIndexOf",
    "charAt",
    "reverse",
    "join",
    "format",
    "quantity",
    "isQuantity",
    "url",
    "isURL",
    "ip",
    "isIP",
    "cidr",
    "isCIDR",
    "validate",
    "string",
];

/// List functions whose cost scales with the list's length.
const LIST_TRAVERSALS: &[&str] = &[
    "@in",
    "isSorted",
    "sum",
    "min",
    "max",
    "indexOf",
    "lastIndexOf",
    "distinct",
    "flatten",
    "reverse",
    "slice",
    "sort",
    "join",
];

impl Estimator {
    fn visit(&mut self, e: &IdedExpr) -> (u64, Shape) {
        match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => (0, Shape::Str(s.len() as u64)),
            Expr::Literal(LiteralValue::Bytes(b)) => (0, Shape::Str(b.len() as u64)),
            Expr::Literal(_) | Expr::Unspecified => (0, Shape::Scalar),
            Expr::Ident(name) => (1, self.vars.get(name).cloned().unwrap_or(Shape::Scalar)),
            Expr::Select(s) => {
                let (c, shape) = self.visit(&s.operand);
                (c.saturating_add(1), shape.field(&s.field))
            }
            Expr::List(l) => {
                let mut cost = 10u64;
                let mut item = None::<Shape>;
                for el in &l.elements {
                    let (c, s) = self.visit(el);
                    cost = cost.saturating_add(c);
                    item = Some(match item {
                        Some(i) => i.merge(s),
                        None => s,
                    });
                }
                (
                    cost,
                    Shape::List(
                        l.elements.len() as u64,
                        Box::new(item.unwrap_or(Shape::Scalar)),
                    ),
                )
            }
            Expr::Map(m) => {
                let mut cost = 30u64;
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        cost = cost
                            .saturating_add(self.visit(&me.key).0)
                            .saturating_add(self.visit(&me.value).0);
                    }
                }
                (cost, Shape::Dyn(MAX_REQUEST_SIZE))
            }
            Expr::Struct(s) => {
                let mut cost = 40u64;
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        cost = cost.saturating_add(self.visit(&f.value).0);
                    }
                }
                (cost, Shape::Dyn(MAX_REQUEST_SIZE))
            }
            Expr::Call(call) => {
                let mut cost = 1u64;
                let mut shapes = Vec::new();
                if let Some(t) = &call.target {
                    let (c, s) = self.visit(t);
                    cost = cost.saturating_add(c);
                    shapes.push(s);
                }
                for a in &call.args {
                    let (c, s) = self.visit(a);
                    cost = cost.saturating_add(c);
                    shapes.push(s);
                }
                let (extra, result) = call_cost(&call.func_name, &shapes);
                (cost.saturating_add(extra), result)
            }
            Expr::Comprehension(c) => {
                let (range_cost, range) = self.visit(&c.iter_range);
                let (init_cost, init) = self.visit(&c.accu_init);
                let n = range.count();
                let saved: Vec<(String, Option<Shape>)> = [&c.iter_var, &c.accu_var]
                    .into_iter()
                    .chain(c.iter_var2.as_ref())
                    .map(|v| (v.clone(), self.vars.get(v).cloned()))
                    .collect();
                match (&range, &c.iter_var2) {
                    (Shape::List(..), Some(v2)) => {
                        self.vars.insert(c.iter_var.clone(), Shape::Scalar);
                        self.vars.insert(v2.clone(), range.element());
                    }
                    (Shape::Map(..) | Shape::Object(_), Some(v2)) => {
                        self.vars.insert(c.iter_var.clone(), Shape::Str(253));
                        self.vars.insert(v2.clone(), range.element());
                    }
                    (Shape::Map(..) | Shape::Object(_), None) => {
                        self.vars.insert(c.iter_var.clone(), Shape::Str(253));
                    }
                    _ => {
                        self.vars.insert(c.iter_var.clone(), range.element());
                    }
                }
                // The accumulator of `map`/`filter` grows to a list of up to
                // `n` step results.
                self.vars.insert(c.accu_var.clone(), init.clone());
                let (_, step) = self.visit(&c.loop_step);
                let accu = match step {
                    Shape::List(_, item) => Shape::List(n, item),
                    other => other,
                };
                self.vars.insert(c.accu_var.clone(), accu);
                let (cond_cost, _) = self.visit(&c.loop_cond);
                let (step_cost, _) = self.visit(&c.loop_step);
                let (result_cost, result) = self.visit(&c.result);
                for (k, v) in saved {
                    match v {
                        Some(v) => self.vars.insert(k, v),
                        None => self.vars.remove(&k),
                    };
                }
                let cost = range_cost
                    .saturating_add(init_cost)
                    .saturating_add(n.saturating_mul(cond_cost.saturating_add(step_cost)))
                    .saturating_add(result_cost);
                (cost, result)
            }
        }
    }
}

/// The extra cost of calling `name` on arguments of these shapes (the
/// receiver first), and the shape of its result.
fn call_cost(name: &str, args: &[Shape]) -> (u64, Shape) {
    let first = args.first().cloned().unwrap_or(Shape::Scalar);
    let len = first.length();
    let is_str = matches!(first, Shape::Str(_) | Shape::Dyn(_));
    match name {
        "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => {
            let n = args.iter().map(Shape::length).min().unwrap_or(1);
            (if is_str { tenth(n) } else { n }, Shape::Scalar)
        }
        "_+_" => match &first {
            Shape::Str(_) => {
                let total: u64 = args.iter().map(Shape::length).fold(0, u64::saturating_add);
                (tenth(total), Shape::Str(total))
            }
            Shape::List(a, item) => {
                let b = args.get(1).map_or(0, Shape::count);
                (1, Shape::List(a.saturating_add(b), item.clone()))
            }
            _ => (0, first),
        },
        "matches" | "find" | "findAll" => {
            let re = args.get(1).map_or(1, Shape::length);
            let cost = tenth(len).saturating_mul(re.max(1));
            let result = if name == "findAll" {
                Shape::List(len, Box::new(Shape::Str(len)))
            } else {
                Shape::Str(len)
            };
            (cost, result)
        }
        "split" => (tenth(len), Shape::List(len, Box::new(Shape::Str(len)))),
        "@in" => match args.get(1) {
            Some(Shape::List(n, _)) => (*n, Shape::Scalar),
            _ => (1, Shape::Scalar),
        },
        "size" | "has" | "!_" | "_&&_" | "_||_" | "_?_:_" | "-_" | "_-_" | "_*_" | "_/_"
        | "_%_" | "int" | "uint" | "double" | "bool" | "type" | "dyn" => {
            let result = if name == "_?_:_" {
                args.get(1).cloned().unwrap_or(Shape::Scalar)
            } else {
                Shape::Scalar
            };
            (0, result)
        }
        "_[_]" | "_[?_]" => (0, first.element()),
        _ if is_str && STRING_TRAVERSALS.contains(&name) => (
            tenth(len),
            match name {
                "lowerAscii" | "upperAscii" | "trim" | "replace" | "substring" | "reverse"
                | "charAt" | "string" => Shape::Str(len),
                _ => Shape::Scalar,
            },
        ),
        _ if LIST_TRAVERSALS.contains(&name) => {
            let cost = if name == "sort" {
                len.saturating_mul(64 - len.leading_zeros() as u64)
            } else {
                len
            };
            (
                cost,
                match name {
                    "distinct" | "flatten" | "reverse" | "slice" | "sort" => first,
                    "min" | "max" | "sum" => first.element(),
                    "join" => Shape::Str(first.size()),
                    _ => Shape::Scalar,
                },
            )
        }
        _ => (1, Shape::Scalar),
    }
}

/// Upstream's `getCostErrorMessage`.
pub fn cost_error_message(name: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!("{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cost(rule: &str, schema: Value) -> u64 {
        let program = crate::cel::env().compile(rule).expect("compiles");
        let shape = Shape::of_schema(&schema);
        let vars = BTreeMap::from([
            ("self".to_string(), shape.clone()),
            ("oldSelf".to_string(), shape),
        ]);
        estimate(program.expression(), &vars)
    }

    #[test]
    fn bounded_rules_are_cheap_and_unbounded_nesting_is_not() {
        let list = |max: Option<u64>| {
            let mut s = json!({"type": "array", "items": {"type": "string", "maxLength": 10}});
            if let Some(m) = max {
                s["maxItems"] = json!(m);
            }
            s
        };
        assert!(cost("self.size() < 10", list(None)) < 10);
        let bounded = cost("self.all(x, x.startsWith('a'))", list(Some(10)));
        assert!(bounded < 100, "{bounded}");
        let nested = cost("self.all(x, self.all(y, x != y))", list(None));
        assert!(nested > 10_000_000, "{nested}");
        let nested_bounded = cost("self.all(x, self.all(y, x != y))", list(Some(100)));
        assert!(nested_bounded < 100_000, "{nested_bounded}");
        // String traversal scales with maxLength.
        let s = json!({"type": "string"});
        assert!(cost("self.contains('x')", s) > 100_000);
    }

    #[test]
    fn exact_shapes_from_values() {
        let program = crate::cel::env()
            .compile("self.all(x, self.all(y, x + y >= 0))")
            .expect("compiles");
        let v: Vec<i64> = (0..100).collect();
        let vars = BTreeMap::from([("self".to_string(), Shape::of_value(&json!(v)))]);
        let c = estimate(program.expression(), &vars);
        assert!((10_000..1_000_000).contains(&c), "{c}");
    }

    #[test]
    fn messages_match_upstream() {
        assert_eq!(
            cost_error_message("estimated rule cost", 2_000_000_000, 10_000_000),
            "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
        );
        assert!(cost_error_message("x", 12_000_000, 10_000_000).contains("factor of 1.200000x"));
        assert!(cost_error_message("x", 51_600_000, 10_000_000).contains("factor of 5.2x"));
    }
}
