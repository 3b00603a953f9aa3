//! resource.k8s.io/v1 messages (dynamic resource allocation):
//! DeviceClass, DeviceTaintRule, ResourceClaim, ResourceClaimTemplate,
//! ResourceSlice.
//!
//! Written from upstream's `resource/v1/generated.proto` and `types.go`
//! (Kubernetes 1.36). Strings without `omitempty` (`driver`, `pool`,
//! `device`, `name`, ...) and pointer fields (`nodeName`, `allNodes`,
//! `adminAccess`, the attribute values, `shareID`, ...) keep their zero
//! values, as do the required int64s of `ResourcePool`.
//!
//! DeviceTaintRule (with its Spec, Status and DeviceTaintSelector) is GA
//! in resource.k8s.io/v1 only from Kubernetes 1.37; our 1.36 source has it
//! in `resource/v1beta2` alone, so those messages were taken from
//! `resource/v1beta2/generated.proto` on the assumption that the GA
//! promotion keeps the field numbers (upstream's rule for promotions);
//! the JSON names match k8s-openapi's v1_37 `DeviceTaintRule*` types.
//!
//! Kubernetes 1.37 adds alpha fields that 1.36 does not have, so their
//! field numbers are unknown here and the tables leave them out (a
//! protobuf body, or an object stored in etcd, loses them):
//! `Device.nodeAllocatableResources` (replacing 1.36's
//! `nodeAllocatableResourceMappings`, 13, which the table keeps),
//! `DeviceCounterConsumption.compatibilityGroups`,
//! `Exact/DeviceSubRequest.derivedAttributes`,
//! `DeviceRequestAllocationResult.skipNodeOperations` and
//! `ResourceSliceSpec.partitionTypeAttribute`/`skipNodeOperations`.

use super::*;

