//! admissionregistration.k8s.io/v1 messages: MutatingWebhookConfiguration,
//! ValidatingWebhookConfiguration, ValidatingAdmissionPolicy(Binding) and
//! MutatingAdmissionPolicy(Binding).
//!
//! Written from upstream's `admissionregistration/v1/generated.proto` and
//! `types.go` (Kubernetes 1.36, which already has the mutating admission
//! policies in v1). Most webhook fields are Go pointers (`failurePolicy`,
//! `matchPolicy`, `sideEffects`, `timeoutSeconds`, a rule's `scope`, ...)
//! and keep their zero values, as do the strings without `omitempty` (a
//! webhook's `name`, a match condition's or variable's `name` and
//! `expression`, a validation's `expression`). `RuleWithOperations` embeds
//! `Rule`, and `NamedRuleWithOperations` embeds `RuleWithOperations`,
//! inline in JSON.

use super::*;

/// admissionregistration.k8s.io/v1 messages.
pub(super) const MESSAGES: &[Message] = &[
    msg(
        "admissionregistration.v1.ApplyConfiguration",
        &[s(1, "expression")],
    ),
    msg(
        "admissionregistration.v1.AuditAnnotation",
        &[sp(1, "key"), sp(2, "valueExpression")],
    ),
    msg(
        "admissionregistration.v1.ExpressionWarning",
        &[sp(2, "fieldRef"), sp(3, "warning")],
    ),
    msg("admissionregistration.v1.JSONPatch", &[s(1, "expression")]),
    msg(
        "admissionregistration.v1.MatchCondition",
        &[sp(1, "name"), sp(2, "expression")],
    ),
    msg(
        "admissionregistration.v1.MatchResources",
        &[
            m(1, "namespaceSelector", "meta.v1.LabelSelector"),
            m(2, "objectSelector", "meta.v1.LabelSelector"),
            rm(
                3,
                "resourceRules",
                "admissionregistration.v1.NamedRuleWithOperations",
            ),
            rm(
                4,
                "excludeResourceRules",
                "admissionregistration.v1.NamedRuleWithOperations",
            ),
            sp(7, "matchPolicy"),
        ],
    ),
    top_level(
        "admissionregistration.v1.MutatingAdmissionPolicy",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(
                2,
                "spec",
                "admissionregistration.v1.MutatingAdmissionPolicySpec",
            ),
        ],
    ),
    top_level(
        "admissionregistration.v1.MutatingAdmissionPolicyBinding",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(
                2,
                "spec",
                "admissionregistration.v1.MutatingAdmissionPolicyBindingSpec",
            ),
        ],
    ),
    msg(
        "admissionregistration.v1.MutatingAdmissionPolicyBindingSpec",
        &[
            s(1, "policyName"),
            m(2, "paramRef", "admissionregistration.v1.ParamRef"),
            m(
                3,
                "matchResources",
                "admissionregistration.v1.MatchResources",
            ),
        ],
    ),
    msg(
        "admissionregistration.v1.MutatingAdmissionPolicySpec",
        &[
            m(1, "paramKind", "admissionregistration.v1.ParamKind"),
            m(
                2,
                "matchConstraints",
                "admissionregistration.v1.MatchResources",
            ),
            rm(3, "variables", "admissionregistration.v1.Variable"),
            rm(4, "mutations", "admissionregistration.v1.Mutation"),
            sp(5, "failurePolicy"),
            rm(
                6,
                "matchConditions",
                "admissionregistration.v1.MatchCondition",
            ),
            s(7, "reinvocationPolicy"),
        ],
    ),
    msg(
        "admissionregistration.v1.MutatingWebhook",
        &[
            sp(1, "name"),
            m(
                2,
                "clientConfig",
                "admissionregistration.v1.WebhookClientConfig",
            ),
            rm(3, "rules", "admissionregistration.v1.RuleWithOperations"),
            sp(4, "failurePolicy"),
            sp(9, "matchPolicy"),
            m(5, "namespaceSelector", "meta.v1.LabelSelector"),
            m(11, "objectSelector", "meta.v1.LabelSelector"),
            sp(6, "sideEffects"),
            int32p(7, "timeoutSeconds"),
            rs(8, "admissionReviewVersions"),
            sp(10, "reinvocationPolicy"),
            rm(
                12,
                "matchConditions",
                "admissionregistration.v1.MatchCondition",
            ),
        ],
    ),
    top_level(
        "admissionregistration.v1.MutatingWebhookConfiguration",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "webhooks", "admissionregistration.v1.MutatingWebhook"),
        ],
    ),
    msg(
        "admissionregistration.v1.Mutation",
        &[
            sp(2, "patchType"),
            m(
                3,
                "applyConfiguration",
                "admissionregistration.v1.ApplyConfiguration",
            ),
            m(4, "jsonPatch", "admissionregistration.v1.JSONPatch"),
        ],
    ),
    msg(
        "admissionregistration.v1.NamedRuleWithOperations",
        &[
            rs(1, "resourceNames"),
            inl(
                2,
                "ruleWithOperations",
                "admissionregistration.v1.RuleWithOperations",
            ),
        ],
    ),
    msg(
        "admissionregistration.v1.ParamKind",
        &[s(1, "apiVersion"), s(2, "kind")],
    ),
    msg(
        "admissionregistration.v1.ParamRef",
        &[
            s(1, "name"),
            s(2, "namespace"),
            m(3, "selector", "meta.v1.LabelSelector"),
            sp(4, "parameterNotFoundAction"),
        ],
    ),
    msg(
        "admissionregistration.v1.Rule",
        &[
            rs(1, "apiGroups"),
            rs(2, "apiVersions"),
            rs(3, "resources"),
            sp(4, "scope"),
        ],
    ),
    msg(
        "admissionregistration.v1.RuleWithOperations",
        &[
            rs(1, "operations"),
            inl(2, "rule", "admissionregistration.v1.Rule"),
        ],
    ),
    msg(
        "admissionregistration.v1.ServiceReference",
        &[
            sp(1, "namespace"),
            sp(2, "name"),
            sp(3, "path"),
            int32p(4, "port"),
        ],
    ),
    msg(
        "admissionregistration.v1.TypeChecking",
        &[rm(
            1,
            "expressionWarnings",
            "admissionregistration.v1.ExpressionWarning",
        )],
    ),
    top_level(
        "admissionregistration.v1.ValidatingAdmissionPolicy",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(
                2,
                "spec",
                "admissionregistration.v1.ValidatingAdmissionPolicySpec",
            ),
            m(
                3,
                "status",
                "admissionregistration.v1.ValidatingAdmissionPolicyStatus",
            ),
        ],
    ),
    top_level(
        "admissionregistration.v1.ValidatingAdmissionPolicyBinding",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            m(
                2,
                "spec",
                "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec",
            ),
        ],
    ),
    msg(
        "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec",
        &[
            s(1, "policyName"),
            m(2, "paramRef", "admissionregistration.v1.ParamRef"),
            m(
                3,
                "matchResources",
                "admissionregistration.v1.MatchResources",
            ),
            rs(4, "validationActions"),
        ],
    ),
    msg(
        "admissionregistration.v1.ValidatingAdmissionPolicySpec",
        &[
            m(1, "paramKind", "admissionregistration.v1.ParamKind"),
            m(
                2,
                "matchConstraints",
                "admissionregistration.v1.MatchResources",
            ),
            rm(3, "validations", "admissionregistration.v1.Validation"),
            sp(4, "failurePolicy"),
            rm(
                5,
                "auditAnnotations",
                "admissionregistration.v1.AuditAnnotation",
            ),
            rm(
                6,
                "matchConditions",
                "admissionregistration.v1.MatchCondition",
            ),
            rm(7, "variables", "admissionregistration.v1.Variable"),
        ],
    ),
    msg(
        "admissionregistration.v1.ValidatingAdmissionPolicyStatus",
        &[
            int64(1, "observedGeneration"),
            m(2, "typeChecking", "admissionregistration.v1.TypeChecking"),
            rm(3, "conditions", "meta.v1.Condition"),
        ],
    ),
    msg(
        "admissionregistration.v1.ValidatingWebhook",
        &[
            sp(1, "name"),
            m(
                2,
                "clientConfig",
                "admissionregistration.v1.WebhookClientConfig",
            ),
            rm(3, "rules", "admissionregistration.v1.RuleWithOperations"),
            sp(4, "failurePolicy"),
            sp(9, "matchPolicy"),
            m(5, "namespaceSelector", "meta.v1.LabelSelector"),
            m(10, "objectSelector", "meta.v1.LabelSelector"),
            sp(6, "sideEffects"),
            int32p(7, "timeoutSeconds"),
            rs(8, "admissionReviewVersions"),
            rm(
                11,
                "matchConditions",
                "admissionregistration.v1.MatchCondition",
            ),
        ],
    ),
    top_level(
        "admissionregistration.v1.ValidatingWebhookConfiguration",
        &[
            m(1, "metadata", "meta.v1.ObjectMeta"),
            rm(2, "webhooks", "admissionregistration.v1.ValidatingWebhook"),
        ],
    ),
    msg(
        "admissionregistration.v1.Validation",
        &[
            sp(1, "expression"),
            s(2, "message"),
            sp(3, "reason"),
            s(4, "messageExpression"),
        ],
    ),
    msg(
        "admissionregistration.v1.Variable",
        &[sp(1, "name"), sp(2, "expression")],
    ),
    msg(
        "admissionregistration.v1.WebhookClientConfig",
        &[
            sp(3, "url"),
            m(1, "service", "admissionregistration.v1.ServiceReference"),
            by(2, "caBundle"),
        ],
    ),
];
