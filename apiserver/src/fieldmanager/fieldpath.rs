//! Field paths and sets of them, and their `FieldsV1` encoding
//! (upstream's `sigs.k8s.io/structured-merge-diff/fieldpath`).
//!
//! A path is a sequence of [`PathElement`]s: a map field (`f:<name>`), a
//! list item by its key fields (`k:{"name":"c"}`), a set item by value
//! (`v:"x"`), or a list item by index (`i:3`, atomic-free lists without
//! keys). A [`Set`] is a tree: `members` are the paths ending at this node,
//! `children` the subtrees; `FieldsV1` writes a node that is both a member
//! and a parent with a `"."` entry.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One step of a path. The derived order (fields, then keys, values,
/// indices) is upstream's.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathElement {
    /// A field of a map: `f:<name>`.
    Field(String),
    /// An item of a list-map by its key fields, sorted by name; values are
    /// compact JSON.
    Key(Vec<(String, String)>),
    /// An item of a set, as compact JSON.
    Value(String),
    /// An item of a list by position.
    Index(usize),
}

/// A path from the root of an object.
pub type Path = Vec<PathElement>;

impl PathElement {
    /// The `FieldsV1` key of this element.
    pub fn to_key(&self) -> String {
        match self {
            PathElement::Field(n) => format!("f:{n}"),
            PathElement::Key(fields) => format!("k:{}", key_json(fields)),
            PathElement::Value(v) => format!("v:{v}"),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `FieldsV1` key.
    pub fn from_key(key: &str) -> Result<Self, String> {
        let (prefix, rest) = key
            .split_once(':')
            .ok_or_else(|| format!("invalid path element {key:?}"))?;
        match prefix {
            "f" => Ok(PathElement::Field(rest.to_string())),
            "v" => {
                let v: Value = serde_json::from_str(rest)
                    .map_err(|e| format!("invalid value in path element {key:?}: {e}"))?;
                Ok(PathElement::Value(canonical(&v)))
            }
            "i" => rest
                .parse()
                .map(PathElement::Index)
                .map_err(|_| format!("invalid index in path element {key:?}")),
            "k" => {
                let v: Value = serde_json::from_str(rest)
                    .map_err(|e| format!("invalid key in path element {key:?}: {e}"))?;
                let Value::Object(m) = v else {
                    return Err(format!("invalid key in path element {key:?}"));
                };
                let mut fields: Vec<(String, String)> =
                    m.iter().map(|(k, v)| (k.clone(), canonical(v))).collect();
                fields.sort();
                Ok(PathElement::Key(fields))
            }
            _ => Err(format!("invalid path element {key:?}")),
        }
    }

    /// Upstream's human form, used in conflict messages: `.name`,
    /// `[name="c",port=80]`, `[="x"]`, `[3]`.
    pub fn display(&self) -> String {
        match self {
            PathElement::Field(n) => format!(".{n}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("[{}]", parts.join(","))
            }
            PathElement::Value(v) => format!("[={v}]"),
            PathElement::Index(i) => format!("[{i}]"),
        }
    }
}

/// Compact JSON of a value, as used inside path elements.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

fn key_json(fields: &[(String, String)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// The human form of a whole path (`.spec.containers[name="c"].image`).
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(PathElement::display).collect()
}

/// A set of paths, as a tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Self {
        Set::default()
    }

    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds a path (the empty path, the root, is never a member).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether `pe` is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// The subtree under `pe`, if any.
    pub fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe)
    }

    /// Paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(c),
                None => c.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if let Some(o) = other.children.get(pe) {
                let i = c.intersection(o);
                if !i.is_empty() {
                    out.children.insert(pe.clone(), i);
                }
            }
        }
        out
    }

    /// Paths of `self` that are not in `other` (path by path: a member of
    /// `other` does not remove the paths below it).
    pub fn difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            let d = match other.children.get(pe) {
                Some(o) => c.difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(pe.clone(), d);
            }
        }
        out
    }

    /// Paths of `self` that are neither in `other` nor below one of its
    /// members.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.difference(&other.members).cloned().collect();
        for (pe, c) in &self.children {
            if other.members.contains(pe) {
                continue;
            }
            let d = match other.children.get(pe) {
                Some(o) => c.recursive_difference(o),
                None => c.clone(),
            };
            if !d.is_empty() {
                out.children.insert(pe.clone(), d);
            }
        }
        out
    }

    /// Adds every path of `other`, taking its nodes instead of copying
    /// them: `a.absorb(b)` leaves `a` equal to `a.union(&b)`.
    pub fn absorb(&mut self, other: Set) {
        self.members.extend(other.members);
        for (pe, c) in other.children {
            match self.children.entry(pe) {
                std::collections::btree_map::Entry::Occupied(mut mine) => mine.get_mut().absorb(c),
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(c);
                }
            }
        }
    }

    /// Adds every path of `other` in place: `a.union_with(&b)` leaves `a`
    /// equal to `a.union(&b)`, copying only what `b` adds.
    pub fn union_with(&mut self, other: &Set) {
        self.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.union_with(c),
                None => {
                    self.children.insert(pe.clone(), c.clone());
                }
            }
        }
    }

    /// Removes the paths of `other` in place: `a.remove(&b)` leaves `a`
    /// equal to `a.difference(&b)` without rebuilding it.
    pub fn remove(&mut self, other: &Set) {
        for m in &other.members {
            self.members.remove(m);
        }
        self.children.retain(|pe, c| {
            if let Some(o) = other.children.get(pe) {
                c.remove(o);
            }
            !c.is_empty()
        });
    }

    /// Removes in place the paths of `other` and those below its members:
    /// `a.remove_recursive(&b)` leaves `a` equal to
    /// `a.recursive_difference(&b)`.
    pub fn remove_recursive(&mut self, other: &Set) {
        for m in &other.members {
            self.members.remove(m);
        }
        self.children.retain(|pe, c| {
            if other.members.contains(pe) {
                return false;
            }
            if let Some(o) = other.children.get(pe) {
                c.remove_recursive(o);
            }
            !c.is_empty()
        });
    }

    /// Every member path, in order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        let keys: BTreeSet<&PathElement> =
            self.members.iter().chain(self.children.keys()).collect();
        for pe in keys {
            prefix.push(pe.clone());
            if self.members.contains(pe) {
                out.push(prefix.clone());
            }
            if let Some(c) = self.children.get(pe) {
                c.collect(prefix, out);
            }
            prefix.pop();
        }
    }

    /// The `FieldsV1` JSON of the set.
    pub fn to_fields_v1(&self) -> Value {
        let keys: BTreeSet<&PathElement> =
            self.members.iter().chain(self.children.keys()).collect();
        let mut m = Map::new();
        for pe in keys {
            let v = match self.children.get(pe) {
                Some(c) => {
                    let mut inner = Map::new();
                    if self.members.contains(pe) {
                        inner.insert(".".into(), Value::Object(Map::new()));
                    }
                    if let Value::Object(cm) = c.to_fields_v1() {
                        inner.extend(cm);
                    }
                    Value::Object(inner)
                }
                None => Value::Object(Map::new()),
            };
            m.insert(pe.to_key(), v);
        }
        Value::Object(m)
    }

    /// Parses `FieldsV1` JSON.
    pub fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let Value::Object(m) = v else {
            return Err("FieldsV1 must be a JSON object".into());
        };
        let mut set = Set::new();
        for (k, child) in m {
            if k == "." {
                continue;
            }
            let pe = PathElement::from_key(k)?;
            let Value::Object(cm) = child else {
                return Err(format!("FieldsV1 entry {k:?} must be an object"));
            };
            if cm.is_empty() || cm.contains_key(".") {
                set.members.insert(pe.clone());
            }
            let sub = Set::from_fields_v1(child)?;
            if !sub.is_empty() {
                set.children.insert(pe, sub);
            }
        }
        Ok(set)
    }
}

