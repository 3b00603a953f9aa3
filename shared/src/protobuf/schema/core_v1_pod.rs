//! core/v1 pods: the pod spec and status, containers, probes, security contexts, affinity and scheduling.

use super::*;

/// core/v1 pod messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "core.v1.Affinity",
        &[
            m(1, "nodeAffinity", "core.v1.NodeAffinity"),
            m(2, "podAffinity", "core.v1.PodAffinity"),
            m(3, "podAntiAffinity", "core.v1.PodAntiAffinity"),
        ],
    ),
    msg(
        "core.v1.AppArmorProfile",
        &[
            s(1, "type"),
            sp(2, "localhostProfile"),
        ],
    ),
    msg(
        "core.v1.Capabilities",
        &[
            rs(1, "add"),
            rs(2, "drop"),
        ],
    ),
    msg(
        "core.v1.ConfigMapEnvSource",
        &[
            inl(1, "localObjectReference", "core.v1.LocalObjectReference"),
            bp(2, "optional"),
        ],
    ),
    msg(
        "core.v1.ConfigMapKeySelector",
        &[
            inl(1, "localObjectReference", "core.v1.LocalObjectReference"),
            s(2, "key"),
            bp(3, "optional"),
        ],
    ),
    msg(
        "core.v1.Container",
        &[
            s(1, "name"),
            s(2, "image"),
            rs(3, "command"),
            rs(4, "args"),
            s(5, "workingDir"),
            rm(6, "ports", "core.v1.ContainerPort"),
            rm(19, "envFrom", "core.v1.EnvFromSource"),
            rm(7, "env", "core.v1.EnvVar"),
            m(8, "resources", "core.v1.ResourceRequirements"),
            rm(23, "resizePolicy", "core.v1.ContainerResizePolicy"),
            sp(24, "restartPolicy"),
            rm(9, "volumeMounts", "core.v1.VolumeMount"),
            rm(21, "volumeDevices", "core.v1.VolumeDevice"),
            m(10, "livenessProbe", "core.v1.Probe"),
            m(11, "readinessProbe", "core.v1.Probe"),
            m(22, "startupProbe", "core.v1.Probe"),
            m(12, "lifecycle", "core.v1.Lifecycle"),
            s(13, "terminationMessagePath"),
            s(20, "terminationMessagePolicy"),
            s(14, "imagePullPolicy"),
            m(15, "securityContext", "core.v1.SecurityContext"),
            b(16, "stdin"),
            b(17, "stdinOnce"),
            b(18, "tty"),
        ],
    ),
    msg(
        "core.v1.ContainerImage",
        &[
            rs(1, "names"),
            int64(2, "sizeBytes"),
        ],
    ),
    msg(
        "core.v1.ContainerPort",
        &[
            s(1, "name"),
            int32(2, "hostPort"),
            int32p(3, "containerPort"),
            s(4, "protocol"),
            s(5, "hostIP"),
        ],
    ),
    msg(
        "core.v1.ContainerResizePolicy",
        &[
            s(1, "resourceName"),
            s(2, "restartPolicy"),
        ],
    ),
    msg(
        "core.v1.ContainerState",
        &[
            m(1, "waiting", "core.v1.ContainerStateWaiting"),
            m(2, "running", "core.v1.ContainerStateRunning"),
            m(3, "terminated", "core.v1.ContainerStateTerminated"),
        ],
    ),
    msg(
        "core.v1.ContainerStateRunning",
        &[
            time(1, "startedAt"),
        ],
    ),
    msg(
        "core.v1.ContainerStateTerminated",
        &[
            int32p(1, "exitCode"),
            int32(2, "signal"),
            s(3, "reason"),
            s(4, "message"),
            time(5, "startedAt"),
            time(6, "finishedAt"),
            s(7, "containerID"),
        ],
    ),
    msg(
        "core.v1.ContainerStateWaiting",
        &[
            s(1, "reason"),
            s(2, "message"),
        ],
    ),
    msg(
        "core.v1.ContainerStatus",
        &[
            s(1, "name"),
            m(2, "state", "core.v1.ContainerState"),
            m(3, "lastState", "core.v1.ContainerState"),
            bp(4, "ready"),
            int32p(5, "restartCount"),
            s(6, "image"),
            s(7, "imageID"),
            s(8, "containerID"),
            bp(9, "started"),
            msq(10, "allocatedResources"),
            m(11, "resources", "core.v1.ResourceRequirements"),
            rm(12, "volumeMounts", "core.v1.VolumeMountStatus"),
            m(13, "user", "core.v1.ContainerUser"),
            rm(14, "allocatedResourcesStatus", "core.v1.ResourceStatus"),
            sp(15, "stopSignal"),
        ],
    ),
    msg(
        "core.v1.ContainerUser",
        &[
            m(1, "linux", "core.v1.LinuxContainerUser"),
        ],
    ),
    msg(
        "core.v1.EnvFromSource",
        &[
            s(1, "prefix"),
            m(2, "configMapRef", "core.v1.ConfigMapEnvSource"),
            m(3, "secretRef", "core.v1.SecretEnvSource"),
        ],
    ),
    msg(
        "core.v1.EnvVar",
        &[
            s(1, "name"),
            s(2, "value"),
            m(3, "valueFrom", "core.v1.EnvVarSource"),
        ],
    ),
    msg(
        "core.v1.EnvVarSource",
        &[
            m(1, "fieldRef", "core.v1.ObjectFieldSelector"),
            m(2, "resourceFieldRef", "core.v1.ResourceFieldSelector"),
            m(3, "configMapKeyRef", "core.v1.ConfigMapKeySelector"),
            m(4, "secretKeyRef", "core.v1.SecretKeySelector"),
        ],
    ),
    msg(
        "core.v1.EphemeralContainer",
        &[
            inl(1, "ephemeralContainerCommon", "core.v1.EphemeralContainerCommon"),
            s(2, "targetContainerName"),
        ],
    ),
    msg(
        "core.v1.EphemeralContainerCommon",
        &[
            s(1, "name"),
            s(2, "image"),
            rs(3, "command"),
            rs(4, "args"),
            s(5, "workingDir"),
            rm(6, "ports", "core.v1.ContainerPort"),
            rm(19, "envFrom", "core.v1.EnvFromSource"),
            rm(7, "env", "core.v1.EnvVar"),
            m(8, "resources", "core.v1.ResourceRequirements"),
            rm(23, "resizePolicy", "core.v1.ContainerResizePolicy"),
            sp(24, "restartPolicy"),
            rm(9, "volumeMounts", "core.v1.VolumeMount"),
            rm(21, "volumeDevices", "core.v1.VolumeDevice"),
            m(10, "livenessProbe", "core.v1.Probe"),
            m(11, "readinessProbe", "core.v1.Probe"),
            m(22, "startupProbe", "core.v1.Probe"),
            m(12, "lifecycle", "core.v1.Lifecycle"),
            s(13, "terminationMessagePath"),
            s(20, "terminationMessagePolicy"),
            s(14, "imagePullPolicy"),
            m(15, "securityContext", "core.v1.SecurityContext"),
            b(16, "stdin"),
            b(17, "stdinOnce"),
            b(18, "tty"),
        ],
    ),
    msg(
        "core.v1.ExecAction",
        &[
            rs(1, "command"),
        ],
    ),
    msg(
        "core.v1.GRPCAction",
        &[
            int32p(1, "port"),
            sp(2, "service"),
        ],
    ),
    msg(
        "core.v1.HostAlias",
        &[
            s(1, "ip"),
            rs(2, "hostnames"),
        ],
    ),
    msg(
        "core.v1.HostIP",
        &[
            s(1, "ip"),
        ],
    ),
    msg(
        "core.v1.HTTPGetAction",
        &[
            s(1, "path"),
            ios(2, "port"),
            s(3, "host"),
            s(4, "scheme"),
            rm(5, "httpHeaders", "core.v1.HTTPHeader"),
        ],
    ),
    msg(
        "core.v1.HTTPHeader",
        &[
            s(1, "name"),
            s(2, "value"),
        ],
    ),
    msg(
        "core.v1.Lifecycle",
        &[
            m(1, "postStart", "core.v1.LifecycleHandler"),
            m(2, "preStop", "core.v1.LifecycleHandler"),
            sp(3, "stopSignal"),
        ],
    ),
    msg(
        "core.v1.LifecycleHandler",
        &[
            m(1, "exec", "core.v1.ExecAction"),
            m(2, "httpGet", "core.v1.HTTPGetAction"),
            m(3, "tcpSocket", "core.v1.TCPSocketAction"),
            m(4, "sleep", "core.v1.SleepAction"),
        ],
    ),
    msg(
        "core.v1.LinuxContainerUser",
        &[
            int64p(1, "uid"),
            int64p(2, "gid"),
            rint64(3, "supplementalGroups"),
        ],
    ),
    msg(
        "core.v1.NodeAffinity",
        &[
            m(1, "requiredDuringSchedulingIgnoredDuringExecution", "core.v1.NodeSelector"),
            rm(2, "preferredDuringSchedulingIgnoredDuringExecution", "core.v1.PreferredSchedulingTerm"),
        ],
    ),
    msg(
        "core.v1.NodeSelector",
        &[
            rm(1, "nodeSelectorTerms", "core.v1.NodeSelectorTerm"),
        ],
    ),
    msg(
        "core.v1.NodeSelectorRequirement",
        &[
            s(1, "key"),
            s(2, "operator"),
            rs(3, "values"),
        ],
    ),
    msg(
        "core.v1.NodeSelectorTerm",
        &[
            rm(1, "matchExpressions", "core.v1.NodeSelectorRequirement"),
            rm(2, "matchFields", "core.v1.NodeSelectorRequirement"),
        ],
    ),
    msg(
        "core.v1.ObjectFieldSelector",
        &[
            s(1, "apiVersion"),
            s(2, "fieldPath"),
        ],
    ),
    msg(
        "core.v1.Pod",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.PodSpec"),
            m(3, "status", "core.v1.PodStatus"),
        ],
    ),
    msg(
        "core.v1.PodAffinity",
        &[
            rm(1, "requiredDuringSchedulingIgnoredDuringExecution", "core.v1.PodAffinityTerm"),
            rm(2, "preferredDuringSchedulingIgnoredDuringExecution", "core.v1.WeightedPodAffinityTerm"),
        ],
    ),
    msg(
        "core.v1.PodAffinityTerm",
        &[
            m(1, "labelSelector", "meta.v1.LabelSelector"),
            rs(2, "namespaces"),
            s(3, "topologyKey"),
            m(4, "namespaceSelector", "meta.v1.LabelSelector"),
            rs(5, "matchLabelKeys"),
            rs(6, "mismatchLabelKeys"),
        ],
    ),
    msg(
        "core.v1.PodAntiAffinity",
        &[
            rm(1, "requiredDuringSchedulingIgnoredDuringExecution", "core.v1.PodAffinityTerm"),
            rm(2, "preferredDuringSchedulingIgnoredDuringExecution", "core.v1.WeightedPodAffinityTerm"),
        ],
    ),
    msg(
        "core.v1.PodCondition",
        &[
            s(1, "type"),
            int64(7, "observedGeneration"),
            s(2, "status"),
            time(3, "lastProbeTime"),
            time(4, "lastTransitionTime"),
            s(5, "reason"),
            s(6, "message"),
        ],
    ),
    msg(
        "core.v1.PodDNSConfig",
        &[
            rs(1, "nameservers"),
            rs(2, "searches"),
            rm(3, "options", "core.v1.PodDNSConfigOption"),
        ],
    ),
    msg(
        "core.v1.PodDNSConfigOption",
        &[
            s(1, "name"),
            sp(2, "value"),
        ],
    ),
    msg(
        "core.v1.PodIP",
        &[
            s(1, "ip"),
        ],
    ),
    msg(
        "core.v1.PodOS",
        &[
            s(1, "name"),
        ],
    ),
    msg(
        "core.v1.PodReadinessGate",
        &[
            s(1, "conditionType"),
        ],
    ),
    msg(
        "core.v1.PodResourceClaim",
        &[
            s(1, "name"),
            sp(3, "resourceClaimName"),
            sp(4, "resourceClaimTemplateName"),
        ],
    ),
    msg(
        "core.v1.PodResourceClaimStatus",
        &[
            s(1, "name"),
            s(2, "resourceClaimName"),
        ],
    ),
    msg(
        "core.v1.PodSchedulingGate",
        &[
            s(1, "name"),
        ],
    ),
    msg(
        "core.v1.PodSecurityContext",
        &[
            m(1, "seLinuxOptions", "core.v1.SELinuxOptions"),
            m(8, "windowsOptions", "core.v1.WindowsSecurityContextOptions"),
            int64p(2, "runAsUser"),
            int64p(6, "runAsGroup"),
            bp(3, "runAsNonRoot"),
            rint64(4, "supplementalGroups"),
            sp(12, "supplementalGroupsPolicy"),
            int64p(5, "fsGroup"),
            rm(7, "sysctls", "core.v1.Sysctl"),
            sp(9, "fsGroupChangePolicy"),
            m(10, "seccompProfile", "core.v1.SeccompProfile"),
            m(11, "appArmorProfile", "core.v1.AppArmorProfile"),
            sp(13, "seLinuxChangePolicy"),
        ],
    ),
    msg(
        "core.v1.PodSpec",
        &[
            rm(1, "volumes", "core.v1.Volume"),
            rm(20, "initContainers", "core.v1.Container"),
            rm(2, "containers", "core.v1.Container"),
            rm(34, "ephemeralContainers", "core.v1.EphemeralContainer"),
            s(3, "restartPolicy"),
            int64p(4, "terminationGracePeriodSeconds"),
            int64p(5, "activeDeadlineSeconds"),
            s(6, "dnsPolicy"),
            mss(7, "nodeSelector"),
            s(8, "serviceAccountName"),
            s(9, "serviceAccount"),
            bp(21, "automountServiceAccountToken"),
            s(10, "nodeName"),
            b(11, "hostNetwork"),
            b(12, "hostPID"),
            b(13, "hostIPC"),
            bp(27, "shareProcessNamespace"),
            m(14, "securityContext", "core.v1.PodSecurityContext"),
            rm(15, "imagePullSecrets", "core.v1.LocalObjectReference"),
            s(16, "hostname"),
            s(17, "subdomain"),
            m(18, "affinity", "core.v1.Affinity"),
            s(19, "schedulerName"),
            rm(22, "tolerations", "core.v1.Toleration"),
            rm(23, "hostAliases", "core.v1.HostAlias"),
            s(24, "priorityClassName"),
            int32p(25, "priority"),
            m(26, "dnsConfig", "core.v1.PodDNSConfig"),
            rm(28, "readinessGates", "core.v1.PodReadinessGate"),
            sp(29, "runtimeClassName"),
            bp(30, "enableServiceLinks"),
            sp(31, "preemptionPolicy"),
            msq(32, "overhead"),
            rm(33, "topologySpreadConstraints", "core.v1.TopologySpreadConstraint"),
            bp(35, "setHostnameAsFQDN"),
            m(36, "os", "core.v1.PodOS"),
            bp(37, "hostUsers"),
            rm(38, "schedulingGates", "core.v1.PodSchedulingGate"),
            rm(39, "resourceClaims", "core.v1.PodResourceClaim"),
            m(40, "resources", "core.v1.ResourceRequirements"),
        ],
    ),
    msg(
        "core.v1.PodStatus",
        &[
            int64(17, "observedGeneration"),
            s(1, "phase"),
            rm(2, "conditions", "core.v1.PodCondition"),
            s(3, "message"),
            s(4, "reason"),
            s(11, "nominatedNodeName"),
            s(5, "hostIP"),
            rm(16, "hostIPs", "core.v1.HostIP"),
            s(6, "podIP"),
            rm(12, "podIPs", "core.v1.PodIP"),
            time(7, "startTime"),
            rm(10, "initContainerStatuses", "core.v1.ContainerStatus"),
            rm(8, "containerStatuses", "core.v1.ContainerStatus"),
            s(9, "qosClass"),
            rm(13, "ephemeralContainerStatuses", "core.v1.ContainerStatus"),
            s(14, "resize"),
            rm(15, "resourceClaimStatuses", "core.v1.PodResourceClaimStatus"),
        ],
    ),
    msg(
        "core.v1.PodTemplate",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "template", "core.v1.PodTemplateSpec"),
        ],
    ),
    msg(
        "core.v1.PodTemplateSpec",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "core.v1.PodSpec"),
        ],
    ),
    msg(
        "core.v1.PortStatus",
        &[
            int32p(1, "port"),
            s(2, "protocol"),
            sp(3, "error"),
        ],
    ),
    msg(
        "core.v1.PreferredSchedulingTerm",
        &[
            int32p(1, "weight"),
            m(2, "preference", "core.v1.NodeSelectorTerm"),
        ],
    ),
    msg(
        "core.v1.Probe",
        &[
            inl(1, "handler", "core.v1.ProbeHandler"),
            int32(2, "initialDelaySeconds"),
            int32(3, "timeoutSeconds"),
            int32(4, "periodSeconds"),
            int32(5, "successThreshold"),
            int32(6, "failureThreshold"),
            int64p(7, "terminationGracePeriodSeconds"),
        ],
    ),
    msg(
        "core.v1.ProbeHandler",
        &[
            m(1, "exec", "core.v1.ExecAction"),
            m(2, "httpGet", "core.v1.HTTPGetAction"),
            m(3, "tcpSocket", "core.v1.TCPSocketAction"),
            m(4, "grpc", "core.v1.GRPCAction"),
        ],
    ),
    msg(
        "core.v1.ResourceClaim",
        &[
            s(1, "name"),
            s(2, "request"),
        ],
    ),
    msg(
        "core.v1.ResourceFieldSelector",
        &[
            s(1, "containerName"),
            s(2, "resource"),
            qty(3, "divisor"),
        ],
    ),
    msg(
        "core.v1.ResourceHealth",
        &[
            s(1, "resourceID"),
            s(2, "health"),
        ],
    ),
    msg(
        "core.v1.ResourceRequirements",
        &[
            msq(1, "limits"),
            msq(2, "requests"),
            rm(3, "claims", "core.v1.ResourceClaim"),
        ],
    ),
    msg(
        "core.v1.ResourceStatus",
        &[
            s(1, "name"),
            rm(2, "resources", "core.v1.ResourceHealth"),
        ],
    ),
    msg(
        "core.v1.SeccompProfile",
        &[
            s(1, "type"),
            sp(2, "localhostProfile"),
        ],
    ),
    msg(
        "core.v1.SecretEnvSource",
        &[
            inl(1, "localObjectReference", "core.v1.LocalObjectReference"),
            bp(2, "optional"),
        ],
    ),
    msg(
        "core.v1.SecretKeySelector",
        &[
            inl(1, "localObjectReference", "core.v1.LocalObjectReference"),
            s(2, "key"),
            bp(3, "optional"),
        ],
    ),
    msg(
        "core.v1.SecurityContext",
        &[
            m(1, "capabilities", "core.v1.Capabilities"),
            bp(2, "privileged"),
            m(3, "seLinuxOptions", "core.v1.SELinuxOptions"),
            m(10, "windowsOptions", "core.v1.WindowsSecurityContextOptions"),
            int64p(4, "runAsUser"),
            int64p(8, "runAsGroup"),
            bp(5, "runAsNonRoot"),
            bp(6, "readOnlyRootFilesystem"),
            bp(7, "allowPrivilegeEscalation"),
            sp(9, "procMount"),
            m(11, "seccompProfile", "core.v1.SeccompProfile"),
            m(12, "appArmorProfile", "core.v1.AppArmorProfile"),
        ],
    ),
    msg(
        "core.v1.SELinuxOptions",
        &[
            s(1, "user"),
            s(2, "role"),
            s(3, "type"),
            s(4, "level"),
        ],
    ),
    msg(
        "core.v1.SleepAction",
        &[
            int64p(1, "seconds"),
        ],
    ),
    msg(
        "core.v1.Sysctl",
        &[
            s(1, "name"),
            s(2, "value"),
        ],
    ),
    msg(
        "core.v1.TCPSocketAction",
        &[
            ios(1, "port"),
            s(2, "host"),
        ],
    ),
    msg(
        "core.v1.Toleration",
        &[
            s(1, "key"),
            s(2, "operator"),
            s(3, "value"),
            s(4, "effect"),
            int64p(5, "tolerationSeconds"),
        ],
    ),
    msg(
        "core.v1.TopologySpreadConstraint",
        &[
            int32p(1, "maxSkew"),
            s(2, "topologyKey"),
            s(3, "whenUnsatisfiable"),
            m(4, "labelSelector", "meta.v1.LabelSelector"),
            int32p(5, "minDomains"),
            sp(6, "nodeAffinityPolicy"),
            sp(7, "nodeTaintsPolicy"),
            rs(8, "matchLabelKeys"),
        ],
    ),
    msg(
        "core.v1.VolumeDevice",
        &[
            s(1, "name"),
            s(2, "devicePath"),
        ],
    ),
    msg(
        "core.v1.VolumeMount",
        &[
            s(1, "name"),
            b(2, "readOnly"),
            sp(7, "recursiveReadOnly"),
            s(3, "mountPath"),
            s(4, "subPath"),
            sp(5, "mountPropagation"),
            s(6, "subPathExpr"),
        ],
    ),
    msg(
        "core.v1.VolumeMountStatus",
        &[
            s(1, "name"),
            s(2, "mountPath"),
            b(3, "readOnly"),
            s(4, "recursiveReadOnly"),
        ],
    ),
    msg(
        "core.v1.WeightedPodAffinityTerm",
        &[
            int32p(1, "weight"),
            m(2, "podAffinityTerm", "core.v1.PodAffinityTerm"),
        ],
    ),
    msg(
        "core.v1.WindowsSecurityContextOptions",
        &[
            sp(1, "gmsaCredentialSpecName"),
            sp(2, "gmsaCredentialSpec"),
            sp(3, "runAsUserName"),
            bp(4, "hostProcess"),
        ],
    ),
];
