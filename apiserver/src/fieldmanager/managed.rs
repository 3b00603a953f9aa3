//! `metadata.managedFields`: decoding, encoding, and who owns what.
//!
//! Each entry names a manager, its operation (`Apply` or `Update`), the
//! apiVersion it wrote, when, the subresource (`status`, `scale`), and the
//! set of fields it owns as `FieldsV1`. An entry is identified as
//! upstream's manager identifier: manager, operation, subresource and, for
//! `Update`, the apiVersion. Entries are written sorted as upstream
//! (operation, time, manager, apiVersion, subresource); empty ones are
//! dropped.

use serde_json::{Map, Value};

use super::fieldpath::Set;

/// One `managedFields` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    pub api_version: String,
    pub time: Option<String>,
    pub subresource: String,
    pub set: Set,
}

impl Entry {
    /// Whether `self` and `other` are the same manager in upstream's sense.
    pub fn same_manager(
        &self,
        manager: &str,
        operation: &str,
        subresource: &str,
        api_version: &str,
    ) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource == subresource
            && (operation == "Apply" || self.api_version == api_version)
    }

    /// How conflict messages name this manager: `"m"`, with
    /// ` with subresource "s"` and, for updaters, ` using <apiVersion>`.
    pub fn display(&self) -> String {
        let mut s = crate::apimachinery::validation::go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                crate::apimachinery::validation::go_quote(&self.subresource)
            ));
        }
        if self.operation == "Update" {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// Whether a client's `managedFields` asks for a reset: an empty list or a
/// list of one empty entry (upstream's `isResetManagedFields`).
pub fn is_reset(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Array(a)) if a.is_empty() => true,
        Some(Value::Array(a)) if a.len() == 1 => a[0].as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// Decodes `managedFields` (absent or null: none).
pub fn decode(v: Option<&Value>) -> Result<Vec<Entry>, String> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err("managedFields must be a list".into()),
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let s = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let operation = s("operation");
        if operation != "Apply" && operation != "Update" {
            return Err("operation must be `Apply` or `Update`".into());
        }
        let api_version = s("apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match s("fieldsType").as_str() {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ))
            }
        }
        let set = match item.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(f) => Set::from_fields_v1(f)
                .map_err(|e| format!("error decoding versioned set from {f}: {e}"))?,
        };
        out.push(Entry {
            manager: s("manager"),
            operation,
            api_version,
            time: item.get("time").and_then(Value::as_str).map(str::to_string),
            subresource: s("subresource"),
            set,
        });
    }
    Ok(out)
}

/// Encodes entries, sorted and without empty ones.
pub fn encode(entries: &[Entry]) -> Value {
    let mut sorted: Vec<&Entry> = entries.iter().filter(|e| !e.set.is_empty()).collect();
    sorted.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then_with(|| p.time.cmp(&q.time))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    Value::Array(
        sorted
            .into_iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("manager".into(), Value::String(e.manager.clone()));
                m.insert("operation".into(), Value::String(e.operation.clone()));
                m.insert("apiVersion".into(), Value::String(e.api_version.clone()));
                if let Some(t) = &e.time {
                    m.insert("time".into(), Value::String(t.clone()));
                }
                m.insert("fieldsType".into(), Value::String("FieldsV1".into()));
                m.insert("fieldsV1".into(), e.set.to_fields_v1());
                if !e.subresource.is_empty() {
                    m.insert("subresource".into(), Value::String(e.subresource.clone()));
                }
                Value::Object(m)
            })
            .collect(),
    )
}

/// Upstream's cap on `Update` entries.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager the oldest `Update` entries are merged into beyond the cap.
pub const ANCIENT_CHANGES: &str = "ancient-changes";

