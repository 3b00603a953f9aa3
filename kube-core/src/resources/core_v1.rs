//! The core group (`/api/v1`).

use apiserver::apimachinery::validation::NameRule;
use apiserver::registry::resource::{ResourceDef, Subresource};
use apiserver::registry::table::{lookup, Column};
use k8s_openapi::api::core::v1;
use serde_json::{json, Value};

use super::columns::{array_at, format_labels, int_at, int_col, names_of, since, str_or};
use super::core_strategies::{ConfigMapStrategy, NamespaceStrategy, PodStrategy, SecretStrategy};
use super::kind;
use super::services::ServiceStrategy;

/// Core v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![
        kind::<v1::ComponentStatus>()
            .short_names(&["cs"])
            .verbs(&["get", "list"])
            .columns(vec![
                Column::func("Status", "string", component_status),
                Column::func("Message", "string", |o| {
                    json!(component_condition(o, "message"))
                }),
                Column::func("Error", "string", |o| {
                    json!(component_condition(o, "error"))
                }),
            ]),
        kind::<v1::ConfigMap>()
            .short_names(&["cm"])
            .columns(vec![
                Column::func("Data", "integer", data_count),
                Column::age(),
            ])
            .strategy(ConfigMapStrategy),
        kind::<v1::Endpoints>()
            .singular("endpoints")
            .short_names(&["ep"])
            .storage_path("services/endpoints")
            .columns(vec![
                Column::func("Endpoints", "string", endpoints_summary),
                Column::age(),
            ]),
        kind::<v1::Event>()
            .short_names(&["ev"])
            .selectable_fields(&[
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source",
                "type",
            ])
            .indexed_fields(&["involvedObject.name"])
            .without_name_column()
            .columns(event_columns())
            .strategy(super::event_validation::EventStrategy { strict: false }),
        kind::<v1::LimitRange>()
            .short_names(&["limits"])
            .strategy(super::core_strategies::LimitRangeStrategy),
        kind::<v1::Namespace>()
            .returns_deleted_object()
            // Upstream serves no deletecollection of namespaces.
            .verbs(&[
                "create", "delete", "get", "list", "patch", "update", "watch",
            ])
            .short_names(&["ns"])
            .name_rule(NameRule::Dns1123Label)
            .with_status()
            .with_subresource(Subresource::Finalize)
            .selectable_fields(&["status.phase", "name"])
            .columns(vec![Column::path("Status", "status.phase"), Column::age()])
            .strategy(NamespaceStrategy),
        kind::<v1::Node>()
            .with_custom_subresource(super::kubelet_subresources::proxy_subresource(
                "NodeProxyOptions",
                "nodes",
            ))
            .short_names(&["no"])
            .storage_path("minions")
            .with_status()
            .selectable_fields(&["spec.unschedulable"])
            .columns(vec![
                Column::func("Status", "string", node_status),
                Column::func("Roles", "string", |_| json!("<none>")),
                Column::age(),
                Column::path("Version", "status.nodeInfo.kubeletVersion"),
                Column::func("Internal-IP", "string", |o| {
                    json!(node_address(o, "InternalIP"))
                })
                .wide(),
                Column::func("External-IP", "string", |o| {
                    json!(node_address(o, "ExternalIP"))
                })
                .wide(),
                Column::func("OS-Image", "string", |o| {
                    json!(str_or(o, "status.nodeInfo.osImage", "<unknown>"))
                })
                .wide(),
                Column::func("Kernel-Version", "string", |o| {
                    json!(str_or(o, "status.nodeInfo.kernelVersion", "<unknown>"))
                })
                .wide(),
                Column::func("Container-Runtime", "string", |o| {
                    json!(str_or(
                        o,
                        "status.nodeInfo.containerRuntimeVersion",
                        "<unknown>"
                    ))
                })
                .wide(),
            ])
            .strategy(super::core_strategies::NodeStrategy),
        kind::<v1::Pod>()
            .returns_deleted_object()
            .short_names(&["po"])
            .categories(&["all"])
            .with_status()
            .status_metadata(apiserver::registry::resource::StatusMetadata::Reset)
            .with_custom_subresources(super::subresources::pod_subresources(Default::default()))
            .returns_deleted_object()
            .selectable_fields(&[
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ])
            .indexed_fields(&["spec.nodeName"])
            .columns(vec![
                Column::func("Ready", "string", pod_ready),
                Column::func("Status", "string", pod_status),
                Column::func("Restarts", "string", pod_restarts),
                Column::age(),
                Column::func("IP", "string", |o| {
                    json!(str_or(o, "status.podIP", "<none>"))
                })
                .wide(),
                Column::func("Node", "string", |o| {
                    json!(str_or(o, "spec.nodeName", "<none>"))
                })
                .wide(),
                Column::func("Nominated Node", "string", |o| {
                    json!(str_or(o, "status.nominatedNodeName", "<none>"))
                })
                .wide(),
                Column::func("Readiness Gates", "string", pod_readiness_gates).wide(),
            ])
            .strategy(PodStrategy),
        kind::<v1::PersistentVolumeClaim>()
            .returns_deleted_object()
            .short_names(&["pvc"])
            .selectable_fields(&["name"])
            .with_status()
            .columns(vec![
                Column::path("Status", "status.phase"),
                Column::path("Volume", "spec.volumeName"),
                Column::func("Capacity", "string", |o| {
                    json!(str_or(o, "status.capacity.storage", ""))
                }),
                Column::func("Access Modes", "string", |o| {
                    json!(access_modes(o, "status.accessModes"))
                }),
                Column::func("StorageClass", "string", |o| {
                    json!(str_or(o, "spec.storageClassName", "<unset>"))
                }),
                Column::func("VolumeAttributesClass", "string", |o| {
                    json!(str_or(o, "spec.volumeAttributesClassName", "<unset>"))
                }),
                Column::age(),
                Column::func("VolumeMode", "string", |o| {
                    json!(str_or(o, "spec.volumeMode", "<unset>"))
                })
                .wide(),
            ])
            .strategy(super::core_strategies::ClaimStrategy),
        kind::<v1::PersistentVolume>()
            .returns_deleted_object()
            .selectable_fields(&["name"])
            .short_names(&["pv"])
            .with_status()
            .columns(vec![
                Column::func("Capacity", "string", |o| {
                    json!(str_or(o, "spec.capacity.storage", ""))
                }),
                Column::func("Access Modes", "string", |o| {
                    json!(access_modes(o, "spec.accessModes"))
                }),
                Column::path("Reclaim Policy", "spec.persistentVolumeReclaimPolicy"),
                Column::path("Status", "status.phase"),
                Column::func("Claim", "string", |o| {
                    let ns = str_or(o, "spec.claimRef.namespace", "");
                    let n = str_or(o, "spec.claimRef.name", "");
                    json!(if n.is_empty() {
                        String::new()
                    } else {
                        format!("{ns}/{n}")
                    })
                }),
                Column::func("StorageClass", "string", |o| {
                    json!(str_or(o, "spec.storageClassName", ""))
                }),
                Column::func("VolumeAttributesClass", "string", |o| {
                    json!(str_or(o, "spec.volumeAttributesClassName", "<unset>"))
                }),
                Column::path("Reason", "status.reason"),
                Column::age(),
                Column::func("VolumeMode", "string", |o| {
                    json!(str_or(o, "spec.volumeMode", "<unset>"))
                })
                .wide(),
            ])
            .strategy(super::core_strategies::VolumeStrategy),
        kind::<v1::PodTemplate>()
            .returns_deleted_object()
            .columns(vec![
                Column::func("Containers", "string", |o| {
                    json!(names_of(array_at(o, "template.spec.containers"), "name"))
                }),
                Column::func("Images", "string", |o| {
                    json!(names_of(array_at(o, "template.spec.containers"), "image"))
                }),
                Column::func("Pod Labels", "string", |o| {
                    json!(format_labels(lookup(o, "template.metadata.labels")))
                }),
            ]),
        kind::<v1::ReplicationController>()
            .short_names(&["rc"])
            .categories(&["all"])
            .storage_path("controllers")
            .with_status()
            .selectable_fields(&["status.replicas"])
            .with_scale()
            .columns(vec![
                int_col("Desired", |o| json!(int_at(o, "spec.replicas"))),
                int_col("Current", |o| json!(int_at(o, "status.replicas"))),
                int_col("Ready", |o| json!(int_at(o, "status.readyReplicas"))),
                Column::age(),
                Column::func("Containers", "string", |o| {
                    json!(names_of(
                        array_at(o, "spec.template.spec.containers"),
                        "name"
                    ))
                })
                .wide(),
                Column::func("Images", "string", |o| {
                    json!(names_of(
                        array_at(o, "spec.template.spec.containers"),
                        "image"
                    ))
                })
                .wide(),
                Column::func("Selector", "string", |o| {
                    json!(format_labels(lookup(o, "spec.selector")))
                })
                .wide(),
            ])
            .strategy(super::workloads::WorkloadStrategy::REPLICATION_CONTROLLER),
        kind::<v1::ResourceQuota>()
            .returns_deleted_object()
            .short_names(&["quota"])
            .with_status()
            .columns(vec![
                Column::age(),
                Column::func("Request", "string", |o| json!(quota_summary(o, false))),
                Column::func("Limit", "string", |o| json!(quota_summary(o, true))),
            ]),
        kind::<v1::Secret>()
            .selectable_fields(&["type"])
            .columns(vec![
                Column::path("Type", "type"),
                Column::func("Data", "integer", data_count),
                Column::age(),
            ])
            .strategy(SecretStrategy),
        kind::<v1::ServiceAccount>()
            .returns_deleted_object()
            .short_names(&["sa"])
            .columns(vec![
                int_col("Secrets", |o| json!(array_at(o, "secrets").len())),
                Column::age(),
            ]),
        kind::<v1::Service>()
            .returns_deleted_object()
            .with_custom_subresource(super::kubelet_subresources::proxy_subresource(
                "ServiceProxyOptions",
                "services",
            ))
            .short_names(&["svc"])
            .categories(&["all"])
            .storage_path("services/specs")
            .name_rule(NameRule::Dns1035Label)
            .with_status()
            .selectable_fields(&["spec.clusterIP", "spec.type"])
            .columns(vec![
                Column::path("Type", "spec.type"),
                Column::func("Cluster-IP", "string", |o| {
                    json!(str_or(o, "spec.clusterIP", "<none>"))
                }),
                Column::func("External-IP", "string", service_external_ips),
                Column::func("Port(s)", "string", service_ports),
                Column::age(),
                Column::func("Selector", "string", |o| {
                    json!(format_labels(lookup(o, "spec.selector")))
                })
                .wide(),
            ])
            .strategy(ServiceStrategy),
    ]
}

