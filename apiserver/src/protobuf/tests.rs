//! Tests of the protobuf decoder with bodies built by a small encoder that
//! writes fields the way Go's generated marshallers do (every non-pointer
//! field, even when empty).

use super::*;
use serde_json::json;

/// A minimal protobuf encoder.
#[derive(Clone, Default)]
pub(super) struct Enc(pub(super) Vec<u8>);

impl Enc {
    pub(super) fn new() -> Self {
        Self::default()
    }

    pub(super) fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    pub(super) fn key(&mut self, tag: u32, wire_type: u8) {
        self.raw_varint(u64::from(tag) << 3 | u64::from(wire_type));
    }

    /// A varint field (int32/int64 sign-extended, as Go writes them).
    pub(super) fn int(mut self, tag: u32, v: i64) -> Self {
        self.key(tag, 0);
        self.raw_varint(v as u64);
        self
    }

    pub(super) fn bool(self, tag: u32, v: bool) -> Self {
        self.int(tag, i64::from(v))
    }

    pub(super) fn bytes(mut self, tag: u32, b: &[u8]) -> Self {
        self.key(tag, 2);
        self.raw_varint(b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }

    pub(super) fn string(self, tag: u32, s: &str) -> Self {
        self.bytes(tag, s.as_bytes())
    }

    pub(super) fn msg(self, tag: u32, m: Enc) -> Self {
        self.bytes(tag, &m.0)
    }

    /// A `map<string, string>` entry.
    pub(super) fn entry(self, tag: u32, k: &str, v: &str) -> Self {
        self.msg(tag, Enc::new().string(1, k).string(2, v))
    }

    /// A `map<string, bytes>` entry.
    pub(super) fn bytes_entry(self, tag: u32, k: &str, v: &[u8]) -> Self {
        self.msg(tag, Enc::new().string(1, k).bytes(2, v))
    }

    /// A `map<string, Quantity>` entry.
    pub(super) fn quantity_entry(self, tag: u32, k: &str, v: &str) -> Self {
        self.msg(tag, Enc::new().string(1, k).msg(2, Enc::new().string(1, v)))
    }
}

/// The `k8s\0` + runtime.Unknown envelope as upstream's serializer writes
/// it (empty contentEncoding and contentType included).
pub(super) fn envelope(api_version: &str, kind: &str, raw: &Enc) -> Vec<u8> {
    let unknown = Enc::new()
        .msg(1, Enc::new().string(1, api_version).string(2, kind))
        .bytes(2, &raw.0)
        .string(3, "")
        .string(4, "");
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&unknown.0);
    out
}

/// ObjectMeta as gogo marshals it for a new object: every non-pointer
/// field, labels sorted.
pub(super) fn object_meta(name: &str, namespace: &str, labels: &[(&str, &str)]) -> Enc {
    let mut meta = Enc::new()
        .string(1, name)
        .string(2, "")
        .string(3, namespace)
        .string(4, "")
        .string(5, "")
        .string(6, "")
        .int(7, 0)
        .msg(8, Enc::new());
    for (k, v) in labels {
        meta = meta.entry(11, k, v);
    }
    meta
}

pub(super) fn decode_json(bytes: &[u8]) -> String {
    match decode_object(bytes) {
        Ok(value) => value.to_string(),
        Err(e) => panic!("decode failed: {e}"),
    }
}

pub(super) fn malformed_reason(result: Result<Value, DecodeError>) -> (String, String) {
    match result {
        Err(DecodeError::Malformed { path, reason }) => (path, reason),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

pub(super) fn namespace_demo() -> Vec<u8> {
    let ns = Enc::new()
        .msg(1, object_meta("demo", "", &[]))
        .msg(2, Enc::new())
        .msg(3, Enc::new().string(1, ""));
    envelope("v1", "Namespace", &ns)
}

#[test]
fn kubectl_create_namespace() {
    assert_eq!(
        decode_json(&namespace_demo()),
        r#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"demo","creationTimestamp":null},"spec":{},"status":{}}"#
    );
}

#[test]
fn kubectl_create_configmap() {
    let cm = Enc::new()
        .msg(1, object_meta("c", "default", &[]))
        .entry(2, "a", "b")
        .entry(2, "0-first", "");
    assert_eq!(
        decode_json(&envelope("v1", "ConfigMap", &cm)),
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default","creationTimestamp":null},"data":{"0-first":"","a":"b"}}"#
    );
    // immutable is a pointer: false survives.
    let cm = Enc::new().msg(1, object_meta("c", "", &[])).bool(4, false);
    assert_eq!(
        decode_object(&envelope("v1", "ConfigMap", &cm)).ok(),
        Some(json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "c", "creationTimestamp": null},
            "immutable": false}))
    );
}

