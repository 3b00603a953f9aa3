//! certificates.k8s.io/v1 messages: CertificateSigningRequest,
//! ClusterTrustBundle, PodCertificateRequest.
//!
//! CertificateSigningRequest was written from upstream's
//! `certificates/v1/generated.proto` and `types.go` (Kubernetes 1.36).
//! ClusterTrustBundle and PodCertificateRequest are GA in v1 only from
//! Kubernetes 1.37; our 1.36 source has them in `certificates/v1beta1`, so
//! their messages were taken from `certificates/v1beta1/generated.proto`
//! on the assumption that the GA promotion keeps the field numbers
//! (upstream's rule for promotions), with the JSON names checked against
//! k8s-openapi's v1_37 `certificates::v1` types. v1's
//! PodCertificateRequestSpec no longer has v1beta1's `pkixPublicKey` (9)
//! and `proofOfPossession` (10), so the table leaves them out; v1 has no
//! field that v1beta1 lacks.
//!
//! Strings without `omitempty` (`signerName`, `trustBundle`, the pod,
//! service account and node names and UIDs, a condition's `type` and
//! `status`) keep `""`; bytes are omitted when empty.

use super::*;

/// certificates.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "certificates.v1.CertificateSigningRequest",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "certificates.v1.CertificateSigningRequestSpec"),
            m(
                3,
                "status",
                "certificates.v1.CertificateSigningRequestStatus",
            ),
        ],
    ),
    msg(
        "certificates.v1.CertificateSigningRequestCondition",
        &[
            sp(1, "type"),
            sp(6, "status"),
            s(2, "reason"),
            s(3, "message"),
            time(4, "lastUpdateTime"),
            time(5, "lastTransitionTime"),
        ],
    ),
    msg(
        "certificates.v1.CertificateSigningRequestSpec",
        &[
            by(1, "request"),
            sp(7, "signerName"),
            int32p(8, "expirationSeconds"),
            rs(5, "usages"),
            s(2, "username"),
            s(3, "uid"),
            rs(4, "groups"),
            msl(6, "extra"),
        ],
    ),
    msg(
        "certificates.v1.CertificateSigningRequestStatus",
        &[
            rm(
                1,
                "conditions",
                "certificates.v1.CertificateSigningRequestCondition",
            ),
            by(2, "certificate"),
        ],
    ),
    top_level(
        "certificates.v1.ClusterTrustBundle",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "certificates.v1.ClusterTrustBundleSpec"),
        ],
    ),
    msg(
        "certificates.v1.ClusterTrustBundleSpec",
        &[s(1, "signerName"), sp(2, "trustBundle")],
    ),
    top_level(
        "certificates.v1.PodCertificateRequest",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "certificates.v1.PodCertificateRequestSpec"),
            m(3, "status", "certificates.v1.PodCertificateRequestStatus"),
        ],
    ),
    msg(
        "certificates.v1.PodCertificateRequestSpec",
        &[
            sp(1, "signerName"),
            sp(2, "podName"),
            sp(3, "podUID"),
            sp(4, "serviceAccountName"),
            sp(5, "serviceAccountUID"),
            sp(6, "nodeName"),
            sp(7, "nodeUID"),
            int32p(8, "maxExpirationSeconds"),
            // 9 (pkixPublicKey) and 10 (proofOfPossession) are v1beta1's
            // only.
            by(12, "stubPKCS10Request"),
            mss(11, "unverifiedUserAnnotations"),
        ],
    ),
    msg(
        "certificates.v1.PodCertificateRequestStatus",
        &[
            rm(1, "conditions", "meta.v1.Condition"),
            s(2, "certificateChain"),
            time(4, "notBefore"),
            time(5, "beginRefreshAt"),
            time(6, "notAfter"),
        ],
    ),
];
