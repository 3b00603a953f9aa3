//! Unit tests of `object_meta`.
use super::*;
use serde_json::json;

fn meta_path() -> FieldPath {
    FieldPath::new("metadata")
}

fn msgs(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(|e| e.to_string()).collect()
}

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

#[test]
fn valid_metadata_passes() {
    let m = json!({
        "name": "web-1", "namespace": "default", "generation": 3,
        "labels": {"app": "web", "example.com/tier": ""},
        "annotations": {"Example.com/Note": "x"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1", "controller": true}],
        "finalizers": ["kubernetes", "example.com/cleanup"],
        "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1"}]
    });
    let errs = validate_object_meta(&m, true, NameRule::Dns1123Subdomain, &meta_path());
    assert!(errs.is_empty(), "{:?}", msgs(&errs));
}

#[test]
fn name_required_or_invalid() {
    let errs = validate_object_meta(&json!({}), false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec!["metadata.name: Required value: name or generateName is required"]
    );
    let errs = validate_object_meta(
        &Value::Null,
        false,
        NameRule::Dns1123Subdomain,
        &meta_path(),
    );
    assert_eq!(errs.len(), 1);
    let errs = validate_object_meta(
        &json!({"name": "Bad_Name"}),
        false,
        NameRule::Dns1123Subdomain,
        &meta_path(),
    );
    assert_eq!(
        msgs(&errs),
        vec![format!(
            "metadata.name: Invalid value: \"Bad_Name\": {SUBDOMAIN_MSG}"
        )]
    );
    assert_eq!(
        errs[0].message_body(),
        format!("Invalid value: \"Bad_Name\": {SUBDOMAIN_MSG}")
    );
    assert_eq!(errs[0].error_type.reason(), "FieldValueInvalid");
}

#[test]
fn generate_name_allows_trailing_dash() {
    let m = json!({"generateName": "web-", "name": "web-x7k2q", "namespace": "ns"});
    assert!(validate_object_meta(&m, true, NameRule::Dns1123Subdomain, &meta_path()).is_empty());
    let m = json!({"generateName": "Web-", "name": "web-x7k2q", "namespace": "ns"});
    let errs = validate_object_meta(&m, true, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec![format!(
            "metadata.generateName: Invalid value: \"Web-\": {SUBDOMAIN_MSG}"
        )]
    );
    // generateName alone (no generated name yet) still requires a name.
    let m = json!({"generateName": "web-", "namespace": "ns"});
    let errs = validate_object_meta(&m, true, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec!["metadata.name: Required value: name or generateName is required"]
    );
}

#[test]
fn name_rules() {
    let errs = validate_object_meta(
        &json!({"name": "a.b"}),
        false,
        NameRule::Dns1123Label,
        &meta_path(),
    );
    assert_eq!(
        msgs(&errs),
        vec!["metadata.name: Invalid value: \"a.b\": must not contain dots"]
    );
    let errs = validate_object_meta(
        &json!({"name": "a/b"}),
        false,
        NameRule::PathSegment,
        &meta_path(),
    );
    assert_eq!(
        msgs(&errs),
        vec!["metadata.name: Invalid value: \"a/b\": may not contain '/'"]
    );
    let errs = validate_object_meta(
        &json!({"name": "system:admin"}),
        false,
        NameRule::PathSegment,
        &meta_path(),
    );
    assert!(errs.is_empty());
    let errs = validate_object_meta(
        &json!({"name": "1svc"}),
        false,
        NameRule::Dns1035Label,
        &meta_path(),
    );
    assert_eq!(errs.len(), 1);
    assert_eq!(
        validate_object_meta(
            &json!({"name": ".."}),
            false,
            NameRule::PathSegment,
            &meta_path()
        )[0]
        .to_string(),
        "metadata.name: Invalid value: \"..\": may not be '..'"
    );
}

#[test]
fn namespace_rules() {
    let errs = validate_object_meta(
        &json!({"name": "a"}),
        true,
        NameRule::Dns1123Subdomain,
        &meta_path(),
    );
    assert_eq!(msgs(&errs), vec!["metadata.namespace: Required value"]);
    let errs = validate_object_meta(
        &json!({"name": "a", "namespace": "x"}),
        false,
        NameRule::Dns1123Subdomain,
        &meta_path(),
    );
    assert_eq!(
        msgs(&errs),
        vec!["metadata.namespace: Forbidden: not allowed on this type"]
    );
    let errs = validate_object_meta(
        &json!({"name": "a", "namespace": "Bad"}),
        true,
        NameRule::Dns1123Subdomain,
        &meta_path(),
    );
    assert_eq!(
        msgs(&errs),
        vec![format!(
            "metadata.namespace: Invalid value: \"Bad\": {LABEL_MSG}"
        )]
    );
}

