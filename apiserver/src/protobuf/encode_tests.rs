//! Tests of the protobuf encoder: round trips through our decoder for a
//! rich object of every covered kind (generated from the schema tables);
//! the cross-checks with prost and k8s-pb are in `prost_tests`.

use super::prost_tests::through_prost;
use super::schema::{self, Card, Kind, Message};
use super::*;
use prost::Message as _;
use serde_json::{json, Map};

pub(super) fn encode(value: &Value) -> Vec<u8> {
    match encode_object(value) {
        Ok(bytes) => bytes,
        Err(e) => panic!("encode failed: {e}"),
    }
}

pub(super) fn decode(bytes: &[u8]) -> Value {
    match decode_object(bytes) {
        Ok(value) => value,
        Err(e) => panic!("decode failed: {e}"),
    }
}

/// A value for every field of `message`, in the JSON form (and key
/// order) upstream writes: non-zero scalars, two-entry maps with sorted
/// keys, two-item lists, nested messages down to `depth`.
fn sample(message: &'static Message, depth: usize, out: &mut Map<String, Value>) {
    for (i, field) in message.fields.iter().enumerate() {
        if let Kind::Inline(name) = field.kind {
            let Some(inline) = schema::message(name) else {
                panic!("no {name}")
            };
            sample(inline, depth, out);
            continue;
        }
        let one = |n: usize| sample_value(field.kind, field.json, depth, i + n);
        let value = match field.card {
            Card::Single => one(0),
            Card::Repeated if depth == 0 && !is_scalar(field.kind) => json!([one(0)]),
            Card::Repeated => json!([one(0), one(1)]),
            Card::Map => json!({ "a-key": one(0), "b.key/x": one(1) }),
        };
        out.insert(field.json.to_owned(), value);
    }
}

fn is_scalar(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::String(_) | Kind::Bytes | Kind::Int32(_) | Kind::Int64(_) | Kind::Bool(_)
    )
}

fn sample_value(kind: Kind, json_name: &str, depth: usize, n: usize) -> Value {
    match kind {
        Kind::String(_) => json!(format!("{json_name}-{n}")),
        Kind::Bytes => json!("AP8Qdw=="),
        Kind::Int32(_) => json!(if n % 3 == 2 { -3 } else { 7 + n as i64 }),
        Kind::Int64(_) => json!((1i64 << 40) + n as i64),
        Kind::Bool(_) => json!(true),
        Kind::Message(name) | Kind::Inline(name) => {
            let mut out = Map::new();
            if depth > 0 {
                let Some(message) = schema::message(name) else {
                    panic!("no {name}")
                };
                sample(message, depth - 1, &mut out);
            }
            Value::Object(out)
        }
        Kind::Time => json!("2024-01-02T03:04:05Z"),
        Kind::MicroTime => json!("2024-01-02T03:04:05.123456Z"),
        Kind::Duration => json!("1h2m3.5s"),
        Kind::IntOrString if n % 2 == 0 => json!(8080),
        Kind::IntOrString => json!("http"),
        Kind::Quantity => json!("500m"),
        Kind::FieldsV1 => json!({"f:metadata": {"f:labels": {".": {}}}}),
        Kind::RawExtension => json!({"apiVersion": "v1", "kind": "Foo", "n": [1, "x"]}),
        Kind::StringList => json!(["a", "b"]),
        Kind::Double if n.is_multiple_of(2) => json!(1.5),
        Kind::Double => json!(-3),
        Kind::Json => json!({"a": [1, "x", null], "b": {"c": true}}),
        Kind::SchemaOrArray | Kind::SchemaOrBool | Kind::SchemaOrStringArray if n % 2 == 0 => {
            sample_value(
                Kind::Message(schema::JSON_SCHEMA_PROPS),
                json_name,
                depth,
                n,
            )
        }
        Kind::SchemaOrArray => json!([
            sample_value(
                Kind::Message(schema::JSON_SCHEMA_PROPS),
                json_name,
                depth,
                n
            ),
            {}
        ]),
        Kind::SchemaOrBool => json!(false),
        Kind::SchemaOrStringArray => json!(["p", "q"]),
    }
}

