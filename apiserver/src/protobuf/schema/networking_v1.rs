//! networking.k8s.io/v1 messages: Ingress, IngressClass, IPAddress,
//! NetworkPolicy, ServiceCIDR.

use super::*;

/// networking.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "networking.v1.HTTPIngressPath",
        &[
            s(1, "path"),
            sp(3, "pathType"),
            m(2, "backend", "networking.v1.IngressBackend"),
        ],
    ),
    msg(
        "networking.v1.HTTPIngressRuleValue",
        &[rm(1, "paths", "networking.v1.HTTPIngressPath")],
    ),
    msg("networking.v1.IPBlock", &[s(1, "cidr"), rs(2, "except")]),
    top_level(
        "networking.v1.Ingress",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "networking.v1.IngressSpec"),
            m(3, "status", "networking.v1.IngressStatus"),
        ],
    ),
    msg(
        "networking.v1.IngressBackend",
        &[
            m(4, "service", "networking.v1.IngressServiceBackend"),
            m(3, "resource", "core.v1.TypedLocalObjectReference"),
        ],
    ),
    top_level(
        "networking.v1.IngressClass",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "networking.v1.IngressClassSpec"),
        ],
    ),
    msg(
        "networking.v1.IngressClassParametersReference",
        &[
            sp(1, "apiGroup"),
            s(2, "kind"),
            s(3, "name"),
            sp(4, "scope"),
            sp(5, "namespace"),
        ],
    ),
    msg(
        "networking.v1.IngressClassSpec",
        &[
            s(1, "controller"),
            m(
                2,
                "parameters",
                "networking.v1.IngressClassParametersReference",
            ),
        ],
    ),
    msg(
        "networking.v1.IngressLoadBalancerIngress",
        &[
            s(1, "ip"),
            s(2, "hostname"),
            rm(4, "ports", "networking.v1.IngressPortStatus"),
        ],
    ),
    msg(
        "networking.v1.IngressLoadBalancerStatus",
        &[rm(1, "ingress", "networking.v1.IngressLoadBalancerIngress")],
    ),
    msg(
        "networking.v1.IngressPortStatus",
        &[int32p(1, "port"), s(2, "protocol"), sp(3, "error")],
    ),
    msg(
        "networking.v1.IngressRule",
        &[
            s(1, "host"),
            inl(2, "ingressRuleValue", "networking.v1.IngressRuleValue"),
        ],
    ),
    msg(
        "networking.v1.IngressRuleValue",
        &[m(1, "http", "networking.v1.HTTPIngressRuleValue")],
    ),
    msg(
        "networking.v1.IngressServiceBackend",
        &[
            s(1, "name"),
            m(2, "port", "networking.v1.ServiceBackendPort"),
        ],
    ),
    msg(
        "networking.v1.IngressSpec",
        &[
            sp(4, "ingressClassName"),
            m(1, "defaultBackend", "networking.v1.IngressBackend"),
            rm(2, "tls", "networking.v1.IngressTLS"),
            rm(3, "rules", "networking.v1.IngressRule"),
        ],
    ),
    msg(
        "networking.v1.IngressStatus",
        &[m(
            1,
            "loadBalancer",
            "networking.v1.IngressLoadBalancerStatus",
        )],
    ),
    msg(
        "networking.v1.IngressTLS",
        &[rs(1, "hosts"), s(2, "secretName")],
    ),
    top_level(
        "networking.v1.NetworkPolicy",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "networking.v1.NetworkPolicySpec"),
        ],
    ),
    msg(
        "networking.v1.NetworkPolicyEgressRule",
        &[
            rm(1, "ports", "networking.v1.NetworkPolicyPort"),
            rm(2, "to", "networking.v1.NetworkPolicyPeer"),
        ],
    ),
    msg(
        "networking.v1.NetworkPolicyIngressRule",
        &[
            rm(1, "ports", "networking.v1.NetworkPolicyPort"),
            rm(2, "from", "networking.v1.NetworkPolicyPeer"),
        ],
    ),
    msg(
        "networking.v1.NetworkPolicyPeer",
        &[
            m(1, "podSelector", "meta.v1.LabelSelector"),
            m(2, "namespaceSelector", "meta.v1.LabelSelector"),
            m(3, "ipBlock", "networking.v1.IPBlock"),
        ],
    ),
    msg(
        "networking.v1.NetworkPolicyPort",
        &[sp(1, "protocol"), ios(2, "port"), int32p(3, "endPort")],
    ),
    msg(
        "networking.v1.NetworkPolicySpec",
        &[
            m(1, "podSelector", "meta.v1.LabelSelector"),
            rm(2, "ingress", "networking.v1.NetworkPolicyIngressRule"),
            rm(3, "egress", "networking.v1.NetworkPolicyEgressRule"),
            rs(4, "policyTypes"),
        ],
    ),
    msg(
        "networking.v1.ServiceBackendPort",
        &[s(1, "name"), int32(2, "number")],
    ),
    // IPAddress and ServiceCIDR (Kubernetes 1.36's networking/v1
    // generated.proto).
    top_level(
        "networking.v1.IPAddress",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "networking.v1.IPAddressSpec"),
        ],
    ),
    msg(
        "networking.v1.IPAddressSpec",
        &[m(1, "parentRef", "networking.v1.ParentReference")],
    ),
    msg(
        "networking.v1.ParentReference",
        &[
            s(1, "group"),
            s(2, "resource"),
            s(3, "namespace"),
            s(4, "name"),
        ],
    ),
    top_level(
        "networking.v1.ServiceCIDR",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(2, "spec", "networking.v1.ServiceCIDRSpec"),
            m(3, "status", "networking.v1.ServiceCIDRStatus"),
        ],
    ),
    msg("networking.v1.ServiceCIDRSpec", &[rs(1, "cidrs")]),
    msg(
        "networking.v1.ServiceCIDRStatus",
        &[rm(1, "conditions", "meta.v1.Condition")],
    ),
];