fn event_columns() -> Vec<Column> {
    vec![
        Column::func("Last Seen", "string", event_last_seen),
        Column::path("Type", "type"),
        Column::path("Reason", "reason"),
        Column::func("Object", "string", |o| {
            json!(format!(
                "{}/{}",
                str_or(o, "involvedObject.kind", "").to_lowercase(),
                str_or(o, "involvedObject.name", "")
            ))
        }),
        Column::path("Subobject", "involvedObject.fieldPath").wide(),
        Column::func("Source", "string", event_source).wide(),
        Column::path("Message", "message"),
        Column::func("First Seen", "string", |o| {
            json!(if lookup(o, "firstTimestamp")
                .and_then(Value::as_str)
                .is_some()
            {
                since(o, "firstTimestamp")
            } else {
                since(o, "eventTime")
            })
        })
        .wide(),
        int_col("Count", |o| {
            json!(lookup(o, "series.count")
                .and_then(Value::as_i64)
                .unwrap_or_else(|| int_at(o, "count")))
        })
        .wide(),
        Column::path("Name", "metadata.name").wide(),
    ]
}

fn event_last_seen(o: &Value) -> Value {
    for p in ["series.lastObservedTime", "lastTimestamp", "eventTime"] {
        if lookup(o, p).and_then(Value::as_str).is_some() {
            return json!(since(o, p));
        }
    }
    json!("<unknown>")
}

