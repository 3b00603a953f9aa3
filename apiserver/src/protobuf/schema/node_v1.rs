//! node.k8s.io/v1 messages: RuntimeClass.
//!
//! Written from upstream's `node/v1/generated.proto` and `types.go`
//! (Kubernetes 1.36). `handler` has no `omitempty` and keeps `""`.

use super::*;

/// node.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg("node.v1.Overhead", &[msq(1, "podFixed")]),
    top_level(
        "node.v1.RuntimeClass",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            sp(2, "handler"),
            m(3, "overhead", "node.v1.Overhead"),
            m(4, "scheduling", "node.v1.Scheduling"),
        ],
    ),
    msg(
        "node.v1.Scheduling",
        &[
            mss(1, "nodeSelector"),
            rm(2, "tolerations", "core.v1.Toleration"),
        ],
    ),
];
