//! Type checking of admission expressions against a kind's schema, for a
//! ValidatingAdmissionPolicy's `status.typeChecking`: every field selected
//! on `object` or `oldObject` (`object.spec.replicas`, `has(object.x)`) must
//! be declared by the kind's OpenAPI schema where the schema lists its
//! fields. The warning reads as cel-go's checker prints it:
//!
//! ```text
//! ERROR: <input>:1:12: undefined field 'replicsa'
//!  | object.spec.replicsa > 1
//!  | ...........^
//! ```
//!
//! This checks field names only (cel-go also checks types and overloads).

use ::cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::{Map, Value};

use crate::schema::openapi::resolve;

/// The variables whose fields are checked against the kind's schema.
const ROOTS: &[&str] = &["object", "oldObject"];

/// One undefined field: its name and the offset of its selection.
struct Undefined {
    field: String,
    offset: usize,
}

fn walk(e: &IdedExpr, out: &mut Vec<(u64, Vec<String>)>, shadowed: &[String]) {
    match &e.expr {
        Expr::Select(s) => {
            // A chain rooted at object/oldObject: collect it whole.
            let mut path = vec![s.field.clone()];
            let mut ids = vec![e.id];
            let mut cur = &*s.operand;
            loop {
                match &cur.expr {
                    Expr::Select(inner) => {
                        path.push(inner.field.clone());
                        ids.push(cur.id);
                        cur = &inner.operand;
                    }
                    Expr::Ident(name)
                        if ROOTS.contains(&name.as_str()) && !shadowed.contains(name) =>
                    {
                        path.reverse();
                        ids.reverse();
                        for (i, id) in ids.iter().enumerate() {
                            out.push((*id, path[..=i].to_vec()));
                        }
                        return;
                    }
                    _ => {
                        walk(cur, out, shadowed);
                        return;
                    }
                }
            }
        }
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                walk(t, out, shadowed);
            }
            for a in &c.args {
                walk(a, out, shadowed);
            }
        }
        Expr::List(l) => {
            for x in &l.elements {
                walk(x, out, shadowed);
            }
        }
        Expr::Map(m) => {
            for entry in &m.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    walk(&me.key, out, shadowed);
                    walk(&me.value, out, shadowed);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(f) = &entry.expr {
                    walk(&f.value, out, shadowed);
                }
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, out, shadowed);
            let mut inner = shadowed.to_vec();
            inner.push(c.iter_var.clone());
            if let Some(v2) = &c.iter_var2 {
                inner.push(v2.clone());
            }
            inner.push(c.accu_var.clone());
            walk(&c.accu_init, out, &inner);
            walk(&c.loop_cond, out, &inner);
            walk(&c.loop_step, out, &inner);
            walk(&c.result, out, &inner);
        }
        _ => {}
    }
}

/// Whether `path` (field names from the root) is declared: `Some(false)`
/// when the last field is not, `None` when the schema does not say (no
/// schema, a map, preserved unknown fields, a list).
fn declared(path: &[String], root: &Value, components: &Map<String, Value>) -> Option<bool> {
    let mut schema = resolve(root, components);
    for (i, field) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            return None;
        }
        if i == 0 && matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
            return Some(true);
        }
        let props = schema.get("properties").and_then(Value::as_object)?;
        match props.get(field) {
            Some(s) if last => {
                let _ = s;
                return Some(true);
            }
            Some(s) => schema = resolve(s, components),
            None => return Some(false),
        }
    }
    Some(true)
}

fn undefined(
    program: &::cel::Program,
    root: &Value,
    components: &Map<String, Value>,
) -> Vec<Undefined> {
    let mut selections = Vec::new();
    walk(program.expression(), &mut selections, &[]);
    let mut found: Vec<Undefined> = Vec::new();
    let mut reported: Vec<Vec<String>> = Vec::new();
    for (id, path) in selections {
        // Only the first undefined field of a chain is an error.
        if reported.iter().any(|r| path.starts_with(r)) {
            continue;
        }
        if declared(&path, root, components) == Some(false) {
            let offset = program
                .source_info()
                .offset_for(id)
                .map(|(start, _)| start as usize)
                .unwrap_or(0);
            found.push(Undefined {
                field: path.last().cloned().unwrap_or_default(),
                offset,
            });
            reported.push(path);
        }
    }
    found
}