/// A rich object of the given kind, as upstream would serve it.
pub(super) fn rich_object(api_version: &str, kind: &str, depth: usize) -> Value {
    let Some(message) = schema::message_for_kind(api_version, kind) else {
        panic!("no message for {api_version} {kind}")
    };
    let mut out = Map::new();
    out.insert("kind".to_owned(), json!(kind));
    out.insert("apiVersion".to_owned(), json!(api_version));
    sample(message, depth, &mut out);
    Value::Object(out)
}

#[test]
fn every_kind_round_trips_through_our_decoder() {
    let mut kinds = 0;
    for (api_version, kind) in schema::all_kinds() {
        for depth in [0, 2, 6] {
            let object = rich_object(&api_version, kind, depth);
            let back = decode(&encode(&object));
            // Same content (a readable diff), then the same key order.
            assert_eq!(back, object, "{api_version} {kind} depth {depth}");
            assert_eq!(back.to_string(), object.to_string());
        }
        kinds += 1;
    }
    assert!(kinds >= 40, "only {kinds} kinds");
}

#[test]
fn envelope_and_field_order_are_upstreams() {
    let cm = json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "c", "namespace": "ns", "creationTimestamp": null},
        "immutable": false, "data": {"b": "2", "a": "1"}});
    let bytes = encode(&cm);
    let mut want = b"k8s\0".to_vec();
    // typeMeta{apiVersion "v1", kind "ConfigMap"}
    want.extend_from_slice(b"\x0a\x0f\x0a\x02v1\x12\x09ConfigMap");
    let meta = b"\x0a\x01c\x12\x00\x1a\x02ns\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00";
    let mut raw = vec![0x0a, meta.len() as u8];
    raw.extend_from_slice(meta);
    // data (field 2) sorted by key, then immutable (field 4): ascending
    // field numbers although Go's struct order puts immutable first.
    raw.extend_from_slice(b"\x12\x06\x0a\x01a\x12\x011\x12\x06\x0a\x01b\x12\x012\x20\x00");
    want.push(0x12);
    want.push(raw.len() as u8);
    want.extend_from_slice(&raw);
    want.extend_from_slice(b"\x1a\x00\x22\x00");
    assert_eq!(bytes, want);
}

#[test]
fn special_values() {
    let lease = json!({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
        "metadata": {"name": "l", "creationTimestamp": "2024-02-29T23:59:59Z",
            "deletionGracePeriodSeconds": 0,
            "managedFields": [{"manager": "m", "operation": "Apply", "time": "1969-12-31T23:59:59Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
        "spec": {"holderIdentity": "", "leaseDurationSeconds": -5,
            "renewTime": "2024-01-02T03:04:05.000001Z"}});
    assert_eq!(decode(&encode(&lease)).to_string(), lease.to_string());

    let svc = json!({"kind": "Service", "apiVersion": "v1",
        "metadata": {"name": "s", "creationTimestamp": null},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443, "targetPort": "https"}]},
        "status": {"loadBalancer": {}}});
    assert_eq!(decode(&encode(&svc)).to_string(), svc.to_string());

    // Zero values of Go value fields come back omitted, as upstream writes them.
    let pod = json!({"kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "p", "namespace": "", "generation": 0, "creationTimestamp": null},
        "spec": {"containers": [{"name": "c", "image": "i", "stdin": false}]}});
    assert_eq!(
        decode(&encode(&pod)),
        json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "p", "creationTimestamp": null},
            "spec": {"containers": [{"name": "c", "image": "i"}]}})
    );

    // Quantities given as JSON numbers come back as strings.
    let quota = json!({"kind": "ResourceQuota", "apiVersion": "v1",
        "metadata": {"name": "q", "creationTimestamp": null},
        "spec": {"hard": {"pods": 10, "cpu": "1.5"}}});
    let back = decode(&encode(&quota));
    assert_eq!(back["spec"]["hard"], json!({"cpu": "1.5", "pods": "10"}));
}

