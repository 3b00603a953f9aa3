//! The API Priority and Fairness bootstrap configuration: the FlowSchemas
//! and PriorityLevelConfigurations (`flowcontrol.apiserver.k8s.io/v1`) that
//! the server creates at start, as JSON objects.
//!
//! They mirror upstream Kubernetes v1.36's
//! `k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap` defaults:
//!
//! - the *mandatory* objects ("exempt" and "catch-all") keep the server
//!   working whatever else is configured. The server always enforces their
//!   spec, and changes to it are overwritten;
//! - the *suggested* objects give the initial classification of system
//!   components, service accounts and everyone else. The server keeps them
//!   up to date only while their [`AUTO_UPDATE_ANNOTATION`] is `"true"`, so
//!   operators can take one over by setting it to `"false"`.
//!
//! Every object carries that annotation set to `"true"`, as upstream's do.
//! Fields that upstream leaves unset (and that Go's JSON encoding omits) are
//! left out: `clusterScope: false`, a missing `distinguisherMethod`, empty
//! rule lists and `borrowingLimitPercent`.

use serde_json::{json, Value};

/// The annotation that says whether the server keeps a bootstrap object's
/// spec up to date (`"true"`) or leaves it to the operator (`"false"`).
pub const AUTO_UPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";

const API_VERSION: &str = "flowcontrol.apiserver.k8s.io/v1";

/// The wildcard for verbs, API groups, resources, namespaces, names and
/// non-resource URLs.
const ALL: &str = "*";

const GROUP_MASTERS: &str = "system:masters";
const GROUP_NODES: &str = "system:nodes";
const GROUP_AUTHENTICATED: &str = "system:authenticated";
const GROUP_UNAUTHENTICATED: &str = "system:unauthenticated";
const GROUP_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
const USER_CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
const USER_SCHEDULER: &str = "system:kube-scheduler";
const COORDINATION_GROUP: &str = "coordination.k8s.io";

/// The mandatory PriorityLevelConfigurations ("catch-all" and "exempt",
/// in upstream's order) as complete objects: `apiVersion`, `kind`,
/// `metadata.name`, `metadata.annotations` (with [`AUTO_UPDATE_ANNOTATION`]
/// `"true"`) and `spec`.
pub fn mandatory_priority_levels() -> Vec<Value> {
    vec![
        // Only a minimal share: traffic reaches it only when the suggested
        // "global-default" has been deleted.
        limited_level("catch-all", 5, 0, reject()),
        exempt_level("exempt"),
    ]
}

/// The mandatory FlowSchemas: "exempt" (`system:masters`, precedence 1)
/// and "catch-all" (everyone, precedence 10000).
pub fn mandatory_flow_schemas() -> Vec<Value> {
    vec![
        flow_schema(
            "exempt",
            1,
            "exempt",
            None,
            vec![everything(groups(&[GROUP_MASTERS]))],
        ),
        flow_schema(
            "catch-all",
            10000,
            "catch-all",
            Some("ByUser"),
            vec![everything(groups(&[
                GROUP_UNAUTHENTICATED,
                GROUP_AUTHENTICATED,
            ]))],
        ),
    ]
}

/// The suggested PriorityLevelConfigurations, in upstream's order:
/// "system", "node-high", "leader-election", "workload-high",
/// "workload-low" and "global-default".
pub fn suggested_priority_levels() -> Vec<Value> {
    vec![
        // Components that keep the cluster and its running pods working
        // (kubelets, kube-proxy).
        limited_level("system", 30, 33, queue(64, 6, 50)),
        // Node health reporting, kept apart from "system" so nodes can
        // report even while pod start-up load saturates it.
        limited_level("node-high", 40, 25, queue(64, 6, 50)),
        // Controllers' leader election.
        limited_level("leader-election", 10, 0, queue(16, 4, 50)),
        // The scheduler, controller-manager and kube-system controllers.
        limited_level("workload-high", 40, 50, queue(128, 6, 50)),
        // Other service accounts.
        limited_level("workload-low", 100, 90, queue(128, 6, 50)),
        // Everything the other suggested schemas do not match.
        limited_level("global-default", 20, 50, queue(128, 6, 50)),
    ]
}