/// The undefined-field errors of `source` against the kind whose schema is
/// `root` (a `$ref` into `components`), each as cel-go prints it; empty
/// when the expression does not parse (its compile error is reported
/// elsewhere) or every field is declared.
pub fn undefined_fields(
    source: &str,
    root: &Value,
    components: &Map<String, Value>,
) -> Vec<String> {
    let Ok(program) = crate::cel::compile(source) else {
        return Vec::new();
    };
    undefined(&program, root, components)
        .into_iter()
        .map(|u| render(source, u.offset, &format!("undefined field '{}'", u.field)))
        .collect()
}

/// A CEL type name as cel-go prints it, inferred where it can be.
fn type_of(
    e: &IdedExpr,
    root: &Value,
    components: &Map<String, Value>,
    shadowed: &[String],
) -> Option<&'static str> {
    use ::cel::common::ast::LiteralValue as L;
    match &e.expr {
        Expr::Literal(l) => Some(match l {
            L::Boolean(_) => "bool",
            L::Bytes(_) => "bytes",
            L::Double(_) => "double",
            L::Int(_) => "int",
            L::Null => "null_type",
            L::String(_) => "string",
            L::UInt(_) => "uint",
        }),
        Expr::List(_) => Some("list"),
        Expr::Select(_) => {
            let mut path = Vec::new();
            let mut cur = e;
            loop {
                match &cur.expr {
                    Expr::Select(s) if !s.test => {
                        path.push(s.field.clone());
                        cur = &s.operand;
                    }
                    Expr::Ident(name)
                        if ROOTS.contains(&name.as_str()) && !shadowed.contains(name) =>
                    {
                        break;
                    }
                    _ => return None,
                }
            }
            path.reverse();
            schema_type(&path, root, components)
        }
        Expr::Call(c) => match c.func_name.as_str() {
            "_<_" | "_<=_" | "_>_" | "_>=_" | "_==_" | "_!=_" | "_&&_" | "_||_" | "!_" => {
                Some("bool")
            }
            "size" => Some("int"),
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => {
                let a = type_of(c.args.first()?, root, components, shadowed)?;
                let b = type_of(c.args.get(1)?, root, components, shadowed)?;
                (a == b).then_some(a)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The CEL type of the field at `path` under the kind's schema.
fn schema_type(
    path: &[String],
    root: &Value,
    components: &Map<String, Value>,
) -> Option<&'static str> {
    if matches!(
        path.first().map(String::as_str),
        Some("apiVersion" | "kind")
    ) && path.len() == 1
    {
        return Some("string");
    }
    let mut schema = resolve(root, components);
    for field in path {
        if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            return None;
        }
        schema = resolve(schema.get("properties")?.get(field)?, components);
    }
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return None;
    }
    match schema.get("type").and_then(Value::as_str)? {
        "integer" => Some("int"),
        "number" => Some("double"),
        "string" => match schema.get("format").and_then(Value::as_str) {
            Some("date-time" | "byte" | "duration") => None,
            _ => Some("string"),
        },
        "boolean" => Some("bool"),
        "array" => Some("list"),
        _ => None,
    }
}

fn numeric(t: &str) -> bool {
    matches!(t, "int" | "uint" | "double")
}

/// Whether the operator has an overload for operands of these types
/// (Kubernetes enables cross-type numeric comparisons).
fn has_overload(op: &str, a: &str, b: &str) -> bool {
    match op {
        "_<_" | "_<=_" | "_>_" | "_>=_" => {
            (a == b && matches!(a, "int" | "uint" | "double" | "string" | "bytes" | "bool"))
                || (numeric(a) && numeric(b))
        }
        "_==_" | "_!=_" => {
            a == b || (numeric(a) && numeric(b)) || a == "null_type" || b == "null_type"
        }
        "_+_" => a == b && matches!(a, "int" | "uint" | "double" | "string" | "bytes" | "list"),
        "_-_" | "_*_" | "_/_" => a == b && numeric(a),
        "_%_" => a == b && matches!(a, "int" | "uint"),
        _ => true,
    }
}

