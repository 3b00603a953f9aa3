//! Operations on objects guided by their type ([`Ty`]): the field set of an
//! object, the comparison of two objects, merging an applied configuration
//! into a live object, and removing the items of a set (upstream's
//! `structured-merge-diff/typed`).

use serde_json::{Map, Value};

use super::fieldpath::{canonical, Path, PathElement, Set};
use super::typeinfo::{ListType, Ty};

/// What changed between two objects. No path is in more than one set.
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

/// The path element of a list item. A list-map item without a key field
/// gets the field's schema default, upstream's defaulted `protocol: TCP`,
/// or no value.
fn item_pe(item: &Value, lt: &ListType, ity: Ty<'_>, index: usize) -> PathElement {
    match lt {
        ListType::Atomic => PathElement::Index(index),
        ListType::Set => PathElement::Value(canonical(item)),
        ListType::Map(keys) => {
            let Value::Object(m) = item else {
                return PathElement::Index(index);
            };
            let mut fields = Vec::new();
            for k in keys {
                match m.get(k) {
                    Some(v) => fields.push((k.clone(), canonical(v))),
                    None => {
                        let default = match ity {
                            Ty::OpenApi(..) | Ty::Structural(_) => key_default(ity, k),
                            _ => None,
                        };
                        if let Some(d) = default {
                            fields.push((k.clone(), canonical(&d)));
                        }
                    }
                }
            }
            fields.sort();
            PathElement::Key(fields)
        }
    }
}

fn key_default(ity: Ty<'_>, key: &str) -> Option<Value> {
    match ity.field(key, false).0 {
        Ty::Structural(s) => s.default.clone(),
        Ty::OpenApi(s, _) => match s.get("default") {
            Some(d) => Some(d.clone()),
            None if key == "protocol" => Some(Value::String("TCP".into())),
            None => None,
        },
        _ => None,
    }
}

/// The set of fields an object (an applied configuration) sets: leaves,
/// atomic maps and lists, list items, empty or null maps, and elements of
/// free-form maps.
pub fn to_field_set(v: &Value, ty: Ty<'_>) -> Set {
    let mut set = Set::new();
    fs_walk(v, ty, &mut Vec::new(), &mut set);
    set
}

fn fs_walk(v: &Value, ty: Ty<'_>, path: &mut Path, set: &mut Set) {
    match v {
        Value::Object(m) => {
            if ty.map_atomic() && !path.is_empty() {
                set.insert(path);
                return;
            }
            let root = path.is_empty();
            for (k, cv) in m {
                let (cty, declared) = ty.field(k, root);
                path.push(PathElement::Field(k.clone()));
                fs_walk(cv, cty, path, set);
                let empty = cv.is_null() || cv.as_object().is_some_and(Map::is_empty);
                if empty || !declared {
                    set.insert(path);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            let lt = ty.list_type();
            if lt == ListType::Atomic {
                set.insert(path);
                return;
            }
            let ity = ty.item();
            for (i, item) in items.iter().enumerate() {
                path.push(item_pe(item, &lt, ity, i));
                set.insert(path);
                fs_walk(item, ity, path, set);
                path.pop();
            }
        }
        _ => set.insert(path),
    }
}

/// Compares `lhs` (old) with `rhs` (new) field by field as `ty` types them, leaving out
/// `metadata.managedFields` (no manager owns it), so callers need not copy
/// the objects without it.
pub fn compare(lhs: &Value, rhs: &Value, ty: Ty<'_>) -> Comparison {
    let mut c = Comparison::default();
    cmp_walk(Some(lhs), Some(rhs), ty, &mut Vec::new(), &mut c);
    c
}

fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

fn cmp_leaf(lhs: Option<&Value>, rhs: Option<&Value>, path: &Path, c: &mut Comparison) {
    match (lhs, rhs) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(l), Some(r)) if l != r => c.modified.insert(path),
        _ => {}
    }
}