#[test]
fn encode_errors() {
    let unknown =
        json!({"kind": "Widget", "apiVersion": "example.com/v1", "metadata": {"name": "w"}});
    assert_eq!(
        encode_object(&unknown),
        Err(EncodeError::UnknownKind {
            api_version: "example.com/v1".into(),
            kind: "Widget".into()
        })
    );
    assert_eq!(
        encode_object(&json!({"kind": "Pod"})),
        Err(EncodeError::MissingTypeMeta("apiVersion"))
    );
    assert!(matches!(
        encode_object(&json!([1])),
        Err(EncodeError::Invalid { .. })
    ));
    let bad = json!({"kind": "Pod", "apiVersion": "v1",
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}});
    match encode_object(&bad) {
        Err(EncodeError::Invalid { path, reason }) => {
            assert_eq!(path, "Pod.spec.containers[0].ports[0].containerPort");
            assert_eq!(reason, "expected an integer, got a string");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
    let too_big =
        json!({"kind": "Deployment", "apiVersion": "apps/v1", "spec": {"replicas": 1u64 << 40}});
    assert!(matches!(
        encode_object(&too_big),
        Err(EncodeError::Invalid { .. })
    ));
    let bad_time =
        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"creationTimestamp": "yesterday"}});
    assert!(matches!(
        encode_object(&bad_time),
        Err(EncodeError::Invalid { .. })
    ));
    let bad_b64 = json!({"kind": "Secret", "apiVersion": "v1", "data": {"k": "!!"}});
    assert!(matches!(
        encode_object(&bad_b64),
        Err(EncodeError::Invalid { .. })
    ));
}

