//! scheduling.k8s.io/v1 messages: PriorityClass.

use super::*;

/// scheduling.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[top_level(
    "scheduling.v1.PriorityClass",
    &[
        m(1, "metadata", "meta.v1.ObjectMeta"),
        int32p(2, "value"),
        b(3, "globalDefault"),
        s(4, "description"),
        sp(5, "preemptionPolicy"),
    ],
)];