#[test]
fn kubectl_create_secret_generic() {
    let secret = Enc::new()
        .msg(1, object_meta("s", "", &[]))
        .bytes_entry(2, "k", b"v")
        .bytes_entry(2, "bin", &[0xff, 0x00])
        .string(3, "Opaque");
    assert_eq!(
        decode_json(&envelope("v1", "Secret", &secret)),
        r#"{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","creationTimestamp":null},"data":{"bin":"/wA=","k":"dg=="},"type":"Opaque"}"#
    );
}

#[test]
fn kubectl_create_serviceaccount() {
    let sa = Enc::new().msg(1, object_meta("robot", "", &[]));
    assert_eq!(
        decode_json(&envelope("v1", "ServiceAccount", &sa)),
        r#"{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"robot","creationTimestamp":null}}"#
    );
}

#[test]
fn kubectl_create_service_clusterip() {
    let port = Enc::new()
        .string(1, "80-8080")
        .string(2, "TCP")
        .int(3, 80)
        .msg(4, Enc::new().int(1, 0).int(2, 8080).string(3, ""))
        .int(5, 0);
    let spec = Enc::new()
        .msg(1, port)
        .entry(2, "app", "my")
        .string(3, "")
        .string(4, "ClusterIP")
        .string(7, "")
        .string(8, "")
        .string(10, "")
        .string(11, "")
        .int(12, 0)
        .bool(13, false);
    let svc = Enc::new()
        .msg(1, object_meta("my", "", &[("app", "my")]))
        .msg(2, spec)
        .msg(3, Enc::new().msg(1, Enc::new()));
    assert_eq!(
        decode_json(&envelope("v1", "Service", &svc)),
        r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"my","creationTimestamp":null,"labels":{"app":"my"}},"spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080}],"selector":{"app":"my"},"type":"ClusterIP"},"status":{"loadBalancer":{}}}"#
    );
}

/// A container as gogo writes it for `kubectl run nginx --image=nginx`.
pub(super) fn container(name: &str, image: &str) -> Enc {
    Enc::new()
        .string(1, name)
        .string(2, image)
        .string(5, "")
        .msg(8, Enc::new())
        .string(13, "")
        .string(14, "")
        .bool(16, false)
        .bool(17, false)
        .bool(18, false)
        .string(20, "")
}

pub(super) fn pod_spec(containers: Vec<Enc>, restart_policy: &str) -> Enc {
    let mut spec = Enc::new();
    for c in containers {
        spec = spec.msg(2, c);
    }
    spec.string(3, restart_policy)
        .string(6, "ClusterFirst")
        .string(8, "")
        .string(9, "")
        .string(10, "")
        .bool(11, false)
        .bool(12, false)
        .bool(13, false)
        .string(16, "")
        .string(17, "")
        .string(19, "")
        .string(24, "")
}

#[test]
fn kubectl_run() {
    let status = Enc::new()
        .string(1, "")
        .string(3, "")
        .string(4, "")
        .string(5, "")
        .string(6, "")
        .string(9, "")
        .string(11, "");
    let pod = Enc::new()
        .msg(1, object_meta("nginx", "", &[("run", "nginx")]))
        .msg(2, pod_spec(vec![container("nginx", "nginx")], "Always"))
        .msg(3, status);
    assert_eq!(
        decode_json(&envelope("v1", "Pod", &pod)),
        r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"nginx","creationTimestamp":null,"labels":{"run":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}],"restartPolicy":"Always","dnsPolicy":"ClusterFirst"},"status":{}}"#
    );
}

