//! Server-side apply and `managedFields` (upstream's
//! `k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager` over
//! `sigs.k8s.io/structured-merge-diff`).
//!
//! Every write records who changed which fields: creates, updates and
//! patches through [`track_update`] (an `Update` entry for the request's
//! manager that takes over the fields it changed), applies through
//! [`apply`] (merges the configuration by the kind's list and map types,
//! removes fields the manager applied before and no longer does, and
//! refuses to change fields another manager owns with a 409 unless forced).
//! The kind's type information comes from
//! [`crate::registry::resource::ResourceDef::field_types`].

pub mod fieldpath;
pub mod managed;
pub mod typed;
pub mod typeinfo;

use serde_json::{json, Value};

use crate::apimachinery::errors::{ApiError, StatusCause, StatusDetails};
use fieldpath::{fields, path_string, Set};
use managed::Entry;
use typeinfo::{Ty, TypeResolver};

/// What a write is about, for the field manager.
pub struct Operation<'a> {
    pub types: &'a dyn TypeResolver,
    /// `group/version` of the request.
    pub api_version: String,
    /// `status`, `scale`, ... or empty for the main resource.
    pub subresource: &'a str,
    /// Whether the kind has a status subresource: writes to the main
    /// resource then do not own `.status`, and `/status` writes own only it.
    pub has_status: bool,
}

/// Fields nobody owns (upstream's strip list).
fn stripped() -> &'static Set {
    static STRIPPED: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
    STRIPPED.get_or_init(|| {
        let mut s = Set::new();
        for p in [
            &["apiVersion"][..],
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
            &["metadata", "creationTimestamp"],
            &["metadata", "selfLink"],
            &["metadata", "uid"],
            &["metadata", "generation"],
            &["metadata", "managedFields"],
            &["metadata", "resourceVersion"],
            &["metadata", "deletionTimestamp"],
            &["metadata", "deletionGracePeriodSeconds"],
        ] {
            s.insert(&fields(p));
        }
        s
    })
}

/// `.status`, which a write to the main resource of a kind with a status
/// subresource never owns.
fn status_path() -> &'static Set {
    static STATUS: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
    STATUS.get_or_init(|| {
        let mut st = Set::new();
        st.insert(&fields(&["status"]));
        st
    })
}

impl Operation<'_> {
    /// Drops from `set` what this operation never owns: the strip list and
    /// the fields the (sub)resource resets.
    fn owned_part(&self, set: Set) -> Set {
        let mut s = set;
        s.remove_recursive(stripped());
        if self.subresource == "status" {
            let mut keep = Set::new();
            if let Some(status) = s.child(&fieldpath::PathElement::Field("status".into())) {
                for p in status.paths() {
                    let mut full = fields(&["status"]);
                    full.extend(p);
                    keep.insert(&full);
                }
            }
            if s.has(&fields(&["status"])) {
                keep.insert(&fields(&["status"]));
            }
            s = keep;
        } else if self.has_status && self.subresource.is_empty() {
            s.remove_recursive(status_path());
        }
        s
    }

    /// The object a create compares against: empty, with the `metadata`,
    /// `spec` and `status` structs built-in kinds always have.
    fn empty_object(&self) -> Value {
        let mut v = json!({"metadata": {}});
        if let Ty::OpenApi(..) = self.types.root() {
            for f in ["spec", "status"] {
                let (t, declared) = self.types.root().field(f, true);
                if declared && !matches!(t, Ty::Deduced) {
                    v[f] = json!({});
                }
            }
        }
        v
    }
}

fn without_managed_fields(v: &Value) -> Value {
    let mut c = v.clone();
    if let Some(Value::Object(m)) = c.get_mut("metadata") {
        m.remove("managedFields");
    }
    c
}

fn set_managed_fields(obj: &mut Value, entries: &mut Vec<Entry>) {
    managed::cap_update_managers(entries);
    let encoded = managed::encode(entries);
    let empty = encoded.as_array().is_none_or(Vec::is_empty);
    if let Value::Object(m) = obj {
        let meta = m.entry("metadata").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            if empty {
                meta.remove("managedFields");
            } else {
                meta.insert("managedFields".into(), encoded);
            }
        }
    }
}

