//! Fields v1.36 added to pods and nodes survive a protobuf round trip.
//!
//! Every object kube-core stores is protobuf in etcd and the watch cache
//! decodes it, so a field missing from the message tables is silently
//! dropped on write: the hollow kubelet's `status.resources: {}` came back
//! absent, and each kubelet re-patched every pod's status every ten seconds
//! (upstream keeps it, as an empty message is still present).

use super::encode_tests::{decode, encode};
use serde_json::json;

#[test]
fn a_pod_with_v1_36_fields_round_trips() {
    let pod = json!({"kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": "2026-01-02T03:04:05Z"},
        "spec": {
            "containers": [{"name": "c", "image": "i",
                "env": [{"name": "E", "valueFrom": {"fileKeyRef":
                    {"volumeName": "cfg", "path": "env.txt", "key": "E", "optional": true}}}],
                "restartPolicy": "Never",
                "restartPolicyRules": [{"action": "Restart",
                    "exitCodes": {"operator": "In", "values": [42, 43]}}]}],
            "volumes": [{"name": "certs", "projected": {"sources": [{"podCertificate": {
                "signerName": "example.com/signer", "keyType": "ED25519", "maxExpirationSeconds": 86400,
                "credentialBundlePath": "bundle.pem", "keyPath": "key.pem",
                "certificateChainPath": "chain.pem", "userAnnotations": {"a": "b"}}}]}}],
            "hostnameOverride": "custom-host",
            "schedulingGroup": {"podGroupName": "group-1"}},
        "status": {
            "phase": "Running",
            "containerStatuses": [{"name": "c", "image": "i", "imageID": "sha256:1", "ready": true,
                "restartCount": 1,
                "volumeMounts": [{"name": "img", "mountPath": "/img",
                    "volumeStatus": {"image": {"imageRef": "sha256:2"}}}],
                "allocatedResourcesStatus": [{"name": "claim:gpu", "resources": [
                    {"resourceID": "gpu-0", "health": "Unhealthy", "message": "ECC errors"}]}]}],
            "extendedResourceClaimStatus": {"resourceClaimName": "p-extended",
                "requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu",
                    "requestName": "container-0-request-0"}]},
            "allocatedResources": {"cpu": "500m"},
            "resources": {},
            "nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "p-cpu",
                "containers": ["c"], "resources": {"cpu": "2"}}]}});
    assert_eq!(decode(&encode(&pod)), pod);

    // The kubelet's empty pod-level resources stay present.
    let bytes = encode(&pod);
    assert_eq!(decode(&bytes)["status"]["resources"], json!({}));
}

#[test]
fn a_node_with_declared_features_round_trips() {
    let node = json!({"kind": "Node", "apiVersion": "v1",
        "metadata": {"name": "n", "creationTimestamp": "2026-01-02T03:04:05Z"},
        "status": {"declaredFeatures": ["InPlacePodVerticalScaling", "PodLevelResources"]}});
    assert_eq!(decode(&encode(&node)), node);
}