/// The suggested FlowSchemas, in upstream v1.36's order: "system-nodes",
/// "system-node-high", "probes", "system-leader-election",
/// "kube-controller-manager", "kube-scheduler",
/// "kube-system-service-accounts", "service-accounts" and "global-default".
/// (Since v1.34, upstream no longer has "workload-leader-election" or
/// "endpoint-controller".)
pub fn suggested_flow_schemas() -> Vec<Value> {
    vec![
        flow_schema(
            "system-nodes",
            500,
            "system",
            Some("ByUser"),
            vec![everything(groups(&[GROUP_NODES]))],
        ),
        flow_schema(
            "system-node-high",
            400,
            "node-high",
            Some("ByUser"),
            vec![rule(
                groups(&[GROUP_NODES]),
                vec![
                    resource_rule(&[ALL], &[""], &["nodes", "nodes/status"], true),
                    resource_rule(&[ALL], &[COORDINATION_GROUP], &["leases"], false),
                ],
                vec![],
            )],
        ),
        flow_schema(
            "probes",
            2,
            "exempt",
            None,
            vec![rule(
                groups(&[GROUP_UNAUTHENTICATED, GROUP_AUTHENTICATED]),
                vec![],
                vec![non_resource_rule(
                    &["get"],
                    &["/healthz", "/readyz", "/livez"],
                )],
            )],
        ),
        flow_schema(
            "system-leader-election",
            100,
            "leader-election",
            Some("ByUser"),
            vec![rule(
                users(&[USER_CONTROLLER_MANAGER, USER_SCHEDULER])
                    .into_iter()
                    .chain(kube_system_service_accounts())
                    .collect(),
                vec![resource_rule(
                    &["get", "create", "update"],
                    &[COORDINATION_GROUP],
                    &["leases"],
                    false,
                )],
                vec![],
            )],
        ),
        flow_schema(
            "kube-controller-manager",
            800,
            "workload-high",
            Some("ByNamespace"),
            vec![everything(users(&[USER_CONTROLLER_MANAGER]))],
        ),
        flow_schema(
            "kube-scheduler",
            800,
            "workload-high",
            Some("ByNamespace"),
            vec![everything(users(&[USER_SCHEDULER]))],
        ),
        flow_schema(
            "kube-system-service-accounts",
            900,
            "workload-high",
            Some("ByNamespace"),
            vec![everything(kube_system_service_accounts())],
        ),
        flow_schema(
            "service-accounts",
            9000,
            "workload-low",
            Some("ByUser"),
            vec![everything(groups(&[GROUP_SERVICE_ACCOUNTS]))],
        ),
        flow_schema(
            "global-default",
            9900,
            "global-default",
            Some("ByUser"),
            vec![everything(groups(&[
                GROUP_UNAUTHENTICATED,
                GROUP_AUTHENTICATED,
            ]))],
        ),
    ]
}

/// The metadata of a bootstrap object: its name and the auto-update
/// annotation.
fn metadata(name: &str) -> Value {
    json!({
        "name": name,
        "annotations": { AUTO_UPDATE_ANNOTATION: "true" },
    })
}

/// A PriorityLevelConfiguration of type Exempt, which neither contributes
/// shares nor lends seats.
fn exempt_level(name: &str) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": "PriorityLevelConfiguration",
        "metadata": metadata(name),
        "spec": {
            "type": "Exempt",
            "exempt": { "nominalConcurrencyShares": 0, "lendablePercent": 0 },
        },
    })
}

/// A PriorityLevelConfiguration of type Limited (no borrowing limit, as
/// upstream's bootstrap levels have none).
fn limited_level(name: &str, shares: u32, lendable_percent: u32, limit_response: Value) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": "PriorityLevelConfiguration",
        "metadata": metadata(name),
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": shares,
                "lendablePercent": lendable_percent,
                "limitResponse": limit_response,
            },
        },
    })
}

/// A limitResponse that queues requests.
fn queue(queues: u32, hand_size: u32, queue_length_limit: u32) -> Value {
    json!({
        "type": "Queue",
        "queuing": {
            "queues": queues,
            "handSize": hand_size,
            "queueLengthLimit": queue_length_limit,
        },
    })
}

/// A limitResponse that rejects requests straight away.
fn reject() -> Value {
    json!({ "type": "Reject" })
}

/// A FlowSchema; `distinguisher` is "ByUser", "ByNamespace" or `None`
/// (every request one flow).
fn flow_schema(
    name: &str,
    precedence: i32,
    level: &str,
    distinguisher: Option<&str>,
    rules: Vec<Value>,
) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": { "name": level },
        "matchingPrecedence": precedence,
    });
    if let Some(d) = distinguisher {
        spec["distinguisherMethod"] = json!({ "type": d });
    }
    spec["rules"] = Value::Array(rules);
    json!({
        "apiVersion": API_VERSION,
        "kind": "FlowSchema",
        "metadata": metadata(name),
        "spec": spec,
    })
}