#[test]
fn generation_must_be_nonnegative() {
    let errs = validate_object_meta(
        &json!({"name": "a", "generation": -1}),
        false,
        NameRule::Dns1123Subdomain,
        &meta_path(),
    );
    assert_eq!(
        msgs(&errs),
        vec!["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]
    );
}

#[test]
fn labels_and_annotations() {
    let m = json!({"name": "a", "labels": {"-bad": "ok", "good": "-bad"}});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(errs.len(), 2);
    assert!(errs[0]
        .to_string()
        .starts_with("metadata.labels: Invalid value: \"-bad\": name part must consist of"));
    assert!(errs[1].to_string().starts_with(
        "metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string"
    ));
    let m = json!({"name": "a", "annotations": {"Upper/Case": "x", "bad key": "y"}});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(errs.len(), 1);
    assert!(errs[0]
        .to_string()
        .starts_with("metadata.annotations: Invalid value: \"bad key\": name part must consist"));
    let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_B);
    let m = json!({"name": "a", "annotations": {"k": big}});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
    assert_eq!(errs[0].error_type.reason(), "FieldValueTooLong");
    let exact = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_B - 1);
    let m = json!({"name": "a", "annotations": {"k": exact}});
    assert!(validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path()).is_empty());
}

#[test]
fn owner_references() {
    let m = json!({"name": "a", "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": ""}]});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec![
            "metadata.ownerReferences.apiVersion: Invalid value: \"\": version must not be empty",
            "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
            "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty",
        ]
    );
    let m = json!({"name": "a", "ownerReferences": [{"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"}]});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(msgs(&errs), vec!["metadata.ownerReferences.apiVersion: Invalid value: \"a/b/c\": version must not be empty"]);
    let m = json!({"name": "a", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "one", "uid": "1", "controller": true},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "two", "uid": "2", "controller": true}
    ]});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "metadata.ownerReferences");
    assert!(errs[0].detail.ends_with(
        "Only one reference can have Controller set to true. Found \"true\" in references for ReplicaSet/one and StatefulSet/two"
    ));
    let m = json!({"name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0].detail,
        "/v1, Kind=Event is disallowed from being an owner"
    );
}

#[test]
fn finalizers() {
    let m = json!({"name": "a", "finalizers": ["orphan", "foregroundDeletion"]});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec!["metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set"]
    );
    let m = json!({"name": "a", "finalizers": ["custom", "example.com/x", "-bad/x"]});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(errs.len(), 2);
    assert!(errs[0].to_string().starts_with("metadata.finalizers: Invalid value: \"-bad/x\": prefix part a lowercase RFC 1123 subdomain"));
    assert_eq!(
        errs[1].to_string(),
        "metadata.finalizers[0]: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"
    );
    // The generic (custom resource) flavour has no standard-finalizer rule.
    let m = json!({"name": "a", "finalizers": ["custom"]});
    assert!(
        validate_object_meta_generic(&m, false, NameRule::Dns1123Subdomain, &meta_path())
            .is_empty()
    );
}

#[test]
fn managed_fields() {
    let m = json!({"name": "a", "managedFields": [{"manager": "m\u{7}", "operation": "Patch", "fieldsType": "FieldsV2", "subresource": "s".repeat(257)}]});
    let errs = validate_object_meta(&m, false, NameRule::Dns1123Subdomain, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec![
            "metadata.managedFields[0].operation: Invalid value: \"Patch\": must be `Apply` or `Update`",
            "metadata.managedFields[0].fieldsType: Invalid value: \"FieldsV2\": must be `FieldsV1`",
            "metadata.managedFields[0].manager: Invalid value: \"m\\a\": invalid character U+0007 (at position 1)",
            "metadata.managedFields[0].subresource: Too long: may not be more than 256 bytes",
        ]
    );
    let errs = validate_field_manager(&"m".repeat(129), &FieldPath::new("fieldManager"));
    assert_eq!(
        msgs(&errs),
        vec!["fieldManager: Too long: may not be more than 128 bytes"]
    );
}

#[test]
fn label_selector_validation() {
    let sel = json!({"matchLabels": {"app": "-x"}, "matchExpressions": [
        {"key": "a", "operator": "In", "values": []},
        {"key": "b", "operator": "Exists", "values": ["v"]},
        {"key": "c", "operator": "Bogus"},
        {"key": "-d", "operator": "NotIn", "values": ["ok", "-no"]}
    ]});
    let errs = validate_label_selector(&sel, &FieldPath::new("spec").child("selector"));
    let m = msgs(&errs);
    assert_eq!(m.len(), 6, "{m:?}");
    assert!(m[0].starts_with("spec.selector.matchLabels: Invalid value: \"-x\": a valid label"));
    assert_eq!(m[1], "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'");
    assert_eq!(m[2], "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    assert_eq!(m[3], "spec.selector.matchExpressions[2].operator: Invalid value: \"Bogus\": not a valid selector operator");
    assert!(
        m[4].starts_with("spec.selector.matchExpressions[3].key: Invalid value: \"-d\": name part")
    );
    assert!(m[5].starts_with(
        "spec.selector.matchExpressions[3].values[1]: Invalid value: \"-no\": a valid label"
    ));
    assert!(validate_label_selector(&Value::Null, &FieldPath::new("s")).is_empty());
}

