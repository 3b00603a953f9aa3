//! Tests of the RBAC rules, index and authorizer.

use super::*;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    }
}

fn req(verb: &str, group: &str, resource: &str, sub: &str, ns: &str, name: &str) -> RequestInfo {
    RequestInfo {
        is_resource_request: true,
        verb: verb.into(),
        api_group: group.into(),
        resource: resource.into(),
        subresource: sub.into(),
        namespace: ns.into(),
        name: name.into(),
        ..Default::default()
    }
}

fn index() -> RbacIndex {
    let cr = [
        json!({"metadata": {"name": "pod-reader"}, "rules": [
            {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]}]}),
        json!({"metadata": {"name": "status-writer"}, "rules": [
            {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["update"]}]}),
        json!({"metadata": {"name": "discovery"}, "rules": [
            {"nonResourceURLs": ["/apis", "/apis/*"], "verbs": ["get"]}]}),
    ];
    let roles = [
        json!({"metadata": {"name": "one-cm", "namespace": "team"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["*"]}]}),
    ];
    let crb = [
        json!({"metadata": {"name": "d"}, "roleRef": {"kind": "ClusterRole", "name": "discovery"},
            "subjects": [{"kind": "Group", "name": "system:authenticated"}]}),
        json!({"metadata": {"name": "s"}, "roleRef": {"kind": "ClusterRole", "name": "status-writer"},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": "kube-system"}]}),
    ];
    let rb = [
        json!({"metadata": {"name": "a", "namespace": "team"}, "roleRef": {"kind": "ClusterRole", "name": "pod-reader"},
            "subjects": [{"kind": "User", "name": "alice"}]}),
        json!({"metadata": {"name": "b", "namespace": "team"}, "roleRef": {"kind": "Role", "name": "one-cm"},
            "subjects": [{"kind": "ServiceAccount", "name": "app"}]}),
        json!({"metadata": {"name": "c", "namespace": "team"}, "roleRef": {"kind": "ClusterRole", "name": "gone"},
            "subjects": [{"kind": "User", "name": "bob"}]}),
    ];
    RbacIndex::build(&cr, &roles, &crb, &rb)
}

#[test]
fn role_bindings_grant_in_their_namespace_only() {
    let idx = index();
    let alice = user("alice", &["system:authenticated"]);
    assert_eq!(
        idx.decide(&alice, &req("list", "", "pods", "", "team", "")),
        Decision::Allow
    );
    assert_eq!(
        idx.decide(&alice, &req("get", "", "pods", "log", "team", "p")),
        Decision::Allow
    );
    assert!(matches!(
        idx.decide(&alice, &req("list", "", "pods", "", "other", "")),
        Decision::NoOpinion(_)
    ));
    assert!(matches!(
        idx.decide(&alice, &req("delete", "", "pods", "", "team", "p")),
        Decision::NoOpinion(_)
    ));
    assert!(matches!(
        idx.decide(&alice, &req("get", "", "pods", "exec", "team", "p")),
        Decision::NoOpinion(_)
    ));
}

#[test]
fn service_accounts_resource_names_and_wildcard_subresources() {
    let idx = index();
    let app = user("system:serviceaccount:team:app", &[]);
    assert_eq!(
        idx.decide(
            &app,
            &req("patch", "", "configmaps", "", "team", "settings")
        ),
        Decision::Allow
    );
    assert!(matches!(
        idx.decide(&app, &req("get", "", "configmaps", "", "team", "other")),
        Decision::NoOpinion(_)
    ));
    assert!(matches!(
        idx.decide(&app, &req("list", "", "configmaps", "", "team", "")),
        Decision::NoOpinion(_)
    ));
    let ctl = user("system:serviceaccount:kube-system:ctl", &[]);
    assert_eq!(
        idx.decide(
            &ctl,
            &req("update", "apps", "deployments", "status", "x", "d")
        ),
        Decision::Allow
    );
    assert!(matches!(
        idx.decide(&ctl, &req("update", "apps", "deployments", "", "x", "d")),
        Decision::NoOpinion(_)
    ));
}

#[test]
fn non_resource_urls_and_missing_roles() {
    let idx = index();
    let bob = user("bob", &["system:authenticated"]);
    let path = |p: &str| RequestInfo {
        is_resource_request: false,
        verb: "get".into(),
        path: p.into(),
        ..Default::default()
    };
    assert_eq!(idx.decide(&bob, &path("/apis/apps/v1")), Decision::Allow);
    assert_eq!(idx.decide(&bob, &path("/apis")), Decision::Allow);
    assert!(matches!(
        idx.decide(&bob, &path("/metrics")),
        Decision::NoOpinion(_)
    ));
    assert_eq!(
        idx.decide(&bob, &req("get", "", "pods", "", "team", "p")),
        Decision::NoOpinion(
            "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found".into()
        )
    );
    let (rules, errors) = idx.rules_for(&bob, "team");
    assert_eq!(rules.len(), 1);
    assert_eq!(errors.len(), 1);
    let (res, non) = review_rules(&rules);
    assert!(res.is_empty());
    assert_eq!(non[0]["nonResourceURLs"], json!(["/apis", "/apis/*"]));
}

#[test]
fn coverage_is_checked_rule_by_rule() {
    let rule = |v: Value| PolicyRule::from_json(&v);
    let owner = vec![
        rule(
            json!({"apiGroups": [""], "resources": ["pods", "*/status"], "verbs": ["get", "list"]}),
        ),
        rule(
            json!({"apiGroups": ["apps"], "resources": ["*"], "resourceNames": ["web"], "verbs": ["*"]}),
        ),
        rule(json!({"nonResourceURLs": ["/logs/*"], "verbs": ["get"]})),
    ];
    let servant = rule(
        json!({"apiGroups": [""], "resources": ["pods", "pods/status", "secrets"], "verbs": ["get"]}),
    );
    let missing = uncovered(&owner, &servant);
    assert_eq!(missing.len(), 1);
    assert_eq!(
        compact_string(&missing),
        "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"
    );
    let named = rule(
        json!({"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"], "verbs": ["delete"]}),
    );
    assert!(uncovered(&owner, &named).is_empty());
    let unnamed =
        rule(json!({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["delete"]}));
    assert_eq!(uncovered(&owner, &unnamed).len(), 1);
    let url = rule(json!({"nonResourceURLs": ["/logs/a", "/metrics"], "verbs": ["get"]}));
    assert_eq!(uncovered(&owner, &url)[0].non_resource_urls, ["/metrics"]);
}

