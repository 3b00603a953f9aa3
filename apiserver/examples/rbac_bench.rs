//! What one RBAC decision costs as bindings grow: builds indexes of N
//! ClusterRoleBindings and N RoleBindings in the request's namespace (none
//! naming the user but one binding through a group) and times decisions.
//!
//! Then times the updates of that index when one binding changes
//! ([`RbacIndex::apply`]): a RoleBinding in another namespace, one in
//! the crowded namespace, and a ClusterRoleBinding.
//!
//! `cargo run --release -p kube-apiserver-lib --example rbac_bench`

use std::collections::BTreeMap;
use std::time::Instant;

use apiserver::authentication::UserInfo;
use apiserver::authorization::rbac::{RbacChanges, RbacIndex, RbacObjects};
use apiserver::request::info::RequestInfo;
use serde_json::{json, Value};

fn main() {
    let cr = vec![json!({"metadata": {"name": "reader"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]})];
    let user = UserInfo {
        name: "alice".into(),
        groups: vec!["readers".into(), "system:authenticated".into()],
        ..Default::default()
    };
    let request = RequestInfo {
        is_resource_request: true,
        verb: "get".into(),
        resource: "configmaps".into(),
        namespace: "team".into(),
        name: "c".into(),
        ..Default::default()
    };
    println!(
        "bindings (cluster + namespaced) | build | per decision (allowed) | per decision (denied) | update: RoleBinding elsewhere / RoleBinding in the namespace / ClusterRoleBinding"
    );
    for n in [10usize, 1_000, 10_000, 100_000] {
        let mut crb: Vec<Value> = (0..n)
            .map(|i| {
                json!({"metadata": {"name": format!("b{i}")},
                "subjects": [{"kind": "User", "name": format!("user-{i}")}],
                "roleRef": {"kind": "ClusterRole", "name": "reader"}})
            })
            .collect();
        crb.push(json!({"metadata": {"name": "readers"},
            "subjects": [{"kind": "Group", "name": "readers"}],
            "roleRef": {"kind": "ClusterRole", "name": "reader"}}));
        let rb: Vec<Value> = (0..n)
            .map(|i| {
                json!({"metadata": {"name": format!("b{i}"), "namespace": "team"},
                "subjects": [{"kind": "ServiceAccount", "name": format!("sa-{i}")}],
                "roleRef": {"kind": "ClusterRole", "name": "reader"}})
            })
            .collect();
        let started = Instant::now();
        let mut idx = RbacIndex::build(&cr, &[], &crb, &rb);
        let build = started.elapsed();
        let denied = RequestInfo {
            verb: "delete".into(),
            ..request.clone()
        };
        let rounds = 20_000;
        let time = |r: &RequestInfo| {
            let started = Instant::now();
            for _ in 0..rounds {
                std::hint::black_box(idx.decide(&user, std::hint::black_box(r)));
            }
            started.elapsed().as_nanos() as f64 / rounds as f64
        };
        let (allowed, refused) = (time(&request), time(&denied));
        let keyed = |objects: &[Value]| -> BTreeMap<String, Value> {
            objects
                .iter()
                .map(|o| {
                    let m = &o["metadata"];
                    let name = m["name"].as_str().unwrap_or_default();
                    match m["namespace"].as_str() {
                        Some(ns) => (format!("{ns}/{name}"), o.clone()),
                        None => (name.to_string(), o.clone()),
                    }
                })
                .collect()
        };
        let (cr_map, roles_map, crb_map) = (keyed(&cr), BTreeMap::new(), keyed(&crb));
        let mut rb_map = keyed(&rb);
        rb_map.insert(
            "other/b".into(),
            json!({"metadata": {"name": "b", "namespace": "other"},
                "subjects": [{"kind": "User", "name": "bob"}],
                "roleRef": {"kind": "ClusterRole", "name": "reader"}}),
        );
        let objects = RbacObjects {
            cluster_roles: &cr_map,
            roles: &roles_map,
            cluster_role_bindings: &crb_map,
            role_bindings: &rb_map,
        };
        // Each update re-indexes one binding (rewritten as it was), the
        // mean of many.
        let mut update = |changes: RbacChanges| {
            let rounds = 1_000;
            let started = Instant::now();
            for _ in 0..rounds {
                idx.apply(std::hint::black_box(&changes), &objects);
            }
            started.elapsed().as_secs_f64() * 1e6 / rounds as f64
        };
        let one = |key: &str| [key.to_string()].into();
        let elsewhere = update(RbacChanges {
            role_bindings: one("other/b"),
            ..Default::default()
        });
        let crowded = update(RbacChanges {
            role_bindings: one(&format!("team/b{}", n / 2)),
            ..Default::default()
        });
        let cluster = update(RbacChanges {
            cluster_role_bindings: one(&format!("b{}", n / 2)),
            ..Default::default()
        });
        println!(
            "{} + {n} | {:.1} ms | {allowed:.0} ns | {refused:.0} ns | {elsewhere:.1} / {crowded:.1} / {cluster:.1} µs",
            n + 1,
            build.as_secs_f64() * 1e3
        );
    }
}