fn cmp_walk(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    ty: Ty<'_>,
    path: &mut Path,
    c: &mut Comparison,
) {
    let obj = |v: Option<&Value>| matches!(v, None | Some(Value::Null) | Some(Value::Object(_)));
    let arr = |v: Option<&Value>| matches!(v, None | Some(Value::Null) | Some(Value::Array(_)));
    let both_empty = is_empty_container(lhs) && is_empty_container(rhs);
    let empty_map = Map::new();
    if obj(lhs) && obj(rhs) && !(ty.map_atomic() && !path.is_empty()) && !both_empty {
        let l = lhs.and_then(Value::as_object).unwrap_or(&empty_map);
        let r = rhs.and_then(Value::as_object).unwrap_or(&empty_map);
        let root = path.is_empty();
        let keys: Vec<&String> = l
            .keys()
            .chain(r.keys().filter(|k| !l.contains_key(*k)))
            .collect();
        // `metadata.managedFields` records ownership and is never owned.
        let in_metadata =
            path.len() == 1 && matches!(&path[0], PathElement::Field(f) if f == "metadata");
        for k in keys {
            if in_metadata && k == "managedFields" {
                continue;
            }
            let cty = ty.field(k, root).0;
            path.push(PathElement::Field(k.clone()));
            cmp_walk(l.get(k), r.get(k), cty, path, c);
            path.pop();
        }
    } else if arr(lhs) && arr(rhs) && ty.list_type() != ListType::Atomic && !both_empty {
        let lt = ty.list_type();
        let ity = ty.item();
        let empty = Vec::new();
        let l = lhs.and_then(Value::as_array).unwrap_or(&empty);
        let r = rhs.and_then(Value::as_array).unwrap_or(&empty);
        let lpes: Vec<PathElement> = l
            .iter()
            .enumerate()
            .map(|(i, v)| item_pe(v, &lt, ity, i))
            .collect();
        let rpes: Vec<PathElement> = r
            .iter()
            .enumerate()
            .map(|(i, v)| item_pe(v, &lt, ity, i))
            .collect();
        // First item of each path element: a lookup, not a scan, per item.
        let mut lfirst = std::collections::BTreeMap::new();
        for (i, p) in lpes.iter().enumerate() {
            lfirst.entry(p).or_insert(i);
        }
        let mut seen = std::collections::BTreeSet::new();
        for (pe, rv) in rpes.iter().zip(r) {
            if !seen.insert(pe.clone()) {
                continue;
            }
            let lv = lfirst.get(pe).map(|&i| &l[i]);
            path.push(pe.clone());
            cmp_walk(lv, Some(rv), ity, path, c);
            path.pop();
        }
        for (pe, lv) in lpes.iter().zip(l) {
            if !seen.insert(pe.clone()) {
                continue;
            }
            path.push(pe.clone());
            cmp_walk(Some(lv), None, ity, path, c);
            path.pop();
        }
    } else {
        cmp_leaf(lhs, rhs, path, c);
        return;
    }
    match (lhs, rhs) {
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        _ => {}
    }
}

/// Merges an applied configuration `rhs` into the live object `lhs`: maps
/// field by field, list-maps and sets item by item (live order, new items
/// after), everything else replaced by the configuration.
pub fn merge(lhs: &Value, rhs: &Value, ty: Ty<'_>) -> Value {
    merge_at(lhs, rhs, ty, true)
}