fn base_old() -> Value {
    json!({"name": "a", "namespace": "ns", "uid": "u1", "resourceVersion": "5", "generation": 2,
           "creationTimestamp": "2024-01-01T00:00:00Z"})
}

#[test]
fn update_unchanged_is_valid() {
    let old = base_old();
    let new = old.clone();
    assert!(validate_object_meta_update(&new, &old, &meta_path()).is_empty());
    // The same instant in another zone is semantically equal.
    let mut new = old.clone();
    new["creationTimestamp"] = json!("2024-01-01T01:00:00+01:00");
    assert!(validate_object_meta_update(&new, &old, &meta_path()).is_empty());
}

#[test]
fn update_immutable_fields() {
    let old = base_old();
    let mut new = old.clone();
    new["name"] = json!("b");
    new["namespace"] = json!("other");
    new["uid"] = json!("u2");
    new["creationTimestamp"] = json!("2025-01-01T00:00:00Z");
    new["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
    new["deletionGracePeriodSeconds"] = json!(30);
    let errs = validate_object_meta_update(&new, &old, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec![
            "metadata.name: Invalid value: \"b\": field is immutable",
            "metadata.namespace: Invalid value: \"other\": field is immutable",
            "metadata.uid: Invalid value: \"u2\": field is immutable",
            "metadata.creationTimestamp: Invalid value: \"2025-01-01T00:00:00Z\": field is immutable",
            "metadata.deletionTimestamp: Invalid value: \"2025-01-01T00:00:00Z\": field is immutable",
            "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
        ]
    );
}

#[test]
fn update_resource_version_generation_and_finalizers() {
    let mut old = base_old();
    old["deletionTimestamp"] = json!("2024-02-01T00:00:00Z");
    old["finalizers"] = json!(["example.com/a"]);
    let mut new = old.clone();
    new["resourceVersion"] = json!("");
    new["generation"] = json!(1);
    new["finalizers"] = json!(["example.com/c", "example.com/a", "example.com/b"]);
    let errs = validate_object_meta_update(&new, &old, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec![
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/b\", \"example.com/c\"}",
            "metadata.resourceVersion: Invalid value: \"\": must be specified for an update",
            "metadata.generation: Invalid value: 1: must not be decremented",
        ]
    );
    // The core flavour checks new finalizer names too.
    let old = base_old();
    let mut new = old.clone();
    new["finalizers"] = json!(["bogus"]);
    let errs = validate_object_meta_update(&new, &old, &meta_path());
    assert_eq!(
        msgs(&errs),
        vec!["metadata.finalizers[0]: Invalid value: \"bogus\": name is neither a standard finalizer name nor is it fully qualified"]
    );
    assert!(validate_object_meta_update_generic(&new, &old, &meta_path()).is_empty());
}

#[test]
fn update_revalidates_labels() {
    let old = base_old();
    let mut new = old.clone();
    new["labels"] = json!({"a": "b c"});
    let errs = validate_object_meta_update(&new, &old, &meta_path());
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "metadata.labels");
}

#[test]
fn prepare_for_update_carries_server_fields() {
    let mut old = base_old();
    old["deletionTimestamp"] = json!("2024-02-01T00:00:00Z");
    old["deletionGracePeriodSeconds"] = json!(30);
    let mut new = json!({"name": "a", "namespace": "ns", "resourceVersion": "5", "generation": 2,
                         "creationTimestamp": "2030-01-01T00:00:00Z"});
    prepare_object_meta_for_update(&mut new, &old);
    assert_eq!(new["uid"], json!("u1"));
    assert_eq!(new["creationTimestamp"], json!("2024-01-01T00:00:00Z"));
    assert_eq!(new["deletionTimestamp"], json!("2024-02-01T00:00:00Z"));
    assert_eq!(new["deletionGracePeriodSeconds"], json!(30));
    assert!(validate_object_meta_update(&new, &old, &meta_path()).is_empty());
    // A client-supplied (different) uid is kept, and then rejected.
    let mut new = json!({"name": "a", "namespace": "ns", "uid": "zz", "resourceVersion": "5", "generation": 2});
    prepare_object_meta_for_update(&mut new, &base_old());
    assert_eq!(new["uid"], json!("zz"));
    let mut null_meta = Value::Null;
    prepare_object_meta_for_update(&mut null_meta, &base_old());
    assert_eq!(null_meta["uid"], json!("u1"));
}

#[test]
fn rfc3339_parsing() {
    assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some((0, 0)));
    assert_eq!(parse_rfc3339("1970-01-02T00:00:00Z"), Some((86400, 0)));
    assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some((951868800, 0)));
    assert_eq!(
        parse_rfc3339("1970-01-01T00:00:00.5Z"),
        Some((0, 500_000_000))
    );
    assert_eq!(parse_rfc3339("1970-01-01T01:00:00+01:00"), Some((0, 0)));
    assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), Some((-1, 0)));
    assert_eq!(parse_rfc3339("garbage"), None);
    assert_eq!(parse_rfc3339("2024-13-01T00:00:00Z"), None);
}
