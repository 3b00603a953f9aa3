//! The object keys of a JSON body in document order, with repeated keys
//! marked: what upstream's strict decoder (`sigs.k8s.io/json`) reports as
//! `duplicate field "<path>"` under `fieldValidation=Strict|Warn`. A
//! decoded `serde_json::Value` has already dropped the repeats, so this
//! scans the bytes once more, without building a tree.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One object key met while scanning: its field path (`spec.containers[0].name`)
/// and whether its object already had that key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPath {
    pub path: String,
    pub duplicate: bool,
}

/// Every object key of `bytes` in document order. A body that is not valid
/// JSON gives what was scanned before the error (the decoder reports it).
pub fn key_paths(bytes: &[u8]) -> Vec<KeyPath> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let _ = Scan {
        path: String::new(),
        out: &mut out,
    }
    .deserialize(&mut de);
    out
}

/// The paths of the repeated keys only.
pub fn duplicates(keys: &[KeyPath]) -> impl Iterator<Item = &str> {
    keys.iter().filter(|k| k.duplicate).map(|k| k.path.as_str())
}

struct Scan<'a> {
    path: String,
    out: &'a mut Vec<KeyPath>,
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<std::borrow::Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let path = if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            };
            let duplicate = !seen.insert(key);
            self.out.push(KeyPath {
                path: path.clone(),
                duplicate,
            });
            map.next_value_seed(Scan {
                path,
                out: self.out,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let seed = Scan {
                path: format!("{}[{i}]", self.path),
                out: self.out,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        IgnoredAny::deserialize(d).map(|_| ())
    }
}

use serde::Deserialize as _;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_found_with_their_paths_in_order() {
        let body = br#"{"metadata":{"name":"a","name":"b"},"spec":{"paused":true,
            "template":{"spec":{"containers":[{"name":"c","imagePullPolicy":"Always","imagePullPolicy":"Never"}]}},
            "paused":false}}"#;
        let keys = key_paths(body);
        let dups: Vec<&str> = duplicates(&keys).collect();
        assert_eq!(
            dups,
            [
                "metadata.name",
                "spec.template.spec.containers[0].imagePullPolicy",
                "spec.paused"
            ]
        );
        assert_eq!(keys[0].path, "metadata");
        assert!(keys
            .iter()
            .any(|k| k.path == "spec.template.spec.containers[0].name"));
    }

    #[test]
    fn escaped_keys_and_malformed_bodies() {
        let keys = key_paths(br#"{"a\u0062":1,"ab":2}"#);
        assert_eq!(duplicates(&keys).collect::<Vec<_>>(), ["ab"]);
        // Same keys in sibling objects are not repeats.
        let keys = key_paths(br#"[{"a":1},{"a":2}]"#);
        assert_eq!(duplicates(&keys).count(), 0);
        // Truncated input: no panic, what was seen so far.
        let keys = key_paths(br#"{"a":1,"a":"#);
        assert_eq!(duplicates(&keys).collect::<Vec<_>>(), ["a"]);
    }
}

#[cfg(test)]
mod remove_tests {
    use super::super::remove_field_path;
    use serde_json::json;

    #[test]
    fn removes_nested_fields_and_keys_with_dots() {
        let mut v = json!({"metadata": {"name": "a", "x.y": 1},
            "spec": {"containers": [{"name": "c"}, {"name": "d", "bogus": true}]}});
        assert!(remove_field_path(&mut v, "spec.containers[1].bogus"));
        assert!(remove_field_path(&mut v, "metadata.x.y"));
        assert!(!remove_field_path(&mut v, "spec.containers[7].name"));
        assert!(!remove_field_path(&mut v, "spec.containers[0]"));
        assert_eq!(
            v,
            json!({"metadata": {"name": "a"},
            "spec": {"containers": [{"name": "c"}, {"name": "d"}]}})
        );
    }
}
