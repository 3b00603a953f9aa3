//! discovery.k8s.io/v1 messages: EndpointSlice.

use super::*;

/// discovery.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "discovery.v1.Endpoint",
        &[
            rs(1, "addresses"),
            m(2, "conditions", "discovery.v1.EndpointConditions"),
            sp(3, "hostname"),
            m(4, "targetRef", "core.v1.ObjectReference"),
            mss(5, "deprecatedTopology"),
            sp(6, "nodeName"),
            sp(7, "zone"),
            m(8, "hints", "discovery.v1.EndpointHints"),
        ],
    ),
    msg(
        "discovery.v1.EndpointConditions",
        &[bp(1, "ready"), bp(2, "serving"), bp(3, "terminating")],
    ),
    msg(
        "discovery.v1.EndpointHints",
        &[
            rm(1, "forZones", "discovery.v1.ForZone"),
            rm(2, "forNodes", "discovery.v1.ForNode"),
        ],
    ),
    msg(
        "discovery.v1.EndpointPort",
        &[
            sp(1, "name"),
            sp(2, "protocol"),
            int32p(3, "port"),
            sp(4, "appProtocol"),
        ],
    ),
    top_level(
        "discovery.v1.EndpointSlice",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            s(4, "addressType"),
            rm(2, "endpoints", "discovery.v1.Endpoint"),
            rm(3, "ports", "discovery.v1.EndpointPort"),
        ],
    ),
    msg("discovery.v1.ForNode", &[s(1, "name")]),
    msg("discovery.v1.ForZone", &[s(1, "name")]),
];
