//! batch/v1 messages: Job and CronJob.

use super::*;

/// batch/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "batch.v1.CronJob",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "batch.v1.CronJobSpec"),
            m(3, "status", "batch.v1.CronJobStatus"),
        ],
    ),
    msg(
        "batch.v1.CronJobSpec",
        &[
            s(1, "schedule"),
            sp(8, "timeZone"),
            int64p(2, "startingDeadlineSeconds"),
            s(3, "concurrencyPolicy"),
            bp(4, "suspend"),
            m(5, "jobTemplate", "batch.v1.JobTemplateSpec"),
            int32p(6, "successfulJobsHistoryLimit"),
            int32p(7, "failedJobsHistoryLimit"),
        ],
    ),
    msg(
        "batch.v1.CronJobStatus",
        &[
            rm(1, "active", "core.v1.ObjectReference"),
            time(4, "lastScheduleTime"),
            time(5, "lastSuccessfulTime"),
        ],
    ),
    top_level(
        "batch.v1.Job",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "batch.v1.JobSpec"),
            m(3, "status", "batch.v1.JobStatus"),
        ],
    ),
    msg(
        "batch.v1.JobCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastProbeTime"),
            time(4, "lastTransitionTime"),
            s(5, "reason"),
            s(6, "message"),
        ],
    ),
    msg(
        "batch.v1.JobSpec",
        &[
            int32p(1, "parallelism"),
            int32p(2, "completions"),
            int64p(3, "activeDeadlineSeconds"),
            m(11, "podFailurePolicy", "batch.v1.PodFailurePolicy"),
            m(16, "successPolicy", "batch.v1.SuccessPolicy"),
            int32p(7, "backoffLimit"),
            int32p(12, "backoffLimitPerIndex"),
            int32p(13, "maxFailedIndexes"),
            m(4, "selector", "meta.v1.LabelSelector"),
            bp(5, "manualSelector"),
            m(6, "template", "core.v1.PodTemplateSpec"),
            int32p(8, "ttlSecondsAfterFinished"),
            sp(9, "completionMode"),
            bp(10, "suspend"),
            sp(14, "podReplacementPolicy"),
            sp(15, "managedBy"),
        ],
    ),
    msg(
        "batch.v1.JobStatus",
        &[
            rm(1, "conditions", "batch.v1.JobCondition"),
            time(2, "startTime"),
            time(3, "completionTime"),
            int32(4, "active"),
            int32(5, "succeeded"),
            int32(6, "failed"),
            int32p(11, "terminating"),
            s(7, "completedIndexes"),
            s(10, "failedIndexes"),
            m(
                8,
                "uncountedTerminatedPods",
                "batch.v1.UncountedTerminatedPods",
            ),
            int32p(9, "ready"),
        ],
    ),
    msg(
        "batch.v1.JobTemplateSpec",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "batch.v1.JobSpec"),
        ],
    ),
    msg(
        "batch.v1.PodFailurePolicy",
        &[rm(1, "rules", "batch.v1.PodFailurePolicyRule")],
    ),
    msg(
        "batch.v1.PodFailurePolicyOnExitCodesRequirement",
        &[
            sp(1, "containerName"),
            s(2, "operator"),
            rint32(3, "values"),
        ],
    ),
    msg(
        "batch.v1.PodFailurePolicyOnPodConditionsPattern",
        &[s(1, "type"), s(2, "status")],
    ),
    msg(
        "batch.v1.PodFailurePolicyRule",
        &[
            s(1, "action"),
            m(
                2,
                "onExitCodes",
                "batch.v1.PodFailurePolicyOnExitCodesRequirement",
            ),
            rm(
                3,
                "onPodConditions",
                "batch.v1.PodFailurePolicyOnPodConditionsPattern",
            ),
        ],
    ),
    msg(
        "batch.v1.SuccessPolicy",
        &[rm(1, "rules", "batch.v1.SuccessPolicyRule")],
    ),
    msg(
        "batch.v1.SuccessPolicyRule",
        &[s(1, "succeededIndexes"), int32p(2, "succeededCount")],
    ),
    msg(
        "batch.v1.UncountedTerminatedPods",
        &[rs(1, "succeeded"), rs(2, "failed")],
    ),
];