fn event_source(o: &Value) -> Value {
    let mut component = str_or(o, "source.component", "");
    if component.is_empty() {
        component = str_or(o, "reportingComponent", "");
    }
    let mut host = str_or(o, "source.host", "");
    if host.is_empty() {
        host = str_or(o, "reportingInstance", "");
    }
    json!(if host.is_empty() {
        component
    } else {
        format!("{component}, {host}")
    })
}

fn component_condition(o: &Value, key: &str) -> String {
    array_at(o, "conditions")
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Healthy"))
        .and_then(|c| c.get(key).and_then(Value::as_str))
        .unwrap_or("")
        .to_string()
}

fn component_status(o: &Value) -> Value {
    let healthy = array_at(o, "conditions")
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Healthy"))
        .and_then(|c| c.get("status").and_then(Value::as_str));
    json!(match healthy {
        Some("True") => "Healthy",
        Some(_) => "Unhealthy",
        None => "Unknown",
    })
}

/// kubectl's abbreviations of access modes (`RWO,ROX`).
fn access_modes(o: &Value, path: &str) -> String {
    array_at(o, path)
        .iter()
        .filter_map(Value::as_str)
        .map(|m| match m {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `used/hard` pairs of a quota's requests or limits, sorted by resource.
fn quota_summary(o: &Value, limits: bool) -> String {
    let Some(hard) = lookup(o, "status.hard").and_then(Value::as_object) else {
        return String::new();
    };
    let mut keys: Vec<&String> = hard
        .keys()
        .filter(|k| k.starts_with("limits.") == limits)
        .collect();
    keys.sort();
    keys.iter()
        .map(|k| {
            let used = lookup(o, "status.used")
                .and_then(|u| u.get(k.as_str()))
                .and_then(Value::as_str)
                .unwrap_or("0");
            let h = hard.get(k.as_str()).and_then(Value::as_str).unwrap_or("");
            format!("{k}: {used}/{h}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn node_address(o: &Value, kind: &str) -> String {
    array_at(o, "status.addresses")
        .iter()
        .find(|a| a.get("type").and_then(Value::as_str) == Some(kind))
        .and_then(|a| a.get("address").and_then(Value::as_str))
        .unwrap_or("<none>")
        .to_string()
}

fn pod_readiness_gates(o: &Value) -> Value {
    let gates = array_at(o, "spec.readinessGates");
    if gates.is_empty() {
        return json!("<none>");
    }
    let ready = gates
        .iter()
        .filter(|g| {
            let t = g.get("conditionType");
            array_at(o, "status.conditions")
                .iter()
                .any(|c| c.get("type") == t && c.get("status") == Some(&json!("True")))
        })
        .count();
    json!(format!("{ready}/{}", gates.len()))
}

fn service_external_ips(o: &Value) -> Value {
    let svc_type = str_or(o, "spec.type", "ClusterIP");
    let mut ips: Vec<String> = array_at(o, "spec.externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    match svc_type.as_str() {
        "ExternalName" => return json!(str_or(o, "spec.externalName", "<none>")),
        "LoadBalancer" => {
            for ing in array_at(o, "status.loadBalancer.ingress") {
                for k in ["ip", "hostname"] {
                    if let Some(v) = ing.get(k).and_then(Value::as_str) {
                        ips.push(v.to_string());
                    }
                }
            }
            if ips.is_empty() {
                return json!("<pending>");
            }
        }
        _ => {}
    }
    json!(if ips.is_empty() {
        "<none>".to_string()
    } else {
        ips.join(",")
    })
}

fn data_count(obj: &Value) -> Value {
    let n = |k: &str| {
        obj.get(k)
            .and_then(Value::as_object)
            .map(|m| m.len())
            .unwrap_or(0)
    };
    json!(n("data") + n("binaryData"))
}

fn endpoints_summary(obj: &Value) -> Value {
    let mut out = Vec::new();
    for subset in obj
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let ports: Vec<i64> = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("port").and_then(Value::as_i64))
            .collect();
        for addr in subset
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let ip = addr.get("ip").and_then(Value::as_str).unwrap_or("");
            if ports.is_empty() {
                out.push(ip.to_string());
            }
            for p in &ports {
                out.push(format!("{ip}:{p}"));
            }
        }
    }
    if out.is_empty() {
        return json!("<none>");
    }
    let more = out.len().saturating_sub(3);
    let mut s = out.into_iter().take(3).collect::<Vec<_>>().join(",");
    if more > 0 {
        s.push_str(&format!(" + {more} more..."));
    }
    json!(s)
}

fn node_status(obj: &Value) -> Value {
    let ready = lookup(obj, "status.conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c.get("type") == Some(&json!("Ready"))))
        .and_then(|c| c.get("status").and_then(Value::as_str));
    let mut s = match ready {
        Some("True") => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if lookup(obj, "spec.unschedulable").and_then(Value::as_bool) == Some(true) {
        s.push_str(",SchedulingDisabled");
    }
    json!(s)
}

fn container_statuses(obj: &Value) -> Vec<&Value> {
    lookup(obj, "status.containerStatuses")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn pod_ready(obj: &Value) -> Value {
    let total = lookup(obj, "spec.containers")
        .and_then(Value::as_array)
        .map(|a| a.len())
        .unwrap_or(0);
    let ready = container_statuses(obj)
        .iter()
        .filter(|c| c.get("ready") == Some(&json!(true)))
        .count();
    json!(format!("{ready}/{total}"))
}

fn pod_status(obj: &Value) -> Value {
    if obj
        .get("metadata")
        .and_then(|m| m.get("deletionTimestamp"))
        .is_some()
    {
        return json!("Terminating");
    }
    let reason = lookup(obj, "status.reason")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let waiting = container_statuses(obj).iter().find_map(|c| {
        lookup(c, "state.waiting.reason")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    json!(reason
        .map(str::to_string)
        .or(waiting)
        .unwrap_or_else(|| str_or(obj, "status.phase", "Pending")))
}

fn pod_restarts(obj: &Value) -> Value {
    let n: i64 = container_statuses(obj)
        .iter()
        .filter_map(|c| c.get("restartCount").and_then(Value::as_i64))
        .sum();
    json!(n.to_string())
}

fn service_ports(obj: &Value) -> Value {
    let ports: Vec<String> = lookup(obj, "spec.ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
            let proto = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            match p.get("nodePort").and_then(Value::as_i64) {
                Some(np) => format!("{port}:{np}/{proto}"),
                None => format!("{port}/{proto}"),
            }
        })
        .collect();
    json!(if ports.is_empty() {
        "<none>".to_string()
    } else {
        ports.join(",")
    })
}