/// Keeps at most [`MAX_UPDATE_MANAGERS`] non-empty `Update` entries by
/// merging the oldest ones, per apiVersion, into an `ancient-changes`
/// entry (upstream's `capManagersManager`).
pub fn cap_update_managers(entries: &mut Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    let mut updaters: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].operation == "Update")
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|&a, &b| {
        (
            entries[a].time.as_deref().unwrap_or(""),
            &entries[a].manager,
        )
            .cmp(&(
                entries[b].time.as_deref().unwrap_or(""),
                &entries[b].manager,
            ))
    });
    let mut remaining = updaters.len();
    let mut first_of_version: std::collections::HashMap<String, usize> = Default::default();
    // An existing bucket of a version takes the merges of that version.
    for &i in &updaters {
        let e = &entries[i];
        if e.manager == ANCIENT_CHANGES && e.subresource.is_empty() {
            first_of_version.insert(e.api_version.clone(), i);
        }
    }
    let mut removed = vec![false; entries.len()];
    for &i in &updaters {
        if first_of_version.get(&entries[i].api_version) == Some(&i) {
            continue;
        }
        if remaining <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].api_version.clone();
        let Some(&first) = first_of_version.get(&version) else {
            first_of_version.insert(version, i);
            continue;
        };
        // The first entry of this version becomes the bucket.
        let bucket = &mut entries[first];
        bucket.manager = ANCIENT_CHANGES.into();
        bucket.subresource.clear();
        let (set, time) = (std::mem::take(&mut entries[i].set), entries[i].time.clone());
        let bucket = &mut entries[first];
        bucket.set.absorb(set);
        bucket.time = time;
        removed[i] = true;
        remaining -= 1;
    }
    let mut idx = 0;
    entries.retain(|_| {
        idx += 1;
        !removed[idx - 1]
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decode_encode() {
        let v = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}}, "subresource": "status"},
            {"manager": "a", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-02T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}}}},
            {"manager": "c", "operation": "Update", "apiVersion": "v1",
             "fieldsType": "FieldsV1", "fieldsV1": {}}
        ]);
        let entries = decode(Some(&v)).expect("decode");
        assert_eq!(entries.len(), 3);
        let out = encode(&entries);
        assert_eq!(out.as_array().map(Vec::len), Some(2));
        assert_eq!(out[0]["manager"], "a");
        assert_eq!(out[1]["subresource"], "status");
        assert_eq!(
            entries[0].display(),
            "\"b\" with subresource \"status\" using v1"
        );
        assert_eq!(entries[1].display(), "\"a\"");
    }

    #[test]
    fn invalid_entries() {
        assert!(decode(Some(
            &json!([{"operation": "Bogus", "apiVersion": "v1", "fieldsType": "FieldsV1"}])
        ))
        .is_err());
        assert!(decode(Some(
            &json!([{"operation": "Update", "fieldsType": "FieldsV1"}])
        ))
        .is_err());
        assert!(decode(Some(&json!([{"operation": "Update", "apiVersion": "v1"}]))).is_err());
        assert!(
            decode(Some(&json!([{"operation": "Update", "apiVersion": "v1",
            "fieldsType": "FieldsV1", "fieldsV1": {"zz": {}}}])))
            .is_err()
        );
        assert!(decode(Some(&json!("x"))).is_err());
        assert!(is_reset(Some(&json!([]))));
        assert!(is_reset(Some(&json!([{}]))));
        assert!(!is_reset(None));
    }

    #[test]
    fn update_managers_are_capped() {
        let mut entries: Vec<Entry> = (0..12)
            .map(|i| {
                let mut set = Set::new();
                set.insert(&crate::fieldmanager::fieldpath::fields(&[
                    "data",
                    &format!("k{i}"),
                ]));
                Entry {
                    manager: format!("m{i:02}"),
                    operation: "Update".into(),
                    api_version: "v1".into(),
                    time: Some(format!("2024-01-01T00:00:{i:02}Z")),
                    subresource: String::new(),
                    set,
                }
            })
            .collect();
        cap_update_managers(&mut entries);
        assert_eq!(entries.len(), 10);
        let ancient = entries
            .iter()
            .find(|e| e.manager == ANCIENT_CHANGES)
            .expect("bucket");
        assert_eq!(ancient.set.paths().len(), 3);
        assert_eq!(ancient.time.as_deref(), Some("2024-01-01T00:00:02Z"));
        assert!(entries
            .iter()
            .all(|e| e.manager != "m00" && e.manager != "m01"));
    }
}
