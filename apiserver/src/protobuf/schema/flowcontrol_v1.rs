//! flowcontrol.apiserver.k8s.io/v1 messages (API priority and fairness):
//! FlowSchema, PriorityLevelConfiguration.
//!
//! Written from upstream's `flowcontrol/v1/generated.proto` and
//! `types.go` (Kubernetes 1.36). The concurrency shares and percentages
//! are Go pointers and keep `0` (`lendablePercent: 0` is meaningful); the
//! queuing numbers, a subject's `kind`, a level's `type` and the subjects'
//! names have no `omitempty` and keep their zero values too.

use super::*;

/// flowcontrol.apiserver.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "flowcontrol.v1.ExemptPriorityLevelConfiguration",
        &[
            int32p(1, "nominalConcurrencyShares"),
            int32p(2, "lendablePercent"),
        ],
    ),
    msg("flowcontrol.v1.FlowDistinguisherMethod", &[sp(1, "type")]),
    top_level(
        "flowcontrol.v1.FlowSchema",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "flowcontrol.v1.FlowSchemaSpec"),
            m(3, "status", "flowcontrol.v1.FlowSchemaStatus"),
        ],
    ),
    msg(
        "flowcontrol.v1.FlowSchemaCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg(
        "flowcontrol.v1.FlowSchemaSpec",
        &[
            m(
                1,
                "priorityLevelConfiguration",
                "flowcontrol.v1.PriorityLevelConfigurationReference",
            ),
            int32p(2, "matchingPrecedence"),
            m(
                3,
                "distinguisherMethod",
                "flowcontrol.v1.FlowDistinguisherMethod",
            ),
            rm(4, "rules", "flowcontrol.v1.PolicyRulesWithSubjects"),
        ],
    ),
    msg(
        "flowcontrol.v1.FlowSchemaStatus",
        &[rm(1, "conditions", "flowcontrol.v1.FlowSchemaCondition")],
    ),
    msg("flowcontrol.v1.GroupSubject", &[sp(1, "name")]),
    msg(
        "flowcontrol.v1.LimitResponse",
        &[
            sp(1, "type"),
            m(2, "queuing", "flowcontrol.v1.QueuingConfiguration"),
        ],
    ),
    msg(
        "flowcontrol.v1.LimitedPriorityLevelConfiguration",
        &[
            int32p(1, "nominalConcurrencyShares"),
            m(2, "limitResponse", "flowcontrol.v1.LimitResponse"),
            int32p(3, "lendablePercent"),
            int32p(4, "borrowingLimitPercent"),
        ],
    ),
    msg(
        "flowcontrol.v1.NonResourcePolicyRule",
        &[rs(1, "verbs"), rs(6, "nonResourceURLs")],
    ),
    msg(
        "flowcontrol.v1.PolicyRulesWithSubjects",
        &[
            rm(1, "subjects", "flowcontrol.v1.Subject"),
            rm(2, "resourceRules", "flowcontrol.v1.ResourcePolicyRule"),
            rm(
                3,
                "nonResourceRules",
                "flowcontrol.v1.NonResourcePolicyRule",
            ),
        ],
    ),
    top_level(
        "flowcontrol.v1.PriorityLevelConfiguration",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "flowcontrol.v1.PriorityLevelConfigurationSpec"),
            m(
                3,
                "status",
                "flowcontrol.v1.PriorityLevelConfigurationStatus",
            ),
        ],
    ),
    msg(
        "flowcontrol.v1.PriorityLevelConfigurationCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg(
        "flowcontrol.v1.PriorityLevelConfigurationReference",
        &[sp(1, "name")],
    ),
    msg(
        "flowcontrol.v1.PriorityLevelConfigurationSpec",
        &[
            sp(1, "type"),
            m(
                2,
                "limited",
                "flowcontrol.v1.LimitedPriorityLevelConfiguration",
            ),
            m(
                3,
                "exempt",
                "flowcontrol.v1.ExemptPriorityLevelConfiguration",
            ),
        ],
    ),
    msg(
        "flowcontrol.v1.PriorityLevelConfigurationStatus",
        &[rm(
            1,
            "conditions",
            "flowcontrol.v1.PriorityLevelConfigurationCondition",
        )],
    ),
    msg(
        "flowcontrol.v1.QueuingConfiguration",
        &[
            int32p(1, "queues"),
            int32p(2, "handSize"),
            int32p(3, "queueLengthLimit"),
        ],
    ),
    msg(
        "flowcontrol.v1.ResourcePolicyRule",
        &[
            rs(1, "verbs"),
            rs(2, "apiGroups"),
            rs(3, "resources"),
            b(4, "clusterScope"),
            rs(5, "namespaces"),
        ],
    ),
    msg(
        "flowcontrol.v1.ServiceAccountSubject",
        &[sp(1, "namespace"), sp(2, "name")],
    ),
    msg(
        "flowcontrol.v1.Subject",
        &[
            sp(1, "kind"),
            m(2, "user", "flowcontrol.v1.UserSubject"),
            m(3, "group", "flowcontrol.v1.GroupSubject"),
            m(4, "serviceAccount", "flowcontrol.v1.ServiceAccountSubject"),
        ],
    ),
    msg("flowcontrol.v1.UserSubject", &[sp(1, "name")]),
];
