//! Strategic merge patch (`application/strategic-merge-patch+json`), as
//! kubectl apply/edit/patch send it for built-in kinds, driven by the
//! `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` of the
//! OpenAPI schemas (upstream's `k8s.io/apimachinery/pkg/util/strategicpatch`).
//!
//! Supported: map merge with `null` deletion; lists merged by key
//! (`patchStrategy: merge`) including `$patch: delete` items; merged
//! primitive lists (union); `$patch: replace` and `$patch: delete` on maps
//! and lists; `$retainKeys`; `$setElementOrder/<field>`;
//! `$deleteFromPrimitiveList/<field>`. Other lists are replaced.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

/// Where schemas are looked up.
pub struct Schemas<'a> {
    pub components: &'a Map<String, Value>,
}

impl<'a> Schemas<'a> {
    fn resolve(&self, schema: Option<&'a Value>) -> Option<&'a Value> {
        schema.map(|s| crate::schema::openapi::resolve(s, self.components))
    }

    /// The (unresolved) schema of property `name` of the map schema.
    fn property(&self, schema: Option<&'a Value>, name: &str) -> Option<&'a Value> {
        let s = self.resolve(schema)?;
        s.get("properties")
            .and_then(|p| p.get(name))
            .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
    }
}

/// Applies `patch` to `original` with strategic-merge semantics; `root` is
/// the kind's schema (e.g. `{"$ref": "#/components/schemas/io.k8s.api.apps.v1.Deployment"}`).
pub fn apply(
    original: &Value,
    patch: &Value,
    root: &Value,
    components: &Map<String, Value>,
) -> Result<Value, String> {
    let schemas = Schemas { components };
    let mut out = original.clone();
    merge_map(&mut out, patch, Some(root), &schemas)?;
    Ok(out)
}

fn merge_map(
    target: &mut Value,
    patch: &Value,
    schema: Option<&Value>,
    s: &Schemas<'_>,
) -> Result<(), String> {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    match p.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut m = p.clone();
            m.remove("$patch");
            *target = Value::Object(m);
            return Ok(());
        }
        Some("delete") => {
            *target = Value::Null;
            return Ok(());
        }
        Some(other) if other != "merge" => return Err(format!("unknown patch type: {other}")),
        _ => {}
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        return Ok(());
    };
    // Directives first collected, then applied after the fields.
    let mut orders: Vec<(String, Vec<Value>)> = Vec::new();
    for (k, v) in p {
        if k == "$patch" || k == "$retainKeys" {
            continue;
        }
        if let Some(field) = k.strip_prefix("$setElementOrder/") {
            orders.push((field.to_string(), v.as_array().cloned().unwrap_or_default()));
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let remove: HashSet<String> = v.iter_items().map(identity).collect();
            if let Some(Value::Array(a)) = t.get_mut(field) {
                a.retain(|x| !remove.contains(&identity(x)));
            }
            continue;
        }
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        let prop = s.property(schema, k);
        let strategy = s
            .resolve(prop)
            .and_then(|r| r.get("x-kubernetes-patch-strategy"))
            .or_else(|| prop.and_then(|p| p.get("x-kubernetes-patch-strategy")))
            .and_then(Value::as_str)
            .unwrap_or("");
        let merge_key = prop
            .and_then(|p| p.get("x-kubernetes-patch-merge-key"))
            .and_then(Value::as_str);
        match v {
            Value::Object(_) => {
                let entry = t.entry(k.clone()).or_insert(Value::Null);
                merge_map(entry, v, prop, s)?;
                if entry.is_null() {
                    t.remove(k);
                }
            }
            Value::Array(items) if strategy.split(',').any(|x| x == "merge") => {
                let item_schema = s.resolve(prop).and_then(|r| r.get("items"));
                let entry = t
                    .entry(k.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !entry.is_array() {
                    *entry = Value::Array(Vec::new());
                }
                merge_list(entry, items, merge_key, item_schema, s)?;
            }
            _ => {
                t.insert(k.clone(), strip_directives(v));
            }
        }
    }
    if let Some(Value::Array(keep)) = p.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        t.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (field, order) in orders {
        let merge_key = s
            .property(schema, &field)
            .and_then(|p| p.get("x-kubernetes-patch-merge-key"))
            .and_then(Value::as_str);
        if let Some(Value::Array(list)) = t.get_mut(&field) {
            reorder(list, &order, merge_key);
        }
    }
    Ok(())
}

fn key_of<'v>(item: &'v Value, key: Option<&str>) -> Option<&'v Value> {
    match key {
        Some(k) => item.get(k),
        None => Some(item),
    }
}

