//! `flowcontrol.apiserver.k8s.io/v1`: FlowSchemas and
//! PriorityLevelConfigurations (API Priority and Fairness objects).

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::strategy::SpecStrategy;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::flowcontrol::v1;
use serde_json::{json, Value};

use super::columns::{int_at, str_or};
use super::kind;

/// flowcontrol.apiserver.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        kind::<v1::FlowSchema>()
            .with_status()
            .columns(vec![
                Column::path("PriorityLevel", "spec.priorityLevelConfiguration.name"),
                Column::func("MatchingPrecedence", "string", |o| {
                    json!(int_at(o, "spec.matchingPrecedence"))
                }),
                Column::func("DistinguisherMethod", "string", |o| {
                    json!(str_or(o, "spec.distinguisherMethod.type", "*"))
                }),
                Column::age(),
                Column::func("MissingPL", "string", |o| {
                    json!(lookup(o, "status.conditions")
                        .and_then(Value::as_array)
                        .and_then(|c| c.iter().find(|c| {
                            c.get("type").and_then(Value::as_str) == Some("Dangling")
                        }))
                        .map(|c| str_or(c, "status", "?"))
                        .unwrap_or_else(|| "?".into()))
                }),
            ])
            .strategy(SpecStrategy),
        kind::<v1::PriorityLevelConfiguration>()
            .with_status()
            .columns(vec![
                Column::path("Type", "spec.type"),
                Column::func("NominalConcurrencyShares", "string", |o| {
                    limited(o, "spec.limited.nominalConcurrencyShares")
                }),
                Column::func("Queues", "string", |o| {
                    limited(o, "spec.limited.limitResponse.queuing.queues")
                }),
                Column::func("HandSize", "string", |o| {
                    limited(o, "spec.limited.limitResponse.queuing.handSize")
                }),
                Column::func("QueueLengthLimit", "string", |o| {
                    limited(o, "spec.limited.limitResponse.queuing.queueLengthLimit")
                }),
                Column::age(),
            ])
            .strategy(SpecStrategy),
    ]
}

fn limited(o: &Value, path: &str) -> Value {
    match lookup(o, path).and_then(Value::as_i64) {
        Some(n) => json!(n.to_string()),
        None => json!("<none>"),
    }
}
