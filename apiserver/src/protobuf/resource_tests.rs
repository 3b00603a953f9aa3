//! resource.k8s.io/v1 (dynamic resource allocation): objects as the
//! scheduler, the resource claim controller and DRA drivers write them,
//! through our encoder and decoder and through prost with k8s-pb.

use super::encode_tests::{decode, encode, unknown};
use super::prost_tests::{from_prost, some, through_prost};
use super::tests::{envelope, object_meta, Enc};
use super::*;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb_meta;
use prost::Message as _;
use serde_json::json;

/// resource.k8s.io/v1 objects as the scheduler, the resource claim
/// controller and DRA drivers write them come back unchanged (content and
/// key order), and k8s-pb reads what we write.
#[test]
fn resource_v1_objects_round_trip() {
    let meta = |name: &str| {
        json!({"name": name, "uid": "7c1e-41aa", "resourceVersion": "77",
        "creationTimestamp": "2026-01-02T03:04:05Z"})
    };
    let slice = json!({"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "node-1-gpu.example.com-x7k2q", "generateName": "node-1-gpu.example.com-",
            "uid": "u-9", "resourceVersion": "12", "creationTimestamp": "2026-01-02T03:04:05Z",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "n-1",
                "controller": true}]},
        "spec": {"driver": "gpu.example.com",
            "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
            "nodeName": "node-1",
            "devices": [
                {"name": "gpu-0",
                    "attributes": {
                        "driverVersion": {"version": "1.2.3"},
                        "gpu.example.com/model": {"string": "A100"},
                        "index": {"int": 0},
                        "mig": {"bool": false}},
                    "capacity": {
                        "memory": {"value": "40Gi"},
                        "sm": {"value": "108", "requestPolicy": {"default": "1",
                            "validRange": {"min": "1", "max": "108", "step": "1"}}}},
                    "consumesCounters": [{"counterSet": "gpu-0-counters",
                        "counters": {"memory": {"value": "40Gi"}}}],
                    "taints": [{"key": "example.com/unhealthy", "value": "ecc", "effect": "NoSchedule",
                        "timeAdded": "2026-01-02T03:04:06Z"}],
                    "allowMultipleAllocations": true},
                {"name": "gpu-1", "attributes": {"index": {"int": 1}},
                    "capacity": {"memory": {"value": "40Gi",
                        "requestPolicy": {"default": "10Gi", "validValues": ["10Gi", "20Gi", "40Gi"]}}},
                    "bindsToNode": true, "bindingConditions": ["Attached"],
                    "bindingFailureConditions": ["AttachFailed"]},
            ],
            "sharedCounters": [{"name": "gpu-0-counters", "counters": {"memory": {"value": "40Gi"}}}]}});
    let claim = json!({"kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "pod-1-gpu-8h2xv", "namespace": "default", "uid": "c-1",
            "resourceVersion": "90", "creationTimestamp": "2026-01-02T03:04:05Z",
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "pod-1", "uid": "p-1",
                "controller": true, "blockOwnerDeletion": true}],
            "finalizers": ["resource.kubernetes.io/delete-protection"]},
        "spec": {"devices": {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                    "selectors": [{"cel": {"expression": "device.attributes[\"gpu.example.com\"].model == \"A100\""}}],
                    "allocationMode": "ExactCount", "count": 1, "adminAccess": false,
                    "tolerations": [{"key": "example.com/unhealthy", "operator": "Exists",
                        "effect": "NoSchedule", "tolerationSeconds": 0}],
                    "capacity": {"requests": {"memory": "10Gi"}}}},
                {"name": "nic", "firstAvailable": [
                    {"name": "fast", "deviceClassName": "nic.example.com", "allocationMode": "All"},
                    {"name": "slow", "deviceClassName": "nic.example.com", "allocationMode": "ExactCount",
                        "count": 2}]},
            ],
            "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "example.com/numa"}],
            "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com",
                "parameters": {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig", "sharing": "TimeSlicing"}}}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                            "adminAccess": false, "shareID": "2d0f8a44-0000-4000-8000-000000000001",
                            "consumedCapacity": {"memory": "10Gi"}},
                        {"request": "nic/fast", "driver": "nic.example.com", "pool": "node-1", "device": "eth1"},
                    ],
                    "config": [{"source": "FromClaim", "requests": ["gpu"],
                        "opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "TimeSlicing"}}}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
                "allocationTimestamp": "2026-01-02T03:04:07Z"},
            "reservedFor": [{"resource": "pods", "name": "pod-1", "uid": "p-1"}],
            "devices": [{"driver": "nic.example.com", "pool": "node-1", "device": "eth1",
                "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1,
                    "lastTransitionTime": "2026-01-02T03:04:08Z", "reason": "Up", "message": "link up"}],
                "data": {"mtu": 9000},
                "networkData": {"interfaceName": "eth1", "ips": ["10.9.0.4/24", "fd00::4/64"],
                    "hardwareAddress": "02:42:ac:11:00:02"}}]}});
    let class = json!({"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1", "metadata": meta("gpu.example.com"),
        "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"mode": "default"}}}],
            "extendedResourceName": "example.com/gpu"}});
    let template = json!({"kind": "ResourceClaimTemplate", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "gpu", "namespace": "default", "creationTimestamp": null},
        "spec": {"metadata": {"creationTimestamp": null, "labels": {"app": "train"}},
            "spec": {"devices": {"requests": [{"name": "gpu",
                "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}}}});
    for object in [&slice, &claim, &class, &template] {
        let kind = object["kind"].as_str().unwrap_or_default();
        let bytes = encode(object);
        let back = decode(&bytes);
        assert_eq!(&back, object, "{kind}");
        assert_eq!(back.to_string(), object.to_string(), "{kind}");
        assert_eq!(
            &through_prost(&bytes, "resource.k8s.io/v1", kind),
            object,
            "{kind}"
        );
    }

    // What k8s-pb 0.9 reads of the slice: maps of messages by key.
    let unknown = unknown(&encode(&slice));
    let Ok(got) = k8s_pb::api::resource::v1::ResourceSlice::decode(
        unknown.raw.unwrap_or_default().as_slice(),
    ) else {
        panic!("k8s-pb cannot decode the ResourceSlice")
    };
    let spec = got.spec.unwrap_or_default();
    assert_eq!(spec.driver.as_deref(), Some("gpu.example.com"));
    let pool = spec.pool.unwrap_or_default();
    assert_eq!(
        (pool.generation, pool.resource_slice_count),
        (Some(0), Some(1))
    );
    let gpu0 = &spec.devices[0];
    assert_eq!(gpu0.attributes["index"].int, Some(0));
    assert_eq!(gpu0.attributes["mig"].bool, Some(false));
    assert_eq!(
        gpu0.attributes["gpu.example.com/model"].string.as_deref(),
        Some("A100")
    );
    assert_eq!(
        gpu0.attributes["driverVersion"].version.as_deref(),
        Some("1.2.3")
    );
    let memory = gpu0.capacity["memory"]
        .value
        .as_ref()
        .and_then(|q| q.string.as_deref());
    assert_eq!(memory, Some("40Gi"));
    let valid = &spec.devices[1].capacity["memory"]
        .request_policy
        .as_ref()
        .expect("policy")
        .valid_values;
    let valid: Vec<_> = valid.iter().filter_map(|q| q.string.as_deref()).collect();
    assert_eq!(valid, ["10Gi", "20Gi", "40Gi"]);
    assert_eq!(spec.devices[1].binds_to_node, Some(true));

    // The claim's allocation as the scheduler writes it.
    let unknown = self::unknown(&encode(&claim));
    let Ok(got) = k8s_pb::api::resource::v1::ResourceClaim::decode(
        unknown.raw.unwrap_or_default().as_slice(),
    ) else {
        panic!("k8s-pb cannot decode the ResourceClaim")
    };
    let allocation = got.status.and_then(|s| s.allocation).unwrap_or_default();
    let results = allocation.devices.unwrap_or_default().results;
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].device.as_deref(), Some("gpu-0"));
    assert_eq!(
        results[0]
            .consumed_capacity
            .get("memory")
            .and_then(|q| q.string.as_deref()),
        Some("10Gi")
    );
    let requests = got
        .spec
        .and_then(|s| s.devices)
        .unwrap_or_default()
        .requests;
    assert_eq!(requests[0].exactly.as_ref().and_then(|e| e.count), Some(1));
    assert_eq!(requests[1].first_available.len(), 2);

    // List-valued attributes and node-allocatable mappings (newer than
    // k8s-pb 0.9) round-trip through our own decoder.
    let newer = json!({"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1", "metadata": meta("s"),
        "spec": {"driver": "d", "pool": {"name": "p", "generation": 3, "resourceSliceCount": 1},
            "allNodes": true,
            "devices": [{"name": "dev",
                "attributes": {"cores": {"ints": [0, 1, -2]}, "flags": {"bools": [true, false]},
                    "names": {"strings": ["a", ""]}, "vers": {"versions": ["1.0.0"]}},
                "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": "cores",
                    "allocationMultiplier": "2"}, "memory": {}}}],
            "perDeviceNodeSelection": false}});
    let back = decode(&encode(&newer));
    assert_eq!(back.to_string(), newer.to_string());
    assert!(can_encode("resource.k8s.io/v1", "ResourceClaimList"));
}

#[test]
fn dra_driver_resource_slice_with_attribute_and_capacity_maps() {
    // A DRA driver publishes its devices: Go writes the value fields of
    // every struct (empty strings, generation 0) and the attribute and
    // capacity maps as entries with a message value; out of order keys
    // come back sorted.
    let gpu = Enc::new()
        .string(1, "gpu-0")
        .msg(
            2,
            Enc::new()
                .string(1, "model")
                .msg(2, Enc::new().string(4, "A100")),
        )
        .msg(
            2,
            Enc::new().string(1, "index").msg(2, Enc::new().int(2, 0)),
        )
        .msg(
            2,
            Enc::new()
                .string(1, "mig")
                .msg(2, Enc::new().bool(3, false)),
        )
        .msg(
            3,
            Enc::new()
                .string(1, "memory")
                .msg(2, Enc::new().msg(1, Enc::new().string(1, "40Gi"))),
        )
        .msg(
            4,
            Enc::new().string(1, "counters-0").msg(
                2,
                Enc::new()
                    .string(1, "memory")
                    .msg(2, Enc::new().msg(1, Enc::new().string(1, "2Gi"))),
            ),
        );
    let slice = Enc::new().msg(1, object_meta("node-1-gpu", "", &[])).msg(
        2,
        Enc::new()
            .string(1, "gpu.example.com")
            .msg(2, Enc::new().string(1, "node-1").int(2, 0).int(3, 1))
            .string(3, "node-1")
            .msg(6, gpu)
            .msg(6, Enc::new().string(1, "gpu-1")),
    );
    assert_eq!(
        decode_object(&envelope("resource.k8s.io/v1", "ResourceSlice", &slice)).ok(),
        Some(
            json!({"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": "node-1-gpu", "creationTimestamp": null},
            "spec": {"driver": "gpu.example.com",
                // Required int64s without omitempty: 0 is written.
                "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-1",
                "devices": [
                    {"name": "gpu-0",
                        // Pointer attribute values keep 0 and false.
                        "attributes": {"index": {"int": 0}, "mig": {"bool": false},
                            "model": {"string": "A100"}},
                        "capacity": {"memory": {"value": "40Gi"}},
                        "consumesCounters": [{"counterSet": "counters-0",
                            "counters": {"memory": {"value": "2Gi"}}}]},
                    {"name": "gpu-1"},
                ]}})
        )
    );
}