/// The items of an array value (none for anything else).
trait ArrayItems {
    fn iter_items(&self) -> std::slice::Iter<'_, Value>;
}

impl ArrayItems for Value {
    fn iter_items(&self) -> std::slice::Iter<'_, Value> {
        match self {
            Value::Array(a) => a.iter(),
            _ => [].iter(),
        }
    }
}

/// A string equal for exactly the values `==` finds equal (object keys
/// sorted, as map equality ignores their order): lists are matched through
/// hash maps of these, so merging two lists costs their lengths, not their
/// product.
fn identity(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&m[k.as_str()], out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for x in a {
                    write(x, out);
                    out.push(',');
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn merge_list(
    target: &mut Value,
    patch: &[Value],
    merge_key: Option<&str>,
    item_schema: Option<&Value>,
    s: &Schemas<'_>,
) -> Result<(), String> {
    let Value::Array(list) = target else {
        return Ok(());
    };
    // `$patch: replace` as an item replaces the whole list.
    if patch
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        *list = patch
            .iter()
            .filter(|i| i.get("$patch").is_none())
            .map(strip_directives)
            .collect();
        return Ok(());
    }
    // Items present (primitive union) and the live items of each merge key,
    // kept up to date as items are added and deleted.
    let mut present: Option<HashSet<String>> = None;
    let mut by_key: Option<HashMap<String, VecDeque<usize>>> = None;
    let mut deleted = vec![false; list.len()];
    for item in patch {
        if !item.is_object() || merge_key.is_none() {
            // Primitive (or keyless) merged list: union.
            let present = present.get_or_insert_with(|| list.iter().map(identity).collect());
            if present.insert(identity(item)) {
                list.push(strip_directives(item));
                deleted.push(false);
            }
            continue;
        }
        // Every live position of each key, first first.
        let by_key = by_key.get_or_insert_with(|| {
            let mut m: HashMap<String, VecDeque<usize>> = HashMap::with_capacity(list.len());
            for (i, x) in list.iter().enumerate() {
                if let Some(k) = key_of(x, merge_key) {
                    m.entry(identity(k)).or_default().push_back(i);
                }
            }
            m
        });
        let key = key_of(item, merge_key).map(identity);
        let positions = key.as_ref().and_then(|k| by_key.get_mut(k));
        let pos = positions.as_ref().and_then(|p| p.front().copied());
        if item.get("$patch").and_then(Value::as_str) == Some("delete") {
            if let (Some(i), Some(positions)) = (pos, positions) {
                deleted[i] = true;
                positions.pop_front();
            }
            continue;
        }
        match pos {
            Some(i) => merge_map(&mut list[i], item, item_schema, s)?,
            None => {
                if let Some(k) = key {
                    by_key.entry(k).or_default().push_back(list.len());
                }
                list.push(strip_directives(item));
                deleted.push(false);
            }
        }
    }
    if deleted.iter().any(|d| *d) {
        let mut flags = deleted.into_iter();
        list.retain(|_| !flags.next().unwrap_or(false));
    }
    Ok(())
}

/// Orders `list` as `order` names its items (by merge key, or by value for
/// primitives); items not named keep their relative order after them, as
/// upstream places server-only items.
fn reorder(list: &mut Vec<Value>, order: &[Value], merge_key: Option<&str>) {
    let mut ranks: HashMap<String, usize> = HashMap::with_capacity(order.len());
    for (r, o) in order.iter().enumerate() {
        if let Some(k) = key_of(o, merge_key) {
            ranks.entry(identity(k)).or_insert(r);
        }
    }
    let rank = |item: &Value| {
        key_of(item, merge_key)
            .and_then(|k| ranks.get(&identity(k)).copied())
            .unwrap_or(usize::MAX)
    };
    let mut indexed: Vec<(usize, usize, Value)> = list
        .drain(..)
        .enumerate()
        .map(|(i, v)| (rank(&v), i, v))
        .collect();
    indexed.sort_by_key(|(r, i, _)| (*r, *i));
    list.extend(indexed.into_iter().map(|(_, _, v)| v));
}

/// A patch value without SMP directives, for values inserted as they are.
fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(super) fn components() -> Map<String, Value> {
        serde_json::from_value(json!({
            "D": {"type": "object", "properties": {
                "metadata": {"$ref": "#/components/schemas/M"},
                "spec": {"allOf": [{"$ref": "#/components/schemas/S"}]}}},
            "M": {"type": "object", "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"}}},
            "S": {"type": "object", "properties": {
                "containers": {"type": "array", "items": {"$ref": "#/components/schemas/C"},
                    "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"},
                "args": {"type": "array", "items": {"type": "string"}}}},
            "C": {"type": "object", "properties": {
                "name": {"type": "string"}, "image": {"type": "string"},
                "ports": {"type": "array", "items": {"type": "object"},
                    "x-kubernetes-patch-merge-key": "containerPort", "x-kubernetes-patch-strategy": "merge"}}}
        }))
        .unwrap()
    }

    #[test]
    fn kubectl_apply_patches() {
        let root = json!({"$ref": "#/components/schemas/D"});
        let orig = json!({"metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
            "spec": {"args": ["1", "2"], "containers": [
                {"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}]},
                {"name": "side", "image": "busybox"}]}});
        let patch = json!({"metadata": {"labels": {"b": null, "c": "3"}, "finalizers": ["y"]},
            "spec": {"args": ["3"],
                "$setElementOrder/containers": [{"name": "side"}, {"name": "app"}, {"name": "new"}],
                "containers": [{"name": "app", "image": "nginx:2"}, {"name": "new", "image": "x"}]}});
        let out = apply(&orig, &patch, &root, &components()).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"a": "1", "c": "3"}));
        assert_eq!(out["metadata"]["finalizers"], json!(["x", "y"]));
        assert_eq!(out["spec"]["args"], json!(["3"]));
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "side", "image": "busybox"},
                   {"name": "app", "image": "nginx:2", "ports": [{"containerPort": 80}]},
                   {"name": "new", "image": "x"}])
        );
        assert!(out["spec"].get("$setElementOrder/containers").is_none());

        let del = json!({"spec": {"containers": [{"name": "side", "$patch": "delete"}]}});
        let out = apply(&orig, &del, &root, &components()).unwrap();
        assert_eq!(out["spec"]["containers"].as_array().unwrap().len(), 1);

        let rep = json!({"metadata": {"labels": {"$patch": "replace", "z": "9"}}});
        let out = apply(&orig, &rep, &root, &components()).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"z": "9"}));

        let dfl = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}});
        let out = apply(&orig, &dfl, &root, &components()).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!([]));
    }
}

