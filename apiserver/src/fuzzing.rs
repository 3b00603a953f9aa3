//! Fuzz targets: every parser and merger that request data reaches, each a
//! function from arbitrary bytes that must return (never panic, overflow
//! the stack or run unbounded) whatever the bytes are.
//!
//! The same functions back three drivers: the libFuzzer targets in
//! `fuzz/` (`tools/fuzz.sh` runs each for a set time and reports its
//! executions), and the unit test below, which runs every target over its
//! seeds and a few thousand deterministic mutations of them on every
//! `cargo test`. Inputs that take two documents (a patch and the object it
//! patches) split at the first newline: the object, then the patch.
//!
//! A crash any driver finds becomes a case in [`tests`] (`REGRESSIONS`).

use std::sync::{Arc, OnceLock};

use serde_json::{json, Map, Value};

use crate::apimachinery::duration::{parse_go_duration, parse_go_duration_nanos};
use crate::apimachinery::fields::{unescape_value, FieldSelector};
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::quantity::Quantity;
use crate::body::MAX_REQUEST_BODY_BYTES;
use crate::cel::expression::Expression;
use crate::endpoints::handlers::{decode_json, decode_yaml_lenient, strategic_merge, strict_json};
use crate::fieldmanager::fieldpath::PathElement;
use crate::fieldmanager::typeinfo::StructuralTypes;
use crate::fieldmanager::{managed, Operation};
use crate::schema::Schema;

/// A fuzz target: consumes any bytes, must not panic.
pub type Target = fn(&[u8]);

/// Every target by name (the names of `fuzz/fuzz_targets/*.rs`).
pub const TARGETS: &[(&str, Target)] = &[
    ("json", json),
    ("yaml", yaml),
    ("protobuf", protobuf),
    ("json_patch", json_patch),
    ("merge_patch", merge_patch),
    ("strategic_merge_patch", strategic_merge_patch),
    ("apply_patch", apply_patch),
    ("label_selector", label_selector),
    ("field_selector", field_selector),
    ("field_path", field_path),
    ("cel", cel),
    ("quantity", quantity),
    ("duration", duration),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// A few valid inputs per target for the mutators to start from.
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    let s: &[&str] = match name {
        "json" => &[
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v"}}"#,
            r#"{"a":[1,2.5,-3e9,true,null,"\u00e9"],"b":{"c":{}}}"#,
        ],
        "yaml" => &[
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
            "a: &x [1, 2]\nb: *x\nc: !!str 3\n---\nd: e\n",
        ],
        "protobuf" => &[],
        "json_patch" => &[
            "{\"spec\":{\"a\":[1,2]}}\n[{\"op\":\"add\",\"path\":\"/spec/a/-\",\"value\":3},{\"op\":\"copy\",\"from\":\"/spec\",\"path\":\"/b\"}]",
            "{}\n[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/b\"},{\"op\":\"test\",\"path\":\"/x\",\"value\":1}]",
        ],
        "merge_patch" => &[
            "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}\n{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"d\"}}}",
        ],
        "strategic_merge_patch" => &[
            "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"}],\"finalizers\":[\"p\"]}}\n{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"y\"},{\"name\":\"a\",\"$patch\":\"delete\"}],\"$setElementOrder/containers\":[{\"name\":\"b\"}],\"$deleteFromPrimitiveList/finalizers\":[\"p\"]}}",
            "{\"spec\":{\"env\":{\"a\":\"b\"}}}\n{\"spec\":{\"$patch\":\"replace\",\"env\":{\"c\":1}},\"$retainKeys\":[\"spec\"]}",
        ],
        "apply_patch" => &[
            "{\"apiVersion\":\"x.io/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"replicas\":1}}\n{\"apiVersion\":\"x.io/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"ports\":[{\"name\":\"p\",\"port\":1}]}}",
        ],
        "label_selector" => &[
            "a=b,c!=d,e in (f,g),!h,i notin (j),k",
            "app.kubernetes.io/name==x, tier in (), x>3",
        ],
        "field_selector" => &["metadata.name=a,spec.nodeName!=b", r"a==b\,c,d=\=\\"],
        "field_path" => &[
            "f:metadata",
            "k:{\"name\":\"a\",\"port\":1}",
            "v:\"x\"",
            "i:3",
            "[{\"manager\":\"m\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:a\":{},\"k:{\\\"name\\\":\\\"x\\\"}\":{\".\":{}}}}}]",
        ],
        "cel" => &[
            "self.spec.replicas <= 10 && self.metadata.name.startsWith('a')",
            "self.spec.ports.all(p, p.port > 0) ? size(self.spec.ports) : 0",
            "quantity('1Gi').isGreaterThan(quantity('1M')) && url('https://a/b').getHost() == 'a'",
        ],
        "quantity" => &["1.5Gi", "-100m", "1e3", "0.000000001", "12345678901234567890E"],
        "duration" => &["1h2m3.5s", "-1.5us", "300ms", "9223372036s"],
        _ => &[],
    };
    let mut out: Vec<Vec<u8>> = s.iter().map(|s| s.as_bytes().to_vec()).collect();
    if name == "protobuf" {
        // A real ConfigMap, as the server stores it.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "b", "labels": {"x": "y"}},
            "data": {"k": "v"}});
        if let Ok(bytes) = crate::protobuf::encode_object(&cm) {
            out.push(bytes);
        }
    }
    out
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Splits at the first newline into (object, patch); an object that does
/// not decode is replaced by a fixed one so the patch is still exercised.
fn two_documents(data: &[u8]) -> Option<(Value, Value)> {
    let split = data.iter().position(|b| *b == b'\n')?;
    let (doc, patch) = (&data[..split], &data[split + 1..]);
    let doc = decode_json(doc).unwrap_or_else(|_| json!({"metadata": {"name": "a"}}));
    let patch = decode_json(patch).ok()?;
    Some((doc, patch))
}