#[test]
fn kubectl_create_deployment_keeps_zero_replicas() {
    let template = Enc::new()
        .msg(1, object_meta("", "", &[("app", "web")]))
        .msg(2, pod_spec(vec![container("nginx", "nginx")], ""));
    let spec = Enc::new()
        .int(1, 0)
        .msg(2, Enc::new().entry(1, "app", "web"))
        .msg(3, template)
        .msg(4, Enc::new().string(1, ""))
        .int(5, 0)
        .bool(7, false);
    let deployment = Enc::new()
        .msg(1, object_meta("web", "", &[("app", "web")]))
        .msg(2, spec)
        .msg(3, Enc::new().int(1, 0).int(2, 0).int(3, 0).int(4, 0));
    assert_eq!(
        decode_json(&envelope("apps/v1", "Deployment", &deployment)),
        r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","creationTimestamp":null,"labels":{"app":"web"}},"spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}],"dnsPolicy":"ClusterFirst"}},"strategy":{}},"status":{}}"#
    );
}

#[test]
fn rbac_role_and_binding() {
    let rule = Enc::new()
        .string(1, "get")
        .string(1, "list")
        .string(2, "")
        .string(2, "apps")
        .string(3, "pods");
    let role = Enc::new()
        .msg(1, object_meta("reader", "ns", &[]))
        .msg(2, rule);
    assert_eq!(
        decode_object(&envelope("rbac.authorization.k8s.io/v1", "Role", &role)).ok(),
        Some(
            json!({"kind": "Role", "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "reader", "namespace": "ns", "creationTimestamp": null},
            "rules": [{"verbs": ["get", "list"], "apiGroups": ["", "apps"], "resources": ["pods"]}]})
        )
    );
    let binding = Enc::new()
        .msg(1, object_meta("b", "", &[]))
        .msg(
            2,
            Enc::new()
                .string(1, "User")
                .string(2, "rbac.authorization.k8s.io")
                .string(3, "alice")
                .string(4, ""),
        )
        .msg(
            3,
            Enc::new()
                .string(1, "rbac.authorization.k8s.io")
                .string(2, "ClusterRole")
                .string(3, "view"),
        );
    assert_eq!(
        decode_object(&envelope(
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            &binding
        ))
        .ok(),
        Some(
            json!({"kind": "ClusterRoleBinding", "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "b", "creationTimestamp": null},
            "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}})
        )
    );
}

#[test]
fn special_kinds_and_inline_fields() {
    let probe = Enc::new()
        .msg(
            1,
            Enc::new().msg(
                2,
                Enc::new()
                    .string(1, "/healthz")
                    .msg(2, Enc::new().int(1, 1).int(2, 0).string(3, "http"))
                    .string(4, ""),
            ),
        )
        .int(2, 0)
        .int(3, 1)
        .int(7, 0);
    let env = Enc::new().string(1, "KEY").string(2, "").msg(
        3,
        Enc::new().msg(
            3,
            Enc::new()
                .msg(1, Enc::new().string(1, "cm"))
                .string(2, "k")
                .bool(3, false),
        ),
    );
    let resources = Enc::new()
        .quantity_entry(1, "memory", "128Mi")
        .quantity_entry(1, "cpu", "500m")
        .quantity_entry(2, "cpu", "");
    let c = Enc::new()
        .string(1, "app")
        .msg(6, Enc::new().string(1, "").int(2, 0).int(3, -1))
        .msg(7, env)
        .msg(8, resources)
        .msg(10, probe)
        .msg(
            15,
            Enc::new()
                .int(4, 0)
                .bool(5, true)
                .msg(1, Enc::new().string(1, "NET_ADMIN")),
        );
    let volume = Enc::new().string(1, "config").msg(
        2,
        Enc::new().msg(
            19,
            Enc::new()
                .msg(1, Enc::new().string(1, "cm"))
                .msg(2, Enc::new().string(1, "k").string(2, "p"))
                .int(3, 0o644),
        ),
    );
    let spec = Enc::new()
        .msg(1, volume)
        .msg(2, c)
        .msg(14, Enc::new().int(4, 1000).int(4, 2000).msg(1, Enc::new()))
        .msg(
            22,
            Enc::new()
                .string(1, "node.kubernetes.io/not-ready")
                .string(2, "Exists")
                .string(4, "NoExecute")
                .int(5, 300),
        );
    let meta = object_meta("p", "", &[])
        .msg(9, Enc::new().int(1, 1_700_000_000).int(2, 5))
        .int(10, 0)
        .msg(
            17,
            Enc::new()
                .string(1, "kubectl")
                .string(2, "Update")
                .string(3, "v1")
                .msg(4, Enc::new().int(1, 1_700_000_000))
                .string(6, "FieldsV1")
                .msg(7, Enc::new().bytes(1, br#"{"f:metadata":{}}"#)),
        );
    let pod = Enc::new().msg(1, meta).msg(2, spec);
    let want = json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {
            "name": "p",
            "creationTimestamp": null,
            "deletionTimestamp": "2023-11-14T22:13:20Z",
            "deletionGracePeriodSeconds": 0,
            "managedFields": [{
                "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {}}
            }]
        },
        "spec": {
            "volumes": [{"name": "config", "configMap": {
                "name": "cm", "items": [{"key": "k", "path": "p"}], "defaultMode": 420
            }}],
            "containers": [{
                "name": "app",
                // name "" and hostPort 0 omitted; containerPort -1 kept
                // (a sign-extended int32).
                "ports": [{"containerPort": -1}],
                "env": [{"name": "KEY", "valueFrom": {"configMapKeyRef": {
                    "name": "cm", "key": "k", "optional": false}}}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "0"}},
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": "http"},
                    "timeoutSeconds": 1,
                    "terminationGracePeriodSeconds": 0
                },
                "securityContext": {
                    "capabilities": {"add": ["NET_ADMIN"]},
                    "runAsUser": 0,
                    "runAsNonRoot": true
                }
            }],
            "securityContext": {"supplementalGroups": [1000, 2000], "seLinuxOptions": {}},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                "effect": "NoExecute", "tolerationSeconds": 300}]
        }
    });
    assert_eq!(decode_object(&envelope("v1", "Pod", &pod)).ok(), Some(want));
}

