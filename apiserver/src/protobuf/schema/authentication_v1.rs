//! authentication.k8s.io/v1 messages: TokenRequest, TokenReview, SelfSubjectReview.

use super::*;

/// authentication.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "authentication.v1.BoundObjectReference",
        &[s(1, "kind"), s(2, "apiVersion"), s(3, "name"), s(4, "uid")],
    ),
    top_level(
        "authentication.v1.SelfSubjectReview",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "status", "authentication.v1.SelfSubjectReviewStatus"),
        ],
    ),
    msg(
        "authentication.v1.SelfSubjectReviewStatus",
        &[m(1, "userInfo", "authentication.v1.UserInfo")],
    ),
    top_level(
        "authentication.v1.TokenRequest",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "authentication.v1.TokenRequestSpec"),
            m(3, "status", "authentication.v1.TokenRequestStatus"),
        ],
    ),
    msg(
        "authentication.v1.TokenRequestSpec",
        &[
            rs(1, "audiences"),
            int64p(4, "expirationSeconds"),
            m(
                3,
                "boundObjectRef",
                "authentication.v1.BoundObjectReference",
            ),
        ],
    ),
    msg(
        "authentication.v1.TokenRequestStatus",
        &[s(1, "token"), time(2, "expirationTimestamp")],
    ),
    top_level(
        "authentication.v1.TokenReview",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "authentication.v1.TokenReviewSpec"),
            m(3, "status", "authentication.v1.TokenReviewStatus"),
        ],
    ),
    msg(
        "authentication.v1.TokenReviewSpec",
        &[s(1, "token"), rs(2, "audiences")],
    ),
    msg(
        "authentication.v1.TokenReviewStatus",
        &[
            b(1, "authenticated"),
            m(2, "user", "authentication.v1.UserInfo"),
            rs(4, "audiences"),
            s(3, "error"),
        ],
    ),
    msg(
        "authentication.v1.UserInfo",
        &[
            s(1, "username"),
            s(2, "uid"),
            rs(3, "groups"),
            msl(4, "extra"),
        ],
    ),
];
