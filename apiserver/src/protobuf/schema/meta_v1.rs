//! meta/v1 (apimachinery) messages: ObjectMeta, OwnerReference, ManagedFieldsEntry, LabelSelector,
//! Condition, DeleteOptions, GroupResource, ListMeta, Status, PartialObjectMetadata(List), WatchEvent.

use super::*;

/// meta/v1 (apimachinery) messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "meta.v1.Condition",
        &[
            s(1, "type"),
            s(2, "status"),
            int64(3, "observedGeneration"),
            time(4, "lastTransitionTime"),
            s(5, "reason"),
            s(6, "message"),
        ],
    ),
    msg(
        "meta.v1.DeleteOptions",
        &[
            int64p(1, "gracePeriodSeconds"),
            m(2, "preconditions", "meta.v1.Preconditions"),
            bp(3, "orphanDependents"),
            sp(4, "propagationPolicy"),
            rs(5, "dryRun"),
            bp(6, "ignoreStoreReadErrorWithClusterBreakingPotential"),
        ],
    ),
    msg(
        "meta.v1.FieldSelectorRequirement",
        &[s(1, "key"), s(2, "operator"), rs(3, "values")],
    ),
    // Both strings without omitempty: "" is written.
    msg(
        "meta.v1.GroupResource",
        &[sp(1, "group"), sp(2, "resource")],
    ),
    msg(
        "meta.v1.LabelSelector",
        &[
            mss(1, "matchLabels"),
            rm(2, "matchExpressions", "meta.v1.LabelSelectorRequirement"),
        ],
    ),
    msg(
        "meta.v1.LabelSelectorRequirement",
        &[s(1, "key"), s(2, "operator"), rs(3, "values")],
    ),
    msg(
        "meta.v1.ListMeta",
        &[
            s(1, "selfLink"),
            s(2, "resourceVersion"),
            s(3, "continue"),
            int64p(4, "remainingItemCount"),
        ],
    ),
    msg(
        "meta.v1.ManagedFieldsEntry",
        &[
            s(1, "manager"),
            s(2, "operation"),
            s(3, "apiVersion"),
            time(4, "time"),
            s(6, "fieldsType"),
            fields_v1(7, "fieldsV1"),
            s(8, "subresource"),
        ],
    ),
    msg(
        "meta.v1.ObjectMeta",
        &[
            s(1, "name"),
            s(2, "generateName"),
            s(3, "namespace"),
            s(4, "selfLink"),
            s(5, "uid"),
            s(6, "resourceVersion"),
            int64(7, "generation"),
            time(8, "creationTimestamp"),
            time(9, "deletionTimestamp"),
            int64p(10, "deletionGracePeriodSeconds"),
            mss(11, "labels"),
            mss(12, "annotations"),
            rm(13, "ownerReferences", "meta.v1.OwnerReference"),
            rs(14, "finalizers"),
            rm(17, "managedFields", "meta.v1.ManagedFieldsEntry"),
        ],
    ),
    msg(
        "meta.v1.OwnerReference",
        &[
            s(5, "apiVersion"),
            s(1, "kind"),
            s(3, "name"),
            s(4, "uid"),
            bp(6, "controller"),
            bp(7, "blockOwnerDeletion"),
        ],
    ),
    top_level(
        "meta.v1.PartialObjectMetadata",
        &[m(1, "metadata", "meta.v1.ObjectMeta")],
    ),
    top_level(
        "meta.v1.PartialObjectMetadataList",
        &[
            m(1, "metadata", "meta.v1.ListMeta"),
            rm(2, "items", "meta.v1.PartialObjectMetadata"),
        ],
    ),
    msg(
        "meta.v1.Preconditions",
        &[s(1, "uid"), s(2, "resourceVersion")],
    ),
    msg(
        "meta.v1.Status",
        &[
            m(1, "metadata", "meta.v1.ListMeta"),
            s(2, "status"),
            s(3, "message"),
            s(4, "reason"),
            m(5, "details", "meta.v1.StatusDetails"),
            int32(6, "code"),
        ],
    ),
    msg(
        "meta.v1.StatusCause",
        &[s(1, "reason"), s(2, "message"), s(3, "field")],
    ),
    msg(
        "meta.v1.StatusDetails",
        &[
            s(1, "name"),
            s(2, "group"),
            s(3, "kind"),
            s(6, "uid"),
            rm(4, "causes", "meta.v1.StatusCause"),
            int32(5, "retryAfterSeconds"),
        ],
    ),
    msg("meta.v1.WatchEvent", &[s(1, "type"), raw_ext(2, "object")]),
];