/// A request body as JSON: decoding, duplicate and unknown key detection,
/// and encoding back.
pub fn json(data: &[u8]) {
    if let Ok(v) = decode_json(data) {
        let keys = strict_json::key_paths(data);
        let _ = strict_json::duplicates(&keys).count();
        let _ = serde_json::to_vec(&v);
    }
}

/// A request body as YAML (anchors, tags, several documents).
pub fn yaml(data: &[u8]) {
    let _ = decode_yaml_lenient(data);
}

/// A request body or a stored value as protobuf (the `k8s\0` envelope).
pub fn protobuf(data: &[u8]) {
    if let Ok(v) = crate::protobuf::decode_object(data) {
        let _ = crate::protobuf::encode_object(&v);
    }
    let _ = crate::protobuf::decode_from_storage(data);
}

/// `application/json-patch+json`, bounded as the handler bounds it.
pub fn json_patch(data: &[u8]) {
    let Some((mut doc, patch)) = two_documents(data) else {
        return;
    };
    let Ok(ops) = serde_json::from_value::<::json_patch::Patch>(patch) else {
        return;
    };
    let _ = crate::registry::json_patch::apply_bounded(&mut doc, &ops, MAX_REQUEST_BODY_BYTES);
}

/// `application/merge-patch+json` (RFC 7386).
pub fn merge_patch(data: &[u8]) {
    if let Some((mut doc, patch)) = two_documents(data) {
        ::json_patch::merge(&mut doc, &patch);
    }
}

/// The schemas strategic merge patch reads its merge keys and strategies
/// from: a pod-like kind with keyed, primitive-merge and retainKeys lists.
fn smp_components() -> &'static Map<String, Value> {
    static C: OnceLock<Map<String, Value>> = OnceLock::new();
    C.get_or_init(|| {
        let v = json!({
            "K": {"type": "object", "properties": {
                "metadata": {"type": "object"},
                "spec": {"$ref": "#/components/schemas/Spec"}}},
            "Spec": {"type": "object", "properties": {
                "containers": {"type": "array", "items": {"$ref": "#/components/schemas/C"},
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge"},
                "finalizers": {"type": "array", "items": {"type": "string"},
                    "x-kubernetes-patch-strategy": "merge"},
                "volumes": {"type": "array", "items": {"type": "object"},
                    "x-kubernetes-patch-merge-key": "name",
                    "x-kubernetes-patch-strategy": "merge,retainKeys"},
                "env": {"type": "object", "additionalProperties": {"type": "string"}}}},
            "C": {"type": "object", "properties": {
                "name": {"type": "string"},
                "ports": {"type": "array", "items": {"type": "object"},
                    "x-kubernetes-patch-merge-key": "containerPort",
                    "x-kubernetes-patch-strategy": "merge"}}}
        });
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    })
}

/// `application/strategic-merge-patch+json` against a pod-like schema.
pub fn strategic_merge_patch(data: &[u8]) {
    if let Some((doc, patch)) = two_documents(data) {
        let root = json!({"$ref": "#/components/schemas/K"});
        let _ = strategic_merge::apply(&doc, &patch, &root, smp_components());
    }
}

fn apply_types() -> &'static StructuralTypes {
    static T: OnceLock<StructuralTypes> = OnceLock::new();
    T.get_or_init(|| {
        StructuralTypes(Arc::new(Schema::compile(&json!({
            "type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set",
                        "items": {"type": "string"}},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name", "protocol"],
                        "items": {"type": "object", "properties": {
                            "name": {"type": "string"}, "protocol": {"type": "string"},
                            "port": {"type": "integer"}}}},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
        }))))
    })
}

/// `application/apply-patch+yaml` (server-side apply): the live object is
/// applied first by one manager, then the patch by another, so conflicts,
/// merges and managedFields decoding all run.
pub fn apply_patch(data: &[u8]) {
    let Some((live, config)) = two_documents(data) else {
        return;
    };
    let op = Operation {
        types: apply_types(),
        api_version: "x.io/v1".into(),
        subresource: "",
        has_status: true,
    };
    let live = crate::fieldmanager::apply(&op, None, &live, "first", false).ok();
    let _ = crate::fieldmanager::apply(&op, live.as_ref(), &config, "second", false);
    let _ = crate::fieldmanager::apply(&op, live.as_ref(), &config, "second", true);
}