fn merge_at(lhs: &Value, rhs: &Value, ty: Ty<'_>, root: bool) -> Value {
    match (lhs, rhs) {
        (Value::Object(l), Value::Object(r)) if root || !ty.map_atomic() => {
            let mut out = l.clone();
            for (k, rv) in r {
                let merged = match l.get(k) {
                    Some(lv) => merge_at(lv, rv, ty.field(k, root).0, false),
                    None => rv.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(r)) if ty.list_type() != ListType::Atomic => {
            let lt = ty.list_type();
            let ity = ty.item();
            let rpes: Vec<PathElement> = r
                .iter()
                .enumerate()
                .map(|(i, v)| item_pe(v, &lt, ity, i))
                .collect();
            let mut rfirst = std::collections::BTreeMap::new();
            for (j, p) in rpes.iter().enumerate() {
                rfirst.entry(p).or_insert(j);
            }
            let mut used = vec![false; r.len()];
            let mut out = Vec::with_capacity(l.len() + r.len());
            for (i, lv) in l.iter().enumerate() {
                let pe = item_pe(lv, &lt, ity, i);
                match rfirst.get(&pe).copied() {
                    Some(j) => {
                        used[j] = true;
                        out.push(merge_at(lv, &r[j], ity, false));
                    }
                    None => out.push(lv.clone()),
                }
            }
            let mut added = std::collections::BTreeSet::new();
            for (j, rv) in r.iter().enumerate() {
                if !used[j] && added.insert(rpes[j].clone()) {
                    out.push(rv.clone());
                }
            }
            Value::Array(out)
        }
        _ => rhs.clone(),
    }
}

/// Removes from `v` every item whose path is a member of `set`.
pub fn remove_items(v: &mut Value, set: &Set, ty: Ty<'_>) {
    remove_at(v, set, ty, true)
}

fn remove_at(v: &mut Value, set: &Set, ty: Ty<'_>, root: bool) {
    match v {
        Value::Object(m) => {
            if ty.map_atomic() && !root {
                return;
            }
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let pe = PathElement::Field(k.clone());
                if set.has_member(&pe) {
                    m.remove(&k);
                } else if let (Some(child), Some(cv)) = (set.child(&pe), m.get_mut(&k)) {
                    remove_at(cv, child, ty.field(&k, root).0, false);
                }
            }
        }
        Value::Array(items) => {
            let lt = ty.list_type();
            if lt == ListType::Atomic {
                return;
            }
            let ity = ty.item();
            let old = std::mem::take(items);
            for (i, mut item) in old.into_iter().enumerate() {
                let pe = item_pe(&item, &lt, ity, i);
                if set.has_member(&pe) {
                    continue;
                }
                if let Some(child) = set.child(&pe) {
                    remove_at(&mut item, child, ity, false);
                }
                items.push(item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::fieldpath::path_string;
    use super::*;
    use crate::schema::Schema;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::compile(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "items": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "v": {"type": "string"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}}
            }}
        }}))
    }

    fn paths(s: &Set) -> Vec<String> {
        s.paths().iter().map(|p| path_string(p)).collect()
    }

    #[test]
    fn field_set_of_config() {
        let s = schema();
        let cfg = json!({"apiVersion": "x/v1", "kind": "K",
            "metadata": {"name": "a", "labels": {"l": "v"}},
            "spec": {"replicas": 1, "items": [{"name": "a", "v": "1"}], "tags": ["x"], "args": ["q"]}});
        let set = to_field_set(&cfg, Ty::Structural(&s));
        assert_eq!(
            paths(&set),
            [
                ".apiVersion",
                ".kind",
                ".metadata.labels.l",
                ".metadata.name",
                ".spec.args",
                ".spec.items[name=\"a\"]",
                ".spec.items[name=\"a\"].name",
                ".spec.items[name=\"a\"].v",
                ".spec.replicas",
                ".spec.tags[=\"x\"]",
            ]
        );
    }

    #[test]
    fn comparison() {
        let s = schema();
        let old = json!({"metadata": {"labels": {"a": "1"}},
            "spec": {"replicas": 1, "items": [{"name": "a", "v": "1"}, {"name": "b"}]}});
        let new = json!({"metadata": {"labels": {"a": "1", "b": "2"}},
            "spec": {"replicas": 2, "items": [{"name": "a", "v": "2"}], "tags": ["t"]}});
        let c = compare(&old, &new, Ty::Structural(&s));
        assert_eq!(
            paths(&c.added),
            [".metadata.labels.b", ".spec.tags", ".spec.tags[=\"t\"]"]
        );
        assert_eq!(
            paths(&c.modified),
            [".spec.items[name=\"a\"].v", ".spec.replicas"]
        );
        assert_eq!(
            paths(&c.removed),
            [".spec.items[name=\"b\"]", ".spec.items[name=\"b\"].name"]
        );
    }

    #[test]
    fn merging_by_list_type() {
        let s = schema();
        let live = json!({"spec": {"replicas": 1, "items": [{"name": "a", "v": "1"}, {"name": "b"}],
            "tags": ["x"], "args": ["1", "2"]}});
        let cfg = json!({"spec": {"items": [{"name": "c"}, {"name": "a", "v": "9"}],
            "tags": ["y", "x"], "args": ["3"]}});
        let m = merge(&live, &cfg, Ty::Structural(&s));
        assert_eq!(
            m,
            json!({"spec": {"replicas": 1,
                "items": [{"name": "a", "v": "9"}, {"name": "b"}, {"name": "c"}],
                "tags": ["x", "y"], "args": ["3"]}})
        );
    }

    #[test]
    fn removing_items() {
        let s = schema();
        let mut v = json!({"metadata": {"labels": {"a": "1", "b": "2"}},
            "spec": {"replicas": 1, "items": [{"name": "a"}, {"name": "b"}]}});
        let mut set = Set::new();
        set.insert(&super::super::fieldpath::fields(&[
            "metadata", "labels", "a",
        ]));
        set.insert(&[
            PathElement::Field("spec".into()),
            PathElement::Field("items".into()),
            PathElement::Key(vec![("name".into(), "\"b\"".into())]),
        ]);
        remove_items(&mut v, &set, Ty::Structural(&s));
        assert_eq!(
            v,
            json!({"metadata": {"labels": {"b": "2"}}, "spec": {"replicas": 1, "items": [{"name": "a"}]}})
        );
    }

    #[test]
    fn atomic_and_deduced() {
        let cfg = json!({"spec": {"sel": {"a": 1}, "list": [1, 2]}});
        let set = to_field_set(&cfg, Ty::Deduced);
        assert_eq!(
            paths(&set),
            [".spec", ".spec.list", ".spec.sel", ".spec.sel.a"]
        );
    }
}
