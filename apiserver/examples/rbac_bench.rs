//! What one RBAC decision costs as bindings grow: builds indexes of N
//! ClusterRoleBindings and N RoleBindings in the request's namespace (none
//! naming the user but one binding through a group) and times decisions.
//!
//! `cargo run --release -p kube-apiserver-lib --example rbac_bench`

use std::time::Instant;

use apiserver::authentication::UserInfo;
use apiserver::authorization::rbac::RbacIndex;
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
        "bindings (cluster + namespaced) | build | per decision (allowed) | per decision (denied)"
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
        let idx = RbacIndex::build(&cr, &[], &crb, &rb);
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
        println!(
            "{} + {n} | {:.1} ms | {allowed:.0} ns | {refused:.0} ns",
            n + 1,
            build.as_secs_f64() * 1e3
        );
    }
}