/// resource.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "resource.v1.AllocatedDeviceStatus",
        &[
            sp(1, "driver"),
            sp(2, "pool"),
            sp(3, "device"),
            sp(7, "shareID"),
            rm(4, "conditions", "meta.v1.Condition"),
            raw_ext(5, "data"),
            m(6, "networkData", "resource.v1.NetworkDeviceData"),
        ],
    ),
    msg(
        "resource.v1.AllocationResult",
        &[
            m(1, "devices", "resource.v1.DeviceAllocationResult"),
            m(3, "nodeSelector", "core.v1.NodeSelector"),
            time(5, "allocationTimestamp"),
        ],
    ),
    msg("resource.v1.CELDeviceSelector", &[sp(1, "expression")]),
    msg(
        "resource.v1.CapacityRequestPolicy",
        &[
            qty(1, "default"),
            rqty(3, "validValues"),
            m(4, "validRange", "resource.v1.CapacityRequestPolicyRange"),
        ],
    ),
    msg(
        "resource.v1.CapacityRequestPolicyRange",
        &[qty(1, "min"), qty(2, "max"), qty(3, "step")],
    ),
    msg("resource.v1.CapacityRequirements", &[msq(1, "requests")]),
    msg("resource.v1.Counter", &[qty(1, "value")]),
    msg(
        "resource.v1.CounterSet",
        &[sp(1, "name"), msm(2, "counters", "resource.v1.Counter")],
    ),
    msg(
        "resource.v1.Device",
        &[
            sp(1, "name"),
            msm(2, "attributes", "resource.v1.DeviceAttribute"),
            msm(3, "capacity", "resource.v1.DeviceCapacity"),
            rm(
                4,
                "consumesCounters",
                "resource.v1.DeviceCounterConsumption",
            ),
            sp(5, "nodeName"),
            m(6, "nodeSelector", "core.v1.NodeSelector"),
            bp(7, "allNodes"),
            rm(8, "taints", "resource.v1.DeviceTaint"),
            bp(9, "bindsToNode"),
            rs(10, "bindingConditions"),
            rs(11, "bindingFailureConditions"),
            bp(12, "allowMultipleAllocations"),
            msm(
                13,
                "nodeAllocatableResourceMappings",
                "resource.v1.NodeAllocatableResourceMapping",
            ),
        ],
    ),
    msg(
        "resource.v1.DeviceAllocationConfiguration",
        &[
            sp(1, "source"),
            rs(2, "requests"),
            inl(3, "deviceConfiguration", "resource.v1.DeviceConfiguration"),
        ],
    ),
    msg(
        "resource.v1.DeviceAllocationResult",
        &[
            rm(1, "results", "resource.v1.DeviceRequestAllocationResult"),
            rm(2, "config", "resource.v1.DeviceAllocationConfiguration"),
        ],
    ),
    msg(
        "resource.v1.DeviceAttribute",
        &[
            // All pointers (or lists): exactly one is set.
            int64p(2, "int"),
            bp(3, "bool"),
            sp(4, "string"),
            sp(5, "version"),
            rint64(6, "ints"),
            rbool(7, "bools"),
            rs(8, "strings"),
            rs(9, "versions"),
        ],
    ),
    msg(
        "resource.v1.DeviceCapacity",
        &[
            qty(1, "value"),
            m(2, "requestPolicy", "resource.v1.CapacityRequestPolicy"),
        ],
    ),
    msg(
        "resource.v1.DeviceClaim",
        &[
            rm(1, "requests", "resource.v1.DeviceRequest"),
            rm(2, "constraints", "resource.v1.DeviceConstraint"),
            rm(3, "config", "resource.v1.DeviceClaimConfiguration"),
        ],
    ),
    msg(
        "resource.v1.DeviceClaimConfiguration",
        &[
            rs(1, "requests"),
            inl(2, "deviceConfiguration", "resource.v1.DeviceConfiguration"),
        ],
    ),
    top_level(
        "resource.v1.DeviceClass",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "resource.v1.DeviceClassSpec"),
        ],
    ),
    msg(
        "resource.v1.DeviceClassConfiguration",
        &[inl(
            1,
            "deviceConfiguration",
            "resource.v1.DeviceConfiguration",
        )],
    ),
    msg(
        "resource.v1.DeviceClassSpec",
        &[
            rm(1, "selectors", "resource.v1.DeviceSelector"),
            rm(2, "config", "resource.v1.DeviceClassConfiguration"),
            // Field 3 (suitableNodes) was never released.
            sp(4, "extendedResourceName"),
        ],
    ),
    msg(
        "resource.v1.DeviceConfiguration",
        &[m(1, "opaque", "resource.v1.OpaqueDeviceConfiguration")],
    ),
    msg(
        "resource.v1.DeviceConstraint",
        &[
            rs(1, "requests"),
            sp(2, "matchAttribute"),
            sp(3, "distinctAttribute"),
        ],
    ),
    msg(
        "resource.v1.DeviceCounterConsumption",
        &[
            sp(1, "counterSet"),
            msm(2, "counters", "resource.v1.Counter"),
        ],
    ),
    msg(
        "resource.v1.DeviceRequest",
        &[
            sp(1, "name"),
            m(2, "exactly", "resource.v1.ExactDeviceRequest"),
            rm(3, "firstAvailable", "resource.v1.DeviceSubRequest"),
        ],
    ),
    msg(
        "resource.v1.DeviceRequestAllocationResult",
        &[
            sp(1, "request"),
            sp(2, "driver"),
            sp(3, "pool"),
            sp(4, "device"),
            bp(5, "adminAccess"),
            rm(6, "tolerations", "resource.v1.DeviceToleration"),
            rs(7, "bindingConditions"),
            rs(8, "bindingFailureConditions"),
            sp(9, "shareID"),
            msq(10, "consumedCapacity"),
        ],
    ),
    msg(
        "resource.v1.DeviceSelector",
        &[m(1, "cel", "resource.v1.CELDeviceSelector")],
    ),
    msg(
        "resource.v1.DeviceSubRequest",
        &[
            sp(1, "name"),
            sp(2, "deviceClassName"),
            rm(3, "selectors", "resource.v1.DeviceSelector"),
            s(4, "allocationMode"),
            int64(5, "count"),
            rm(6, "tolerations", "resource.v1.DeviceToleration"),
            m(7, "capacity", "resource.v1.CapacityRequirements"),
        ],
    ),
    msg(
        "resource.v1.DeviceTaint",
        &[
            sp(1, "key"),
            s(2, "value"),
            sp(3, "effect"),
            time(4, "timeAdded"),
        ],
    ),
    top_level(
        "resource.v1.DeviceTaintRule",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "resource.v1.DeviceTaintRuleSpec"),
            m(3, "status", "resource.v1.DeviceTaintRuleStatus"),
        ],
    ),
    msg(
        "resource.v1.DeviceTaintRuleSpec",
        &[
            m(1, "deviceSelector", "resource.v1.DeviceTaintSelector"),
            m(2, "taint", "resource.v1.DeviceTaint"),
        ],
    ),
    msg(
        "resource.v1.DeviceTaintRuleStatus",
        &[rm(1, "conditions", "meta.v1.Condition")],
    ),
    msg(
        "resource.v1.DeviceTaintSelector",
        &[
            // Fields 1 (deviceClassName) and 5 (selectors) were
            // tombstoned in 1.35.
            sp(2, "driver"),
            sp(3, "pool"),
            sp(4, "device"),
        ],
    ),
    msg(
        "resource.v1.DeviceToleration",
        &[
            s(1, "key"),
            s(2, "operator"),
            s(3, "value"),
            s(4, "effect"),
            int64p(5, "tolerationSeconds"),
        ],
    ),
    msg(
        "resource.v1.ExactDeviceRequest",
        &[
            sp(1, "deviceClassName"),
            rm(2, "selectors", "resource.v1.DeviceSelector"),
            s(3, "allocationMode"),
            int64(4, "count"),
            bp(5, "adminAccess"),
            rm(6, "tolerations", "resource.v1.DeviceToleration"),
            m(7, "capacity", "resource.v1.CapacityRequirements"),
        ],
    ),
    msg(
        "resource.v1.NetworkDeviceData",
        &[s(1, "interfaceName"), rs(2, "ips"), s(3, "hardwareAddress")],
    ),
    msg(
        "resource.v1.NodeAllocatableResourceMapping",
        &[sp(1, "capacityKey"), qty(2, "allocationMultiplier")],
    ),
    msg(
        "resource.v1.OpaqueDeviceConfiguration",
        &[sp(1, "driver"), raw_ext(2, "parameters")],
    ),
    top_level(
        "resource.v1.ResourceClaim",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "resource.v1.ResourceClaimSpec"),
            m(3, "status", "resource.v1.ResourceClaimStatus"),
        ],
    ),
    msg(
        "resource.v1.ResourceClaimConsumerReference",
        &[
            s(1, "apiGroup"),
            sp(3, "resource"),
            sp(4, "name"),
            sp(5, "uid"),
        ],
    ),
    msg(
        "resource.v1.ResourceClaimSpec",
        &[m(1, "devices", "resource.v1.DeviceClaim")],
    ),
    msg(
        "resource.v1.ResourceClaimStatus",
        &[
            m(1, "allocation", "resource.v1.AllocationResult"),
            rm(
                2,
                "reservedFor",
                "resource.v1.ResourceClaimConsumerReference",
            ),
            // Field 3 (deallocationRequested) was removed.
            rm(4, "devices", "resource.v1.AllocatedDeviceStatus"),
        ],
    ),
    top_level(
        "resource.v1.ResourceClaimTemplate",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "resource.v1.ResourceClaimTemplateSpec"),
        ],
    ),
    msg(
        "resource.v1.ResourceClaimTemplateSpec",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "resource.v1.ResourceClaimSpec"),
        ],
    ),
    msg(
        "resource.v1.ResourcePool",
        &[
            sp(1, "name"),
            int64p(2, "generation"),
            int64p(3, "resourceSliceCount"),
        ],
    ),
    top_level(
        "resource.v1.ResourceSlice",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "resource.v1.ResourceSliceSpec"),
        ],
    ),
    msg(
        "resource.v1.ResourceSliceSpec",
        &[
            sp(1, "driver"),
            m(2, "pool", "resource.v1.ResourcePool"),
            sp(3, "nodeName"),
            m(4, "nodeSelector", "core.v1.NodeSelector"),
            bp(5, "allNodes"),
            rm(6, "devices", "resource.v1.Device"),
            bp(7, "perDeviceNodeSelection"),
            rm(8, "sharedCounters", "resource.v1.CounterSet"),
        ],
    ),
];
