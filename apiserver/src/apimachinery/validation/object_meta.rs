//! `ObjectMeta` validation over JSON, after upstream's
//! `k8s.io/apimachinery/pkg/api/validation/objectmeta.go`,
//! `k8s.io/apimachinery/pkg/apis/meta/v1/validation` and the core-API
//! wrappers in `pkg/apis/core/validation` (the standard-finalizer rule).
//!
//! Every function takes the `metadata` object itself (not the whole object)
//! and the path it lives at (usually `FieldPath::new("metadata")`). Missing
//! fields read as their Go zero values; values of the wrong JSON type are
//! treated as absent (the decoder rejects them before validation upstream).
//! Maps (labels, annotations) are walked in document order.

use serde_json::{Map, Value};

use super::field_error::{is_go_printable, FieldError, FieldPath};
use super::names;

/// Upstream's `FieldImmutableErrorMsg`.
pub const FIELD_IMMUTABLE_ERROR_MSG: &str = "field is immutable";
/// Upstream's `IsNegativeErrorMsg`.
pub const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";
/// Upstream's `TotalAnnotationSizeLimitB` (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT_B: usize = 256 * (1 << 10);
/// Upstream's `FieldManagerMaxLength`.
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;
/// Upstream's `MaxSubresourceNameLength`.
pub const MAX_SUBRESOURCE_NAME_LENGTH: usize = 256;
/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";
/// `core.FinalizerKubernetes`.
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

/// How an object's `metadata.name` (and `generateName`) is validated
/// (upstream's `ValidateNameFunc` choices).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: most resources.
    #[default]
    Dns1123Subdomain,
    /// `NameIsDNSLabel`: namespaces.
    Dns1123Label,
    /// `NameIsDNS1035Label`: services.
    Dns1035Label,
    /// `path.ValidatePathSegmentName`: anything usable as one URL path
    /// segment (RBAC objects, custom resources' generic check).
    PathSegment,
}

impl NameRule {
    /// Upstream's error messages for `name` (a `generateName` when `prefix`).
    pub fn validate(self, name: &str, prefix: bool) -> Vec<String> {
        match self {
            NameRule::Dns1123Subdomain => names::name_is_dns_subdomain(name, prefix),
            NameRule::Dns1123Label => names::name_is_dns_label(name, prefix),
            NameRule::Dns1035Label => names::name_is_dns1035_label(name, prefix),
            NameRule::PathSegment => names::validate_path_segment_name(name, prefix),
        }
    }
}

fn str_field<'a>(meta: &'a Value, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or("")
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|items| items.iter().map(value_as_string).collect())
        .unwrap_or_default()
}

fn value_as_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `ValidateObjectMeta` as the core API applies it: upstream's generic
/// metadata rules (see [`validate_object_meta_generic`]) followed by the
/// standard-finalizer rule on each `finalizers[i]`.
pub fn validate_object_meta(
    meta: &Value,
    namespaced: bool,
    rule: NameRule,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = validate_object_meta_generic(meta, namespaced, rule, path);
    errs.extend(validate_kube_finalizers(meta, path));
    errs
}

/// apimachinery's `ValidateObjectMetaAccessor` (create): `generateName`
/// (as a prefix) and `name` per `rule` (`name or generateName is
/// required`), namespace presence and format, `generation >= 0`, labels,
/// annotations, owner references, finalizers and managed fields.
pub fn validate_object_meta_generic(
    meta: &Value,
    namespaced: bool,
    rule: NameRule,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let generate_name = str_field(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in rule.validate(generate_name, true) {
            errs.push(FieldError::invalid(
                path.child("generateName"),
                generate_name,
                msg,
            ));
        }
    }
    let name = str_field(meta, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            path.child("name"),
            "name or generateName is required",
        ));
    } else {
        for msg in rule.validate(name, false) {
            errs.push(FieldError::invalid(path.child("name"), name, msg));
        }
    }
    errs.extend(validate_common(meta, namespaced, path));
    errs
}

