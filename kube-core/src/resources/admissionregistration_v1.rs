//! `admissionregistration.k8s.io/v1`: webhook configurations and
//! ValidatingAdmissionPolicies with their bindings (declared and stored;
//! this server does not call webhooks or evaluate policies yet).

use serde_json::json;
use shared::registry::resource::ResourceDef;
use shared::registry::strategy::SpecStrategy;
use shared::registry::table::{lookup, Column};

use super::columns::{array_at, str_or};

const G: &str = "admissionregistration.k8s.io";

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
        ResourceDef::new(
            G,
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        )
        .cluster_scoped()
        .categories(&["api-extensions"])
        .columns(webhooks())
        .strategy(SpecStrategy),
        ResourceDef::new(
            G,
            "v1",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
        )
        .cluster_scoped()
        .categories(&["api-extensions"])
        .with_status()
        .columns(vec![
            Column::func("Validations", "integer", |o| {
                json!(array_at(o, "spec.validations").len())
            }),
            Column::func("ParamKind", "string", |o| {
                json!(
                    match lookup(o, "spec.paramKind").filter(|p| p.is_object()) {
                        Some(p) =>
                            format!("{}/{}", str_or(p, "apiVersion", ""), str_or(p, "kind", "")),
                        None => "<unset>".into(),
                    }
                )
            }),
            Column::age(),
        ])
        .strategy(SpecStrategy),
        ResourceDef::new(
            G,
            "v1",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
        )
        .cluster_scoped()
        .categories(&["api-extensions"])
        .columns(vec![
            Column::path("PolicyName", "spec.policyName"),
            Column::func("ParamRef", "string", |o| {
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
            }),
            Column::age(),
        ])
        .strategy(SpecStrategy),
        ResourceDef::new(
            G,
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        )
        .cluster_scoped()
        .categories(&["api-extensions"])
        .columns(webhooks())
        .strategy(SpecStrategy),
    ]
}
