//! Upstream's `NamingConditionController` decision for one CRD: which of
//! its requested names (`spec.names`) it may hold (`status.acceptedNames`)
//! and its `NamesAccepted` condition.
//!
//! As upstream: only the names other CRDs of the same group have accepted
//! count (built-in resources are not consulted); a name already accepted
//! for this CRD stays its own; each name is decided on its own, so a
//! conflicting one keeps its previously accepted value while the others
//! are updated; when several names conflict the condition reports the last
//! one checked (plural, singular, short names, kind, list kind);
//! categories are always accepted.

use std::collections::HashSet;

use serde_json::{json, Value};

/// The names accepted by the CRDs of one group (including the CRD being
/// decided, as upstream).
#[derive(Default)]
pub struct GroupNames {
    pub resources: HashSet<String>,
    pub kinds: HashSet<String>,
}

fn s<'a>(names: &'a Value, k: &str) -> &'a str {
    names.get(k).and_then(Value::as_str).unwrap_or("")
}

fn list(names: &Value, k: &str) -> Vec<String> {
    names
        .get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

impl GroupNames {
    /// Adds the accepted names of one CRD.
    pub fn add(&mut self, accepted: &Value) {
        for r in [s(accepted, "plural"), s(accepted, "singular")] {
            self.resources.insert(r.to_string());
        }
        self.resources.extend(list(accepted, "shortNames"));
        for k in [s(accepted, "kind"), s(accepted, "listKind")] {
            self.kinds.insert(k.to_string());
        }
    }
}

/// Upstream's `equalToAcceptedOrFresh`.
fn equal_or_fresh(requested: &str, accepted: &str, used: &HashSet<String>) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        Ok(())
    } else {
        Err(format!("{requested:?} is already in use"))
    }
}

/// The outcome for one CRD: the names it now holds, and the
/// `NamesAccepted` condition's status, reason and message.
pub struct Decision {
    pub accepted: Value,
    pub conflict: Option<(&'static str, String)>,
}

/// Decides the names of a CRD whose `spec.names` are `requested` and whose
/// `status.acceptedNames` are `accepted` (`Null` when none yet).
pub fn decide(requested: &Value, accepted: &Value, used: &GroupNames) -> Decision {
    let mut new = match accepted {
        Value::Object(_) => accepted.clone(),
        _ => json!({}),
    };
    let mut conflict = None;
    let mut take = |k: &str, reason: &'static str, set: &HashSet<String>, new: &mut Value| {
        match equal_or_fresh(s(requested, k), s(accepted, k), set) {
            Ok(()) => {
                let v = requested.get(k).cloned().unwrap_or(Value::Null);
                match &mut *new {
                    Value::Object(m) if v.is_null() => {
                        m.remove(k);
                    }
                    Value::Object(m) => {
                        m.insert(k.to_string(), v);
                    }
                    _ => {}
                }
            }
            Err(e) => conflict = Some((reason, e)),
        }
    };
    take("plural", "PluralConflict", &used.resources, &mut new);
    take("singular", "SingularConflict", &used.resources, &mut new);
    let (want, have) = (list(requested, "shortNames"), list(accepted, "shortNames"));
    let mut short_conflict = None;
    if want != have {
        let errs: Vec<String> = want
            .iter()
            .filter(|n| !have.contains(n))
            .filter_map(|n| equal_or_fresh(n, "", &used.resources).err())
            .collect();
        match errs.len() {
            0 => new["shortNames"] = requested.get("shortNames").cloned().unwrap_or(Value::Null),
            1 => short_conflict = errs.into_iter().next(),
            _ => short_conflict = Some(format!("[{}]", errs.join(", "))),
        }
        if new.get("shortNames").is_some_and(Value::is_null) {
            if let Value::Object(m) = &mut new {
                m.remove("shortNames");
            }
        }
    }
    let take = |k: &str,
                reason: &'static str,
                set: &HashSet<String>,
                new: &mut Value,
                c: &mut Option<(&'static str, String)>| {
        match equal_or_fresh(s(requested, k), s(accepted, k), set) {
            Ok(()) => new[k] = requested.get(k).cloned().unwrap_or(Value::Null),
            Err(e) => *c = Some((reason, e)),
        }
    };
    if let Some(msg) = short_conflict {
        conflict = Some(("ShortNamesConflict", msg));
    }
    take("kind", "KindConflict", &used.kinds, &mut new, &mut conflict);
    take(
        "listKind",
        "ListKindConflict",
        &used.kinds,
        &mut new,
        &mut conflict,
    );
    match requested.get("categories") {
        Some(c) => new["categories"] = c.clone(),
        None => {
            if let Value::Object(m) = &mut new {
                m.remove("categories");
            }
        }
    }
    Decision {
        accepted: new,
        conflict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(plural: &str, kind: &str, shorts: &[&str]) -> Value {
        json!({"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind, "listKind": format!("{kind}List"), "shortNames": shorts})
    }

    #[test]
    fn fresh_names_are_accepted() {
        let d = decide(
            &names("widgets", "Widget", &["wd"]),
            &Value::Null,
            &GroupNames::default(),
        );
        assert!(d.conflict.is_none());
        assert_eq!(d.accepted, names("widgets", "Widget", &["wd"]));
    }

    #[test]
    fn conflicts_keep_old_names_and_report_the_last() {
        let mut used = GroupNames::default();
        used.add(&names("gadgets", "Gadget", &["gd"]));
        // A new CRD asking for another CRD's kind (and so list kind) and
        // short name: the last conflict checked is reported.
        let d = decide(&names("widgets", "Gadget", &["gd"]), &Value::Null, &used);
        let (reason, msg) = d.conflict.expect("conflict");
        assert_eq!(
            (reason, msg.as_str()),
            ("ListKindConflict", "\"GadgetList\" is already in use")
        );
        assert_eq!(d.accepted["plural"], "widgets");
        assert!(d.accepted.get("kind").is_none(), "{}", d.accepted);
        assert!(d.accepted.get("shortNames").is_none(), "{}", d.accepted);
        // A CRD keeps names it already holds, even if also listed as used.
        let mine = names("gadgets", "Gadget", &["gd"]);
        assert!(decide(&mine, &mine, &used).conflict.is_none());
    }

    #[test]
    fn several_short_name_conflicts_are_aggregated() {
        let mut used = GroupNames::default();
        used.add(&names("gadgets", "Gadget", &["a", "b"]));
        let d = decide(
            &names("widgets", "Widget", &["a", "b", "c"]),
            &Value::Null,
            &used,
        );
        let (reason, msg) = d.conflict.expect("conflict");
        assert_eq!(reason, "ShortNamesConflict");
        assert_eq!(msg, "[\"a\" is already in use, \"b\" is already in use]");
    }
}
