//! admissionregistration.k8s.io/v1: webhook configurations and admission
//! policies through our encoder and decoder, from objects built with the
//! k8s-pb types, and from hand-made bytes.

use super::encode_tests::{decode, encode};
use super::prost_tests::{from_prost, some, through_prost};
use super::tests::{envelope, object_meta, Enc};
use super::*;
use k8s_pb::api::admissionregistration::{v1 as pb, v1beta1 as pb_beta};
use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb_meta;
use serde_json::json;

const V1: &str = "admissionregistration.k8s.io/v1";

fn meta_json(name: &str) -> Value {
    json!({"name": name, "uid": "u-1", "resourceVersion": "7", "generation": 3,
        "creationTimestamp": "2026-01-02T03:04:05Z"})
}

fn meta(name: &str) -> Option<pb_meta::ObjectMeta> {
    Some(pb_meta::ObjectMeta {
        name: some(name),
        uid: some("u-1"),
        resource_version: some("7"),
        generation: Some(3),
        creation_timestamp: Some(pb_meta::Time {
            seconds: Some(1_767_323_045),
            nanos: Some(0),
        }),
        ..Default::default()
    })
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn selector_json() -> Value {
    json!({"matchLabels": {"sidecar-injection": "enabled"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["system"]}]})
}

fn selector() -> Option<pb_meta::LabelSelector> {
    Some(pb_meta::LabelSelector {
        match_labels: [("sidecar-injection".to_owned(), "enabled".to_owned())].into(),
        match_expressions: vec![pb_meta::LabelSelectorRequirement {
            key: some("tier"),
            operator: some("NotIn"),
            values: strings(&["system"]),
        }],
    })
}

fn rules_json() -> Value {
    json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
        "resources": ["pods", "pods/ephemeralcontainers"], "scope": "Namespaced"}])
}

fn rules() -> Vec<pb::RuleWithOperations> {
    vec![pb::RuleWithOperations {
        operations: strings(&["CREATE", "UPDATE"]),
        rule: Some(pb::Rule {
            api_groups: strings(&[""]),
            api_versions: strings(&["v1"]),
            resources: strings(&["pods", "pods/ephemeralcontainers"]),
            scope: some("Namespaced"),
        }),
    }]
}

fn match_condition() -> pb::MatchCondition {
    pb::MatchCondition {
        name: some("not-kube-system"),
        expression: some("request.namespace != 'kube-system'"),
    }
}

fn mutating_webhooks_json() -> Value {
    json!({"kind": "MutatingWebhookConfiguration", "apiVersion": V1, "metadata": meta_json("sidecar-injector"),
        "webhooks": [{"name": "inject.sidecar.example.com",
            "clientConfig": {"service": {"namespace": "mesh", "name": "injector", "path": "/inject", "port": 443},
                "caBundle": "Y2EtYnVuZGxl"},
            "rules": rules_json(), "failurePolicy": "Fail", "matchPolicy": "Equivalent",
            "namespaceSelector": selector_json(), "objectSelector": {"matchLabels": {"app": "web"}},
            "sideEffects": "None", "timeoutSeconds": 0, "admissionReviewVersions": ["v1", "v1beta1"],
            "reinvocationPolicy": "IfNeeded",
            "matchConditions": [{"name": "not-kube-system", "expression": "request.namespace != 'kube-system'"}]}]})
}

fn validating_webhooks_json() -> Value {
    json!({"kind": "ValidatingWebhookConfiguration", "apiVersion": V1, "metadata": meta_json("policy"),
        "webhooks": [{"name": "validate.policy.example.com",
            "clientConfig": {"url": "https://policy.example.com:8443/validate"},
            "rules": rules_json(), "failurePolicy": "Ignore", "matchPolicy": "Exact",
            "namespaceSelector": selector_json(), "objectSelector": {"matchLabels": {"app": "web"}},
            "sideEffects": "NoneOnDryRun", "timeoutSeconds": 5, "admissionReviewVersions": ["v1"],
            "matchConditions": [{"name": "not-kube-system", "expression": "request.namespace != 'kube-system'"}]}]})
}

