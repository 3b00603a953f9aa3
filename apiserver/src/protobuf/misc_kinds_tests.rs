//! node.k8s.io/v1 RuntimeClass, flowcontrol.apiserver.k8s.io/v1
//! FlowSchema and PriorityLevelConfiguration, networking.k8s.io/v1
//! IPAddress and ServiceCIDR, storagemigration.k8s.io/v1
//! StorageVersionMigration: through our encoder and decoder, from objects
//! built with the k8s-pb types, and from hand-made bytes.

use super::encode_tests::{decode, encode};
use super::prost_tests::{from_prost, some, through_prost};
use super::tests::{envelope, object_meta, Enc};
use super::*;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb_meta;
use serde_json::json;

const NODE: &str = "node.k8s.io/v1";
const FLOW: &str = "flowcontrol.apiserver.k8s.io/v1";
const NET: &str = "networking.k8s.io/v1";
const MIGRATION: &str = "storagemigration.k8s.io/v1";

fn meta_json(name: &str) -> Value {
    json!({"name": name, "uid": "u-1", "resourceVersion": "7", "generation": 1,
        "creationTimestamp": "2026-01-02T03:04:05Z"})
}

/// 2026-01-02T03:04:05Z + `s` seconds.
fn time(s: i64) -> Option<pb_meta::Time> {
    Some(pb_meta::Time {
        seconds: Some(1_767_323_045 + s),
        nanos: Some(0),
    })
}

fn meta(name: &str) -> Option<pb_meta::ObjectMeta> {
    Some(pb_meta::ObjectMeta {
        name: some(name),
        uid: some("u-1"),
        resource_version: some("7"),
        generation: Some(1),
        creation_timestamp: time(0),
        ..Default::default()
    })
}

fn condition(kind: &str) -> pb_meta::Condition {
    pb_meta::Condition {
        r#type: some(kind),
        status: some("True"),
        observed_generation: Some(1),
        last_transition_time: time(1),
        reason: some("Done"),
        message: some("done"),
    }
}

