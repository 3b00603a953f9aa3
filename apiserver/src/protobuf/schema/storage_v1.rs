//! storage.k8s.io/v1 messages: CSIDriver, CSINode, CSIStorageCapacity,
//! StorageClass, VolumeAttachment, VolumeAttributesClass.

use super::*;

/// storage.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "storage.v1.CSIDriver",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "storage.v1.CSIDriverSpec"),
        ],
    ),
    msg(
        "storage.v1.CSIDriverSpec",
        &[
            bp(1, "attachRequired"),
            bp(2, "podInfoOnMount"),
            rs(3, "volumeLifecycleModes"),
            bp(4, "storageCapacity"),
            sp(5, "fsGroupPolicy"),
            rm(6, "tokenRequests", "storage.v1.TokenRequest"),
            bp(7, "requiresRepublish"),
            bp(8, "seLinuxMount"),
            int64p(9, "nodeAllocatableUpdatePeriodSeconds"),
            bp(10, "serviceAccountTokenInSecrets"),
            bp(11, "preventPodSchedulingIfMissing"),
        ],
    ),
    top_level(
        "storage.v1.CSINode",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "storage.v1.CSINodeSpec"),
        ],
    ),
    msg(
        "storage.v1.CSINodeDriver",
        &[
            s(1, "name"),
            s(2, "nodeID"),
            rs(3, "topologyKeys"),
            m(4, "allocatable", "storage.v1.VolumeNodeResources"),
        ],
    ),
    msg(
        "storage.v1.CSINodeSpec",
        &[rm(1, "drivers", "storage.v1.CSINodeDriver")],
    ),
    top_level(
        "storage.v1.CSIStorageCapacity",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "nodeTopology", "meta.v1.LabelSelector"),
            s(3, "storageClassName"),
            qty(4, "capacity"),
            qty(5, "maximumVolumeSize"),
        ],
    ),
    top_level(
        "storage.v1.StorageClass",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            s(2, "provisioner"),
            mss(3, "parameters"),
            sp(4, "reclaimPolicy"),
            rs(5, "mountOptions"),
            bp(6, "allowVolumeExpansion"),
            sp(7, "volumeBindingMode"),
            rm(8, "allowedTopologies", "core.v1.TopologySelectorTerm"),
        ],
    ),
    msg(
        "storage.v1.TokenRequest",
        &[s(1, "audience"), int64p(2, "expirationSeconds")],
    ),
    top_level(
        "storage.v1.VolumeAttachment",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "storage.v1.VolumeAttachmentSpec"),
            m(3, "status", "storage.v1.VolumeAttachmentStatus"),
        ],
    ),
    msg(
        "storage.v1.VolumeAttachmentSource",
        &[
            sp(1, "persistentVolumeName"),
            m(2, "inlineVolumeSpec", "core.v1.PersistentVolumeSpec"),
        ],
    ),
    msg(
        "storage.v1.VolumeAttachmentSpec",
        &[
            s(1, "attacher"),
            m(2, "source", "storage.v1.VolumeAttachmentSource"),
            s(3, "nodeName"),
        ],
    ),
    msg(
        "storage.v1.VolumeAttachmentStatus",
        &[
            // Not omitempty: Go writes `attached: false`.
            bp(1, "attached"),
            mss(2, "attachmentMetadata"),
            m(3, "attachError", "storage.v1.VolumeError"),
            m(4, "detachError", "storage.v1.VolumeError"),
        ],
    ),
    top_level(
        "storage.v1.VolumeAttributesClass",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            s(2, "driverName"),
            mss(3, "parameters"),
        ],
    ),
    msg(
        "storage.v1.VolumeError",
        &[time(1, "time"), s(2, "message"), int32p(3, "errorCode")],
    ),
    msg("storage.v1.VolumeNodeResources", &[int32p(1, "count")]),
];
