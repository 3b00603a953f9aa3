//! Server-side printing: `Table` and `PartialObjectMetadata` responses.
//!
//! kubectl asks for `as=Table;g=meta.k8s.io;v=v1` and prints the columns it
//! gets. Each resource declares its columns after `Name`; without any, the
//! table has upstream's default `Name` and `Created At`.

use serde_json::{json, Map, Value};

use super::resource::ResourceDef;

/// How a column's cell is computed from the object.
#[derive(Clone, Copy)]
pub enum Cell {
    /// The value at a dotted JSON path, as a string (empty when absent).
    Path(&'static str),
    /// The number of keys of the object (or items of the array) at a path.
    Count(&'static str),
    /// Time since `metadata.creationTimestamp`, as kubectl prints ages (`5m`).
    Age,
    /// A custom function.
    Func(fn(&Value) -> Value),
}

/// A Table column.
#[derive(Clone)]
pub struct Column {
    pub name: &'static str,
    pub type_: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    /// 0: shown by `kubectl get`; 1: only with `-o wide`.
    pub priority: i32,
    pub cell: Cell,
}

impl Column {
    /// A string column at a JSON path.
    pub fn path(name: &'static str, path: &'static str) -> Self {
        Column {
            name,
            type_: "string",
            format: "",
            description: "",
            priority: 0,
            cell: Cell::Path(path),
        }
    }

    /// An integer column counting the entries at a JSON path.
    pub fn count(name: &'static str, path: &'static str) -> Self {
        Column {
            name,
            type_: "integer",
            format: "",
            description: "",
            priority: 0,
            cell: Cell::Count(path),
        }
    }

    /// The `Age` column.
    pub fn age() -> Self {
        Column {
            name: "Age",
            type_: "string",
            format: "",
            description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
            priority: 0,
            cell: Cell::Age,
        }
    }

    /// A column computed by a function.
    pub fn func(name: &'static str, type_: &'static str, f: fn(&Value) -> Value) -> Self {
        Column {
            name,
            type_,
            format: "",
            description: "",
            priority: 0,
            cell: Cell::Func(f),
        }
    }

    /// Shown only with `-o wide`.
    pub fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }
}

/// Computes a runtime column's cell from an object.
pub type CellFn = std::sync::Arc<dyn Fn(&Value) -> Value + Send + Sync>;

/// A Table column declared at runtime (a CRD's `additionalPrinterColumns`).
#[derive(Clone)]
pub struct DynamicColumn {
    pub name: String,
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
    pub cell: CellFn,
}

/// The value at a dotted path (`spec.nodeName`).
pub fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |v, k| v.get(k))
}

/// What `rows[].object` holds (`includeObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

fn column_definitions(def: &ResourceDef) -> Vec<Value> {
    let name = json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names", "priority": 0});
    let mut cols = if def.name_column { vec![name] } else { vec![] };
    if def.columns.is_empty() && def.dynamic_columns.is_empty() {
        cols.push(json!({"name": "Created At", "type": "date", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.", "priority": 0}));
    }
    for c in &def.columns {
        cols.push(json!({"name": c.name, "type": c.type_, "format": c.format, "description": c.description, "priority": c.priority}));
    }
    for c in &def.dynamic_columns {
        cols.push(json!({"name": c.name, "type": c.type_, "format": c.format, "description": c.description, "priority": c.priority}));
    }
    cols
}

fn cells(def: &ResourceDef, obj: &Value, now: jiff::Timestamp) -> Vec<Value> {
    // Another version of a stored resource prints its storage form.
    let stored;
    let obj = match def.conversion.as_ref().map(|c| (c.to_storage)(obj)) {
        Some(Ok(s)) => {
            stored = s;
            &stored
        }
        _ => obj,
    };
    let mut cells = Vec::with_capacity(def.columns.len() + 1);
    if def.name_column {
        cells.push(
            lookup(obj, "metadata.name")
                .cloned()
                .unwrap_or(Value::String(String::new())),
        );
    }
    if def.columns.is_empty() && def.dynamic_columns.is_empty() {
        cells.push(
            lookup(obj, "metadata.creationTimestamp")
                .cloned()
                .unwrap_or(Value::Null),
        );
    }
    for c in &def.columns {
        cells.push(match c.cell {
            Cell::Path(p) => match lookup(obj, p) {
                Some(Value::String(s)) => Value::String(s.clone()),
                Some(Value::Null) | None => Value::String(String::new()),
                Some(other) => Value::String(other.to_string()),
            },
            Cell::Count(p) => json!(match lookup(obj, p) {
                Some(Value::Object(m)) => m.len(),
                Some(Value::Array(a)) => a.len(),
                _ => 0,
            }),
            Cell::Age => Value::String(age(obj, now)),
            Cell::Func(f) => f(obj),
        });
    }
    for c in &def.dynamic_columns {
        cells.push((c.cell)(obj));
    }
    cells
}

/// kubectl's short human duration since creation (`45s`, `5m`, `3h`, `2d`).
pub fn age(obj: &Value, now: jiff::Timestamp) -> String {
    let Some(ts) = lookup(obj, "metadata.creationTimestamp").and_then(Value::as_str) else {
        return "<unknown>".into();
    };
    let Ok(created) = ts.parse::<jiff::Timestamp>() else {
        return "<invalid>".into();
    };
    human_duration(now.as_second() - created.as_second())
}

/// Formats seconds as kubectl's `HumanDuration` does.
pub fn human_duration(secs: i64) -> String {
    if secs < 0 {
        return "<invalid>".into();
    }
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86400);
    if secs < 120 {
        format!("{secs}s")
    } else if m < 10 {
        let s = secs % 60;
        if s == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{s}s")
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        let rm = m % 60;
        if rm == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{rm}m")
        }
    } else if h < 48 {
        format!("{h}h")
    } else if d < 8 {
        let rh = h % 24;
        if rh == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{rh}h")
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else if d < 365 * 8 {
        let y = d / 365;
        let rd = d % 365;
        if rd == 0 {
            format!("{y}y")
        } else {
            format!("{y}y{rd}d")
        }
    } else {
        format!("{}y", d / 365)
    }
}

/// `PartialObjectMetadata` of an object.
pub fn partial_object_metadata(obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| Value::Object(Map::new())),
    })
}

/// A Table of `objects`; `headers` false omits the column definitions (later
/// watch events).
pub fn table(
    def: &ResourceDef,
    objects: &[Value],
    list_meta: Value,
    include: IncludeObject,
    headers: bool,
) -> Value {
    let now = jiff::Timestamp::now();
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array(cells(def, o, now)));
            match include {
                IncludeObject::None => {}
                IncludeObject::Metadata => {
                    row.insert("object".into(), partial_object_metadata(o));
                }
                IncludeObject::Object => {
                    row.insert("object".into(), o.clone());
                }
            }
            Value::Object(row)
        })
        .collect();
    let mut t = Map::new();
    t.insert("kind".into(), json!("Table"));
    t.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
    t.insert("metadata".into(), list_meta);
    if headers {
        t.insert(
            "columnDefinitions".into(),
            Value::Array(column_definitions(def)),
        );
    }
    t.insert("rows".into(), Value::Array(rows));
    Value::Object(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(130), "2m10s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(10 * 3600), "10h");
        assert_eq!(human_duration(3 * 86400), "3d");
    }
}