/// A DeviceTaintRule (GA in v1 from 1.37; tags of v1beta2, which k8s-pb
/// has as v1alpha3) with every field set.
fn device_taint_rule() -> Value {
    json!({"kind": "DeviceTaintRule", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "gpu-maintenance", "uid": "r-1", "resourceVersion": "5", "generation": 2,
            "creationTimestamp": "2026-01-02T03:04:05Z"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            "taint": {"key": "example.com/maintenance", "value": "firmware", "effect": "NoExecute",
                "timeAdded": "2026-01-02T03:04:06Z"}},
        "status": {"conditions": [{"type": "EvictionInProgress", "status": "True", "observedGeneration": 2,
            "lastTransitionTime": "2026-01-02T03:04:07Z", "reason": "PodsPendingEviction",
            "message": "3 pods are pending eviction"}]}})
}

#[test]
fn device_taint_rule_round_trips() {
    let rule = device_taint_rule();
    let bytes = encode(&rule);
    assert_eq!(decode(&bytes).to_string(), rule.to_string());
    assert_eq!(
        through_prost(&bytes, "resource.k8s.io/v1", "DeviceTaintRule"),
        rule
    );
    // An empty selector (matches all devices) and taint stay objects; a
    // selector's pointer strings keep "".
    let empty = json!({"kind": "DeviceTaintRule", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "all", "creationTimestamp": null},
        "spec": {"deviceSelector": {"pool": ""}, "taint": {"key": "k", "effect": "NoSchedule"}}});
    assert_eq!(decode(&encode(&empty)).to_string(), empty.to_string());
}

