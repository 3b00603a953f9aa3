//! Apply and update scenarios over whole objects.

use serde_json::{json, Value};

use super::typeinfo::StructuralTypes;
use super::*;
use crate::schema::Schema;

fn types() -> StructuralTypes {
    StructuralTypes(std::sync::Arc::new(Schema::compile(&json!({
        "type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "port": {"type": "integer"}}}}
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
        }
    }))))
}

fn op<'a>(t: &'a StructuralTypes, sub: &'static str) -> Operation<'a> {
    Operation {
        types: t,
        api_version: "x.io/v1".into(),
        subresource: sub,
        has_status: true,
    }
}

fn managers(obj: &Value) -> Vec<(String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_string(),
                        e["operation"].as_str().unwrap_or("").to_string(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn cfg(replicas: i64, labels: Value) -> Value {
    json!({"apiVersion": "x.io/v1", "kind": "K", "metadata": {"name": "a", "labels": labels},
        "spec": {"replicas": replicas, "ports": [{"name": "http", "port": 80}]}})
}

#[test]
fn apply_creates_then_updates_and_prunes() {
    let t = types();
    let o = op(&t, "");
    let created =
        apply(&o, None, &cfg(1, json!({"a": "1", "b": "2"})), "mgr", false).expect("create");
    assert_eq!(created["spec"]["replicas"], 1);
    let m = managers(&created);
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].0.as_str(), m[0].1.as_str()), ("mgr", "Apply"));
    assert_eq!(
        m[0].2,
        json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}},
            "f:spec": {"f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
                "f:replicas": {}}})
    );
    // Re-apply: replicas changed, label b dropped from the config.
    let again =
        apply(&o, Some(&created), &cfg(3, json!({"a": "1"})), "mgr", false).expect("re-apply");
    assert_eq!(again["spec"]["replicas"], 3);
    assert_eq!(again["metadata"]["labels"], json!({"a": "1"}));
}

#[test]
fn conflicts_and_force() {
    let t = types();
    let o = op(&t, "");
    let created = apply(&o, None, &cfg(1, json!({})), "mgr", false).expect("create");
    // Another manager updates replicas.
    let mut scaled = created.clone();
    scaled["spec"]["replicas"] = json!(5);
    track_update(&o, Some(&created), &mut scaled, Some("scaler"));
    let m = managers(&scaled);
    assert_eq!(m.len(), 2);
    let scaler = m.iter().find(|e| e.0 == "scaler").expect("scaler entry");
    assert_eq!(scaler.2, json!({"f:spec": {"f:replicas": {}}}));
    let mgr = m.iter().find(|e| e.0 == "mgr").expect("mgr entry");
    assert!(mgr.2["f:spec"].get("f:replicas").is_none());

    // Applying another value conflicts.
    let err = apply(&o, Some(&scaled), &cfg(2, json!({})), "mgr", false).expect_err("conflict");
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "Conflict");
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"scaler\" using x.io/v1: .spec.replicas"
    );
    let causes = &err.details.as_ref().expect("details").causes;
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    assert_eq!(causes[0].field, ".spec.replicas");

    // The same value is shared, not a conflict.
    let shared = apply(&o, Some(&scaled), &cfg(5, json!({})), "mgr", false).expect("shared");
    assert_eq!(managers(&shared).len(), 2);

    // Force takes ownership; the scaler's entry becomes empty and goes.
    let forced = apply(&o, Some(&scaled), &cfg(2, json!({})), "mgr", true).expect("force");
    assert_eq!(forced["spec"]["replicas"], 2);
    let m = managers(&forced);
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].0, "mgr");
}

#[test]
fn several_conflicts_message() {
    let t = types();
    let o = op(&t, "");
    let live = json!({"apiVersion": "x.io/v1", "kind": "K", "metadata": {"name": "a"},
        "spec": {"replicas": 1, "ports": [{"name": "http", "port": 80}]}});
    let mut owned = live.clone();
    track_update(&o, None, &mut owned, Some("other"));
    let err = apply(
        &o,
        Some(&owned),
        &json!({"apiVersion": "x.io/v1", "kind": "K", "metadata": {"name": "a"},
            "spec": {"replicas": 2, "ports": [{"name": "http", "port": 81}]}}),
        "mgr",
        false,
    )
    .expect_err("conflicts");
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"other\" using x.io/v1:\n- .spec.ports[name=\"http\"].port\n- .spec.replicas"
    );
}

#[test]
fn removed_list_item_kept_when_another_applier_owns_it() {
    let t = types();
    let o = op(&t, "");
    let c1 = apply(&o, None, &cfg(1, json!({})), "one", false).expect("one");
    let c2 = apply(
        &o,
        Some(&c1),
        &json!({"apiVersion": "x.io/v1", "kind": "K", "metadata": {"name": "a"},
            "spec": {"ports": [{"name": "http", "port": 80}, {"name": "x", "port": 1}]}}),
        "two",
        false,
    )
    .expect("two");
    // "one" drops its ports: "http" stays (two applies it), "x" too.
    let c3 = apply(
        &o,
        Some(&c2),
        &json!({"apiVersion": "x.io/v1", "kind": "K", "metadata": {"name": "a"}, "spec": {"replicas": 1}}),
        "one",
        false,
    )
    .expect("one again");
    assert_eq!(c3["spec"]["ports"].as_array().map(Vec::len), Some(2));
    // "two" drops "x": it goes.
    let c4 = apply(
        &o,
        Some(&c3),
        &json!({"apiVersion": "x.io/v1", "kind": "K", "metadata": {"name": "a"},
            "spec": {"ports": [{"name": "http", "port": 80}]}}),
        "two",
        false,
    )
    .expect("two again");
    assert_eq!(c4["spec"]["ports"], json!([{"name": "http", "port": 80}]));
}