fn validate_common(meta: &Value, namespaced: bool, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let namespace = str_field(meta, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errs.push(FieldError::required(path.child("namespace"), ""));
        } else {
            for msg in names::name_is_dns_label(namespace, false) {
                errs.push(FieldError::invalid(path.child("namespace"), namespace, msg));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(
            path.child("namespace"),
            "not allowed on this type",
        ));
    }
    let generation = meta.get("generation").and_then(Value::as_i64).unwrap_or(0);
    errs.extend(validate_nonnegative_field(
        generation,
        &path.child("generation"),
    ));
    errs.extend(validate_labels(
        meta.get("labels").unwrap_or(&Value::Null),
        &path.child("labels"),
    ));
    errs.extend(validate_annotations(
        meta.get("annotations").unwrap_or(&Value::Null),
        &path.child("annotations"),
    ));
    errs.extend(validate_owner_references(
        meta.get("ownerReferences").unwrap_or(&Value::Null),
        &path.child("ownerReferences"),
    ));
    errs.extend(validate_finalizers(
        meta.get("finalizers").unwrap_or(&Value::Null),
        &path.child("finalizers"),
    ));
    errs.extend(validate_managed_fields(
        meta.get("managedFields").unwrap_or(&Value::Null),
        &path.child("managedFields"),
    ));
    errs
}

/// `ValidateNonnegativeField`.
pub fn validate_nonnegative_field(value: i64, path: &FieldPath) -> Vec<FieldError> {
    if value < 0 {
        vec![FieldError::invalid(path, value, IS_NEGATIVE_ERROR_MSG)]
    } else {
        Vec::new()
    }
}

/// `ValidateLabelName`: a qualified name.
pub fn validate_label_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    names::is_qualified_name(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path, name, msg))
        .collect()
}

/// `ValidateLabels` over a JSON map: qualified-name keys and label values,
/// all reported at `path` itself (upstream does not key the path).
pub fn validate_labels(labels: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(map) = labels.as_object() {
        for (k, v) in map {
            errs.extend(validate_label_name(k, path));
            let v = value_as_string(v);
            for msg in names::is_valid_label_value(&v) {
                errs.push(FieldError::invalid(path, v.as_str(), msg));
            }
        }
    }
    errs
}

/// `ValidateAnnotations`: keys are qualified names once lowercased, and
/// keys plus values total at most 256 KiB.
pub fn validate_annotations(annotations: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(map) = annotations.as_object() else {
        return errs;
    };
    let mut total = 0usize;
    for (k, v) in map {
        for msg in names::is_qualified_name(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, k.as_str(), msg));
        }
        total += k.len() + value_as_string(v).len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B {
        errs.push(FieldError::too_long(
            path,
            "",
            TOTAL_ANNOTATION_SIZE_LIMIT_B as i64,
        ));
    }
    errs
}

/// Splits an `apiVersion` as `schema.ParseGroupVersion` does; `None` when it
/// has more than one `/`.
fn parse_group_version(api_version: &str) -> Option<(&str, &str)> {
    if api_version.is_empty() || api_version == "/" {
        return Some(("", ""));
    }
    match api_version.matches('/').count() {
        0 => Some(("", api_version)),
        1 => api_version.split_once('/'),
        _ => None,
    }
}