fn managed_of(obj: &Value) -> Option<&Value> {
    obj.get("metadata").and_then(|m| m.get("managedFields"))
}

/// Records a create (`live` is `None`), update or patch in `new`'s
/// `managedFields`: the fields that changed move to `manager`'s `Update`
/// entry (a `None` manager records no entry), fields removed are owned by
/// nobody. A client may rewrite `managedFields` on the main resource; an
/// empty or unreadable value keeps the live ones, and `[]` or `[{}]`
/// clears them, as upstream.
pub fn track_update(
    op: &Operation<'_>,
    live: Option<&Value>,
    new: &mut Value,
    manager: Option<&str>,
) {
    let empty = op.empty_object();
    let live_obj = live.unwrap_or(&empty);
    let from_live = || managed::decode(managed_of(live_obj)).unwrap_or_default();
    let mut entries = if !op.subresource.is_empty() {
        from_live()
    } else if managed::is_reset(managed_of(new)) {
        Vec::new()
    } else {
        match managed::decode(managed_of(new)) {
            Ok(e) if !e.is_empty() => e,
            _ => from_live(),
        }
    };
    let ty = op.types.root();
    let cmp = typed::compare(live_obj, new, ty);
    let mut changed = cmp.added;
    changed.absorb(cmp.modified);
    let changed = op.owned_part(changed);
    let removed = cmp.removed;
    for e in &mut entries {
        e.set.remove(&changed);
        e.set.remove(&removed);
    }
    if let (Some(manager), false) = (manager, changed.is_empty()) {
        let now = crate::apimachinery::meta::now_rfc3339();
        match entries
            .iter_mut()
            .find(|e| e.same_manager(manager, "Update", op.subresource, &op.api_version))
        {
            Some(e) => {
                e.set.union_with(&changed);
                e.time = Some(now);
            }
            None => entries.push(Entry {
                manager: manager.to_string(),
                operation: "Update".into(),
                api_version: op.api_version.to_string(),
                time: Some(now),
                subresource: op.subresource.to_string(),
                set: changed,
            }),
        }
    }
    set_managed_fields(new, &mut entries);
}

