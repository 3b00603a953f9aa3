//! core/v1 messages other than pods and volumes: namespaces, config maps, secrets, services,
//! endpoints, events, nodes, quotas, ...

use super::*;

/// core/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    top_level(
        "core.v1.Binding",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "target", "core.v1.ObjectReference"),
        ],
    ),
    msg("core.v1.ClientIPConfig", &[int32p(1, "timeoutSeconds")]),
    // The allocators' state (`/registry/ranges/...`), stored as upstream
    // stores it.
    top_level(
        "core.v1.RangeAllocation",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            s(2, "range"),
            by(3, "data"),
        ],
    ),
    top_level(
        "core.v1.ConfigMap",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            bp(4, "immutable"),
            mss(2, "data"),
            msb(3, "binaryData"),
        ],
    ),
    msg(
        "core.v1.ConfigMapNodeConfigSource",
        &[
            s(1, "namespace"),
            s(2, "name"),
            s(3, "uid"),
            s(4, "resourceVersion"),
            s(5, "kubeletConfigKey"),
        ],
    ),
    msg("core.v1.DaemonEndpoint", &[int32p(1, "Port")]),
    msg(
        "core.v1.EndpointAddress",
        &[
            s(1, "ip"),
            s(3, "hostname"),
            s(4, "nodeName"),
            m(2, "targetRef", "core.v1.ObjectReference"),
        ],
    ),
    msg(
        "core.v1.EndpointPort",
        &[
            s(1, "name"),
            int32p(2, "port"),
            s(3, "protocol"),
            sp(4, "appProtocol"),
        ],
    ),
    msg(
        "core.v1.EndpointSubset",
        &[
            rm(1, "addresses", "core.v1.EndpointAddress"),
            rm(2, "notReadyAddresses", "core.v1.EndpointAddress"),
            rm(3, "ports", "core.v1.EndpointPort"),
        ],
    ),
    top_level(
        "core.v1.Endpoints",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "subsets", "core.v1.EndpointSubset"),
        ],
    ),
    top_level(
        "core.v1.Event",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "involvedObject", "core.v1.ObjectReference"),
            s(3, "reason"),
            s(4, "message"),
            m(5, "source", "core.v1.EventSource"),
            time(6, "firstTimestamp"),
            time(7, "lastTimestamp"),
            int32(8, "count"),
            s(9, "type"),
            mtime(10, "eventTime"),
            m(11, "series", "core.v1.EventSeries"),
            s(12, "action"),
            m(13, "related", "core.v1.ObjectReference"),
            s(14, "reportingComponent"),
            s(15, "reportingInstance"),
        ],
    ),
    msg(
        "core.v1.EventSeries",
        &[int32(1, "count"), mtime(2, "lastObservedTime")],
    ),
    msg("core.v1.EventSource", &[s(1, "component"), s(2, "host")]),
    top_level(
        "core.v1.LimitRange",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.LimitRangeSpec"),
        ],
    ),
    msg(
        "core.v1.LimitRangeItem",
        &[
            s(1, "type"),
            msq(2, "max"),
            msq(3, "min"),
            msq(4, "default"),
            msq(5, "defaultRequest"),
            msq(6, "maxLimitRequestRatio"),
        ],
    ),
    msg(
        "core.v1.LimitRangeSpec",
        &[rm(1, "limits", "core.v1.LimitRangeItem")],
    ),
    msg(
        "core.v1.LoadBalancerIngress",
        &[
            s(1, "ip"),
            s(2, "hostname"),
            sp(3, "ipMode"),
            rm(4, "ports", "core.v1.PortStatus"),
        ],
    ),
    msg(
        "core.v1.LoadBalancerStatus",
        &[rm(1, "ingress", "core.v1.LoadBalancerIngress")],
    ),
    msg("core.v1.LocalObjectReference", &[s(1, "name")]),
    top_level(
        "core.v1.Namespace",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.NamespaceSpec"),
            m(3, "status", "core.v1.NamespaceStatus"),
        ],
    ),
    msg(
        "core.v1.NamespaceCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(4, "lastTransitionTime"),
            s(5, "reason"),
            s(6, "message"),
        ],
    ),
    msg("core.v1.NamespaceSpec", &[rs(1, "finalizers")]),
    msg(
        "core.v1.NamespaceStatus",
        &[
            s(1, "phase"),
            rm(2, "conditions", "core.v1.NamespaceCondition"),
        ],
    ),
    top_level(
        "core.v1.Node",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.NodeSpec"),
            m(3, "status", "core.v1.NodeStatus"),
        ],
    ),
    msg("core.v1.NodeAddress", &[s(1, "type"), s(2, "address")]),
    msg(
        "core.v1.NodeCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastHeartbeatTime"),
            time(4, "lastTransitionTime"),
            s(5, "reason"),
            s(6, "message"),
        ],
    ),
    msg(
        "core.v1.NodeConfigSource",
        &[m(2, "configMap", "core.v1.ConfigMapNodeConfigSource")],
    ),
    msg(
        "core.v1.NodeConfigStatus",
        &[
            m(1, "assigned", "core.v1.NodeConfigSource"),
            m(2, "active", "core.v1.NodeConfigSource"),
            m(3, "lastKnownGood", "core.v1.NodeConfigSource"),
            s(4, "error"),
        ],
    ),
    msg(
        "core.v1.NodeDaemonEndpoints",
        &[m(1, "kubeletEndpoint", "core.v1.DaemonEndpoint")],
    ),
    msg("core.v1.NodeFeatures", &[bp(1, "supplementalGroupsPolicy")]),
    msg(
        "core.v1.NodeRuntimeHandler",
        &[
            s(1, "name"),
            m(2, "features", "core.v1.NodeRuntimeHandlerFeatures"),
        ],
    ),
    msg(
        "core.v1.NodeRuntimeHandlerFeatures",
        &[bp(1, "recursiveReadOnlyMounts"), bp(2, "userNamespaces")],
    ),
    msg(
        "core.v1.NodeSpec",
        &[
            s(1, "podCIDR"),
            rs(7, "podCIDRs"),
            s(3, "providerID"),
            b(4, "unschedulable"),
            rm(5, "taints", "core.v1.Taint"),
            m(6, "configSource", "core.v1.NodeConfigSource"),
            s(2, "externalID"),
        ],
    ),
    msg(
        "core.v1.NodeStatus",
        &[
            msq(1, "capacity"),
            msq(2, "allocatable"),
            s(3, "phase"),
            rm(4, "conditions", "core.v1.NodeCondition"),
            rm(5, "addresses", "core.v1.NodeAddress"),
            m(6, "daemonEndpoints", "core.v1.NodeDaemonEndpoints"),
            m(7, "nodeInfo", "core.v1.NodeSystemInfo"),
            rm(8, "images", "core.v1.ContainerImage"),
            rs(9, "volumesInUse"),
            rm(10, "volumesAttached", "core.v1.AttachedVolume"),
            m(11, "config", "core.v1.NodeConfigStatus"),
            rm(12, "runtimeHandlers", "core.v1.NodeRuntimeHandler"),
            m(13, "features", "core.v1.NodeFeatures"),
            rs(14, "declaredFeatures"),
        ],
    ),
    msg("core.v1.NodeSwapStatus", &[int64p(1, "capacity")]),
    msg(
        "core.v1.NodeSystemInfo",
        &[
            s(1, "machineID"),
            s(2, "systemUUID"),
            s(3, "bootID"),
            s(4, "kernelVersion"),
            s(5, "osImage"),
            s(6, "containerRuntimeVersion"),
            s(7, "kubeletVersion"),
            s(8, "kubeProxyVersion"),
            s(9, "operatingSystem"),
            s(10, "architecture"),
            m(11, "swap", "core.v1.NodeSwapStatus"),
        ],
    ),
    msg(
        "core.v1.ObjectReference",
        &[
            s(1, "kind"),
            s(2, "namespace"),
            s(3, "name"),
            s(4, "uid"),
            s(5, "apiVersion"),
            s(6, "resourceVersion"),
            s(7, "fieldPath"),
        ],
    ),
    top_level(
        "core.v1.ReplicationController",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.ReplicationControllerSpec"),
            m(3, "status", "core.v1.ReplicationControllerStatus"),
        ],
    ),
    msg(
        "core.v1.ReplicationControllerCondition",
        &[
            s(1, "type"),
            s(2, "status"),
            time(3, "lastTransitionTime"),
            s(4, "reason"),
            s(5, "message"),
        ],
    ),
    msg(
        "core.v1.ReplicationControllerSpec",
        &[
            int32p(1, "replicas"),
            int32(4, "minReadySeconds"),
            mss(2, "selector"),
            m(3, "template", "core.v1.PodTemplateSpec"),
        ],
    ),
    msg(
        "core.v1.ReplicationControllerStatus",
        &[
            int32p(1, "replicas"),
            int32(2, "fullyLabeledReplicas"),
            int32(4, "readyReplicas"),
            int32(5, "availableReplicas"),
            int64(3, "observedGeneration"),
            rm(6, "conditions", "core.v1.ReplicationControllerCondition"),
        ],
    ),
    top_level(
        "core.v1.ResourceQuota",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.ResourceQuotaSpec"),
            m(3, "status", "core.v1.ResourceQuotaStatus"),
        ],
    ),
    msg(
        "core.v1.ResourceQuotaSpec",
        &[
            msq(1, "hard"),
            rs(2, "scopes"),
            m(3, "scopeSelector", "core.v1.ScopeSelector"),
        ],
    ),
    msg(
        "core.v1.ResourceQuotaStatus",
        &[msq(1, "hard"), msq(2, "used")],
    ),
    msg(
        "core.v1.ScopeSelector",
        &[rm(
            1,
            "matchExpressions",
            "core.v1.ScopedResourceSelectorRequirement",
        )],
    ),
    msg(
        "core.v1.ScopedResourceSelectorRequirement",
        &[s(1, "scopeName"), s(2, "operator"), rs(3, "values")],
    ),
    top_level(
        "core.v1.Secret",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            bp(5, "immutable"),
            msb(2, "data"),
            mss(4, "stringData"),
            s(3, "type"),
        ],
    ),
    top_level(
        "core.v1.Service",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.ServiceSpec"),
            m(3, "status", "core.v1.ServiceStatus"),
        ],
    ),
    top_level(
        "core.v1.ServiceAccount",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "secrets", "core.v1.ObjectReference"),
            rm(3, "imagePullSecrets", "core.v1.LocalObjectReference"),
            bp(4, "automountServiceAccountToken"),
        ],
    ),
    msg(
        "core.v1.ServicePort",
        &[
            s(1, "name"),
            s(2, "protocol"),
            sp(6, "appProtocol"),
            int32p(3, "port"),
            ios(4, "targetPort"),
            int32(5, "nodePort"),
        ],
    ),
    msg(
        "core.v1.ServiceSpec",
        &[
            rm(1, "ports", "core.v1.ServicePort"),
            mss(2, "selector"),
            s(3, "clusterIP"),
            rs(18, "clusterIPs"),
            s(4, "type"),
            rs(5, "externalIPs"),
            s(7, "sessionAffinity"),
            s(8, "loadBalancerIP"),
            rs(9, "loadBalancerSourceRanges"),
            s(10, "externalName"),
            s(11, "externalTrafficPolicy"),
            int32(12, "healthCheckNodePort"),
            b(13, "publishNotReadyAddresses"),
            m(14, "sessionAffinityConfig", "core.v1.SessionAffinityConfig"),
            rs(19, "ipFamilies"),
            sp(17, "ipFamilyPolicy"),
            bp(20, "allocateLoadBalancerNodePorts"),
            sp(21, "loadBalancerClass"),
            sp(22, "internalTrafficPolicy"),
            sp(23, "trafficDistribution"),
        ],
    ),
    msg(
        "core.v1.ServiceStatus",
        &[
            m(1, "loadBalancer", "core.v1.LoadBalancerStatus"),
            rm(2, "conditions", "meta.v1.Condition"),
        ],
    ),
    msg(
        "core.v1.SessionAffinityConfig",
        &[m(1, "clientIP", "core.v1.ClientIPConfig")],
    ),
    msg(
        "core.v1.Taint",
        &[
            s(1, "key"),
            s(2, "value"),
            s(3, "effect"),
            time(4, "timeAdded"),
        ],
    ),
];
