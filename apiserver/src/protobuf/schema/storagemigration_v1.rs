//! storagemigration.k8s.io/v1 messages: StorageVersionMigration.
//!
//! StorageVersionMigration is GA in v1 only from Kubernetes 1.37; our 1.36
//! source has it in `storagemigration/v1beta1` alone, so its messages were
//! taken from `storagemigration/v1beta1/generated.proto` on the assumption
//! that the GA promotion keeps the field numbers (upstream's rule for
//! promotions), with the JSON names checked against k8s-openapi's v1_37
//! `storagemigration::v1` types.

use super::*;

/// storagemigration.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "storagemigration.v1.StorageVersionMigration",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "storagemigration.v1.StorageVersionMigrationSpec"),
            m(
                3,
                "status",
                "storagemigration.v1.StorageVersionMigrationStatus",
            ),
        ],
    ),
    msg(
        "storagemigration.v1.StorageVersionMigrationSpec",
        &[m(1, "resource", "meta.v1.GroupResource")],
    ),
    msg(
        "storagemigration.v1.StorageVersionMigrationStatus",
        &[
            rm(1, "conditions", "meta.v1.Condition"),
            s(2, "resourceVersion"),
        ],
    ),
];
