//! apps/v1 messages: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision.

use super::*;

/// apps/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "apps.v1.ControllerRevision",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            raw_ext(2, "data"),
            int64p(3, "revision"),
        ],
    ),
    top_level(
        "apps.v1.DaemonSet",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "apps.v1.DaemonSetSpec"),
            m(3, "status", "apps.v1.DaemonSetStatus"),
        ],
    ),
    msg(
        "apps.v1.DaemonSetCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg(
        "apps.v1.DaemonSetSpec",
        &[
            m(1, "selector", "meta.v1.LabelSelector"),
            m(2, "template", "core.v1.PodTemplateSpec"),
            m(3, "updateStrategy", "apps.v1.DaemonSetUpdateStrategy"),
            int32(4, "minReadySeconds"),
            int32p(6, "revisionHistoryLimit"),
        ],
    ),
    msg(
        "apps.v1.DaemonSetStatus",
        &[
            int32p(1, "currentNumberScheduled"),
            int32p(2, "numberMisscheduled"),
            int32p(3, "desiredNumberScheduled"),
            int32p(4, "numberReady"),
            int64(5, "observedGeneration"),
            int32(6, "updatedNumberScheduled"),
            int32(7, "numberAvailable"),
            int32(8, "numberUnavailable"),
            int32p(9, "collisionCount"),
            rm(10, "conditions", "apps.v1.DaemonSetCondition"),
        ],
    ),
    msg(
        "apps.v1.DaemonSetUpdateStrategy",
        &[
            s(1, "type"),
            m(2, "rollingUpdate", "apps.v1.RollingUpdateDaemonSet"),
        ],
    ),
    top_level(
        "apps.v1.Deployment",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "apps.v1.DeploymentSpec"),
            m(3, "status", "apps.v1.DeploymentStatus"),
        ],
    ),
    msg(
        "apps.v1.DeploymentCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(6, "lastUpdateTime"),
            time(7, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg(
        "apps.v1.DeploymentSpec",
        &[
            int32p(1, "replicas"),
            m(2, "selector", "meta.v1.LabelSelector"),
            m(3, "template", "core.v1.PodTemplateSpec"),
            m(4, "strategy", "apps.v1.DeploymentStrategy"),
            int32(5, "minReadySeconds"),
            int32p(6, "revisionHistoryLimit"),
            b(7, "paused"),
            int32p(9, "progressDeadlineSeconds"),
        ],
    ),
    msg(
        "apps.v1.DeploymentStatus",
        &[
            int64(1, "observedGeneration"),
            int32(2, "replicas"),
            int32(3, "updatedReplicas"),
            int32(7, "readyReplicas"),
            int32(4, "availableReplicas"),
            int32(5, "unavailableReplicas"),
            int32p(9, "terminatingReplicas"),
            rm(6, "conditions", "apps.v1.DeploymentCondition"),
            int32p(8, "collisionCount"),
        ],
    ),
    msg(
        "apps.v1.DeploymentStrategy",
        &[
            s(1, "type"),
            m(2, "rollingUpdate", "apps.v1.RollingUpdateDeployment"),
        ],
    ),
    top_level(
        "apps.v1.ReplicaSet",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "apps.v1.ReplicaSetSpec"),
            m(3, "status", "apps.v1.ReplicaSetStatus"),
        ],
    ),
    msg(
        "apps.v1.ReplicaSetCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg(
        "apps.v1.ReplicaSetSpec",
        &[
            int32p(1, "replicas"),
            int32(4, "minReadySeconds"),
            m(2, "selector", "meta.v1.LabelSelector"),
            m(3, "template", "core.v1.PodTemplateSpec"),
        ],
    ),
    msg(
        "apps.v1.ReplicaSetStatus",
        &[
            int32p(1, "replicas"),
            int32(2, "fullyLabeledReplicas"),
            int32(4, "readyReplicas"),
            int32(5, "availableReplicas"),
            int32p(7, "terminatingReplicas"),
            int64(3, "observedGeneration"),
            rm(6, "conditions", "apps.v1.ReplicaSetCondition"),
        ],
    ),
    msg(
        "apps.v1.RollingUpdateDaemonSet",
        &[ios(1, "maxUnavailable"), ios(2, "maxSurge")],
    ),
    msg(
        "apps.v1.RollingUpdateDeployment",
        &[ios(1, "maxUnavailable"), ios(2, "maxSurge")],
    ),
    msg(
        "apps.v1.RollingUpdateStatefulSetStrategy",
        &[int32p(1, "partition"), ios(2, "maxUnavailable")],
    ),
    top_level(
        "apps.v1.StatefulSet",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "apps.v1.StatefulSetSpec"),
            m(3, "status", "apps.v1.StatefulSetStatus"),
        ],
    ),
    msg(
        "apps.v1.StatefulSetCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg("apps.v1.StatefulSetOrdinals", &[int32p(1, "start")]),
    msg(
        "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
        &[s(1, "whenDeleted"), s(2, "whenScaled")],
    ),
    msg(
        "apps.v1.StatefulSetSpec",
        &[
            int32p(1, "replicas"),
            m(2, "selector", "meta.v1.LabelSelector"),
            m(3, "template", "core.v1.PodTemplateSpec"),
            rm(4, "volumeClaimTemplates", "core.v1.PersistentVolumeClaim"),
            s(5, "serviceName"),
            s(6, "podManagementPolicy"),
            m(7, "updateStrategy", "apps.v1.StatefulSetUpdateStrategy"),
            int32p(8, "revisionHistoryLimit"),
            int32(9, "minReadySeconds"),
            m(
                10,
                "persistentVolumeClaimRetentionPolicy",
                "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
            ),
            m(11, "ordinals", "apps.v1.StatefulSetOrdinals"),
        ],
    ),
    msg(
        "apps.v1.StatefulSetStatus",
        &[
            int64(1, "observedGeneration"),
            int32p(2, "replicas"),
            int32(3, "readyReplicas"),
            int32(4, "currentReplicas"),
            int32(5, "updatedReplicas"),
            s(6, "currentRevision"),
            s(7, "updateRevision"),
            int32p(9, "collisionCount"),
            rm(10, "conditions", "apps.v1.StatefulSetCondition"),
            int32p(11, "availableReplicas"),
        ],
    ),
    msg(
        "apps.v1.StatefulSetUpdateStrategy",
        &[
            s(1, "type"),
            m(
                2,
                "rollingUpdate",
                "apps.v1.RollingUpdateStatefulSetStrategy",
            ),
        ],
    ),
];
