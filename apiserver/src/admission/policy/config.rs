//! ValidatingAdmissionPolicies and their bindings read into the form the
//! plugin evaluates: rules, selectors, compiled expressions, params and
//! actions.

use serde_json::Value;

use super::super::webhook::config::Rule;
use crate::apimachinery::labels::LabelSelector;
use crate::apimachinery::meta::{str_field, string_list};
use crate::cel::expression::Expression;

/// A rule with its `resourceNames`.
#[derive(Debug)]
pub(super) struct ResourceRule {
    pub(super) rule: Rule,
    pub(super) names: Vec<String>,
}

/// `matchConstraints` of a policy, or `matchResources` of a binding.
#[derive(Debug, Default)]
pub(super) struct MatchResources {
    pub(super) rules: Vec<ResourceRule>,
    pub(super) excludes: Vec<ResourceRule>,
    pub(super) namespace_selector: Option<Result<LabelSelector, String>>,
    pub(super) object_selector: Option<Result<LabelSelector, String>>,
}

#[derive(Debug)]
pub(super) struct Validation {
    pub(super) expression: Expression,
    pub(super) message: String,
    pub(super) message_expression: Option<Expression>,
    pub(super) reason: String,
}

#[derive(Debug)]
pub(super) struct Policy {
    pub(super) name: String,
    pub(super) param_kind: Option<(String, String)>,
    pub(super) constraints: MatchResources,
    pub(super) match_conditions: Vec<(String, Expression)>,
    pub(super) variables: Vec<(String, Expression)>,
    pub(super) validations: Vec<Validation>,
    pub(super) fail_open: bool,
    pub(super) uses_namespace: bool,
}

#[derive(Debug)]
pub(super) struct ParamRef {
    pub(super) name: String,
    pub(super) namespace: String,
    pub(super) selector: Option<Value>,
    pub(super) deny_if_missing: bool,
}

#[derive(Debug)]
pub(super) struct Binding {
    pub(super) name: String,
    pub(super) policy: String,
    pub(super) param_ref: Option<ParamRef>,
    pub(super) resources: Option<MatchResources>,
    pub(super) deny: bool,
    pub(super) warn: bool,
}

fn resource_rules(v: Option<&Value>) -> Vec<ResourceRule> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| ResourceRule {
            rule: Rule {
                operations: string_list(r.get("operations")),
                api_groups: string_list(r.get("apiGroups")),
                api_versions: string_list(r.get("apiVersions")),
                resources: string_list(r.get("resources")),
                scope: match str_field(r, "scope") {
                    "" => "*".into(),
                    s => s.into(),
                },
            },
            names: string_list(r.get("resourceNames")),
        })
        .collect()
}

fn match_resources(v: &Value) -> MatchResources {
    let sel = |k: &str| {
        v.get(k)
            .filter(|s| !s.is_null())
            .map(LabelSelector::from_json)
    };
    MatchResources {
        rules: resource_rules(v.get("resourceRules")),
        excludes: resource_rules(v.get("excludeResourceRules")),
        namespace_selector: sel("namespaceSelector"),
        object_selector: sel("objectSelector"),
    }
}

fn named_expressions(v: Option<&Value>, key: &str) -> Vec<(String, Expression)> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            (
                str_field(c, "name").to_string(),
                Expression::compile(str_field(c, key)),
            )
        })
        .collect()
}

pub(super) fn policy_of(obj: &Value) -> Policy {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let validations: Vec<Validation> = spec
        .get("validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| Validation {
            expression: Expression::compile(str_field(v, "expression")),
            message: str_field(v, "message").trim().to_string(),
            message_expression: v
                .get("messageExpression")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(Expression::compile),
            reason: str_field(v, "reason").to_string(),
        })
        .collect();
    let variables = named_expressions(spec.get("variables"), "expression");
    let match_conditions = named_expressions(spec.get("matchConditions"), "expression");
    let uses_namespace = validations
        .iter()
        .map(|v| &v.expression.source)
        .chain(variables.iter().map(|(_, e)| &e.source))
        .chain(
            validations
                .iter()
                .filter_map(|v| v.message_expression.as_ref().map(|e| &e.source)),
        )
        .any(|s| s.contains("namespaceObject"));
    Policy {
        name: crate::apimachinery::meta::name(obj).to_string(),
        param_kind: spec.get("paramKind").filter(|p| p.is_object()).map(|p| {
            (
                str_field(p, "apiVersion").to_string(),
                str_field(p, "kind").to_string(),
            )
        }),
        constraints: spec
            .get("matchConstraints")
            .map(match_resources)
            .unwrap_or_default(),
        match_conditions,
        variables,
        validations,
        fail_open: str_field(&spec, "failurePolicy") == "Ignore",
        uses_namespace,
    }
}

pub(super) fn binding_of(obj: &Value) -> Binding {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let actions = string_list(spec.get("validationActions"));
    Binding {
        name: crate::apimachinery::meta::name(obj).to_string(),
        policy: str_field(&spec, "policyName").to_string(),
        param_ref: spec
            .get("paramRef")
            .filter(|p| p.is_object())
            .map(|p| ParamRef {
                name: str_field(p, "name").to_string(),
                namespace: str_field(p, "namespace").to_string(),
                selector: p.get("selector").filter(|s| s.is_object()).cloned(),
                deny_if_missing: str_field(p, "parameterNotFoundAction") != "Allow",
            }),
        resources: spec
            .get("matchResources")
            .filter(|m| m.is_object())
            .map(match_resources),
        deny: actions.iter().any(|a| a == "Deny"),
        warn: actions.iter().any(|a| a == "Warn"),
    }
}