#[test]
fn device_taint_rule_from_prost_and_hand_made_bytes() {
    use k8s_pb::api::resource::v1alpha3 as pb;
    let time = |seconds| {
        Some(pb_meta::Time {
            seconds: Some(seconds),
            nanos: Some(0),
        })
    };
    let rule = pb::DeviceTaintRule {
        metadata: Some(pb_meta::ObjectMeta {
            name: some("gpu-maintenance"),
            uid: some("r-1"),
            resource_version: some("5"),
            generation: Some(2),
            creation_timestamp: time(1_767_323_045),
            ..Default::default()
        }),
        spec: Some(pb::DeviceTaintRuleSpec {
            device_selector: Some(pb::DeviceTaintSelector {
                driver: some("gpu.example.com"),
                pool: some("node-1"),
                device: some("gpu-0"),
            }),
            taint: Some(pb::DeviceTaint {
                key: some("example.com/maintenance"),
                value: some("firmware"),
                effect: some("NoExecute"),
                time_added: time(1_767_323_046),
            }),
        }),
        status: Some(pb::DeviceTaintRuleStatus {
            conditions: vec![pb_meta::Condition {
                r#type: some("EvictionInProgress"),
                status: some("True"),
                observed_generation: Some(2),
                last_transition_time: time(1_767_323_047),
                reason: some("PodsPendingEviction"),
                message: some("3 pods are pending eviction"),
            }],
        }),
    };
    assert_eq!(
        from_prost("resource.k8s.io/v1", "DeviceTaintRule", &rule),
        device_taint_rule()
    );

    // As Go writes it: every value field, empty ones included.
    let rule = Enc::new().msg(1, object_meta("r", "", &[])).msg(
        2,
        Enc::new()
            .msg(1, Enc::new().string(2, "d").string(4, ""))
            .msg(
                2,
                Enc::new()
                    .string(1, "k")
                    .string(2, "")
                    .string(3, "NoSchedule"),
            ),
    );
    assert_eq!(
        decode_object(&envelope("resource.k8s.io/v1", "DeviceTaintRule", &rule)).ok(),
        Some(
            json!({"kind": "DeviceTaintRule", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": "r", "creationTimestamp": null},
            "spec": {"deviceSelector": {"driver": "d", "device": ""},
                "taint": {"key": "k", "effect": "NoSchedule"}}})
        )
    );
}

