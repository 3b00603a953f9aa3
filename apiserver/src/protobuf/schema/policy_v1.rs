//! policy/v1 messages: PodDisruptionBudget and Eviction.

use super::*;

/// policy/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "policy.v1.Eviction",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "deleteOptions", "meta.v1.DeleteOptions"),
        ],
    ),
    top_level(
        "policy.v1.PodDisruptionBudget",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "policy.v1.PodDisruptionBudgetSpec"),
            m(3, "status", "policy.v1.PodDisruptionBudgetStatus"),
        ],
    ),
    msg(
        "policy.v1.PodDisruptionBudgetSpec",
        &[
            ios(1, "minAvailable"),
            m(2, "selector", "meta.v1.LabelSelector"),
            ios(3, "maxUnavailable"),
            sp(4, "unhealthyPodEvictionPolicy"),
        ],
    ),
    msg(
        "policy.v1.PodDisruptionBudgetStatus",
        &[
            int64(1, "observedGeneration"),
            mst(2, "disruptedPods"),
            int32p(3, "disruptionsAllowed"),
            int32p(4, "currentHealthy"),
            int32p(5, "desiredHealthy"),
            int32p(6, "expectedPods"),
            rm(7, "conditions", "meta.v1.Condition"),
        ],
    ),
];