#[test]
fn status_is_reset_and_status_writes_own_only_status() {
    let t = types();
    let main = op(&t, "");
    let mut with_status = cfg(1, json!({}));
    with_status["status"] = json!({"ready": true});
    let created = apply(&main, None, &with_status, "mgr", false).expect("create");
    assert!(created.get("status").is_none());
    let status_op = op(&t, "status");
    let mut updated = created.clone();
    updated["status"] = json!({"ready": true});
    updated["spec"]["replicas"] = json!(9);
    track_update(&status_op, Some(&created), &mut updated, Some("ctrl"));
    let ctrl = managed::decode(managed_of(&updated)).expect("decode");
    let e = ctrl.iter().find(|e| e.manager == "ctrl").expect("ctrl");
    assert_eq!(e.subresource, "status");
    assert_eq!(
        e.set.to_fields_v1(),
        json!({"f:status": {".": {}, "f:ready": {}}})
    );
}

#[test]
fn update_records_and_resets() {
    let t = types();
    let o = op(&t, "");
    let mut obj = json!({"apiVersion": "x.io/v1", "kind": "K",
        "metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"replicas": 1}});
    track_update(&o, None, &mut obj, Some("creator"));
    assert_eq!(
        managers(&obj)[0].2,
        json!({"f:metadata": {"f:labels": {".": {}, "f:x": {}}}, "f:spec": {".": {}, "f:replicas": {}}})
    );
    // A PUT without managedFields keeps them.
    let mut put = obj.clone();
    put["metadata"]
        .as_object_mut()
        .map(|m| m.remove("managedFields"));
    track_update(&o, Some(&obj), &mut put, Some("creator"));
    assert_eq!(managers(&put), managers(&obj));
    // Garbage is replaced by the live entries.
    let mut garbage = obj.clone();
    garbage["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Nope"}]);
    track_update(&o, Some(&obj), &mut garbage, Some("creator"));
    assert_eq!(managers(&garbage), managers(&obj));
    // [{}] clears them.
    let mut reset = obj.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    track_update(&o, Some(&obj), &mut reset, Some("creator"));
    assert!(reset["metadata"].get("managedFields").is_none());
    // Removing a field removes it from its owner.
    let mut removed = obj.clone();
    removed["metadata"]
        .as_object_mut()
        .map(|m| m.remove("labels"));
    track_update(&o, Some(&obj), &mut removed, Some("other"));
    assert_eq!(
        managers(&removed)[0].2,
        json!({"f:spec": {".": {}, "f:replicas": {}}})
    );
}

#[test]
fn apply_rejects_managed_fields_in_config() {
    let t = types();
    let mut c = cfg(1, json!({}));
    c["metadata"]["managedFields"] = json!([]);
    let err = apply(&op(&t, ""), None, &c, "m", false).expect_err("rejected");
    assert_eq!(err.code, 400);
}

#[test]
fn manager_names() {
    assert_eq!(
        manager_or_user_agent(None, Some("kubectl/v1.32.4 (linux/amd64)")).as_deref(),
        Some("kubectl")
    );
    assert_eq!(
        manager_or_user_agent(Some("m"), Some("kubectl/v1")).as_deref(),
        Some("m")
    );
    assert_eq!(
        manager_or_user_agent(None, None).as_deref(),
        Some("unknown")
    );
    assert_eq!(
        manager_or_user_agent(Some(""), Some("")).as_deref(),
        Some("unknown")
    );
}

#[test]
fn apply_to_status_owns_only_status() {
    let t = types();
    let created = apply(&op(&t, ""), None, &cfg(1, json!({})), "mgr", false).expect("create");
    let mut status_cfg = cfg(9, json!({}));
    status_cfg["status"] = json!({"ready": true});
    let out = apply(
        &op(&t, "status"),
        Some(&created),
        &status_cfg,
        "ctrl",
        false,
    )
    .expect("status apply");
    // The spec of a status apply is ignored, not a conflict.
    assert_eq!(out["spec"]["replicas"], 1);
    assert_eq!(out["status"]["ready"], true);
    let entries = managed::decode(managed_of(&out)).expect("decode");
    let e = entries
        .iter()
        .find(|e| e.manager == "ctrl")
        .expect("ctrl entry");
    assert_eq!(e.subresource, "status");
    assert_eq!(e.operation, "Apply");
    assert_eq!(e.set.to_fields_v1(), json!({"f:status": {"f:ready": {}}}));
}