/// A PolicyRulesWithSubjects; empty rule lists are left out.
fn rule(subjects: Vec<Value>, resource_rules: Vec<Value>, non_resource_rules: Vec<Value>) -> Value {
    let mut r = json!({ "subjects": subjects });
    if !resource_rules.is_empty() {
        r["resourceRules"] = Value::Array(resource_rules);
    }
    if !non_resource_rules.is_empty() {
        r["nonResourceRules"] = Value::Array(non_resource_rules);
    }
    r
}

/// A rule matching every request of `subjects`: any verb on any resource
/// (cluster-scoped or in any namespace) and on any non-resource URL.
fn everything(subjects: Vec<Value>) -> Value {
    rule(
        subjects,
        vec![resource_rule(&[ALL], &[ALL], &[ALL], true)],
        vec![non_resource_rule(&[ALL], &[ALL])],
    )
}

/// A ResourcePolicyRule over every namespace, and also over cluster-scoped
/// objects if `cluster_scope` (omitted when false, as Go's encoding does).
fn resource_rule(
    verbs: &[&str],
    api_groups: &[&str],
    resources: &[&str],
    cluster_scope: bool,
) -> Value {
    let mut r = json!({
        "verbs": verbs,
        "apiGroups": api_groups,
        "resources": resources,
    });
    if cluster_scope {
        r["clusterScope"] = json!(true);
    }
    r["namespaces"] = json!([ALL]);
    r
}

/// A NonResourcePolicyRule.
fn non_resource_rule(verbs: &[&str], urls: &[&str]) -> Value {
    json!({ "verbs": verbs, "nonResourceURLs": urls })
}

/// Group subjects.
fn groups(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "kind": "Group", "group": { "name": n } }))
        .collect()
}

/// User subjects.
fn users(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "kind": "User", "user": { "name": n } }))
        .collect()
}