#[test]
fn durations_parse_as_go_does() {
    use super::encode::parse_duration;
    use super::special::format_duration;
    for nanos in [
        0,
        1,
        1_100,
        2_200_000,
        1_500_000_000,
        3_723_000_000_001,
        -1_500_000_000,
        i64::MIN,
        i64::MAX,
    ] {
        assert_eq!(
            parse_duration(&format_duration(nanos)),
            Ok(nanos),
            "{nanos}"
        );
    }
    assert_eq!(parse_duration("1.5h"), Ok(5_400_000_000_000));
    assert_eq!(parse_duration("0"), Ok(0));
    assert_eq!(parse_duration("3us"), Ok(3_000));
    for bad in ["", "-", "1", "1x", "h", ".s", "99999999999999999999h"] {
        assert!(parse_duration(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn k8s_pb_reads_our_pod() {
    let pod = json!({"kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web", "namespace": "demo", "uid": "u-1", "resourceVersion": "42",
            "creationTimestamp": "2024-05-06T07:08:09Z", "labels": {"app": "web", "tier": "fe"}},
        "spec": {"containers": [
            {"name": "nginx", "image": "nginx:1.27",
             "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
             "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}},
            {"name": "side", "image": "busybox", "command": ["sh", "-c", "sleep 1"]}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "securityContext": {"runAsUser": 0}},
        "status": {"phase": "Running", "podIP": "10.0.0.7"}});
    let bytes = encode(&pod);
    let Some(body) = bytes.strip_prefix(&MAGIC[..]) else {
        panic!("no magic")
    };
    let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown::decode(body).expect("envelope");
    let got = k8s_pb::api::core::v1::Pod::decode(unknown.raw.unwrap_or_default().as_slice())
        .expect("pod");
    let meta = got.metadata.unwrap_or_default();
    assert_eq!(meta.name.as_deref(), Some("web"));
    assert_eq!(meta.namespace.as_deref(), Some("demo"));
    assert_eq!(meta.resource_version.as_deref(), Some("42"));
    assert_eq!(
        meta.creation_timestamp.and_then(|t| t.seconds),
        Some(1_714_979_289)
    );
    assert_eq!(meta.labels.get("app").map(String::as_str), Some("web"));
    assert_eq!(meta.labels.len(), 2);
    let spec = got.spec.unwrap_or_default();
    let names: Vec<_> = spec
        .containers
        .iter()
        .map(|c| c.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["nginx", "side"]);
    let images: Vec<_> = spec
        .containers
        .iter()
        .map(|c| c.image.clone().unwrap_or_default())
        .collect();
    assert_eq!(images, ["nginx:1.27", "busybox"]);
    let port = &spec.containers[0].ports[0];
    assert_eq!(port.container_port, Some(80));
    assert_eq!(port.protocol.as_deref(), Some("TCP"));
    let limits = &spec.containers[0]
        .resources
        .as_ref()
        .expect("resources")
        .limits;
    assert_eq!(
        limits.get("cpu").and_then(|q| q.string.as_deref()),
        Some("500m")
    );
    assert_eq!(spec.containers[1].command, ["sh", "-c", "sleep 1"]);
    assert_eq!(spec.termination_grace_period_seconds, Some(30));
    assert_eq!(spec.security_context.and_then(|s| s.run_as_user), Some(0));
    // Go value fields are written even when empty, as Go writes them.
    assert_eq!(spec.host_network, Some(false));
    assert_eq!(spec.node_name.as_deref(), Some(""));
    let status = got.status.unwrap_or_default();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(status.pod_ip.as_deref(), Some("10.0.0.7"));
}

/// The fixtures of `fixture_tests` (written by prost, not byte for byte
/// as Go writes them: prost drops empty map values and the fixtures leave
/// some Go value fields out) come back to the same JSON.
#[test]
fn fixtures_round_trip() {
    for (fixture, kind) in super::fixture_tests::FIXTURES {
        let json = decode(&super::fixture_tests::hex(fixture));
        assert_eq!(json["kind"], *kind);
        assert_eq!(decode(&encode(&json)).to_string(), json.to_string());
    }
}

pub(super) fn unknown(bytes: &[u8]) -> k8s_pb::apimachinery::pkg::runtime::Unknown {
    let Some(body) = bytes.strip_prefix(&MAGIC[..]) else {
        panic!("no magic")
    };
    k8s_pb::apimachinery::pkg::runtime::Unknown::decode(body).expect("envelope")
}

fn cm(name: &str) -> Value {
    json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "demo", "resourceVersion": "7",
            "creationTimestamp": "2024-05-06T07:08:09Z"},
        "data": {"k": name}})
}

#[test]
fn lists_from_encoded_items() {
    let items: Vec<bytes::Bytes> = ["a", "b", "c"]
        .iter()
        .map(|n| encode(&cm(n)).into())
        .collect();
    let meta = json!({"resourceVersion": "42", "continue": "tok", "remainingItemCount": 0});
    let chunks = match encode_list("v1", "ConfigMapList", &meta, &items) {
        Ok(chunks) => chunks,
        Err(e) => panic!("{e}"),
    };
    let body: Vec<u8> = chunks.concat();
    // Item bytes are shared, not copied.
    assert!(chunks.iter().any(|c| c.as_ptr() > items[1].as_ptr()
        && c.as_ptr() < items[1].as_ptr().wrapping_add(items[1].len())));
    let unknown = unknown(&body);
    let type_meta = unknown.type_meta.unwrap_or_default();
    assert_eq!(type_meta.api_version.as_deref(), Some("v1"));
    assert_eq!(type_meta.kind.as_deref(), Some("ConfigMapList"));
    let list =
        k8s_pb::api::core::v1::ConfigMapList::decode(unknown.raw.unwrap_or_default().as_slice())
            .expect("list");
    let list_meta = list.metadata.unwrap_or_default();
    assert_eq!(list_meta.resource_version.as_deref(), Some("42"));
    assert_eq!(list_meta.r#continue.as_deref(), Some("tok"));
    assert_eq!(list_meta.remaining_item_count, Some(0));
    let names: Vec<_> = list
        .items
        .iter()
        .map(|i| {
            i.metadata
                .clone()
                .unwrap_or_default()
                .name
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(list.items[2].data.get("k").map(String::as_str), Some("c"));

    // The same list encoded from its JSON form gives the same bytes.
    let json_list = json!({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta,
        "items": [cm("a"), cm("b"), cm("c")]});
    assert_eq!(encode(&json_list), body);

    assert!(matches!(
        encode_list("example.com/v1", "WidgetList", &meta, &[]),
        Err(EncodeError::UnknownKind { .. })
    ));
    assert!(can_encode("v1", "PodList"));
    assert!(can_encode("apps/v1", "Deployment"));
    assert!(can_encode("v1", "Status"));
    assert!(can_encode("meta.k8s.io/v1", "PartialObjectMetadataList"));
    assert!(!can_encode("example.com/v1", "Widget"));
    assert!(!can_encode("v1", "List"));
    assert!(!can_encode("v1", "StatusList"));
}

#[test]
fn partial_object_metadata_list_from_items() {
    let item = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"name": "w", "namespace": "n", "labels": {"a": "b"}, "creationTimestamp": null}});
    let items = vec![bytes::Bytes::from(encode(&item))];
    let chunks = encode_list(
        "meta.k8s.io/v1",
        "PartialObjectMetadataList",
        &json!({"resourceVersion": "3"}),
        &items,
    )
    .expect("list");
    let unknown = unknown(&chunks.concat());
    let list = k8s_pb::apimachinery::pkg::apis::meta::v1::PartialObjectMetadataList::decode(
        unknown.raw.unwrap_or_default().as_slice(),
    )
    .expect("list");
    let meta = list.items[0].metadata.clone().unwrap_or_default();
    assert_eq!(meta.name.as_deref(), Some("w"));
    assert_eq!(meta.labels.get("a").map(String::as_str), Some("b"));
}

#[test]
fn status_for_protobuf_clients() {
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": "pods \"x\" not found", "reason": "NotFound",
        "details": {"name": "x", "kind": "pods",
            "causes": [{"reason": "FieldValueInvalid", "message": "m", "field": "spec"}]},
        "code": 404});
    let bytes = encode(&status);
    assert_eq!(decode(&bytes).to_string(), status.to_string());
    let got = k8s_pb::apimachinery::pkg::apis::meta::v1::Status::decode(
        unknown(&bytes).raw.unwrap_or_default().as_slice(),
    )
    .expect("status");
    assert_eq!(got.code, Some(404));
    assert_eq!(got.reason.as_deref(), Some("NotFound"));
    let details = got.details.unwrap_or_default();
    assert_eq!(details.name.as_deref(), Some("x"));
    assert_eq!(details.causes[0].field.as_deref(), Some("spec"));
}