#[test]
fn event_micro_time_and_packed_repeated() {
    let event = Enc::new()
        .msg(1, object_meta("e", "", &[]))
        .msg(10, Enc::new().int(1, 1_700_000_000).int(2, 123_456_789))
        .int(8, 3);
    assert_eq!(
        decode_object(&envelope("v1", "Event", &event)).ok(),
        Some(json!({"kind": "Event", "apiVersion": "v1",
            "metadata": {"name": "e", "creationTimestamp": null},
            "count": 3,
            "eventTime": "2023-11-14T22:13:20.123456Z"}))
    );
    // Packed supplementalGroups: [1, 300].
    let spec = Enc::new().msg(14, Enc::new().bytes(4, &[0x01, 0xac, 0x02]));
    let pod = Enc::new().msg(2, spec);
    assert_eq!(
        decode_object(&envelope("v1", "Pod", &pod)).ok(),
        Some(json!({"kind": "Pod", "apiVersion": "v1",
            "spec": {"securityContext": {"supplementalGroups": [1, 300]}}}))
    );
}

#[test]
fn delete_options_under_any_group_version() {
    let options = Enc::new()
        .int(1, 0)
        .msg(2, Enc::new().string(1, "uid-1"))
        .string(4, "Foreground")
        .string(5, "All");
    for api_version in ["v1", "apps/v1", "meta.k8s.io/v1"] {
        assert!(is_known(api_version, "DeleteOptions"));
        assert_eq!(
            decode_object(&envelope(api_version, "DeleteOptions", &options)).ok(),
            Some(json!({"kind": "DeleteOptions", "apiVersion": api_version,
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": "uid-1"},
                "propagationPolicy": "Foreground",
                "dryRun": ["All"]}))
        );
    }
}

#[test]
fn unknown_fields_are_skipped_and_messages_merge() {
    let meta_a = Enc::new()
        .string(1, "x")
        .int(900, 7)
        .bytes(901, b"junk")
        .msg(902, Enc::new().int(1, 1));
    let mut meta_b = Enc::new().string(3, "ns");
    // A fixed32 and a fixed64 unknown field.
    meta_b.key(903, 5);
    meta_b.0.extend_from_slice(&[1, 2, 3, 4]);
    meta_b.key(904, 1);
    meta_b.0.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let ns = Enc::new().msg(1, meta_a).msg(1, meta_b).int(77, 1);
    assert_eq!(
        decode_object(&envelope("v1", "Namespace", &ns)).ok(),
        Some(json!({"kind": "Namespace", "apiVersion": "v1",
            "metadata": {"name": "x", "namespace": "ns"}}))
    );
}