/// The subject matching every service account of `kube-system`.
fn kube_system_service_accounts() -> Vec<Value> {
    vec![json!({
        "kind": "ServiceAccount",
        "serviceAccount": { "namespace": "kube-system", "name": ALL },
    })]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn all_levels() -> Vec<Value> {
        let mut v = mandatory_priority_levels();
        v.extend(suggested_priority_levels());
        v
    }

    fn all_schemas() -> Vec<Value> {
        let mut v = mandatory_flow_schemas();
        v.extend(suggested_flow_schemas());
        v
    }

    fn name(o: &Value) -> &str {
        o.pointer("/metadata/name").and_then(Value::as_str).unwrap()
    }

    fn names(objects: &[Value]) -> Vec<&str> {
        objects.iter().map(name).collect()
    }

    fn schema<'a>(schemas: &'a [Value], n: &str) -> &'a Value {
        schemas.iter().find(|o| name(o) == n).unwrap()
    }

    #[test]
    fn lists_are_upstreams() {
        assert_eq!(names(&mandatory_priority_levels()), ["catch-all", "exempt"]);
        assert_eq!(names(&mandatory_flow_schemas()), ["exempt", "catch-all"]);
        assert_eq!(
            names(&suggested_priority_levels()),
            [
                "system",
                "node-high",
                "leader-election",
                "workload-high",
                "workload-low",
                "global-default"
            ]
        );
        assert_eq!(
            names(&suggested_flow_schemas()),
            [
                "system-nodes",
                "system-node-high",
                "probes",
                "system-leader-election",
                "kube-controller-manager",
                "kube-scheduler",
                "kube-system-service-accounts",
                "service-accounts",
                "global-default"
            ]
        );
    }

    #[test]
    fn names_are_unique() {
        for objects in [all_levels(), all_schemas()] {
            let mut seen = HashSet::new();
            for n in names(&objects) {
                assert!(seen.insert(n), "duplicate {n}");
            }
        }
    }

    #[test]
    fn every_schema_names_an_existing_level() {
        let levels = all_levels();
        let levels: HashSet<&str> = names(&levels).into_iter().collect();
        for fs in all_schemas() {
            let level = fs
                .pointer("/spec/priorityLevelConfiguration/name")
                .and_then(Value::as_str)
                .unwrap();
            assert!(levels.contains(level), "{} names {level}", name(&fs));
        }
    }

    #[test]
    fn mandatory_precedences_and_levels() {
        let schemas = all_schemas();
        let precedence = |n: &str| schema(&schemas, n)["spec"]["matchingPrecedence"].as_i64();
        assert_eq!(precedence("exempt"), Some(1));
        assert_eq!(precedence("catch-all"), Some(10000));
        assert_eq!(precedence("probes"), Some(2));
        assert_eq!(precedence("global-default"), Some(9900));
        for fs in &schemas {
            let p = fs["spec"]["matchingPrecedence"].as_i64().unwrap();
            assert!((1..=10000).contains(&p), "{}: {p}", name(fs));
        }
        assert!(schema(&schemas, "exempt")["spec"]
            .get("distinguisherMethod")
            .is_none());

        let levels = all_levels();
        let exempt = schema(&levels, "exempt");
        assert_eq!(
            exempt["spec"],
            json!({
                "type": "Exempt",
                "exempt": { "nominalConcurrencyShares": 0, "lendablePercent": 0 },
            })
        );
        let catch_all = &schema(&levels, "catch-all")["spec"]["limited"];
        assert_eq!(catch_all["nominalConcurrencyShares"], 5);
        assert_eq!(catch_all["limitResponse"], json!({ "type": "Reject" }));
    }

    #[test]
    fn objects_are_complete_and_annotated() {
        for (objects, kind) in [
            (all_levels(), "PriorityLevelConfiguration"),
            (all_schemas(), "FlowSchema"),
        ] {
            for o in &objects {
                assert_eq!(o["apiVersion"], API_VERSION);
                assert_eq!(o["kind"], kind);
                assert_eq!(o["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION], "true");
                assert!(o["spec"].is_object());
            }
        }
    }

    #[test]
    fn levels_are_well_formed() {
        for l in all_levels() {
            let spec = &l["spec"];
            if spec["type"] == "Exempt" {
                assert!(spec.get("limited").is_none());
                continue;
            }
            assert_eq!(spec["type"], "Limited", "{}", name(&l));
            let limited = &spec["limited"];
            assert!(limited["nominalConcurrencyShares"].as_u64().unwrap() > 0);
            assert!(limited["lendablePercent"].as_u64().unwrap() <= 100);
            let response = &limited["limitResponse"];
            if response["type"] == "Queue" {
                let q = &response["queuing"];
                let queues = q["queues"].as_u64().unwrap();
                let hand = q["handSize"].as_u64().unwrap();
                assert!(hand >= 1 && hand <= queues, "{}", name(&l));
                assert!(q["queueLengthLimit"].as_u64().unwrap() > 0);
            } else {
                assert_eq!(response, &json!({ "type": "Reject" }));
            }
        }
    }

    #[test]
    fn rules_are_well_formed() {
        let nonempty = |v: &Value| v.as_array().is_some_and(|a| !a.is_empty());
        for fs in all_schemas() {
            let rules = fs["spec"]["rules"].as_array().unwrap();
            assert!(!rules.is_empty(), "{}", name(&fs));
            for r in rules {
                assert!(nonempty(&r["subjects"]));
                for s in r["subjects"].as_array().unwrap() {
                    let field = match s["kind"].as_str().unwrap() {
                        "User" => "user",
                        "Group" => "group",
                        "ServiceAccount" => "serviceAccount",
                        other => panic!("subject kind {other}"),
                    };
                    assert!(s[field]["name"].is_string());
                    assert_eq!(s.as_object().unwrap().len(), 2);
                }
                assert!(r.get("resourceRules").is_some() || r.get("nonResourceRules").is_some());
                for rr in r
                    .get("resourceRules")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    for k in ["verbs", "apiGroups", "resources", "namespaces"] {
                        assert!(nonempty(&rr[k]), "{}: {k}", name(&fs));
                    }
                }
                for nr in r
                    .get("nonResourceRules")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    assert!(nonempty(&nr["verbs"]) && nonempty(&nr["nonResourceURLs"]));
                }
            }
        }
    }

    #[test]
    fn schemas_parse_as_the_classifier_reads_them() {
        for o in all_schemas() {
            let fs = super::super::matching::FlowSchema::from_object(&o).expect("parses");
            assert_eq!(fs.name, name(&o));
            assert_eq!(
                Some(fs.precedence),
                o["spec"]["matchingPrecedence"].as_i64()
            );
            assert_eq!(
                fs.priority_level,
                o["spec"]["priorityLevelConfiguration"]["name"]
            );
        }
    }
}