#[test]
fn watch_frames_as_upstream_frames_them() {
    let object = encode(&cm("w"));
    for event_type in ["ADDED", "MODIFIED", "BOOKMARK"] {
        let mut frame = watch_frame_head(event_type, object.len());
        frame.extend_from_slice(&object);
        let (len, event) = frame.split_at(4);
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        assert_eq!(len, event.len());
        let event =
            k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent::decode(event).expect("event");
        assert_eq!(event.r#type.as_deref(), Some(event_type));
        let raw = event.object.and_then(|o| o.raw).unwrap_or_default();
        assert_eq!(raw, object);
        assert_eq!(decode(&raw)["metadata"]["name"], "w");
    }
    // Objects of 128 bytes and more need two-byte lengths.
    let big = vec![7u8; 300];
    let head = watch_frame_head("ADDED", big.len());
    let mut frame = head.clone();
    frame.extend_from_slice(&big);
    let event =
        k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent::decode(&frame[4..]).expect("event");
    assert_eq!(event.object.and_then(|o| o.raw).unwrap_or_default(), big);
}

/// storage.k8s.io/v1 objects as upstream serves them come back unchanged
/// (content and key order), and k8s-pb reads what we write.
#[test]
fn storage_v1_objects_round_trip() {
    let meta = |name: &str| {
        json!({"name": name, "uid": "0b6f-4c1d", "resourceVersion": "42",
        "creationTimestamp": "2025-03-04T05:06:07Z"})
    };
    let objects = [
        json!({"kind": "CSIDriver", "apiVersion": "storage.k8s.io/v1", "metadata": meta("ebs.csi.aws.com"),
            "spec": {"attachRequired": true, "podInfoOnMount": false,
                "volumeLifecycleModes": ["Persistent", "Ephemeral"], "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType",
                "tokenRequests": [{"audience": "sts.amazonaws.com", "expirationSeconds": 3600}, {"audience": "vault"}],
                "requiresRepublish": false, "seLinuxMount": true,
                "nodeAllocatableUpdatePeriodSeconds": 60, "serviceAccountTokenInSecrets": false}}),
        json!({"kind": "CSINode", "apiVersion": "storage.k8s.io/v1",
        "metadata": {"name": "node-1", "creationTimestamp": "2025-03-04T05:06:07Z",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "u-1"}]},
        "spec": {"drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": "i-0123",
                "topologyKeys": ["topology.ebs.csi.aws.com/zone"], "allocatable": {"count": 25}},
            {"name": "hostpath.csi.k8s.io", "nodeID": "node-1", "allocatable": {"count": 0}},
            {"name": "smb.csi.k8s.io", "nodeID": "node-1"},
        ]}}),
        json!({"kind": "CSIStorageCapacity", "apiVersion": "storage.k8s.io/v1",
            "metadata": {"name": "csisc-x", "namespace": "kube-system", "creationTimestamp": null},
            "nodeTopology": {"matchLabels": {"topology.hostpath.csi/node": "node-1"}},
            "storageClassName": "fast", "capacity": "100Gi", "maximumVolumeSize": "10Gi"}),
        json!({"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1",
            "metadata": {"name": "standard", "creationTimestamp": null,
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path", "parameters": {"fsType": "ext4", "type": "gp3"},
            "reclaimPolicy": "Delete", "mountOptions": ["debug"], "allowVolumeExpansion": false,
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [{"matchLabelExpressions": [
                {"key": "topology.kubernetes.io/zone", "values": ["us-east-1a", "us-east-1b"]}]}]}),
        json!({"kind": "VolumeAttachment", "apiVersion": "storage.k8s.io/v1", "metadata": meta("csi-1"),
            "spec": {"attacher": "ebs.csi.aws.com",
                "source": {"inlineVolumeSpec": {"capacity": {"storage": "5Gi"},
                    "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1", "fsType": "ext4"},
                    "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain"}},
                "nodeName": "node-1"},
            "status": {"attached": false, "attachmentMetadata": {"devicePath": "/dev/xvdba"},
                "attachError": {"time": "2025-03-04T05:06:08Z", "message": "timed out", "errorCode": 4},
                "detachError": {"time": null, "errorCode": 0}}}),
        json!({"kind": "VolumeAttachment", "apiVersion": "storage.k8s.io/v1", "metadata": meta("csi-2"),
            "spec": {"attacher": "a", "source": {"persistentVolumeName": ""}, "nodeName": "n"},
            "status": {"attached": true}}),
        json!({"kind": "VolumeAttributesClass", "apiVersion": "storage.k8s.io/v1", "metadata": meta("gold"),
            "driverName": "ebs.csi.aws.com", "parameters": {"iops": "3000", "throughput": "125"}}),
    ];
    for object in &objects {
        let kind = object["kind"].as_str().unwrap_or_default();
        let bytes = encode(object);
        let back = decode(&bytes);
        assert_eq!(&back, object, "{kind}");
        assert_eq!(back.to_string(), object.to_string(), "{kind}");
        assert_eq!(
            &through_prost(&bytes, "storage.k8s.io/v1", kind),
            object,
            "{kind}"
        );
    }
    // Served as a CSINodeList, which k8s-pb reads.
    let list = json!({"kind": "CSINodeList", "apiVersion": "storage.k8s.io/v1",
        "metadata": {"resourceVersion": "9"}, "items": [
            {"metadata": {"name": "node-1", "creationTimestamp": null},
                "spec": {"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"count": 3}}]}}]});
    assert!(can_encode("storage.k8s.io/v1", "CSINodeList"));
    let unknown = unknown(&encode(&list));
    let decoded =
        k8s_pb::api::storage::v1::CSINodeList::decode(unknown.raw.unwrap_or_default().as_slice());
    let Ok(decoded) = decoded else {
        panic!("k8s-pb cannot decode the CSINodeList")
    };
    let drivers = decoded
        .items
        .first()
        .and_then(|node| node.spec.as_ref())
        .map(|spec| spec.drivers.clone())
        .unwrap_or_default();
    assert_eq!(drivers.len(), 1);
    assert_eq!(
        drivers[0].allocatable.as_ref().and_then(|a| a.count),
        Some(3)
    );
}
