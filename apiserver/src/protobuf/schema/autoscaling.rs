//! autoscaling/v1 and autoscaling/v2 messages: HorizontalPodAutoscaler and Scale.

use super::*;

/// autoscaling/v1 and autoscaling/v2 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "autoscaling.v1.CrossVersionObjectReference",
        &[s(1, "kind"), s(2, "name"), s(3, "apiVersion")],
    ),
    top_level(
        "autoscaling.v1.HorizontalPodAutoscaler",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "autoscaling.v1.HorizontalPodAutoscalerSpec"),
            m(3, "status", "autoscaling.v1.HorizontalPodAutoscalerStatus"),
        ],
    ),
    msg(
        "autoscaling.v1.HorizontalPodAutoscalerSpec",
        &[
            m(
                1,
                "scaleTargetRef",
                "autoscaling.v1.CrossVersionObjectReference",
            ),
            int32p(2, "minReplicas"),
            int32p(3, "maxReplicas"),
            int32p(4, "targetCPUUtilizationPercentage"),
        ],
    ),
    msg(
        "autoscaling.v1.HorizontalPodAutoscalerStatus",
        &[
            int64p(1, "observedGeneration"),
            time(2, "lastScaleTime"),
            int32p(3, "currentReplicas"),
            int32p(4, "desiredReplicas"),
            int32p(5, "currentCPUUtilizationPercentage"),
        ],
    ),
    top_level(
        "autoscaling.v1.Scale",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "autoscaling.v1.ScaleSpec"),
            m(3, "status", "autoscaling.v1.ScaleStatus"),
        ],
    ),
    msg("autoscaling.v1.ScaleSpec", &[int32(1, "replicas")]),
    msg(
        "autoscaling.v1.ScaleStatus",
        &[int32p(1, "replicas"), s(2, "selector")],
    ),
    msg(
        "autoscaling.v2.ContainerResourceMetricSource",
        &[
            s(1, "name"),
            m(2, "target", "autoscaling.v2.MetricTarget"),
            s(3, "container"),
        ],
    ),
    msg(
        "autoscaling.v2.ContainerResourceMetricStatus",
        &[
            s(1, "name"),
            m(2, "current", "autoscaling.v2.MetricValueStatus"),
            s(3, "container"),
        ],
    ),
    msg(
        "autoscaling.v2.CrossVersionObjectReference",
        &[s(1, "kind"), s(2, "name"), s(3, "apiVersion")],
    ),
    msg(
        "autoscaling.v2.ExternalMetricSource",
        &[
            m(1, "metric", "autoscaling.v2.MetricIdentifier"),
            m(2, "target", "autoscaling.v2.MetricTarget"),
        ],
    ),
    msg(
        "autoscaling.v2.ExternalMetricStatus",
        &[
            m(1, "metric", "autoscaling.v2.MetricIdentifier"),
            m(2, "current", "autoscaling.v2.MetricValueStatus"),
        ],
    ),
    msg(
        "autoscaling.v2.HPAScalingPolicy",
        &[s(1, "type"), int32p(2, "value"), int32p(3, "periodSeconds")],
    ),
    msg(
        "autoscaling.v2.HPAScalingRules",
        &[
            int32p(3, "stabilizationWindowSeconds"),
            sp(1, "selectPolicy"),
            rm(2, "policies", "autoscaling.v2.HPAScalingPolicy"),
            qty(4, "tolerance"),
        ],
    ),
    top_level(
        "autoscaling.v2.HorizontalPodAutoscaler",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "autoscaling.v2.HorizontalPodAutoscalerSpec"),
            m(3, "status", "autoscaling.v2.HorizontalPodAutoscalerStatus"),
        ],
    ),
    msg(
        "autoscaling.v2.HorizontalPodAutoscalerBehavior",
        &[
            m(1, "scaleUp", "autoscaling.v2.HPAScalingRules"),
            m(2, "scaleDown", "autoscaling.v2.HPAScalingRules"),
        ],
    ),
    msg(
        "autoscaling.v2.HorizontalPodAutoscalerCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg(
        "autoscaling.v2.HorizontalPodAutoscalerSpec",
        &[
            m(
                1,
                "scaleTargetRef",
                "autoscaling.v2.CrossVersionObjectReference",
            ),
            int32p(2, "minReplicas"),
            int32p(3, "maxReplicas"),
            rm(4, "metrics", "autoscaling.v2.MetricSpec"),
            m(
                5,
                "behavior",
                "autoscaling.v2.HorizontalPodAutoscalerBehavior",
            ),
        ],
    ),
    msg(
        "autoscaling.v2.HorizontalPodAutoscalerStatus",
        &[
            int64p(1, "observedGeneration"),
            time(2, "lastScaleTime"),
            int32(3, "currentReplicas"),
            int32p(4, "desiredReplicas"),
            rm(5, "currentMetrics", "autoscaling.v2.MetricStatus"),
            rm(
                6,
                "conditions",
                "autoscaling.v2.HorizontalPodAutoscalerCondition",
            ),
        ],
    ),
    msg(
        "autoscaling.v2.MetricIdentifier",
        &[s(1, "name"), m(2, "selector", "meta.v1.LabelSelector")],
    ),
    msg(
        "autoscaling.v2.MetricSpec",
        &[
            s(1, "type"),
            m(2, "object", "autoscaling.v2.ObjectMetricSource"),
            m(3, "pods", "autoscaling.v2.PodsMetricSource"),
            m(4, "resource", "autoscaling.v2.ResourceMetricSource"),
            m(
                7,
                "containerResource",
                "autoscaling.v2.ContainerResourceMetricSource",
            ),
            m(5, "external", "autoscaling.v2.ExternalMetricSource"),
        ],
    ),
    msg(
        "autoscaling.v2.MetricStatus",
        &[
            s(1, "type"),
            m(2, "object", "autoscaling.v2.ObjectMetricStatus"),
            m(3, "pods", "autoscaling.v2.PodsMetricStatus"),
            m(4, "resource", "autoscaling.v2.ResourceMetricStatus"),
            m(
                7,
                "containerResource",
                "autoscaling.v2.ContainerResourceMetricStatus",
            ),
            m(5, "external", "autoscaling.v2.ExternalMetricStatus"),
        ],
    ),
    msg(
        "autoscaling.v2.MetricTarget",
        &[
            s(1, "type"),
            qty(2, "value"),
            qty(3, "averageValue"),
            int32p(4, "averageUtilization"),
        ],
    ),
    msg(
        "autoscaling.v2.MetricValueStatus",
        &[
            qty(1, "value"),
            qty(2, "averageValue"),
            int32p(3, "averageUtilization"),
        ],
    ),
    msg(
        "autoscaling.v2.ObjectMetricSource",
        &[
            m(
                1,
                "describedObject",
                "autoscaling.v2.CrossVersionObjectReference",
            ),
            m(2, "target", "autoscaling.v2.MetricTarget"),
            m(3, "metric", "autoscaling.v2.MetricIdentifier"),
        ],
    ),
    msg(
        "autoscaling.v2.ObjectMetricStatus",
        &[
            m(1, "metric", "autoscaling.v2.MetricIdentifier"),
            m(2, "current", "autoscaling.v2.MetricValueStatus"),
            m(
                3,
                "describedObject",
                "autoscaling.v2.CrossVersionObjectReference",
            ),
        ],
    ),
    msg(
        "autoscaling.v2.PodsMetricSource",
        &[
            m(1, "metric", "autoscaling.v2.MetricIdentifier"),
            m(2, "target", "autoscaling.v2.MetricTarget"),
        ],
    ),
    msg(
        "autoscaling.v2.PodsMetricStatus",
        &[
            m(1, "metric", "autoscaling.v2.MetricIdentifier"),
            m(2, "current", "autoscaling.v2.MetricValueStatus"),
        ],
    ),
    msg(
        "autoscaling.v2.ResourceMetricSource",
        &[s(1, "name"), m(2, "target", "autoscaling.v2.MetricTarget")],
    ),
    msg(
        "autoscaling.v2.ResourceMetricStatus",
        &[
            s(1, "name"),
            m(2, "current", "autoscaling.v2.MetricValueStatus"),
        ],
    ),
];