/// `labelSelector=`, then matching it against a fixed label set.
pub fn label_selector(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Ok(sel) = LabelSelector::parse(s) {
        let labels = json!({"a": "b", "app.kubernetes.io/name": "x", "n": "5"});
        if let Value::Object(m) = labels {
            let _ = sel.matches(&m);
        }
    }
    if let Ok(v) = serde_json::from_str::<Value>(s) {
        let _ = LabelSelector::from_json(&v);
    }
}

/// `fieldSelector=` and its escaping.
pub fn field_selector(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Ok(sel) = FieldSelector::parse(s) {
        let _ = sel.matches(|f| (f == "metadata.name").then(|| "a".to_string()));
    }
    let _ = unescape_value(s);
}

/// managedFields' field paths: one path element, or a whole
/// `managedFields` list.
pub fn field_path(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Ok(pe) = PathElement::from_key(s) {
        let _ = PathElement::from_key(&pe.to_key());
    }
    if let Ok(v) = serde_json::from_str::<Value>(s) {
        let _ = managed::decode(Some(&v));
    }
}

/// A CEL expression: compiled, then evaluated against an object.
pub fn cel(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let e = Expression::compile(s);
    if e.compile_error().is_none() {
        let obj = json!({"metadata": {"name": "abc", "labels": {"a": "b"}},
            "spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}], "s": "x"}});
        let _ = e.eval(&[("self", &obj), ("oldSelf", &obj)]);
    }
}

/// A resource quantity, then arithmetic on it.
pub fn quantity(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Ok(q) = Quantity::parse(s) {
        let _ = q.as_i64();
        let _ = q.as_f64();
        let _ = q.checked_add(&q);
        let _ = q.negated().cmp(&q);
    }
}

/// A Go duration (`timeoutSeconds`-style flags, CEL `duration()`).
pub fn duration(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let _ = parse_go_duration(s);
    let _ = parse_go_duration_nanos(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs that once crashed a target (none yet from the fuzzers; the
    /// hostile shapes fixed by hand are here so that they stay fixed).
    const REGRESSIONS: &[(&str, &str)] = &[
        ("cel", "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1"),
        ("json_patch", "{}\n[{\"op\":\"add\",\"path\":\"/a\",\"value\":[1,2,3,4,5,6,7,8]},{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/b\"},{\"op\":\"copy\",\"from\":\"/\",\"path\":\"/c\"},{\"op\":\"copy\",\"from\":\"/\",\"path\":\"/d\"}]"),
        ("yaml", "a: &a [*a]\n"),
        ("protobuf", "k8s\u{0}\n\u{ff}\u{ff}\u{ff}\u{ff}\u{0f}"),
        ("label_selector", "a in (b,"),
        ("duration", "99999999999999999999h"),
        ("quantity", "9999999999999999999999999999999999999999E"),
    ];

    /// A tiny deterministic generator (xorshift), so every run tries the
    /// same mutations and a failure is reproducible from its index.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    const INTERESTING: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b"\\",
        b",",
        b":",
        b"\n",
        b"null",
        b"-",
        b"/",
        b"~1",
        b"$patch",
        b"(",
        b")",
        b"!",
        b"=",
        b"in",
        b".",
        b"e",
        b"\xff",
        b"\x00",
        b"999999999999999999999",
    ];

    fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(out.len() + 1);
            match rng.below(4) {
                0 if !out.is_empty() => {
                    let end = (at + 1 + rng.below(8)).min(out.len());
                    out.drain(at.min(end)..end);
                }
                1 => {
                    let ins = INTERESTING[rng.below(INTERESTING.len())];
                    out.splice(at..at, ins.iter().copied());
                }
                2 if !out.is_empty() => {
                    let i = rng.below(out.len());
                    out[i] = rng.next() as u8;
                }
                _ => {
                    // Duplicate a slice: grows nesting and repetition.
                    let from = rng.below(out.len() + 1);
                    let end = (from + rng.below(32)).min(out.len());
                    let piece = out[from..end].to_vec();
                    out.splice(at..at, piece);
                }
            }
        }
        out
    }

    #[test]
    fn every_target_survives_its_seeds_regressions_and_mutations() {
        let rounds: usize = std::env::var("FUZZ_MUTATIONS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1500);
        for (name, run) in TARGETS {
            let seeds = seeds(name);
            let mut corpus = seeds.clone();
            corpus.extend(
                REGRESSIONS
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, s)| s.as_bytes().to_vec()),
            );
            for input in &corpus {
                run(input);
            }
            if corpus.is_empty() {
                corpus.push(Vec::new());
            }
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
            for _ in 0..rounds {
                let base = &corpus[rng.below(corpus.len())];
                let input = mutate(&mut rng, base);
                run(&input);
            }
        }
    }

    #[test]
    fn every_target_has_seeds_and_a_unique_name() {
        let mut names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TARGETS.len());
        for name in names {
            assert!(!seeds(name).is_empty(), "{name} has no seeds");
            assert!(target(name).is_some());
        }
    }
}
