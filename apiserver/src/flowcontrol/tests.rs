use super::*;
use serde_json::json;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: String::new(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        extra: Default::default(),
    }
}

fn get_pods(ns: &str) -> RequestInfo {
    RequestInfo {
        is_resource_request: true,
        verb: "get".into(),
        resource: "pods".into(),
        namespace: ns.into(),
        ..Default::default()
    }
}

fn fc(scl: u32) -> Arc<FlowControl> {
    FlowControl::new(FlowControlConfig {
        server_concurrency_limit: scl,
        queue_wait_limit: Duration::from_millis(200),
    })
}

fn suggested(fc: &FlowControl) {
    let mut schemas = bootstrap::mandatory_flow_schemas();
    schemas.extend(bootstrap::suggested_flow_schemas());
    let mut levels = bootstrap::mandatory_priority_levels();
    levels.extend(bootstrap::suggested_priority_levels());
    fc.apply(&schemas, &levels);
}

#[test]
fn mandatory_configuration_exempts_masters_and_catches_the_rest() {
    let fc = fc(600);
    let admin = user("admin", &["system:masters", "system:authenticated"]);
    assert_eq!(fc.classify(&admin, &get_pods("a")).priority_level, "exempt");
    let alice = user("alice", &["system:authenticated"]);
    let c = fc.classify(&alice, &get_pods("a"));
    assert_eq!(
        (c.flow_schema.as_str(), c.priority_level.as_str()),
        (CATCH_ALL, CATCH_ALL)
    );
}

#[test]
fn suggested_configuration_classifies_as_upstream() {
    let fc = fc(600);
    suggested(&fc);
    let alice = user("alice", &["system:authenticated"]);
    assert_eq!(
        fc.classify(&alice, &get_pods("a")).priority_level,
        "global-default"
    );
    let node = user("system:node:n1", &["system:nodes", "system:authenticated"]);
    let level = fc.classify(&node, &get_pods("a")).priority_level;
    assert!(level == "system" || level == "node-high", "{level}");
    let sa = user(
        "system:serviceaccount:team:builder",
        &["system:serviceaccounts", "system:authenticated"],
    );
    assert_eq!(
        fc.classify(&sa, &get_pods("team")).priority_level,
        "workload-low"
    );
    let probe = RequestInfo {
        verb: "get".into(),
        path: "/readyz".into(),
        ..Default::default()
    };
    let anon = user("system:anonymous", &["system:unauthenticated"]);
    assert_eq!(fc.classify(&anon, &probe).priority_level, "exempt");
}

#[tokio::test]
async fn a_full_level_queues_then_rejects_with_a_reason() {
    // catch-all alone (the mandatory configuration) rejects when full.
    let fc = fc(10);
    let alice = user("alice", &["system:authenticated"]);
    let c = fc.classify(&alice, &get_pods("a"));
    let limit = fc.current_limit(CATCH_ALL).expect("catch-all");
    let mut held = Vec::new();
    for _ in 0..limit {
        held.push(fc.admit(&c, 1).await.expect("seat"));
    }
    assert!(matches!(
        fc.admit(&c, 1).await,
        Err(RejectReason::ConcurrencyLimit)
    ));
    held.pop();
    assert!(fc.admit(&c, 1).await.is_ok());
}

#[tokio::test]
async fn queued_requests_run_when_seats_free_and_time_out_otherwise() {
    let fc = fc(20);
    let levels = vec![json!({
        "metadata": {"name": "q", "uid": "uq"},
        "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 1000,
            "limitResponse": {"type": "Queue",
                "queuing": {"queues": 4, "handSize": 2, "queueLengthLimit": 5}}}}
    })];
    let schemas = vec![json!({
        "metadata": {"name": "all", "uid": "ua"},
        "spec": {"matchingPrecedence": 500, "priorityLevelConfiguration": {"name": "q"},
                 "distinguisherMethod": {"type": "ByUser"},
                 "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                               "namespaces": ["*"], "clusterScope": true}]}]}
    })];
    fc.apply(&schemas, &levels);
    let alice = user("alice", &["system:authenticated"]);
    let c = fc.classify(&alice, &get_pods("a"));
    assert_eq!(
        (c.flow_schema_uid.as_str(), c.priority_level_uid.as_str()),
        ("ua", "uq")
    );
    let limit = fc.current_limit("q").expect("level");
    let mut held = Vec::new();
    for _ in 0..limit {
        held.push(fc.admit(&c, 1).await.expect("seat"));
    }
    // The next one waits; freeing a seat lets it run.
    let waiting = {
        let fc = fc.clone();
        let c = c.clone();
        tokio::spawn(async move { fc.admit(&c, 1).await.map(|_| ()) })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    held.pop();
    assert!(waiting.await.expect("task").is_ok());
    // With every seat held, a waiter times out.
    held.push(fc.admit(&c, 1).await.expect("seat"));
    assert!(matches!(fc.admit(&c, 1).await, Err(RejectReason::TimeOut)));
    // An abandoned waiter leaves no seat behind.
    let abandoned = tokio::time::timeout(Duration::from_millis(10), fc.admit(&c, 1)).await;
    assert!(abandoned.is_err());
    drop(held);
    let all: Vec<Ticket> = {
        let mut v = Vec::new();
        for _ in 0..limit {
            v.push(fc.admit(&c, 1).await.expect("every seat is free again"));
        }
        v
    };
    assert_eq!(all.len() as u32, limit);
}

#[test]
fn busy_levels_borrow_from_idle_ones() {
    let fc = fc(600);
    suggested(&fc);
    let before = fc.current_limit("global-default").expect("level");
    {
        let mut levels = fc.lock();
        let l = levels.get_mut("global-default").expect("level");
        l.set.demand_high_water = 600;
    }
    fc.adjust_limits();
    let after = fc.current_limit("global-default").expect("level");
    assert!(after > before, "{before} -> {after}");
    // A level that lends nothing keeps its nominal seats.
    let catch_all = fc.current_limit(CATCH_ALL).expect("level");
    assert!(catch_all >= 1);
}