/// A path built from dotted field names (`metadata.labels`).
pub fn fields(names: &[&str]) -> Path {
    names
        .iter()
        .map(|n| PathElement::Field(n.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(n: &str) -> PathElement {
        PathElement::Field(n.into())
    }

    #[test]
    fn fields_v1_round_trip() {
        let v = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}},
                "f:finalizers": {"v:\"a\"": {}},
                "f:replicas": {},
                "f:args": {"i:0": {}}
            }
        });
        let s = Set::from_fields_v1(&v).expect("parse");
        assert!(s.has(&[f("metadata"), f("labels")]));
        assert!(s.has(&[f("metadata"), f("labels"), f("app")]));
        assert!(!s.has(&[f("metadata")]));
        let key = PathElement::Key(vec![("name".into(), "\"nginx\"".into())]);
        assert!(s.has(&[f("spec"), f("containers"), key.clone()]));
        assert!(s.has(&[f("spec"), f("containers"), key, f("image")]));
        assert!(s.has(&[
            f("spec"),
            f("finalizers"),
            PathElement::Value("\"a\"".into())
        ]));
        assert!(s.has(&[f("spec"), f("args"), PathElement::Index(0)]));
        assert_eq!(Set::from_fields_v1(&s.to_fields_v1()).expect("again"), s);
        assert_eq!(s.to_fields_v1()["f:metadata"], v["f:metadata"]);
    }

    #[test]
    fn bad_fields_v1() {
        assert!(Set::from_fields_v1(&json!([])).is_err());
        assert!(Set::from_fields_v1(&json!({"x:y": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"k:[1]": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"i:z": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
    }

    #[test]
    fn set_algebra() {
        let mut a = Set::new();
        a.insert(&[f("spec"), f("replicas")]);
        a.insert(&[f("spec"), f("paused")]);
        a.insert(&[f("metadata"), f("labels"), f("x")]);
        let mut b = Set::new();
        b.insert(&[f("spec"), f("replicas")]);
        b.insert(&[f("metadata"), f("labels")]);
        let i = a.intersection(&b);
        assert_eq!(i.paths(), vec![vec![f("spec"), f("replicas")]]);
        let d = a.difference(&b);
        assert!(!d.has(&[f("spec"), f("replicas")]));
        assert!(d.has(&[f("metadata"), f("labels"), f("x")]));
        let rd = a.recursive_difference(&b);
        assert!(!rd.has(&[f("metadata"), f("labels"), f("x")]));
        assert!(rd.has(&[f("spec"), f("paused")]));
        let u = d.union(&b);
        assert!(u.has(&[f("spec"), f("replicas")]) && u.has(&[f("spec"), f("paused")]));
        assert!(a.difference(&a).is_empty());
    }

    /// The in-place operations equal the ones that build a new set, on
    /// sets that overlap at every depth (members that are also subtrees,
    /// subtrees only one side has, a member of one side above paths of
    /// the other).
    #[test]
    fn in_place_algebra_equals_the_copying_one() {
        let paths: Vec<Vec<PathElement>> = vec![
            vec![f("spec"), f("replicas")],
            vec![f("spec"), f("paused")],
            vec![f("spec")],
            vec![
                f("spec"),
                f("template"),
                f("metadata"),
                f("labels"),
                f("app"),
            ],
            vec![f("metadata"), f("labels")],
            vec![f("metadata"), f("labels"), f("x")],
            vec![f("metadata"), f("annotations"), f("y")],
            vec![f("data"), f("k")],
            vec![f("status")],
        ];
        // Every pair of subsets picked by bit masks over the paths.
        let subset = |mask: u32| {
            let mut s = Set::new();
            for (i, p) in paths.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    s.insert(p);
                }
            }
            s
        };
        for (ma, mb) in (0..512u32)
            .step_by(7)
            .flat_map(|a| (0..512u32).step_by(11).map(move |b| (a, b)))
        {
            let (a, b) = (subset(ma), subset(mb));
            let mut x = a.clone();
            x.remove(&b);
            assert_eq!(x, a.difference(&b), "{ma:b} - {mb:b}");
            let mut x = a.clone();
            x.remove_recursive(&b);
            assert_eq!(x, a.recursive_difference(&b), "{ma:b} -r {mb:b}");
            let mut x = a.clone();
            x.union_with(&b);
            assert_eq!(x, a.union(&b), "{ma:b} + {mb:b}");
            let mut x = a.clone();
            x.absorb(b.clone());
            assert_eq!(x, a.union(&b), "{ma:b} absorb {mb:b}");
        }
    }

    #[test]
    fn display_forms() {
        let p = vec![
            f("spec"),
            f("ports"),
            PathElement::Key(vec![
                ("port".into(), "80".into()),
                ("protocol".into(), "\"TCP\"".into()),
            ]),
            f("name"),
        ];
        assert_eq!(
            path_string(&p),
            ".spec.ports[port=80,protocol=\"TCP\"].name"
        );
        assert_eq!(p[2].to_key(), "k:{\"port\":80,\"protocol\":\"TCP\"}");
        assert_eq!(PathElement::Value("\"a\"".into()).display(), "[=\"a\"]");
    }
}
