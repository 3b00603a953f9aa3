//! authorization.k8s.io/v1 messages: the access reviews.

use super::*;

/// authorization.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "authorization.v1.FieldSelectorAttributes",
        &[
            s(1, "rawSelector"),
            rm(2, "requirements", "meta.v1.FieldSelectorRequirement"),
        ],
    ),
    msg(
        "authorization.v1.LabelSelectorAttributes",
        &[
            s(1, "rawSelector"),
            rm(2, "requirements", "meta.v1.LabelSelectorRequirement"),
        ],
    ),
    top_level(
        "authorization.v1.LocalSubjectAccessReview",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "authorization.v1.SubjectAccessReviewSpec"),
            m(3, "status", "authorization.v1.SubjectAccessReviewStatus"),
        ],
    ),
    msg(
        "authorization.v1.NonResourceAttributes",
        &[s(1, "path"), s(2, "verb")],
    ),
    msg(
        "authorization.v1.NonResourceRule",
        &[rs(1, "verbs"), rs(2, "nonResourceURLs")],
    ),
    msg(
        "authorization.v1.ResourceAttributes",
        &[
            s(1, "namespace"),
            s(2, "verb"),
            s(3, "group"),
            s(4, "version"),
            s(5, "resource"),
            s(6, "subresource"),
            s(7, "name"),
            m(
                8,
                "fieldSelector",
                "authorization.v1.FieldSelectorAttributes",
            ),
            m(
                9,
                "labelSelector",
                "authorization.v1.LabelSelectorAttributes",
            ),
        ],
    ),
    msg(
        "authorization.v1.ResourceRule",
        &[
            rs(1, "verbs"),
            rs(2, "apiGroups"),
            rs(3, "resources"),
            rs(4, "resourceNames"),
        ],
    ),
    top_level(
        "authorization.v1.SelfSubjectAccessReview",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "authorization.v1.SelfSubjectAccessReviewSpec"),
            m(3, "status", "authorization.v1.SubjectAccessReviewStatus"),
        ],
    ),
    msg(
        "authorization.v1.SelfSubjectAccessReviewSpec",
        &[
            m(
                1,
                "resourceAttributes",
                "authorization.v1.ResourceAttributes",
            ),
            m(
                2,
                "nonResourceAttributes",
                "authorization.v1.NonResourceAttributes",
            ),
        ],
    ),
    top_level(
        "authorization.v1.SelfSubjectRulesReview",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "authorization.v1.SelfSubjectRulesReviewSpec"),
            m(3, "status", "authorization.v1.SubjectRulesReviewStatus"),
        ],
    ),
    msg(
        "authorization.v1.SelfSubjectRulesReviewSpec",
        &[s(1, "namespace")],
    ),
    top_level(
        "authorization.v1.SubjectAccessReview",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "authorization.v1.SubjectAccessReviewSpec"),
            m(3, "status", "authorization.v1.SubjectAccessReviewStatus"),
        ],
    ),
    msg(
        "authorization.v1.SubjectAccessReviewSpec",
        &[
            m(
                1,
                "resourceAttributes",
                "authorization.v1.ResourceAttributes",
            ),
            m(
                2,
                "nonResourceAttributes",
                "authorization.v1.NonResourceAttributes",
            ),
            s(3, "user"),
            rs(4, "groups"),
            msl(5, "extra"),
            s(6, "uid"),
        ],
    ),
    msg(
        "authorization.v1.SubjectAccessReviewStatus",
        &[
            bp(1, "allowed"),
            b(4, "denied"),
            s(2, "reason"),
            s(3, "evaluationError"),
        ],
    ),
    msg(
        "authorization.v1.SubjectRulesReviewStatus",
        &[
            rm(1, "resourceRules", "authorization.v1.ResourceRule"),
            rm(2, "nonResourceRules", "authorization.v1.NonResourceRule"),
            bp(3, "incomplete"),
            s(4, "evaluationError"),
        ],
    ),
];