#[test]
fn url_patterns() {
    assert!(non_resource_url_matches("/healthz*", "/healthz/etcd"));
    assert!(non_resource_url_matches("*", "/x"));
    assert!(!non_resource_url_matches("/healthz", "/healthz/etcd"));
    assert!(resource_matches(
        &["*/scale".into()],
        "deployments",
        "scale"
    ));
    assert!(!resource_matches(&["*/scale".into()], "deployments", ""));
    assert!(!resource_matches(
        &["deployments".into()],
        "deployments",
        "scale"
    ));
}

// The subject index: 10,000 bindings of other subjects around the few
// that matter.

fn get(resource: &str, ns: &str) -> RequestInfo {
    RequestInfo {
        is_resource_request: true,
        verb: "get".into(),
        resource: resource.into(),
        namespace: ns.into(),
        ..Default::default()
    }
}

/// 10,000 bindings of other subjects around the few that matter: each
/// user gets exactly what its own bindings grant, found by subject.
#[test]
fn bindings_are_found_by_user_group_and_service_account() {
    let cr: Vec<Value> = ["pods", "secrets", "configmaps", "services"]
        .iter()
        .map(|r| {
            json!({"metadata": {"name": format!("read-{r}")}, "rules": [
                {"apiGroups": [""], "resources": [r], "verbs": ["get"]}]})
        })
        .collect();
    let mut crb: Vec<Value> = (0..5_000)
        .map(|i| {
            json!({"metadata": {"name": format!("noise-{i}")},
            "subjects": [{"kind": "User", "name": format!("user-{i}")},
                         {"kind": "Group", "name": format!("group-{i}")}],
            "roleRef": {"kind": "ClusterRole", "name": "read-secrets"}})
        })
        .collect();
    crb.push(json!({"metadata": {"name": "alice"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "User", "name": "alice"}],
        "roleRef": {"kind": "ClusterRole", "name": "read-pods"}}));
    crb.push(json!({"metadata": {"name": "ops"},
        "subjects": [{"kind": "Group", "name": "ops"}],
        "roleRef": {"kind": "ClusterRole", "name": "read-services"}}));
    let mut rb: Vec<Value> = (0..5_000)
        .map(|i| {
            json!({"metadata": {"name": format!("noise-{i}"), "namespace": "team"},
            "subjects": [{"kind": "ServiceAccount", "name": format!("sa-{i}")}],
            "roleRef": {"kind": "ClusterRole", "name": "read-secrets"}})
        })
        .collect();
    // A service account subject without a namespace is the binding's.
    rb.push(json!({"metadata": {"name": "builder", "namespace": "team"},
        "subjects": [{"kind": "ServiceAccount", "name": "builder"}],
        "roleRef": {"kind": "ClusterRole", "name": "read-configmaps"}}));
    let idx = RbacIndex::build(&cr, &[], &crb, &rb);

    let alice = user("alice", &["system:authenticated"]);
    assert_eq!(idx.decide(&alice, &get("pods", "team")), Decision::Allow);
    assert_ne!(idx.decide(&alice, &get("secrets", "team")), Decision::Allow);
    let (rules, errors) = idx.rules_for(&alice, "team");
    assert_eq!((rules.len(), errors.len()), (1, 0), "listed once");

    let op = user("bob", &["ops"]);
    assert_eq!(idx.decide(&op, &get("services", "")), Decision::Allow);
    assert_ne!(idx.decide(&op, &get("pods", "")), Decision::Allow);

    let sa = user("system:serviceaccount:team:builder", &[]);
    assert_eq!(idx.decide(&sa, &get("configmaps", "team")), Decision::Allow);
    assert_ne!(
        idx.decide(&sa, &get("configmaps", "other")),
        Decision::Allow
    );
    let elsewhere = user("system:serviceaccount:other:builder", &[]);
    assert_ne!(
        idx.decide(&elsewhere, &get("configmaps", "team")),
        Decision::Allow
    );

    let noisy = user("user-42", &["group-7"]);
    let (rules, _) = idx.rules_for(&noisy, "team");
    assert_eq!(rules.len(), 2, "user-42's and group-7's bindings only");
}