#[test]
fn device_class_and_claim_template_from_prost() {
    use k8s_pb::api::resource::v1 as pb;
    let selector = |expression: &str| pb::DeviceSelector {
        cel: Some(pb::CelDeviceSelector {
            expression: some(expression),
        }),
    };
    let class = pb::DeviceClass {
        metadata: Some(pb_meta::ObjectMeta {
            name: some("gpu.example.com"),
            ..Default::default()
        }),
        spec: Some(pb::DeviceClassSpec {
            selectors: vec![selector("device.driver == \"gpu.example.com\"")],
            config: vec![pb::DeviceClassConfiguration {
                device_configuration: Some(pb::DeviceConfiguration {
                    opaque: Some(pb::OpaqueDeviceConfiguration {
                        driver: some("gpu.example.com"),
                        parameters: Some(k8s_pb::apimachinery::pkg::runtime::RawExtension {
                            raw: Some(br#"{"mode":"default"}"#.to_vec()),
                        }),
                    }),
                }),
            }],
            extended_resource_name: some("example.com/gpu"),
        }),
    };
    assert_eq!(
        from_prost("resource.k8s.io/v1", "DeviceClass", &class).to_string(),
        json!({"kind": "DeviceClass", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
                "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"mode": "default"}}}],
                "extendedResourceName": "example.com/gpu"}})
        .to_string()
    );

    let template = pb::ResourceClaimTemplate {
        metadata: Some(pb_meta::ObjectMeta {
            name: some("gpu"),
            namespace: some("default"),
            ..Default::default()
        }),
        spec: Some(pb::ResourceClaimTemplateSpec {
            metadata: Some(pb_meta::ObjectMeta {
                labels: [("app".to_owned(), "train".to_owned())].into(),
                ..Default::default()
            }),
            spec: Some(pb::ResourceClaimSpec {
                devices: Some(pb::DeviceClaim {
                    requests: vec![pb::DeviceRequest {
                        name: some("gpu"),
                        exactly: Some(pb::ExactDeviceRequest {
                            device_class_name: some("gpu.example.com"),
                            selectors: vec![selector("true")],
                            allocation_mode: some("ExactCount"),
                            count: Some(2),
                            admin_access: Some(false),
                            tolerations: vec![pb::DeviceToleration {
                                key: some("example.com/unhealthy"),
                                operator: some("Exists"),
                                effect: some("NoExecute"),
                                toleration_seconds: Some(300),
                                ..Default::default()
                            }],
                            ..Default::default()
                        }),
                        first_available: vec![],
                    }],
                    constraints: vec![pb::DeviceConstraint {
                        requests: vec!["gpu".to_owned()],
                        match_attribute: some("example.com/numa"),
                        ..Default::default()
                    }],
                    config: vec![],
                }),
            }),
        }),
    };
    assert_eq!(
        from_prost("resource.k8s.io/v1", "ResourceClaimTemplate", &template).to_string(),
        json!({"kind": "ResourceClaimTemplate", "apiVersion": "resource.k8s.io/v1",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"metadata": {"labels": {"app": "train"}},
                "spec": {"devices": {
                    "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                        "selectors": [{"cel": {"expression": "true"}}],
                        "allocationMode": "ExactCount", "count": 2, "adminAccess": false,
                        "tolerations": [{"key": "example.com/unhealthy", "operator": "Exists",
                            "effect": "NoExecute", "tolerationSeconds": 300}]}}],
                    "constraints": [{"requests": ["gpu"], "matchAttribute": "example.com/numa"}]}}}})
        .to_string()
    );
}
