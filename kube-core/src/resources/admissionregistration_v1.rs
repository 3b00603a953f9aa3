//! `admissionregistration.k8s.io/v1`: webhook configurations and
//! Validating/MutatingAdmissionPolicies with their bindings (webhooks are
//! called by the library's webhook plugins; policies are stored, not yet
//! evaluated).

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::SpecStrategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::admissionregistration::v1;
use serde_json::{json, Value};

use super::columns::{array_at, str_or};
use super::kind;
use super::webhook_configuration::WebhookConfigurationStrategy;

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
        kind::<v1::ValidatingAdmissionPolicy>()
            .categories(&["api-extensions"])
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
            .columns(vec![
                Column::func("Validations", "integer", |o| {
                    json!(array_at(o, "spec.validations").len())
                }),
                Column::func("ParamKind", "string", param_kind),
                Column::age(),
            ])
            .strategy(SpecStrategy),
        kind::<v1::ValidatingAdmissionPolicyBinding>()
            .categories(&["api-extensions"])
            .columns(vec![
                Column::path("PolicyName", "spec.policyName"),
                Column::func("ParamRef", "string", param_ref),
                Column::age(),
            ])
            .strategy(SpecStrategy),
        kind::<v1::MutatingAdmissionPolicy>()
            .categories(&["api-extensions"])
            .columns(vec![
                Column::func("Mutations", "integer", |o| {
                    json!(array_at(o, "spec.mutations").len())
                }),
                Column::func("ParamKind", "string", param_kind),
                Column::age(),
            ])
            .strategy(SpecStrategy),
        kind::<v1::MutatingAdmissionPolicyBinding>()
            .categories(&["api-extensions"])
            .columns(vec![
                Column::path("PolicyName", "spec.policyName"),
                Column::func("ParamRef", "string", param_ref),
                Column::age(),
            ])
            .strategy(SpecStrategy),
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
