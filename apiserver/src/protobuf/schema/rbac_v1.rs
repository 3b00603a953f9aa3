//! rbac.authorization.k8s.io/v1 messages: roles and bindings.

use super::*;

/// rbac.authorization.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "rbac.v1.AggregationRule",
        &[rm(1, "clusterRoleSelectors", "meta.v1.LabelSelector")],
    ),
    top_level(
        "rbac.v1.ClusterRole",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "rules", "rbac.v1.PolicyRule"),
            m(3, "aggregationRule", "rbac.v1.AggregationRule"),
        ],
    ),
    top_level(
        "rbac.v1.ClusterRoleBinding",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "subjects", "rbac.v1.Subject"),
            m(3, "roleRef", "rbac.v1.RoleRef"),
        ],
    ),
    msg(
        "rbac.v1.PolicyRule",
        &[
            rs(1, "verbs"),
            rs(2, "apiGroups"),
            rs(3, "resources"),
            rs(4, "resourceNames"),
            rs(5, "nonResourceURLs"),
        ],
    ),
    top_level(
        "rbac.v1.Role",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "rules", "rbac.v1.PolicyRule"),
        ],
    ),
    top_level(
        "rbac.v1.RoleBinding",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "subjects", "rbac.v1.Subject"),
            m(3, "roleRef", "rbac.v1.RoleRef"),
        ],
    ),
    msg(
        "rbac.v1.RoleRef",
        &[s(1, "apiGroup"), s(2, "kind"), s(3, "name")],
    ),
    msg(
        "rbac.v1.Subject",
        &[
            s(1, "kind"),
            s(2, "apiGroup"),
            s(3, "name"),
            s(4, "namespace"),
        ],
    ),
];