/// Applies `config` as `manager` to `live` (`None`: the object does not
/// exist yet) and returns the object to store, its `managedFields` set.
/// Fields other managers own with another value are a 409 Conflict with
/// one `FieldManagerConflict` cause each, unless `force`, which takes them.
pub fn apply(
    op: &Operation<'_>,
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, ApiError> {
    if managed_of(config).is_some_and(|m| !m.is_null()) {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let ty = op.types.root();
    let empty = op.empty_object();
    let live_obj = without_managed_fields(live.unwrap_or(&empty));
    let mut entries = live
        .map(|l| managed::decode(managed_of(l)).unwrap_or_default())
        .unwrap_or_default();

    let mut cfg = config.clone();
    op.types.prune(&mut cfg);
    if let Value::Object(m) = &mut cfg {
        if op.subresource == "status" {
            m.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"));
        } else if op.has_status {
            m.remove("status");
        }
    }
    // A new object is the configuration merged into nothing.
    let base = match live {
        Some(_) => live_obj.clone(),
        None => json!({}),
    };
    let mut merged = typed::merge(&base, &cfg, ty);
    // The configuration's resourceVersion, if any, is a precondition;
    // otherwise the live one is kept, as a patch does.
    if live.is_none() {
        if let Some(Value::Object(meta)) = merged.get_mut("metadata") {
            meta.remove("resourceVersion");
        }
    }

    let applied = op.owned_part(typed::to_field_set(&cfg, ty));
    let mine = entries
        .iter()
        .position(|e| e.same_manager(manager, "Apply", op.subresource, &op.api_version));
    let (last, old_time) = match mine {
        Some(i) => {
            let e = entries.remove(i);
            (e.set, e.time)
        }
        None => (Set::new(), None),
    };

    // Fields this manager applied before and no longer does go, unless
    // another applier (or this configuration) still claims them.
    if !last.is_empty() {
        let mut pruned = merged.clone();
        typed::remove_items(&mut pruned, &last, ty);
        let mut claimed = applied.clone();
        for e in entries.iter().filter(|e| e.operation == "Apply") {
            claimed.union_with(&e.set);
        }
        let merged_set = typed::to_field_set(&merged, ty);
        let pruned_set = typed::to_field_set(&pruned, ty);
        let mut owned_back = merged.clone();
        typed::remove_items(
            &mut owned_back,
            &merged_set.difference(&pruned_set.union(&claimed)),
            ty,
        );
        let back_set = typed::to_field_set(&owned_back, ty);
        let mut result = merged.clone();
        typed::remove_items(
            &mut result,
            &merged_set.difference(&back_set).intersection(&last),
            ty,
        );
        merged = result;
    }

    // Conflicts: fields others own that this apply changes or adds.
    let cmp = typed::compare(&live_obj, &merged, ty);
    let mut changed = cmp.added.clone();
    changed.union_with(&cmp.modified);
    let changed = op.owned_part(changed);
    let mut conflicts: Vec<(String, String)> = Vec::new();
    for e in &entries {
        for p in e.set.intersection(&changed).paths() {
            conflicts.push((e.display(), path_string(&p)));
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(conflict_error(conflicts));
    }
    for e in &mut entries {
        e.set.remove(&changed);
        e.set.remove(&cmp.removed);
    }
    let unchanged = cmp.added.is_empty()
        && cmp.modified.is_empty()
        && cmp.removed.is_empty()
        && applied == last;
    let time = match old_time {
        Some(t) if unchanged => Some(t),
        _ => Some(crate::apimachinery::meta::now_rfc3339()),
    };
    entries.push(Entry {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version: op.api_version.to_string(),
        time,
        subresource: op.subresource.to_string(),
        set: applied,
    });
    set_managed_fields(&mut merged, &mut entries);
    Ok(merged)
}

/// Upstream's 409 for apply conflicts: `Apply failed with 1 conflict:
/// conflict with "m": .spec.x`, or for several, grouped by manager.
fn conflict_error(mut conflicts: Vec<(String, String)>) -> ApiError {
    conflicts.sort();
    let causes = conflicts
        .iter()
        .map(|(m, p)| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {m}"),
            field: p.clone(),
        })
        .collect();
    let message = if conflicts.len() == 1 {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            conflicts[0].0, conflicts[0].1
        )
    } else {
        let mut lines = Vec::new();
        let mut current: Option<&str> = None;
        for (m, p) in &conflicts {
            if current != Some(m.as_str()) {
                lines.push(format!("conflicts with {m}:"));
                current = Some(m.as_str());
            }
            lines.push(format!("- {p}"));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError {
        code: 409,
        reason: "Conflict",
        message,
        details: Some(Box::new(StatusDetails {
            causes,
            ..Default::default()
        })),
        continue_token: None,
    }
}

/// The manager of a non-apply write: `fieldManager`, else the User-Agent up
/// to its first `/` (upstream's `prefixFromUserAgent`), at most 128
/// characters.
pub fn manager_or_user_agent(
    field_manager: Option<&str>,
    user_agent: Option<&str>,
) -> Option<String> {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return Some(m.to_string());
    }
    // Upstream's prefixFromUserAgent: the part before the first `/`,
    // printable characters only, at most 128 bytes; a write that names no
    // manager at all is recorded as `unknown` (upstream's BuildManagerInfo).
    let mut prefix = String::new();
    for c in user_agent
        .unwrap_or("")
        .split('/')
        .next()
        .unwrap_or("")
        .chars()
    {
        if c.is_control() {
            continue;
        }
        if prefix.len() + c.len_utf8() > 128 {
            break;
        }
        prefix.push(c);
    }
    if prefix.is_empty() {
        prefix.push_str("unknown");
    }
    Some(prefix)
}

#[cfg(test)]
mod tests;
