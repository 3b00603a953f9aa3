//! `admissionregistration.k8s.io/v1`: webhook configurations and
//! Validating/MutatingAdmissionPolicies with their bindings (webhooks are
//! called by the library's webhook plugins, ValidatingAdmissionPolicies
//! evaluated by its policy plugin; MutatingAdmissionPolicies are stored,
//! not yet applied).

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::SpecStrategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::admissionregistration::v1;
use serde_json::{json, Value};

use super::columns::{array_at, str_or};
use super::kind;
use super::webhook_configuration::WebhookConfigurationStrategy;

/// A Validating or MutatingAdmissionPolicy: its Table shows the count of
/// its expressions (column `column`) and its ParamKind.
fn policy<T>(column: &'static str, count: fn(&Value) -> Value) -> ResourceDef
where
    T: k8s_openapi::Resource + schemars::JsonSchema,
    T::Scope: 'static,
{
    kind::<T>()
        .categories(&["api-extensions"])
        .columns(vec![
            Column::func(column, "integer", count),
            Column::func("ParamKind", "string", param_kind),
            Column::age(),
        ])
        .strategy(SpecStrategy)
}

/// A policy's binding: its Table names the policy and the ParamRef.
fn binding<T>() -> ResourceDef
where
    T: k8s_openapi::Resource + schemars::JsonSchema,
    T::Scope: 'static,
{
    kind::<T>()
        .categories(&["api-extensions"])
        .columns(vec![
            Column::path("PolicyName", "spec.policyName"),
            Column::func("ParamRef", "string", param_ref),
            Column::age(),
        ])
        .strategy(SpecStrategy)
}

/// admissionregistration.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    let webhooks = || {
        vec![
            Column::func("Webhooks", "integer", |o| {
                json!(array_at(o, "webhooks").len())
            }),
            Column::age(),
        ]
    };
    vec![
        kind::<v1::MutatingWebhookConfiguration>()
            .categories(&["api-extensions"])
            .columns(webhooks())
            .strategy(WebhookConfigurationStrategy { mutating: true }),
        policy::<v1::ValidatingAdmissionPolicy>("Validations", |o| {
            json!(array_at(o, "spec.validations").len())
        })
        .with_status()
        .status_metadata(apiserver::registry::resource::StatusMetadata::Reset),
        binding::<v1::ValidatingAdmissionPolicyBinding>(),
        policy::<v1::MutatingAdmissionPolicy>("Mutations", |o| {
            json!(array_at(o, "spec.mutations").len())
        }),
        binding::<v1::MutatingAdmissionPolicyBinding>(),
        kind::<v1::ValidatingWebhookConfiguration>()
            .categories(&["api-extensions"])
            .columns(webhooks())
            .strategy(WebhookConfigurationStrategy { mutating: false }),
    ]
}

/// A policy's `ParamKind` column: `<apiVersion>/<kind>` or `<unset>`.
fn param_kind(o: &Value) -> Value {
    json!(
        match lookup(o, "spec.paramKind").filter(|p| p.is_object()) {
            Some(p) => format!("{}/{}", str_or(p, "apiVersion", ""), str_or(p, "kind", "")),
            None => "<unset>".into(),
        }
    )
}

/// A binding's `ParamRef` column: `[<namespace>/]<name or *>` or `<unset>`.
fn param_ref(o: &Value) -> Value {
    json!(match lookup(o, "spec.paramRef").filter(|p| p.is_object()) {
        Some(p) => {
            let ns = str_or(p, "namespace", "");
            let n = str_or(p, "name", "*");
            if ns.is_empty() {
                n
            } else {
                format!("{ns}/{n}")
            }
        }
        None => "<unset>".into(),
    })
}
