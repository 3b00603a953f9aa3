//! `policy/v1`: PodDisruptionBudgets.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::SpecStrategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::policy::v1;
use serde_json::{json, Value};

use super::columns::int_at;
use super::kind;

/// policy/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![kind::<v1::PodDisruptionBudget>()
        .short_names(&["pdb"])
        .with_status()
        .columns(vec![
            Column::func("Min Available", "string", |o| {
                json!(int_or_string(lookup(o, "spec.minAvailable")))
            }),
            Column::func("Max Unavailable", "string", |o| {
                json!(int_or_string(lookup(o, "spec.maxUnavailable")))
            }),
            Column::func("Allowed Disruptions", "integer", |o| {
                json!(int_at(o, "status.disruptionsAllowed"))
            }),
            Column::age(),
        ])
        .strategy(SpecStrategy)]
}

fn int_or_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "N/A".into(),
    }
}