fn match_resources_json() -> Value {
    json!({"namespaceSelector": selector_json(), "objectSelector": {},
        "resourceRules": [{"resourceNames": ["web"], "operations": ["CREATE"], "apiGroups": ["apps"],
            "apiVersions": ["v1"], "resources": ["deployments"], "scope": "*"}],
        "excludeResourceRules": [{"operations": ["DELETE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
            "resources": ["deployments"]}],
        "matchPolicy": "Equivalent"})
}

fn match_resources() -> Option<pb::MatchResources> {
    let named =
        |names: &[&str], operation: &str, scope: Option<String>| pb::NamedRuleWithOperations {
            resource_names: strings(names),
            rule_with_operations: Some(pb::RuleWithOperations {
                operations: strings(&[operation]),
                rule: Some(pb::Rule {
                    api_groups: strings(&["apps"]),
                    api_versions: strings(&["v1"]),
                    resources: strings(&["deployments"]),
                    scope,
                }),
            }),
        };
    Some(pb::MatchResources {
        namespace_selector: selector(),
        object_selector: Some(pb_meta::LabelSelector::default()),
        resource_rules: vec![named(&["web"], "CREATE", some("*"))],
        exclude_resource_rules: vec![named(&[], "DELETE", None)],
        match_policy: some("Equivalent"),
    })
}

fn validating_policy_json() -> Value {
    json!({"kind": "ValidatingAdmissionPolicy", "apiVersion": V1, "metadata": meta_json("replicas"),
        "spec": {"paramKind": {"apiVersion": "example.com/v1", "kind": "ReplicaLimit"},
            "matchConstraints": match_resources_json(),
            "validations": [{"expression": "object.spec.replicas <= params.maxReplicas",
                "message": "too many replicas", "reason": "Invalid",
                "messageExpression": "'at most ' + string(params.maxReplicas)"}],
            "failurePolicy": "Fail",
            "auditAnnotations": [{"key": "replicas", "valueExpression": "string(object.spec.replicas)"}],
            "matchConditions": [{"name": "not-kube-system", "expression": "request.namespace != 'kube-system'"}],
            "variables": [{"name": "replicas", "expression": "object.spec.replicas"}]},
        "status": {"observedGeneration": 3,
            "typeChecking": {"expressionWarnings": [{"fieldRef": "spec.validations[0].expression",
                "warning": "no such key: maxReplicas"}]},
            "conditions": [{"type": "TypeChecked", "status": "True", "observedGeneration": 3,
                "lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "Checked", "message": "ok"}]}})
}

fn policy_binding_json(kind: &str, actions: bool) -> Value {
    let mut binding = json!({"kind": kind, "apiVersion": V1, "metadata": meta_json("replicas-binding"),
        "spec": {"policyName": "replicas",
            "paramRef": {"name": "limits", "namespace": "default", "selector": {"matchLabels": {"a": "b"}},
                "parameterNotFoundAction": "Deny"},
            "matchResources": match_resources_json()}});
    if actions {
        binding["spec"]["validationActions"] = json!(["Deny", "Audit"]);
    }
    binding
}

fn param_ref() -> Option<pb::ParamRef> {
    Some(pb::ParamRef {
        name: some("limits"),
        namespace: some("default"),
        selector: Some(pb_meta::LabelSelector {
            match_labels: [("a".to_owned(), "b".to_owned())].into(),
            ..Default::default()
        }),
        parameter_not_found_action: some("Deny"),
    })
}

fn mutating_policy_json() -> Value {
    json!({"kind": "MutatingAdmissionPolicy", "apiVersion": V1, "metadata": meta_json("sidecar"),
        "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": match_resources_json(),
            "variables": [{"name": "image", "expression": "params.data.image"}],
            "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                    "Object{spec: Object.spec{initContainers: [Object.spec.initContainers{name: 'mesh-proxy'}]}}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                    "[JSONPatch{op: 'add', path: '/metadata/labels/mesh', value: 'on'}]"}}],
            "failurePolicy": "Ignore",
            "matchConditions": [{"name": "not-kube-system", "expression": "request.namespace != 'kube-system'"}],
            "reinvocationPolicy": "IfNeeded"}})
}

#[test]
fn admissionregistration_v1_objects_round_trip() {
    for object in [
        mutating_webhooks_json(),
        validating_webhooks_json(),
        validating_policy_json(),
        policy_binding_json("ValidatingAdmissionPolicyBinding", true),
        mutating_policy_json(),
        policy_binding_json("MutatingAdmissionPolicyBinding", false),
    ] {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let bytes = encode(&object);
        assert_eq!(decode(&bytes).to_string(), object.to_string(), "{kind}");
        assert_eq!(through_prost(&bytes, V1, &kind), object, "{kind}");
        assert!(can_encode(V1, &format!("{kind}List")), "{kind}");
    }
}

#[test]
fn webhook_configurations_from_prost() {
    let client_config = pb::WebhookClientConfig {
        url: None,
        service: Some(pb::ServiceReference {
            namespace: some("mesh"),
            name: some("injector"),
            path: some("/inject"),
            port: Some(443),
        }),
        ca_bundle: Some(b"ca-bundle".to_vec()),
    };
    let object_selector = Some(pb_meta::LabelSelector {
        match_labels: [("app".to_owned(), "web".to_owned())].into(),
        ..Default::default()
    });
    let mutating = pb::MutatingWebhookConfiguration {
        metadata: meta("sidecar-injector"),
        webhooks: vec![pb::MutatingWebhook {
            name: some("inject.sidecar.example.com"),
            client_config: Some(client_config),
            rules: rules(),
            failure_policy: some("Fail"),
            match_policy: some("Equivalent"),
            namespace_selector: selector(),
            object_selector: object_selector.clone(),
            side_effects: some("None"),
            timeout_seconds: Some(0),
            admission_review_versions: strings(&["v1", "v1beta1"]),
            reinvocation_policy: some("IfNeeded"),
            match_conditions: vec![match_condition()],
        }],
    };
    assert_eq!(
        from_prost(V1, "MutatingWebhookConfiguration", &mutating).to_string(),
        mutating_webhooks_json().to_string()
    );

    let validating = pb::ValidatingWebhookConfiguration {
        metadata: meta("policy"),
        webhooks: vec![pb::ValidatingWebhook {
            name: some("validate.policy.example.com"),
            client_config: Some(pb::WebhookClientConfig {
                url: some("https://policy.example.com:8443/validate"),
                ..Default::default()
            }),
            rules: rules(),
            failure_policy: some("Ignore"),
            match_policy: some("Exact"),
            namespace_selector: selector(),
            object_selector,
            side_effects: some("NoneOnDryRun"),
            timeout_seconds: Some(5),
            admission_review_versions: strings(&["v1"]),
            match_conditions: vec![match_condition()],
        }],
    };
    assert_eq!(
        from_prost(V1, "ValidatingWebhookConfiguration", &validating).to_string(),
        validating_webhooks_json().to_string()
    );
}

#[test]
fn admission_policies_from_prost() {
    let policy = pb::ValidatingAdmissionPolicy {
        metadata: meta("replicas"),
        spec: Some(pb::ValidatingAdmissionPolicySpec {
            param_kind: Some(pb::ParamKind {
                api_version: some("example.com/v1"),
                kind: some("ReplicaLimit"),
            }),
            match_constraints: match_resources(),
            validations: vec![pb::Validation {
                expression: some("object.spec.replicas <= params.maxReplicas"),
                message: some("too many replicas"),
                reason: some("Invalid"),
                message_expression: some("'at most ' + string(params.maxReplicas)"),
            }],
            failure_policy: some("Fail"),
            audit_annotations: vec![pb::AuditAnnotation {
                key: some("replicas"),
                value_expression: some("string(object.spec.replicas)"),
            }],
            match_conditions: vec![match_condition()],
            variables: vec![pb::Variable {
                name: some("replicas"),
                expression: some("object.spec.replicas"),
            }],
        }),
        status: Some(pb::ValidatingAdmissionPolicyStatus {
            observed_generation: Some(3),
            type_checking: Some(pb::TypeChecking {
                expression_warnings: vec![pb::ExpressionWarning {
                    field_ref: some("spec.validations[0].expression"),
                    warning: some("no such key: maxReplicas"),
                }],
            }),
            conditions: vec![pb_meta::Condition {
                r#type: some("TypeChecked"),
                status: some("True"),
                observed_generation: Some(3),
                last_transition_time: Some(pb_meta::Time {
                    seconds: Some(1_767_323_045),
                    nanos: Some(0),
                }),
                reason: some("Checked"),
                message: some("ok"),
            }],
        }),
    };
    assert_eq!(
        from_prost(V1, "ValidatingAdmissionPolicy", &policy).to_string(),
        validating_policy_json().to_string()
    );

    let binding = pb::ValidatingAdmissionPolicyBinding {
        metadata: meta("replicas-binding"),
        spec: Some(pb::ValidatingAdmissionPolicyBindingSpec {
            policy_name: some("replicas"),
            param_ref: param_ref(),
            match_resources: match_resources(),
            validation_actions: strings(&["Deny", "Audit"]),
        }),
    };
    assert_eq!(
        from_prost(V1, "ValidatingAdmissionPolicyBinding", &binding).to_string(),
        policy_binding_json("ValidatingAdmissionPolicyBinding", true).to_string()
    );
}

#[test]
fn mutating_admission_policies_from_prost() {
    // v1 in 1.36; k8s-pb 0.9 has them as v1beta1 (same field numbers),
    // sharing v1's message shapes under v1beta1's names.
    let to_beta = |resources: Option<pb::MatchResources>| {
        let bytes = prost::Message::encode_to_vec(&resources.unwrap_or_default());
        prost::Message::decode(bytes.as_slice()).ok()
    };
    let policy = pb_beta::MutatingAdmissionPolicy {
        metadata: meta("sidecar"),
        spec: Some(pb_beta::MutatingAdmissionPolicySpec {
            param_kind: Some(pb_beta::ParamKind {
                api_version: some("v1"),
                kind: some("ConfigMap"),
            }),
            match_constraints: to_beta(match_resources()),
            variables: vec![pb_beta::Variable {
                name: some("image"),
                expression: some("params.data.image"),
            }],
            mutations: vec![
                pb_beta::Mutation {
                    patch_type: some("ApplyConfiguration"),
                    apply_configuration: Some(pb_beta::ApplyConfiguration {
                        expression: some(
                            "Object{spec: Object.spec{initContainers: [Object.spec.initContainers{name: 'mesh-proxy'}]}}",
                        ),
                    }),
                    json_patch: None,
                },
                pb_beta::Mutation {
                    patch_type: some("JSONPatch"),
                    apply_configuration: None,
                    json_patch: Some(pb_beta::JsonPatch {
                        expression: some(
                            "[JSONPatch{op: 'add', path: '/metadata/labels/mesh', value: 'on'}]",
                        ),
                    }),
                },
            ],
            failure_policy: some("Ignore"),
            match_conditions: vec![pb_beta::MatchCondition {
                name: some("not-kube-system"),
                expression: some("request.namespace != 'kube-system'"),
            }],
            reinvocation_policy: some("IfNeeded"),
        }),
    };
    assert_eq!(
        from_prost(V1, "MutatingAdmissionPolicy", &policy).to_string(),
        mutating_policy_json().to_string()
    );

    let binding = pb_beta::MutatingAdmissionPolicyBinding {
        metadata: meta("replicas-binding"),
        spec: Some(pb_beta::MutatingAdmissionPolicyBindingSpec {
            policy_name: some("replicas"),
            param_ref: param_ref().and_then(|p| {
                prost::Message::decode(prost::Message::encode_to_vec(&p).as_slice()).ok()
            }),
            match_resources: to_beta(match_resources()),
        }),
    };
    assert_eq!(
        from_prost(V1, "MutatingAdmissionPolicyBinding", &binding).to_string(),
        policy_binding_json("MutatingAdmissionPolicyBinding", false).to_string()
    );
}

#[test]
fn webhook_as_go_writes_it() {
    // Go writes every value field; the webhook's `name` has no omitempty
    // and keeps "", the rule's embedded Rule (field 2) is inline, and the
    // mutating webhook's objectSelector is field 11 (10 in a validating
    // one).
    let rule = Enc::new().string(1, "CREATE").msg(
        2,
        Enc::new().string(1, "").string(2, "v1").string(3, "pods"),
    );
    let webhook = |selector_tag| {
        Enc::new()
            .string(1, "")
            .msg(2, Enc::new().bytes(2, b""))
            .msg(3, rule.clone())
            .msg(selector_tag, Enc::new().entry(1, "app", "web"))
    };
    let mutating = Enc::new()
        .msg(1, object_meta("w", "", &[]))
        .msg(2, webhook(11));
    let validating = Enc::new()
        .msg(1, object_meta("w", "", &[]))
        .msg(2, webhook(10));
    let want = |kind: &str| {
        json!({"kind": kind, "apiVersion": V1,
            "metadata": {"name": "w", "creationTimestamp": null},
            "webhooks": [{"name": "", "clientConfig": {},
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["pods"]}],
                "objectSelector": {"matchLabels": {"app": "web"}}}]})
    };
    for (kind, body) in [
        ("MutatingWebhookConfiguration", mutating),
        ("ValidatingWebhookConfiguration", validating),
    ] {
        assert_eq!(
            decode_object(&envelope(V1, kind, &body)).ok(),
            Some(want(kind)),
            "{kind}"
        );
    }
}