fn condition_json(kind: &str) -> Value {
    json!({"type": kind, "status": "True", "observedGeneration": 1,
        "lastTransitionTime": "2026-01-02T03:04:06Z", "reason": "Done", "message": "done"})
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn runtime_class() -> Value {
    json!({"kind": "RuntimeClass", "apiVersion": NODE, "metadata": meta_json("gvisor"),
        "handler": "runsc",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"runtime": "gvisor"},
            "tolerations": [{"key": "runtime", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"}]}})
}

/// Upstream's suggested `system-leader-election` flow schema, with status.
fn flow_schema() -> Value {
    json!({"kind": "FlowSchema", "apiVersion": FLOW, "metadata": meta_json("system-leader-election"),
        "spec": {"priorityLevelConfiguration": {"name": "leader-election"},
            "matchingPrecedence": 100,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [
                    {"kind": "User", "user": {"name": "system:kube-controller-manager"}},
                    {"kind": "Group", "group": {"name": "system:masters"}},
                    {"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": "*"}}],
                "resourceRules": [{"verbs": ["get", "update"], "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"], "clusterScope": true, "namespaces": ["*"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez"]}]}]},
        "status": {"conditions": [{"type": "Dangling", "status": "False",
            "lastTransitionTime": "2026-01-02T03:04:06Z", "reason": "Found",
            "message": "This FlowSchema references the PriorityLevelConfiguration object named \"leader-election\" and it exists"}]}})
}

fn limited_level() -> Value {
    json!({"kind": "PriorityLevelConfiguration", "apiVersion": FLOW, "metadata": meta_json("workload-low"),
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 100,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}},
            "lendablePercent": 0, "borrowingLimitPercent": 0}},
        "status": {"conditions": [{"type": "ConcurrencyShared", "status": "True",
            "lastTransitionTime": "2026-01-02T03:04:06Z", "reason": "Shared", "message": "shared"}]}})
}

fn exempt_level() -> Value {
    json!({"kind": "PriorityLevelConfiguration", "apiVersion": FLOW, "metadata": meta_json("exempt"),
        "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}})
}

fn ip_address() -> Value {
    json!({"kind": "IPAddress", "apiVersion": NET, "metadata": meta_json("10.96.0.10"),
        "spec": {"parentRef": {"resource": "services", "namespace": "kube-system", "name": "kube-dns"}}})
}

fn service_cidr() -> Value {
    json!({"kind": "ServiceCIDR", "apiVersion": NET, "metadata": meta_json("kubernetes"),
        "spec": {"cidrs": ["10.96.0.0/12", "fd00:10:96::/112"]},
        "status": {"conditions": [condition_json("Ready")]}})
}

fn migration() -> Value {
    json!({"kind": "StorageVersionMigration", "apiVersion": MIGRATION, "metadata": meta_json("secrets"),
        "spec": {"resource": {"group": "", "resource": "secrets"}},
        "status": {"conditions": [condition_json("Succeeded")], "resourceVersion": "1234"}})
}

#[test]
fn objects_round_trip() {
    for (api_version, object) in [
        (NODE, runtime_class()),
        (FLOW, flow_schema()),
        (FLOW, limited_level()),
        (FLOW, exempt_level()),
        (NET, ip_address()),
        (NET, service_cidr()),
        (MIGRATION, migration()),
    ] {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let bytes = encode(&object);
        assert_eq!(decode(&bytes).to_string(), object.to_string(), "{kind}");
        assert_eq!(through_prost(&bytes, api_version, &kind), object, "{kind}");
        assert!(can_encode(api_version, &format!("{kind}List")), "{kind}");
    }
}

#[test]
fn runtime_class_and_networking_from_prost() {
    use k8s_pb::api::{core::v1 as core, networking::v1 as net, node::v1 as node};
    use k8s_pb::apimachinery::pkg::api::resource::Quantity;
    let quantity = |s: &str| Quantity { string: some(s) };
    let class = node::RuntimeClass {
        metadata: meta("gvisor"),
        handler: some("runsc"),
        overhead: Some(node::Overhead {
            pod_fixed: [
                ("cpu".to_owned(), quantity("250m")),
                ("memory".to_owned(), quantity("120Mi")),
            ]
            .into(),
        }),
        scheduling: Some(node::Scheduling {
            node_selector: [("runtime".to_owned(), "gvisor".to_owned())].into(),
            tolerations: vec![core::Toleration {
                key: some("runtime"),
                operator: some("Equal"),
                value: some("gvisor"),
                effect: some("NoSchedule"),
                toleration_seconds: None,
            }],
        }),
    };
    assert_eq!(from_prost(NODE, "RuntimeClass", &class), runtime_class());

    let address = net::IPAddress {
        metadata: meta("10.96.0.10"),
        spec: Some(net::IPAddressSpec {
            parent_ref: Some(net::ParentReference {
                group: some(""),
                resource: some("services"),
                namespace: some("kube-system"),
                name: some("kube-dns"),
            }),
        }),
    };
    // `group` has omitempty: the core group's "" is dropped.
    assert_eq!(from_prost(NET, "IPAddress", &address), ip_address());

    let cidr = net::ServiceCIDR {
        metadata: meta("kubernetes"),
        spec: Some(net::ServiceCIDRSpec {
            cidrs: strings(&["10.96.0.0/12", "fd00:10:96::/112"]),
        }),
        status: Some(net::ServiceCIDRStatus {
            conditions: vec![condition("Ready")],
        }),
    };
    assert_eq!(from_prost(NET, "ServiceCIDR", &cidr), service_cidr());
}

#[test]
fn flowcontrol_from_prost() {
    use k8s_pb::api::flowcontrol::v1 as pb;
    let subject = |kind: &str| pb::Subject {
        kind: some(kind),
        ..Default::default()
    };
    let schema = pb::FlowSchema {
        metadata: meta("system-leader-election"),
        spec: Some(pb::FlowSchemaSpec {
            priority_level_configuration: Some(pb::PriorityLevelConfigurationReference {
                name: some("leader-election"),
            }),
            matching_precedence: Some(100),
            distinguisher_method: Some(pb::FlowDistinguisherMethod {
                r#type: some("ByUser"),
            }),
            rules: vec![pb::PolicyRulesWithSubjects {
                subjects: vec![
                    pb::Subject {
                        user: Some(pb::UserSubject {
                            name: some("system:kube-controller-manager"),
                        }),
                        ..subject("User")
                    },
                    pb::Subject {
                        group: Some(pb::GroupSubject {
                            name: some("system:masters"),
                        }),
                        ..subject("Group")
                    },
                    pb::Subject {
                        service_account: Some(pb::ServiceAccountSubject {
                            namespace: some("kube-system"),
                            name: some("*"),
                        }),
                        ..subject("ServiceAccount")
                    },
                ],
                resource_rules: vec![pb::ResourcePolicyRule {
                    verbs: strings(&["get", "update"]),
                    api_groups: strings(&["coordination.k8s.io"]),
                    resources: strings(&["leases"]),
                    cluster_scope: Some(true),
                    namespaces: strings(&["*"]),
                }],
                non_resource_rules: vec![pb::NonResourcePolicyRule {
                    verbs: strings(&["get"]),
                    non_resource_ur_ls: strings(&["/healthz", "/livez"]),
                }],
            }],
        }),
        status: Some(pb::FlowSchemaStatus {
            conditions: vec![pb::FlowSchemaCondition {
                r#type: some("Dangling"),
                status: some("False"),
                last_transition_time: time(1),
                reason: some("Found"),
                message: some("This FlowSchema references the PriorityLevelConfiguration object named \"leader-election\" and it exists"),
            }],
        }),
    };
    assert_eq!(from_prost(FLOW, "FlowSchema", &schema), flow_schema());

    let limited = pb::PriorityLevelConfiguration {
        metadata: meta("workload-low"),
        spec: Some(pb::PriorityLevelConfigurationSpec {
            r#type: some("Limited"),
            limited: Some(pb::LimitedPriorityLevelConfiguration {
                nominal_concurrency_shares: Some(100),
                limit_response: Some(pb::LimitResponse {
                    r#type: some("Queue"),
                    queuing: Some(pb::QueuingConfiguration {
                        queues: Some(128),
                        hand_size: Some(6),
                        queue_length_limit: Some(50),
                    }),
                }),
                lendable_percent: Some(0),
                borrowing_limit_percent: Some(0),
            }),
            exempt: None,
        }),
        status: Some(pb::PriorityLevelConfigurationStatus {
            conditions: vec![pb::PriorityLevelConfigurationCondition {
                r#type: some("ConcurrencyShared"),
                status: some("True"),
                last_transition_time: time(1),
                reason: some("Shared"),
                message: some("shared"),
            }],
        }),
    };
    assert_eq!(
        from_prost(FLOW, "PriorityLevelConfiguration", &limited),
        limited_level()
    );
    let exempt = pb::PriorityLevelConfiguration {
        metadata: meta("exempt"),
        spec: Some(pb::PriorityLevelConfigurationSpec {
            r#type: some("Exempt"),
            limited: None,
            exempt: Some(pb::ExemptPriorityLevelConfiguration {
                nominal_concurrency_shares: Some(0),
                lendable_percent: Some(0),
            }),
        }),
        status: None,
    };
    assert_eq!(
        from_prost(FLOW, "PriorityLevelConfiguration", &exempt),
        exempt_level()
    );
}

#[test]
fn storage_version_migration_from_prost() {
    // GA in v1 only in 1.37: k8s-pb 0.9 has v1beta1's (same numbers).
    use k8s_pb::api::storagemigration::v1beta1 as pb;
    let svm = pb::StorageVersionMigration {
        metadata: meta("secrets"),
        spec: Some(pb::StorageVersionMigrationSpec {
            resource: Some(pb_meta::GroupResource {
                group: some(""),
                resource: some("secrets"),
            }),
        }),
        status: Some(pb::StorageVersionMigrationStatus {
            conditions: vec![condition("Succeeded")],
            resource_version: some("1234"),
        }),
    };
    assert_eq!(
        from_prost(MIGRATION, "StorageVersionMigration", &svm),
        migration()
    );
}

#[test]
fn as_go_writes_them() {
    // RuntimeClass.handler, the queuing numbers and GroupResource's
    // strings have no omitempty: Go writes (and we keep) their zero
    // values; a ParentReference's empty strings are dropped.
    let class = Enc::new()
        .msg(1, object_meta("c", "", &[]))
        .string(2, "")
        .msg(3, Enc::new().quantity_entry(1, "cpu", "10m"));
    assert_eq!(
        decode_object(&envelope(NODE, "RuntimeClass", &class)).ok(),
        Some(json!({"kind": "RuntimeClass", "apiVersion": NODE,
            "metadata": {"name": "c", "creationTimestamp": null},
            "handler": "", "overhead": {"podFixed": {"cpu": "10m"}}}))
    );

    let level = Enc::new().msg(1, object_meta("l", "", &[])).msg(
        2,
        Enc::new().string(1, "Limited").msg(
            2,
            Enc::new().int(1, 5).msg(
                2,
                Enc::new()
                    .string(1, "Reject")
                    .msg(2, Enc::new().int(1, 0).int(2, 0).int(3, 0)),
            ),
        ),
    );
    assert_eq!(
        decode_object(&envelope(FLOW, "PriorityLevelConfiguration", &level)).ok(),
        Some(
            json!({"kind": "PriorityLevelConfiguration", "apiVersion": FLOW,
            "metadata": {"name": "l", "creationTimestamp": null},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                "limitResponse": {"type": "Reject",
                    "queuing": {"queues": 0, "handSize": 0, "queueLengthLimit": 0}}}}})
        )
    );

    let address = Enc::new().msg(1, object_meta("10.0.0.1", "", &[])).msg(
        2,
        Enc::new().msg(
            1,
            Enc::new()
                .string(1, "")
                .string(2, "services")
                .string(3, "default")
                .string(4, "kubernetes"),
        ),
    );
    assert_eq!(
        decode_object(&envelope(NET, "IPAddress", &address)).ok(),
        Some(json!({"kind": "IPAddress", "apiVersion": NET,
            "metadata": {"name": "10.0.0.1", "creationTimestamp": null},
            "spec": {"parentRef": {"resource": "services", "namespace": "default", "name": "kubernetes"}}}))
    );

    let svm = Enc::new()
        .msg(1, object_meta("m", "", &[]))
        .msg(
            2,
            Enc::new().msg(1, Enc::new().string(1, "").string(2, "secrets")),
        )
        .msg(3, Enc::new().string(2, ""));
    assert_eq!(
        decode_object(&envelope(MIGRATION, "StorageVersionMigration", &svm)).ok(),
        Some(
            json!({"kind": "StorageVersionMigration", "apiVersion": MIGRATION,
            "metadata": {"name": "m", "creationTimestamp": null},
            "spec": {"resource": {"group": "", "resource": "secrets"}}, "status": {}})
        )
    );
}