#[cfg(test)]
mod scale_tests {
    use super::*;
    use serde_json::json;

    /// 10,000 keyed items patched into 10,000 (half new, every other one
    /// deleted, all reordered) and a 10,000-item primitive union.
    pub(super) fn big_patch(n: usize) -> (Value, Value) {
        let containers: Vec<Value> = (0..n)
            .map(|i| json!({"name": format!("c{i}"), "image": "a"}))
            .collect();
        let finalizers: Vec<Value> = (0..n).map(|i| json!(format!("f{i}"))).collect();
        let orig = json!({"metadata": {"finalizers": finalizers},
            "spec": {"containers": containers}});
        let patch_items: Vec<Value> = (n / 2..n + n / 2)
            .map(|i| {
                if i % 2 == 0 && i < n {
                    json!({"name": format!("c{i}"), "$patch": "delete"})
                } else {
                    json!({"name": format!("c{i}"), "image": "b"})
                }
            })
            .collect();
        let order: Vec<Value> = (0..n + n / 2)
            .rev()
            .map(|i| json!({"name": format!("c{i}")}))
            .collect();
        let more: Vec<Value> = (n / 2..n + n / 2).map(|i| json!(format!("f{i}"))).collect();
        let gone: Vec<Value> = (0..n / 4).map(|i| json!(format!("f{i}"))).collect();
        let patch = json!({"metadata": {"finalizers": more, "$deleteFromPrimitiveList/finalizers": gone},
            "spec": {"containers": patch_items, "$setElementOrder/containers": order}});
        (orig, patch)
    }