#[test]
fn raw_extension_embeds_json_and_protobuf() {
    let inner = Enc::new().msg(1, object_meta("inner", "", &[]));
    let inner = envelope("v1", "ConfigMap", &inner);
    let revision = Enc::new()
        .msg(1, object_meta("r", "", &[]))
        .msg(2, Enc::new().bytes(1, &inner))
        .int(3, 0);
    assert_eq!(
        decode_object(&envelope("apps/v1", "ControllerRevision", &revision)).ok(),
        Some(
            json!({"kind": "ControllerRevision", "apiVersion": "apps/v1",
            "metadata": {"name": "r", "creationTimestamp": null},
            "data": {"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": "inner", "creationTimestamp": null}},
            "revision": 0})
        )
    );
    let revision = Enc::new().msg(2, Enc::new().bytes(1, br#"{"spec":{"a":[1]}}"#));
    assert_eq!(
        decode_object(&envelope("apps/v1", "ControllerRevision", &revision)).ok(),
        Some(
            json!({"kind": "ControllerRevision", "apiVersion": "apps/v1",
            "data": {"spec": {"a": [1]}}})
        )
    );
    let revision = Enc::new().msg(2, Enc::new().bytes(1, b"{not json"));
    let (path, _) = malformed_reason(decode_object(&envelope(
        "apps/v1",
        "ControllerRevision",
        &revision,
    )));
    assert_eq!(path, "ControllerRevision.data");
}

#[test]
fn kubelet_csinode_with_drivers_and_allocatable() {
    // The kubelet registers CSI drivers on its node's CSINode: Go writes
    // the value strings (name, nodeID) always, the allocatable pointer and
    // its count only when set.
    let with_limit = Enc::new()
        .string(1, "ebs.csi.aws.com")
        .string(2, "i-0123456789")
        .string(3, "topology.ebs.csi.aws.com/zone")
        .string(3, "kubernetes.io/os")
        .msg(4, Enc::new().int(1, 25));
    let zero_limit = Enc::new()
        .string(1, "hostpath.csi.k8s.io")
        .string(2, "node-1")
        .msg(4, Enc::new().int(1, 0));
    let bare = Enc::new().string(1, "smb.csi.k8s.io").string(2, "");
    let node = Enc::new().msg(1, object_meta("node-1", "", &[])).msg(
        2,
        Enc::new()
            .msg(1, with_limit)
            .msg(1, zero_limit)
            .msg(1, bare),
    );
    assert_eq!(
        decode_object(&envelope("storage.k8s.io/v1", "CSINode", &node)).ok(),
        Some(json!({"kind": "CSINode", "apiVersion": "storage.k8s.io/v1",
        "metadata": {"name": "node-1", "creationTimestamp": null},
        "spec": {"drivers": [
            {"name": "ebs.csi.aws.com", "nodeID": "i-0123456789",
                "topologyKeys": ["topology.ebs.csi.aws.com/zone", "kubernetes.io/os"],
                "allocatable": {"count": 25}},
            // count is a pointer: 0 survives.
            {"name": "hostpath.csi.k8s.io", "nodeID": "node-1",
                "allocatable": {"count": 0}},
            {"name": "smb.csi.k8s.io"},
        ]}}))
    );
}

#[test]
fn volume_attachment_keeps_attached_false() {
    // `attached` has no omitempty: Go writes false, and so does upstream's
    // JSON encoder.
    let va = Enc::new()
        .msg(1, object_meta("csi-1234", "", &[]))
        .msg(
            2,
            Enc::new()
                .string(1, "ebs.csi.aws.com")
                .msg(2, Enc::new().string(1, "pv-1"))
                .string(3, "node-1"),
        )
        .msg(3, Enc::new().bool(1, false));
    assert_eq!(
        decode_json(&envelope("storage.k8s.io/v1", "VolumeAttachment", &va)),
        r#"{"kind":"VolumeAttachment","apiVersion":"storage.k8s.io/v1","metadata":{"name":"csi-1234","creationTimestamp":null},"spec":{"attacher":"ebs.csi.aws.com","source":{"persistentVolumeName":"pv-1"},"nodeName":"node-1"},"status":{"attached":false}}"#
    );
}