/// `objects` keyed as an informer mirrors them (name, or namespace/name).
fn mirror(objects: &[Value]) -> BTreeMap<String, Value> {
    objects
        .iter()
        .map(|o| {
            let (ns, name) = (meta_str(o, "namespace"), meta_str(o, "name"));
            let key = if ns.is_empty() {
                name.to_string()
            } else {
                format!("{ns}/{name}")
            };
            (key, o.clone())
        })
        .collect()
}

#[test]
fn an_updated_index_decides_as_a_full_build() {
    let reader = |name: &str, resource: &str| {
        json!({"metadata": {"name": name}, "rules": [
            {"apiGroups": [""], "resources": [resource], "verbs": ["get"]}]})
    };
    let rb = |ns: &str, name: &str, user: &str, role: &str| {
        json!({"metadata": {"name": name, "namespace": ns},
            "roleRef": {"kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "User", "name": user}]})
    };
    let mut cr = mirror(&[reader("pods", "pods"), reader("cms", "configmaps")]);
    let mut roles = mirror(&[
        json!({"metadata": {"name": "r", "namespace": "a"}, "rules": [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}),
    ]);
    let mut crb = mirror(&[]);
    let mut rbs = mirror(&[
        rb("a", "x", "alice", "pods"),
        rb("ab", "x", "alice", "cms"),
        rb("b", "x", "bob", "pods"),
    ]);
    type Map = BTreeMap<String, Value>;
    fn objects<'a>(cr: &'a Map, roles: &'a Map, crb: &'a Map, rbs: &'a Map) -> RbacObjects<'a> {
        RbacObjects {
            cluster_roles: cr,
            roles,
            cluster_role_bindings: crb,
            role_bindings: rbs,
        }
    }
    let mut updated = RbacIndex::of(&objects(&cr, &roles, &crb, &rbs));

    // In namespace a: alice loses her binding, carol gains one with a Role;
    // the ClusterRole `cms` grants services now; a ClusterRoleBinding
    // appears. Namespace ab (a prefix of another name) and b do not change.
    rbs.remove("a/x");
    rbs.extend(mirror(&[
        json!({"metadata": {"name": "y", "namespace": "a"},
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "carol"}]}),
    ]));
    cr.extend(mirror(&[reader("cms", "services")]));
    crb.extend(mirror(&[json!({"metadata": {"name": "d"},
        "roleRef": {"kind": "ClusterRole", "name": "pods"},
        "subjects": [{"kind": "User", "name": "dave"}]})]));
    roles.extend(mirror(&[
        json!({"metadata": {"name": "r2", "namespace": "c"}, "rules": []}),
    ]));
    let keys = |k: &[&str]| k.iter().map(|k| k.to_string()).collect();
    let changes = RbacChanges {
        cluster_roles: keys(&["cms"]),
        cluster_role_bindings: keys(&["d"]),
        roles: keys(&["c/r2"]),
        role_bindings: keys(&["a/x", "a/y"]),
    };
    let now = objects(&cr, &roles, &crb, &rbs);
    updated.apply(&changes, &now);
    let full = RbacIndex::of(&now);

    let cases = [
        ("alice", "pods", "a"),
        ("alice", "services", "ab"),
        ("alice", "configmaps", "ab"),
        ("carol", "secrets", "a"),
        ("bob", "pods", "b"),
        ("dave", "pods", "b"),
        ("dave", "pods", ""),
    ];
    for (who, resource, ns) in cases {
        let u = user(who, &[]);
        let r = req("get", "", resource, "", ns, "n");
        assert_eq!(
            updated.decide(&u, &r),
            full.decide(&u, &r),
            "{who} {resource} in {ns:?}"
        );
    }
    assert_eq!(
        updated.decide(
            &user("carol", &[]),
            &req("get", "", "secrets", "", "a", "s")
        ),
        Decision::Allow
    );
    assert_ne!(
        updated.decide(&user("alice", &[]), &req("get", "", "pods", "", "a", "p")),
        Decision::Allow
    );
    assert_eq!(
        updated.decide(
            &user("alice", &[]),
            &req("get", "", "services", "", "ab", "s")
        ),
        Decision::Allow
    );

    // A namespace left without bindings or roles drops out of the index.
    rbs.retain(|k, _| !k.starts_with("b/"));
    roles.retain(|k, _| !k.starts_with("c/"));
    let changes = RbacChanges {
        roles: keys(&["c/r2"]),
        role_bindings: keys(&["b/x"]),
        ..Default::default()
    };
    updated.apply(&changes, &objects(&cr, &roles, &crb, &rbs));
    assert!(!updated.role_bindings.contains_key("b"));
    assert!(!updated.roles.contains_key("c"));
    assert_eq!(
        updated.decide(&user("bob", &[]), &req("get", "", "pods", "", "b", "p")),
        Decision::NoOpinion(String::new())
    );

    // A binding replaced in place loses the subjects it no longer names.
    rbs.insert("ab/x".into(), rb("ab", "x", "erin", "cms"));
    updated.apply(
        &RbacChanges {
            role_bindings: keys(&["ab/x"]),
            ..Default::default()
        },
        &objects(&cr, &roles, &crb, &rbs),
    );
    assert_ne!(
        updated.decide(
            &user("alice", &[]),
            &req("get", "", "services", "", "ab", "s")
        ),
        Decision::Allow
    );
    assert_eq!(
        updated.decide(
            &user("erin", &[]),
            &req("get", "", "services", "", "ab", "s")
        ),
        Decision::Allow
    );
    assert!(updated.role_bindings["ab"].users.get("alice").is_none());
}