fn overloads(
    e: &IdedExpr,
    root: &Value,
    components: &Map<String, Value>,
    shadowed: &[String],
    out: &mut Vec<(u64, String)>,
) {
    match &e.expr {
        Expr::Call(c) => {
            if c.args.len() == 2 && c.target.is_none() {
                if let (Some(a), Some(b)) = (
                    type_of(&c.args[0], root, components, shadowed),
                    type_of(&c.args[1], root, components, shadowed),
                ) {
                    if !has_overload(&c.func_name, a, b) {
                        out.push((
                            e.id,
                            format!(
                                "found no matching overload for '{}' applied to '({a}, {b})'",
                                c.func_name
                            ),
                        ));
                    }
                }
            }
            if let Some(t) = &c.target {
                overloads(t, root, components, shadowed, out);
            }
            for a in &c.args {
                overloads(a, root, components, shadowed, out);
            }
        }
        Expr::Select(s) => overloads(&s.operand, root, components, shadowed, out),
        Expr::List(l) => {
            for x in &l.elements {
                overloads(x, root, components, shadowed, out);
            }
        }
        Expr::Comprehension(c) => {
            overloads(&c.iter_range, root, components, shadowed, out);
            let mut inner = shadowed.to_vec();
            inner.push(c.iter_var.clone());
            inner.push(c.accu_var.clone());
            for x in [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                overloads(x, root, components, &inner, out);
            }
        }
        _ => {}
    }
}

/// Every type error of `source` against the kind whose schema is `root`:
/// undefined fields and operators applied to operands of types they have
/// no overload for, in source order, each as cel-go prints it.
pub fn check(source: &str, root: &Value, components: &Map<String, Value>) -> Vec<String> {
    let Ok(program) = crate::cel::compile(source) else {
        return Vec::new();
    };
    let offset = |id: u64| {
        program
            .source_info()
            .offset_for(id)
            .map(|(start, _)| start as usize)
            .unwrap_or(0)
    };
    let mut found: Vec<(usize, String)> = undefined(&program, root, components)
        .into_iter()
        .map(|u| (u.offset, format!("undefined field '{}'", u.field)))
        .collect();
    let mut ops = Vec::new();
    overloads(program.expression(), root, components, &[], &mut ops);
    found.extend(ops.into_iter().map(|(id, m)| (offset(id), m)));
    found.sort_by_key(|(o, _)| *o);
    found
        .into_iter()
        .map(|(o, m)| render(source, o, &m))
        .collect()
}

/// cel-go's rendering of an error at `offset` (line and column from 1,
/// with the source line and a caret).
fn render(source: &str, offset: usize, message: &str) -> String {
    let before = &source[..offset.min(source.len())];
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = before[line_start..].chars().count();
    let line = source[line_start..].lines().next().unwrap_or("");
    format!(
        "ERROR: <input>:{line_no}:{}: {message}\n | {line}\n | {}^",
        col + 1,
        ".".repeat(col)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> (Value, Map<String, Value>) {
        let components = json!({
            "D": {"properties": {"spec": {"$ref": "#/components/schemas/S"}}},
            "S": {"properties": {"replicas": {"type": "integer"},
                                 "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                                 "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}
        });
        let Value::Object(c) = components else {
            unreachable!()
        };
        (json!({"$ref": "#/components/schemas/D"}), c)
    }

    #[test]
    fn reports_undefined_fields_as_cel_go() {
        let (root, c) = schema();
        assert!(undefined_fields("object.spec.replicas > 1", &root, &c).is_empty());
        assert!(undefined_fields("object.metadata.name == 'x'", &root, &c).is_empty());
        assert!(undefined_fields("object.spec.template.anything", &root, &c).is_empty());
        assert!(undefined_fields("object.spec.labels.foo == 'x'", &root, &c).is_empty());
        assert_eq!(
            undefined_fields("object.spec.replicsa > 1", &root, &c),
            vec!["ERROR: <input>:1:12: undefined field 'replicsa'\n | object.spec.replicsa > 1\n | ...........^"]
        );
        assert_eq!(undefined_fields("has(oldObject.spek)", &root, &c).len(), 1);
        // A comprehension variable named like a root is not the root.
        assert!(undefined_fields("[1].all(object, object > 0)", &root, &c).is_empty());
        assert!(undefined_fields("object.(", &root, &c).is_empty());
    }

    #[test]
    fn reports_operators_without_overloads() {
        let (root, c) = schema();
        let errs = check("object.spec.replicas > '1'", &root, &c);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].contains("found no matching overload for '_>_' applied to '(int, string)'"),
            "{errs:?}"
        );
        let errs = check(
            "'wants replicas > 1, got ' + object.spec.replicas",
            &root,
            &c,
        );
        assert!(
            errs[0].contains("found no matching overload for '_+_' applied to '(string, int)'"),
            "{errs:?}"
        );
        assert!(check(
            "object.spec.replicas > 1.5 && object.spec.replicas == 2",
            &root,
            &c
        )
        .is_empty());
        assert!(check(
            "'a' + 'b' == 'ab' && size(object.spec.labels) > 0",
            &root,
            &c
        )
        .is_empty());
    }
}
