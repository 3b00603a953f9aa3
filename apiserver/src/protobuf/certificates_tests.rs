//! certificates.k8s.io/v1: CertificateSigningRequest, ClusterTrustBundle
//! and PodCertificateRequest through our encoder and decoder, from
//! objects built with the k8s-pb types, and from hand-made bytes.

use super::encode_tests::{decode, encode};
use super::prost_tests::{from_prost, some, through_prost};
use super::tests::{envelope, object_meta, Enc};
use super::*;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb_meta;
use serde_json::json;

const V1: &str = "certificates.k8s.io/v1";

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
        creation_timestamp: time(0),
        ..Default::default()
    })
}

/// A kubelet's client CSR after approval and signing.
fn csr() -> Value {
    json!({"kind": "CertificateSigningRequest", "apiVersion": V1,
        "metadata": {"name": "csr-7xk2p", "uid": "u-1", "resourceVersion": "7",
            "creationTimestamp": "2026-01-02T03:04:05Z"},
        "spec": {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
            "expirationSeconds": 86400,
            "usages": ["digital signature", "client auth"],
            "username": "system:bootstrap:abcdef", "uid": "b-1",
            "groups": ["system:bootstrappers", "system:authenticated"],
            "extra": {"authentication.kubernetes.io/credential-id": ["JTI=1"], "scopes": ["a", "b"]}},
        "status": {
            "conditions": [{"type": "Approved", "status": "True", "reason": "AutoApproved",
                "message": "Auto approving kubelet client certificate after SubjectAccessReview.",
                "lastUpdateTime": "2026-01-02T03:04:06Z", "lastTransitionTime": "2026-01-02T03:04:06Z"}],
            "certificate": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}})
}

fn trust_bundle() -> Value {
    json!({"kind": "ClusterTrustBundle", "apiVersion": V1,
        "metadata": {"name": "example.com:signer:abc", "uid": "u-1", "resourceVersion": "7",
            "creationTimestamp": "2026-01-02T03:04:05Z"},
        "spec": {"signerName": "example.com/signer",
            "trustBundle": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}})
}

/// A kubelet's PodCertificateRequest, issued.
fn pod_certificate_request() -> Value {
    json!({"kind": "PodCertificateRequest", "apiVersion": V1,
        "metadata": {"name": "pcr-1", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
            "creationTimestamp": "2026-01-02T03:04:05Z"},
        "spec": {"signerName": "example.com/pod-identity", "podName": "web-0", "podUID": "p-1",
            "serviceAccountName": "default", "serviceAccountUID": "s-1",
            "nodeName": "node-1", "nodeUID": "n-1", "maxExpirationSeconds": 86400,
            "stubPKCS10Request": "MIIBAA==",
            "unverifiedUserAnnotations": {"example.com/audience": "db"}},
        "status": {
            "conditions": [{"type": "Issued", "status": "True", "observedGeneration": 1,
                "lastTransitionTime": "2026-01-02T03:04:07Z", "reason": "Issued", "message": "ok"}],
            "certificateChain": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            "notBefore": "2026-01-02T03:04:05Z", "beginRefreshAt": "2026-01-02T15:04:05Z",
            "notAfter": "2026-01-03T03:04:05Z"}})
}

#[test]
fn certificates_v1_objects_round_trip() {
    for object in [csr(), trust_bundle(), pod_certificate_request()] {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let bytes = encode(&object);
        assert_eq!(decode(&bytes).to_string(), object.to_string(), "{kind}");
        let mut via_prost = object.clone();
        if kind == "PodCertificateRequest" {
            // Field 12 is newer than k8s-pb 0.9's v1beta1.
            if let Some(spec) = via_prost["spec"].as_object_mut() {
                spec.remove("stubPKCS10Request");
            }
        }
        assert_eq!(through_prost(&bytes, V1, &kind), via_prost, "{kind}");
    }
    // Required strings keep "" (Go writes them without omitempty); a
    // CSR's empty status stays an object.
    let empty = json!({"kind": "ClusterTrustBundle", "apiVersion": V1,
        "metadata": {"name": "b", "creationTimestamp": null},
        "spec": {"trustBundle": ""}});
    assert_eq!(decode(&encode(&empty)).to_string(), empty.to_string());
    assert!(can_encode(V1, "CertificateSigningRequestList"));
}

#[test]
fn certificate_signing_request_from_prost() {
    use k8s_pb::api::certificates::v1 as pb;
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let extra = [
        (
            "authentication.kubernetes.io/credential-id",
            strings(&["JTI=1"]),
        ),
        ("scopes", strings(&["a", "b"])),
    ];
    let csr_pb = pb::CertificateSigningRequest {
        metadata: meta("csr-7xk2p"),
        spec: Some(pb::CertificateSigningRequestSpec {
            request: Some(b"-----BEGIN CERTIFICATE REQUEST-----\n".to_vec()),
            signer_name: some("kubernetes.io/kube-apiserver-client-kubelet"),
            expiration_seconds: Some(86400),
            usages: strings(&["digital signature", "client auth"]),
            username: some("system:bootstrap:abcdef"),
            uid: some("b-1"),
            groups: strings(&["system:bootstrappers", "system:authenticated"]),
            extra: extra
                .into_iter()
                .map(|(k, items)| (k.to_owned(), pb::ExtraValue { items }))
                .collect(),
        }),
        status: Some(pb::CertificateSigningRequestStatus {
            conditions: vec![pb::CertificateSigningRequestCondition {
                r#type: some("Approved"),
                status: some("True"),
                reason: some("AutoApproved"),
                message: some(
                    "Auto approving kubelet client certificate after SubjectAccessReview.",
                ),
                last_update_time: time(1),
                last_transition_time: time(1),
            }],
            certificate: Some(b"-----BEGIN CERTIFICATE-----\n".to_vec()),
        }),
    };
    assert_eq!(from_prost(V1, "CertificateSigningRequest", &csr_pb), csr());
}

