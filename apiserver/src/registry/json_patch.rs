//! RFC 6902 JSON Patch applied with a bound on how much it may grow the
//! document: `add`, `replace` and `copy` are charged the size of the value
//! they insert, and the patch fails once the charges pass the limit, before
//! a `copy` chain that doubles the document can exhaust memory. Upstream
//! caps JSON Patch growth the same way (its accumulated-size limit).

use ::json_patch::{Patch, PatchOperation};
use serde_json::Value;

/// The encoded size of `v`, stopping early once it passes `limit`.
fn size_within(v: &Value, limit: usize) -> usize {
    struct Counter {
        n: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter { n: 0, limit };
    let _ = serde_json::to_writer(&mut c, v);
    c.n
}

/// Applies `patch` to `doc`, failing (with `doc` partly patched) when an
/// operation fails or the values it inserts add up to more than
/// `max_growth` bytes.
pub fn apply_bounded(doc: &mut Value, patch: &Patch, max_growth: usize) -> Result<(), String> {
    let mut grown = 0usize;
    for op in &patch.0 {
        let inserted = match op {
            PatchOperation::Add(a) => size_within(&a.value, max_growth + 1),
            PatchOperation::Replace(r) => size_within(&r.value, max_growth + 1),
            PatchOperation::Copy(c) => doc
                .pointer(c.from.as_str())
                .map(|v| size_within(v, max_growth + 1))
                .unwrap_or(0),
            _ => 0,
        };
        grown = grown.saturating_add(inserted);
        if grown > max_growth {
            return Err(format!(
                "the patch would grow the object by more than {max_growth} bytes"
            ));
        }
        ::json_patch::patch(doc, std::slice::from_ref(op)).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn applies_ordinary_patches() {
        let mut doc = json!({"a": 1, "l": [1]});
        let p: Patch = serde_json::from_value(json!([
            {"op": "add", "path": "/b", "value": {"c": 2}},
            {"op": "copy", "from": "/b", "path": "/d"},
            {"op": "remove", "path": "/a"},
            {"op": "add", "path": "/l/-", "value": 2},
        ]))
        .unwrap();
        apply_bounded(&mut doc, &p, 1024).unwrap();
        assert_eq!(doc, json!({"b": {"c": 2}, "d": {"c": 2}, "l": [1, 2]}));
    }

    #[test]
    fn a_doubling_copy_chain_stops_at_the_limit() {
        let mut doc = json!({"x": "y".repeat(1000)});
        let mut ops = vec![json!({"op": "add", "path": "/a", "value": [{"x": "y".repeat(1000)}]})];
        for _ in 0..40 {
            ops.push(json!({"op": "copy", "from": "/a", "path": "/a/-"}));
        }
        let p: Patch = serde_json::from_value(json!(ops)).unwrap();
        let err = apply_bounded(&mut doc, &p, 64 * 1024).unwrap_err();
        assert!(err.contains("more than 65536 bytes"), "{err}");
    }

    #[test]
    fn a_failing_operation_is_reported() {
        let mut doc = json!({});
        let p: Patch = serde_json::from_value(json!([{"op": "remove", "path": "/nope"}])).unwrap();
        assert!(apply_bounded(&mut doc, &p, 1024).is_err());
    }
}
