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

use crate::openapi::unknown::resolve;

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

/// The undefined-field errors of `source` against the kind whose schema is
/// `root` (a `$ref` into `components`), each as cel-go prints it; empty
/// when the expression does not parse (its compile error is reported
/// elsewhere) or every field is declared.
pub fn undefined_fields(
    source: &str,
    root: &Value,
    components: &Map<String, Value>,
) -> Vec<String> {
    let Ok(program) = super::env().compile(source) else {
        return Vec::new();
    };
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
    found.into_iter().map(|u| render(source, &u)).collect()
}

/// cel-go's rendering of an error at `u.offset` (line and column from 1,
/// with the source line and a caret).
fn render(source: &str, u: &Undefined) -> String {
    let before = &source[..u.offset.min(source.len())];
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let col = before[line_start..].chars().count();
    let line = source[line_start..].lines().next().unwrap_or("");
    format!(
        "ERROR: <input>:{line_no}:{}: undefined field '{}'\n | {line}\n | {}^",
        col + 1,
        u.field,
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
}