#[test]
fn trust_bundle_and_pod_certificate_request_from_prost() {
    use k8s_pb::api::certificates::v1beta1 as pb;
    let bundle = pb::ClusterTrustBundle {
        metadata: meta("example.com:signer:abc"),
        spec: Some(pb::ClusterTrustBundleSpec {
            signer_name: some("example.com/signer"),
            trust_bundle: some("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
        }),
    };
    assert_eq!(
        from_prost(V1, "ClusterTrustBundle", &bundle),
        trust_bundle()
    );

    let mut request = pb::PodCertificateRequest {
        metadata: meta("pcr-1"),
        spec: Some(pb::PodCertificateRequestSpec {
            signer_name: some("example.com/pod-identity"),
            pod_name: some("web-0"),
            pod_uid: some("p-1"),
            service_account_name: some("default"),
            service_account_uid: some("s-1"),
            node_name: some("node-1"),
            node_uid: some("n-1"),
            max_expiration_seconds: Some(86400),
            // v1beta1's only: not part of v1, skipped.
            pkix_public_key: Some(vec![1, 2, 3]),
            proof_of_possession: Some(vec![4, 5, 6]),
            unverified_user_annotations: [("example.com/audience".to_owned(), "db".to_owned())]
                .into(),
        }),
        status: Some(pb::PodCertificateRequestStatus {
            conditions: vec![pb_meta::Condition {
                r#type: some("Issued"),
                status: some("True"),
                observed_generation: Some(1),
                last_transition_time: time(2),
                reason: some("Issued"),
                message: some("ok"),
            }],
            certificate_chain: some(
                "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            ),
            not_before: time(0),
            begin_refresh_at: time(12 * 3600),
            not_after: time(24 * 3600),
        }),
    };
    if let Some(meta) = request.metadata.as_mut() {
        meta.namespace = some("default");
    }
    let mut want = pod_certificate_request();
    if let Some(spec) = want["spec"].as_object_mut() {
        spec.remove("stubPKCS10Request");
    }
    assert_eq!(from_prost(V1, "PodCertificateRequest", &request), want);
}

#[test]
fn pod_certificate_request_as_go_writes_it() {
    // Every value field, empty ones included; stubPKCS10Request (12)
    // after unverifiedUserAnnotations (11) in field-number order.
    let spec = Enc::new()
        .string(1, "example.com/pod-identity")
        .string(2, "web-0")
        .string(3, "p-1")
        .string(4, "default")
        .string(5, "s-1")
        .string(6, "node-1")
        .string(7, "")
        .int(8, 3600)
        .entry(11, "k", "v")
        .bytes(12, &[0x30, 0x82]);
    let status = Enc::new().string(2, "").msg(4, Enc::new());
    let pcr = Enc::new()
        .msg(1, object_meta("pcr-1", "default", &[]))
        .msg(2, spec)
        .msg(3, status);
    assert_eq!(
        decode_object(&envelope(V1, "PodCertificateRequest", &pcr)).ok(),
        Some(json!({"kind": "PodCertificateRequest", "apiVersion": V1,
            "metadata": {"name": "pcr-1", "namespace": "default", "creationTimestamp": null},
            "spec": {"signerName": "example.com/pod-identity", "podName": "web-0", "podUID": "p-1",
                "serviceAccountName": "default", "serviceAccountUID": "s-1", "nodeName": "node-1",
                "nodeUID": "", "maxExpirationSeconds": 3600, "stubPKCS10Request": "MII=",
                "unverifiedUserAnnotations": {"k": "v"}},
            "status": {"notBefore": null}}))
    );

    // A CSR condition's status is field 6, after the times.
    let csr = Enc::new().msg(1, object_meta("c", "", &[])).msg(
        3,
        Enc::new().msg(
            1,
            Enc::new()
                .string(1, "Denied")
                .string(2, "")
                .string(3, "")
                .msg(4, Enc::new())
                .msg(5, Enc::new())
                .string(6, "True"),
        ),
    );
    assert_eq!(
        decode_object(&envelope(V1, "CertificateSigningRequest", &csr)).ok(),
        Some(
            json!({"kind": "CertificateSigningRequest", "apiVersion": V1,
            "metadata": {"name": "c", "creationTimestamp": null},
            "status": {"conditions": [{"type": "Denied", "status": "True",
                "lastUpdateTime": null, "lastTransitionTime": null}]}})
        )
    );
}
