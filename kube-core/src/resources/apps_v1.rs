//! `apps/v1`: ControllerRevisions, DaemonSets, Deployments, ReplicaSets, StatefulSets.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::apps::v1;
use serde_json::{json, Value};

use super::columns::{format_labels, int_at, int_col, selector_column, str_or, template_columns};
use super::kind;
use super::workloads::WorkloadStrategy;

/// apps/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    let [containers, images] = template_columns();
    vec![
        kind::<v1::ControllerRevision>().columns(vec![
            Column::func("Controller", "string", controller_of),
            int_col("Revision", |o| json!(int_at(o, "revision"))),
            Column::age(),
        ]),
        kind::<v1::DaemonSet>()
            .short_names(&["ds"])
            .categories(&["all"])
            .with_status()
            .columns(vec![
                int_col("Desired", |o| {
                    json!(int_at(o, "status.desiredNumberScheduled"))
                }),
                int_col("Current", |o| {
                    json!(int_at(o, "status.currentNumberScheduled"))
                }),
                int_col("Ready", |o| json!(int_at(o, "status.numberReady"))),
                int_col("Up-to-date", |o| {
                    json!(int_at(o, "status.updatedNumberScheduled"))
                }),
                int_col("Available", |o| json!(int_at(o, "status.numberAvailable"))),
                Column::func("Node Selector", "string", |o| {
                    json!(format_labels(lookup(o, "spec.template.spec.nodeSelector")))
                }),
                Column::age(),
                containers.clone(),
                images.clone(),
                selector_column(),
            ])
            .strategy(WorkloadStrategy::DAEMON_SET),
        kind::<v1::Deployment>()
            .short_names(&["deploy"])
            .categories(&["all"])
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::KeepExceptLabels)
            .with_scale()
            .columns(vec![
                Column::func("Ready", "string", |o| {
                    json!(format!(
                        "{}/{}",
                        int_at(o, "status.readyReplicas"),
                        int_at(o, "spec.replicas")
                    ))
                }),
                int_col("Up-to-date", |o| json!(int_at(o, "status.updatedReplicas"))),
                int_col("Available", |o| {
                    json!(int_at(o, "status.availableReplicas"))
                }),
                Column::age(),
                containers.clone(),
                images.clone(),
                selector_column(),
            ])
            .strategy(WorkloadStrategy::DEPLOYMENT),
        kind::<v1::ReplicaSet>()
            .short_names(&["rs"])
            .categories(&["all"])
            .with_status()
            .selectable_fields(&["status.replicas"])
            .with_scale()
            .columns(vec![
                int_col("Desired", |o| json!(int_at(o, "spec.replicas"))),
                int_col("Current", |o| json!(int_at(o, "status.replicas"))),
                int_col("Ready", |o| json!(int_at(o, "status.readyReplicas"))),
                Column::age(),
                containers.clone(),
                images.clone(),
                selector_column(),
            ])
            .strategy(WorkloadStrategy::REPLICA_SET),
        kind::<v1::StatefulSet>()
            .short_names(&["sts"])
            .categories(&["all"])
            .with_status()
            .with_scale()
            .columns(vec![
                Column::func("Ready", "string", |o| {
                    json!(format!(
                        "{}/{}",
                        int_at(o, "status.readyReplicas"),
                        int_at(o, "spec.replicas")
                    ))
                }),
                Column::age(),
                containers,
                images,
            ])
            .strategy(WorkloadStrategy::STATEFUL_SET),
    ]
}

/// `<kind>.<group>/<name>` of the controlling owner, as upstream prints it.
fn controller_of(o: &Value) -> Value {
    let owner = lookup(o, "metadata.ownerReferences")
        .and_then(Value::as_array)
        .and_then(|refs| {
            refs.iter()
                .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        });
    let Some(owner) = owner else {
        return json!("<none>");
    };
    let api_version = str_or(owner, "apiVersion", "");
    let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
    let kind = str_or(owner, "kind", "").to_lowercase();
    let name = str_or(owner, "name", "");
    json!(if group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{group}/{name}")
    })
}