/// `ValidateOwnerReferences`: every reference needs a version, kind, name
/// and uid (errors at `ownerReferences.<field>`, unindexed as upstream),
/// `v1 Event` may not own, and at most one reference may be the controller.
pub fn validate_owner_references(refs: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(items) = refs.as_array() else {
        return errs;
    };
    let mut first_controller: Option<String> = None;
    for r in items {
        let api_version = str_field(r, "apiVersion");
        let kind = str_field(r, "kind");
        let name = str_field(r, "name");
        let uid = str_field(r, "uid");
        let (group, version) = parse_group_version(api_version).unwrap_or(("", ""));
        if version.is_empty() {
            errs.push(FieldError::invalid(
                path.child("apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        if kind.is_empty() {
            errs.push(FieldError::invalid(
                path.child("kind"),
                kind,
                "must not be empty",
            ));
        }
        if name.is_empty() {
            errs.push(FieldError::invalid(
                path.child("name"),
                name,
                "must not be empty",
            ));
        }
        if uid.is_empty() {
            errs.push(FieldError::invalid(
                path.child("uid"),
                uid,
                "must not be empty",
            ));
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            errs.push(FieldError::invalid(
                path,
                r.clone(),
                format!("{group}/{version}, Kind={kind} is disallowed from being an owner"),
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{name}");
            match &first_controller {
                Some(first) => errs.push(FieldError::invalid(
                    path,
                    refs.clone(),
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                    ),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errs
}

/// `ValidateFinalizers`: qualified names (errors at `finalizers`,
/// unindexed), and not both `orphan` and `foregroundDeletion`.
pub fn validate_finalizers(finalizers: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = string_list(Some(finalizers));
    for f in &list {
        for msg in names::is_qualified_name(f) {
            errs.push(FieldError::invalid(path, f.as_str(), msg));
        }
    }
    let has = |n: &str| list.iter().any(|f| f == n);
    if has(FINALIZER_DELETE_DEPENDENTS) && has(FINALIZER_ORPHAN_DEPENDENTS) {
        errs.push(FieldError::invalid(
            path,
            finalizers.clone(),
            format!(
                "finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set"
            ),
        ));
    }
    errs
}

/// The core API's `validateKubeFinalizerName`: a finalizer without a `/`
/// must be one of the standard ones (`kubernetes`, `orphan`,
/// `foregroundDeletion`).
pub fn validate_kube_finalizer_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    let standard = [
        FINALIZER_KUBERNETES,
        FINALIZER_ORPHAN_DEPENDENTS,
        FINALIZER_DELETE_DEPENDENTS,
    ];
    if !name.contains('/') && !standard.contains(&name) {
        vec![FieldError::invalid(
            path,
            name,
            "name is neither a standard finalizer name nor is it fully qualified",
        )]
    } else {
        Vec::new()
    }
}

fn validate_kube_finalizers(meta: &Value, path: &FieldPath) -> Vec<FieldError> {
    let fin_path = path.child("finalizers");
    string_list(meta.get("finalizers"))
        .iter()
        .enumerate()
        .flat_map(|(i, f)| validate_kube_finalizer_name(f, &fin_path.index(i)))
        .collect()
}

/// `ValidateFieldManager`: at most 128 bytes, printable characters only.
pub fn validate_field_manager(manager: &str, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(FieldError::too_long(
            path,
            manager,
            FIELD_MANAGER_MAX_LENGTH as i64,
        ));
    }
    for (i, c) in manager.char_indices() {
        if !is_go_printable(c) {
            errs.push(FieldError::invalid(
                path,
                manager,
                format!("invalid character U+{:04X} (at position {i})", c as u32),
            ));
        }
    }
    errs
}

/// `ValidateManagedFields`: operation `Apply`/`Update`, fieldsType
/// `FieldsV1`, a valid manager and a bounded subresource.
pub fn validate_managed_fields(fields: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(items) = fields.as_array() else {
        return errs;
    };
    for (i, entry) in items.iter().enumerate() {
        let p = path.index(i);
        let operation = str_field(entry, "operation");
        if operation != "Apply" && operation != "Update" {
            errs.push(FieldError::invalid(
                p.child("operation"),
                operation,
                "must be `Apply` or `Update`",
            ));
        }
        let fields_type = str_field(entry, "fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            errs.push(FieldError::invalid(
                p.child("fieldsType"),
                fields_type,
                "must be `FieldsV1`",
            ));
        }
        errs.extend(validate_field_manager(
            str_field(entry, "manager"),
            &p.child("manager"),
        ));
        let subresource = str_field(entry, "subresource");
        if subresource.len() > MAX_SUBRESOURCE_NAME_LENGTH {
            errs.push(FieldError::too_long(
                p.child("subresource"),
                subresource,
                MAX_SUBRESOURCE_NAME_LENGTH as i64,
            ));
        }
    }
    errs
}

/// metav1's `ValidateLabelSelector` over a `LabelSelector` JSON object
/// (`matchLabels`, `matchExpressions`), as workload validation uses it.
pub fn validate_label_selector(selector: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if selector.is_null() {
        return errs;
    }
    errs.extend(validate_labels(
        selector.get("matchLabels").unwrap_or(&Value::Null),
        &path.child("matchLabels"),
    ));
    if let Some(exprs) = selector.get("matchExpressions").and_then(Value::as_array) {
        for (i, expr) in exprs.iter().enumerate() {
            let p = path.child("matchExpressions").index(i);
            let operator = str_field(expr, "operator");
            let values = string_list(expr.get("values"));
            match operator {
                "In" | "NotIn" => {
                    if values.is_empty() {
                        errs.push(FieldError::required(
                            p.child("values"),
                            "must be specified when `operator` is 'In' or 'NotIn'",
                        ));
                    }
                }
                "Exists" | "DoesNotExist" => {
                    if !values.is_empty() {
                        errs.push(FieldError::forbidden(
                            p.child("values"),
                            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                        ));
                    }
                }
                _ => errs.push(FieldError::invalid(
                    p.child("operator"),
                    operator,
                    "not a valid selector operator",
                )),
            }
            errs.extend(validate_label_name(str_field(expr, "key"), &p.child("key")));
            for (vi, v) in values.iter().enumerate() {
                for msg in names::is_valid_label_value(v) {
                    errs.push(FieldError::invalid(
                        p.child("values").index(vi),
                        v.as_str(),
                        msg,
                    ));
                }
            }
        }
    }
    errs
}

/// `ValidateImmutableField` for plain JSON values (compared structurally).
pub fn validate_immutable_field(new: &Value, old: &Value, path: &FieldPath) -> Vec<FieldError> {
    if new != old {
        vec![FieldError::invalid(
            path,
            new.clone(),
            FIELD_IMMUTABLE_ERROR_MSG,
        )]
    } else {
        Vec::new()
    }
}

/// Parses an RFC 3339 timestamp into seconds since the Unix epoch and
/// nanoseconds, for semantic comparison of `metav1.Time` values.
fn parse_rfc3339(s: &str) -> Option<(i64, u32)> {
    let b = s.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(range)?;
        if part.bytes().all(|c| c.is_ascii_digit()) && !part.is_empty() {
            part.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    if b[10] != b'T' && b[10] != b't' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end == start {
            return None;
        }
        let frac = s.get(start..end)?;
        let digits: String = frac.chars().take(9).collect();
        let scale = 10u32.pow(9 - digits.len() as u32);
        nanos = digits.parse::<u32>().ok()? * scale;
        i = end;
    }
    let offset_secs = match b.get(i) {
        Some(b'Z') | Some(b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let h = num(i + 1..i + 3)?;
            let m = num(i + 4..i + 6)?;
            let off = h * 3600 + m * 60;
            if sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    // Days from civil (proleptic Gregorian), after Howard Hinnant.
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    let secs = days * 86400 + hour * 3600 + min * 60 + sec - offset_secs;
    Some((secs, nanos))
}

/// Semantic equality of two optional `metav1.Time` JSON values (absent and
/// `null` are the zero time; equal instants in different zones are equal).
fn times_equal(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a.filter(|v| !v.is_null()), b.filter(|v| !v.is_null())) {
        (None, None) => true,
        (Some(x), Some(y)) => match (
            x.as_str().and_then(parse_rfc3339),
            y.as_str().and_then(parse_rfc3339),
        ) {
            (Some(p), Some(q)) => p == q,
            _ => x == y,
        },
        _ => false,
    }
}

/// The core API's `ValidateObjectMetaUpdate`: upstream's generic update
/// rules (see [`validate_object_meta_update_generic`]) plus the
/// standard-finalizer rule on the new object's `finalizers[i]`.
pub fn validate_object_meta_update(
    new_meta: &Value,
    old_meta: &Value,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = validate_object_meta_update_generic(new_meta, old_meta, path);
    errs.extend(validate_kube_finalizers(new_meta, path));
    errs
}

/// apimachinery's `ValidateObjectMetaAccessorUpdate`: no new finalizers
/// once deletion started, `resourceVersion` required, `generation` never
/// decremented, `name`/`namespace`/`uid`/`creationTimestamp`/
/// `deletionTimestamp`/`deletionGracePeriodSeconds` immutable, then labels,
/// annotations, owner references and managed fields of the new metadata.
///
/// Run [`prepare_object_meta_for_update`] first, as upstream's
/// `BeforeUpdate` does, so that the server-owned fields carried over from
/// the old object do not trip the immutability checks. Name format and the
/// other create rules are not re-checked here (kinds' `ValidateUpdate` do
/// that by calling their create validation as well).
pub fn validate_object_meta_update_generic(
    new_meta: &Value,
    old_meta: &Value,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();

    let old_deleting = old_meta
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if old_deleting {
        let old_fin = string_list(old_meta.get("finalizers"));
        let mut extra: Vec<String> = string_list(new_meta.get("finalizers"))
            .into_iter()
            .filter(|f| !old_fin.contains(f))
            .collect();
        extra.sort();
        extra.dedup();
        if !extra.is_empty() {
            let rendered: Vec<String> = extra
                .iter()
                .map(|f| super::field_error::go_quote(f))
                .collect();
            errs.push(FieldError::forbidden(
                path.child("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    rendered.join(", ")
                ),
            ));
        }
    }

    let rv = str_field(new_meta, "resourceVersion");
    if rv.is_empty() {
        errs.push(FieldError::invalid(
            path.child("resourceVersion"),
            rv,
            "must be specified for an update",
        ));
    }

    let new_gen = new_meta
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let old_gen = old_meta
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if new_gen < old_gen {
        errs.push(FieldError::invalid(
            path.child("generation"),
            new_gen,
            "must not be decremented",
        ));
    }

    for key in ["name", "namespace", "uid"] {
        let (n, o) = (str_field(new_meta, key), str_field(old_meta, key));
        if n != o {
            errs.push(FieldError::invalid(
                path.child(key),
                n,
                FIELD_IMMUTABLE_ERROR_MSG,
            ));
        }
    }
    for key in ["creationTimestamp", "deletionTimestamp"] {
        let (n, o) = (new_meta.get(key), old_meta.get(key));
        if !times_equal(n, o) {
            errs.push(FieldError::invalid(
                path.child(key),
                n.cloned().unwrap_or(Value::Null),
                FIELD_IMMUTABLE_ERROR_MSG,
            ));
        }
    }
    let grace = |m: &Value| m.get("deletionGracePeriodSeconds").and_then(Value::as_i64);
    if grace(new_meta) != grace(old_meta) {
        errs.push(FieldError::invalid(
            path.child("deletionGracePeriodSeconds"),
            grace(new_meta).map(Value::from).unwrap_or(Value::Null),
            FIELD_IMMUTABLE_ERROR_MSG,
        ));
    }

    errs.extend(validate_labels(
        new_meta.get("labels").unwrap_or(&Value::Null),
        &path.child("labels"),
    ));
    errs.extend(validate_annotations(
        new_meta.get("annotations").unwrap_or(&Value::Null),
        &path.child("annotations"),
    ));
    errs.extend(validate_owner_references(
        new_meta.get("ownerReferences").unwrap_or(&Value::Null),
        &path.child("ownerReferences"),
    ));
    errs.extend(validate_managed_fields(
        new_meta.get("managedFields").unwrap_or(&Value::Null),
        &path.child("managedFields"),
    ));
    errs
}

/// The server-owned metadata carry-over of upstream's `rest.BeforeUpdate`
/// (run after the strategy's `PrepareForUpdate`): an empty `uid` takes the
/// old one, a set old `creationTimestamp` and `deletionTimestamp` always
/// win, and a missing `deletionGracePeriodSeconds` takes the old value.
/// (`BeforeUpdate` also resets `generation` to the old value *before*
/// `PrepareForUpdate`; that step is left to the caller.)
pub fn prepare_object_meta_for_update(new_meta: &mut Value, old_meta: &Value) {
    if !new_meta.is_object() {
        *new_meta = Value::Object(Map::new());
    }
    let Some(new) = new_meta.as_object_mut() else {
        return;
    };
    let present = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
    if new
        .get("uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        if let Some(uid) = old_meta.get("uid").filter(|v| !v.is_null()) {
            new.insert("uid".into(), uid.clone());
        }
    }
    for key in ["creationTimestamp", "deletionTimestamp"] {
        if let Some(old) = old_meta.get(key).filter(|v| !v.is_null()) {
            new.insert(key.into(), old.clone());
        }
    }
    let grace = old_meta.get("deletionGracePeriodSeconds");
    if present(grace) && !present(new.get("deletionGracePeriodSeconds")) {
        if let Some(g) = grace {
            new.insert("deletionGracePeriodSeconds".into(), g.clone());
        }
    }
}

#[cfg(test)]
#[path = "object_meta_tests.rs"]
mod tests;
