//! coordination.k8s.io/v1 messages: Lease.

use super::*;

/// coordination.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "coordination.v1.Lease",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "coordination.v1.LeaseSpec"),
        ],
    ),
    msg(
        "coordination.v1.LeaseSpec",
        &[
            sp(1, "holderIdentity"),
            int32p(2, "leaseDurationSeconds"),
            mtime(3, "acquireTime"),
            mtime(4, "renewTime"),
            int32p(5, "leaseTransitions"),
            sp(6, "strategy"),
            sp(7, "preferredHolder"),
        ],
    ),
];
