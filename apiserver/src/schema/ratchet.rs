//! Validation ratcheting (KEP-4008, upstream's `validation/ratcheting.go` in
//! spirit): on update, an error about a value that did not change is
//! dropped, so objects stored before a schema was tightened can still be
//! updated elsewhere. An error is kept when its value changed or cannot be
//! located in both objects.

use serde_json::Value;

use crate::apimachinery::validation::{FieldError, FieldErrorType};

/// One step of a rendered field path.
#[derive(Debug, PartialEq)]
enum Seg {
    Key(String),
    Sub(String),
}

/// Splits `spec.list[1].a` into keys and subscripts.
fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if !cur.is_empty() {
                    out.push(Seg::Key(std::mem::take(&mut cur)));
                }
            }
            '[' => {
                if !cur.is_empty() {
                    out.push(Seg::Key(std::mem::take(&mut cur)));
                }
                let mut sub = String::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    sub.push(d);
                }
                out.push(Seg::Sub(sub));
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(Seg::Key(cur));
    }
    out
}

/// The value at rendered path segments; keys containing dots are found by
/// joining segments when the short key is absent.
fn lookup<'a>(v: &'a Value, segs: &[Seg]) -> Option<&'a Value> {
    let Some((first, rest)) = segs.split_first() else {
        return Some(v);
    };
    match first {
        Seg::Sub(s) => match v {
            Value::Array(a) => lookup(a.get(s.parse::<usize>().ok()?)?, rest),
            Value::Object(m) => lookup(m.get(s)?, rest),
            _ => None,
        },
        Seg::Key(k) => {
            let m = v.as_object()?;
            if let Some(found) = m.get(k).and_then(|x| lookup(x, rest)) {
                return Some(found);
            }
            // `app.kubernetes.io/name`: a key with dots.
            let mut key = k.clone();
            for (i, seg) in rest.iter().enumerate() {
                let Seg::Key(next) = seg else { break };
                key.push('.');
                key.push_str(next);
                if let Some(x) = m.get(&key) {
                    return lookup(x, &rest[i + 1..]);
                }
            }
            None
        }
    }
}

/// Drops the errors of `new` about values equal in `old`. `Required` and
/// `Duplicate` errors are judged on their parent (the object or list they
/// are about).
pub fn ratchet(errors: Vec<FieldError>, new: &Value, old: &Value) -> Vec<FieldError> {
    errors
        .into_iter()
        .filter(|e| {
            let mut segs = segments(&e.field);
            if matches!(
                e.error_type,
                FieldErrorType::Required | FieldErrorType::Duplicate
            ) {
                segs.pop();
            }
            match (lookup(new, &segs), lookup(old, &segs)) {
                (Some(a), Some(b)) => a != b,
                _ => true,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unchanged_values_ratchet() {
        let old = json!({"spec": {"size": 50, "tags": ["a", "a"], "labels": {"app.kubernetes.io/name": "x"}}});
        let new = json!({"spec": {"size": 50, "other": 1, "tags": ["a", "a"], "labels": {"app.kubernetes.io/name": "y"}}});
        let errs = vec![
            FieldError::invalid("spec.size", 50, "too big"),
            FieldError::duplicate("spec.tags[1]", "a"),
            FieldError::invalid("spec.labels.app.kubernetes.io/name", "y", "bad"),
            FieldError::required("spec.missing", ""),
        ];
        let kept: Vec<String> = ratchet(errs, &new, &old)
            .iter()
            .map(|e| e.field.clone())
            .collect();
        // spec changed as a whole, so the Required error on it stays.
        assert_eq!(
            kept,
            vec!["spec.labels.app.kubernetes.io/name", "spec.missing"]
        );
    }

    #[test]
    fn changed_values_keep_their_errors() {
        let old = json!({"spec": {"size": 50}});
        let new = json!({"spec": {"size": 60}});
        let errs = vec![FieldError::invalid("spec.size", 60, "too big")];
        assert_eq!(ratchet(errs, &new, &old).len(), 1);
    }
}