    #[test]
    fn identity_matches_equality() {
        let a = json!({"x": 1, "y": [1, "2", {"b": null, "a": true}]});
        let b = json!({"y": [1, "2", {"a": true, "b": null}], "x": 1});
        assert_eq!(a, b);
        assert_eq!(identity(&a), identity(&b));
        assert_ne!(identity(&json!("1")), identity(&json!(1)));
        assert_ne!(identity(&json!(["a,b"])), identity(&json!(["a", "b"])));
        assert_ne!(identity(&json!({"a:": 1})), identity(&json!({"a": 1})));
    }

    #[test]
    fn duplicate_keys_merge_into_the_first_live_item() {
        let root = json!({"$ref": "#/components/schemas/D"});
        let orig = json!({"spec": {"containers": [
            {"name": "a", "image": "1"}, {"name": "a", "image": "2"}]}});
        let patch = json!({"spec": {"containers": [
            {"name": "a", "$patch": "delete"}, {"name": "a", "image": "3"}]}});
        let out = apply(&orig, &patch, &root, &super::tests::components()).unwrap();
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "a", "image": "3"}])
        );
    }

    #[test]
    fn big_list_patches_merge_correctly() {
        let (orig, patch) = big_patch(1000);
        let root = json!({"$ref": "#/components/schemas/D"});
        let out = apply(&orig, &patch, &root, &super::tests::components()).unwrap();
        let cs = out["spec"]["containers"].as_array().unwrap();
        // 0..1500, minus the even ones in 500..1000 (250 deleted).
        assert_eq!(cs.len(), 1250);
        assert_eq!(cs[0], json!({"name": "c1499", "image": "b"}));
        assert_eq!(cs[cs.len() - 1], json!({"name": "c0", "image": "a"}));
        assert!(!cs.iter().any(|c| c["name"] == "c500"));
        assert!(cs
            .iter()
            .any(|c| c == &json!({"name": "c501", "image": "b"})));
        let fs = out["metadata"]["finalizers"].as_array().unwrap();
        assert_eq!(fs.len(), 1500 - 250);
        assert_eq!(fs[0], "f250");
    }

    #[test]
    #[ignore = "a measurement: cargo test -p kube-apiserver-lib --release -- --ignored --nocapture ten_thousand"]
    fn ten_thousand_item_patch_cost() {
        let (orig, patch) = big_patch(10_000);
        let root = json!({"$ref": "#/components/schemas/D"});
        let start = std::time::Instant::now();
        let out = apply(&orig, &patch, &root, &super::tests::components()).unwrap();
        eprintln!(
            "10,000-item strategic merge patch: {:?} ({} items)",
            start.elapsed(),
            out["spec"]["containers"].as_array().map_or(0, Vec::len)
        );
    }
}
