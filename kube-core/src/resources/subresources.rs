//! Subresources with their own behaviour, after upstream's pod and CSR
//! registries: `pods/binding` (and the `bindings` resource), `pods/eviction`,
//! `pods/ephemeralcontainers`, `certificatesigningrequests/approval`, and
//! the kubelet-backed pod subresources, which answer with a clear error
//! until this server has a connection to kubelets.

use std::sync::Arc;

use apiserver::apimachinery::errors::{ApiError, GroupResource};
use apiserver::endpoints::handlers::Query;
use apiserver::registry::resource::{CustomSubresource, SubresourceCall, SubresourceResult};
use apiserver::registry::store::{DeleteOptions, Store};
use k8s_openapi::api::core::v1;
use serde_json::{json, Value};

use super::kind;

/// The PodDisruptionBudget store that eviction consults. The pod's
/// declaration is made before any store exists, so [`super::build`] hands
/// eviction this cell and fills it once the PodDisruptionBudget store is
/// built; an empty cell (a declaration alone, as in tests) checks no budget.
pub type DisruptionBudgets = Arc<std::sync::OnceLock<Arc<Store>>>;

fn refuse_eviction(cause: String) -> ApiError {
    let mut e = ApiError::too_many_requests(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        10,
    );
    if let Some(d) = e.details.as_mut() {
        d.causes.push(apiserver::apimachinery::errors::StatusCause {
            reason: "DisruptionBudget".into(),
            message: cause,
            field: String::new(),
        });
    }
    e
}

/// upstream's eviction check: the one PodDisruptionBudget selecting the pod
/// must allow a disruption, which is then taken from its status. Finished
/// and pending pods are not protected.
async fn check_disruption_budget(
    budgets: &DisruptionBudgets,
    pod: &Value,
    dry_run: bool,
) -> Result<(), ApiError> {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    if matches!(phase, "Succeeded" | "Failed" | "Pending") {
        return Ok(());
    }
    let Some(pdbs) = budgets.get() else {
        return Ok(());
    };
    let namespace = pod
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let pod_name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let labels = pod
        .pointer("/metadata/labels")
        .cloned()
        .unwrap_or(json!({}));
    let list = pdbs.list(namespace, &Default::default()).await?;
    let matching: Vec<&Value> = list
        .items
        .iter()
        .filter(|p| {
            p.pointer("/spec/selector")
                .filter(|s| !s.is_null())
                .is_some_and(|s| super::workloads::selector_matches(s, &labels))
        })
        .collect();
    if matching.len() > 1 {
        return Err(ApiError::internal(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        ));
    }
    let Some(pdb) = matching.first() else {
        return Ok(());
    };
    let pdb_name = pdb
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let generation = pdb
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let observed = pdb
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if observed < generation {
        return Err(refuse_eviction(format!(
            "The disruption budget {pdb_name} is still being processed by the server."
        )));
    }
    let allowed = pdb
        .pointer("/status/disruptionsAllowed")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if allowed < 0 {
        return Err(ApiError::forbidden(
            GroupResource {
                group: "",
                resource: "pods",
            },
            pod_name,
            "pdb disruptions allowed is negative",
        ));
    }
    if allowed == 0 {
        let desired = pdb
            .pointer("/status/desiredHealthy")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let current = pdb
            .pointer("/status/currentHealthy")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        return Err(refuse_eviction(format!(
            "The disruption budget {pdb_name} needs {desired} healthy pods and has {current} currently"
        )));
    }
    let now = apiserver::apimachinery::meta::now_rfc3339();
    pdbs.guaranteed_update(namespace, &pdb_name, dry_run, |p| {
        let allowed = p
            .pointer("/status/disruptionsAllowed")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if allowed <= 0 {
            return Err(refuse_eviction(format!(
                "The disruption budget {pdb_name} does not allow more disruptions"
            )));
        }
        if let Some(Value::Object(st)) = p.get_mut("status") {
            st.insert("disruptionsAllowed".into(), json!(allowed - 1));
            let dp = st.entry("disruptedPods").or_insert_with(|| json!({}));
            if let Value::Object(dp) = dp {
                dp.insert(pod_name.to_string(), json!(now));
            }
        }
        Ok(())
    })
    .await?;
    Ok(())
}

fn created_status() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

/// Binds a pod to a node: sets `spec.nodeName` and the `PodScheduled`
/// condition; 409 when it is already bound or being deleted.
pub async fn bind(
    store: &Store,
    namespace: &str,
    name: &str,
    binding: &Value,
    dry_run: bool,
) -> SubresourceResult {
    let gr = GroupResource {
        group: "",
        resource: "pods/binding",
    };
    let node = binding
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() {
        let err = apiserver::apimachinery::validation::FieldError::required("target.name", "");
        return Err(ApiError::invalid("", "Binding", name, &[err]));
    }
    let kind = binding
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !kind.is_empty() && kind != "Node" {
        let err = apiserver::apimachinery::validation::FieldError::not_supported(
            "target.kind",
            json!(kind),
            &["Node"],
        );
        return Err(ApiError::invalid("", "Binding", name, &[err]));
    }
    let annotations = binding.pointer("/metadata/annotations").cloned();
    store.guaranteed_update(namespace, name, dry_run, |pod| {
        if apiserver::apimachinery::meta::is_deleting(pod) {
            return Err(ApiError::conflict(
                gr,
                name,
                &format!("pod {name} is being deleted, cannot be assigned to a host"),
            ));
        }
        let current = pod.pointer("/spec/nodeName").and_then(Value::as_str).unwrap_or("");
        if !current.is_empty() {
            return Err(ApiError::conflict(
                gr,
                name,
                &format!("pod {name} is already assigned to node {current:?}"),
            ));
        }
        if let Some(Value::Object(spec)) = pod.get_mut("spec") {
            spec.insert("nodeName".into(), json!(node));
        }
        if let Some(Value::Object(add)) = &annotations {
            let meta = apiserver::apimachinery::meta::meta_mut(pod);
            let ann = meta.entry("annotations").or_insert_with(|| json!({}));
            if let Value::Object(a) = ann {
                for (k, v) in add {
                    a.insert(k.clone(), v.clone());
                }
            }
        }
        let now = apiserver::apimachinery::meta::now_rfc3339();
        let status = pod
            .as_object_mut()
            .map(|m| m.entry("status").or_insert_with(|| json!({})));
        if let Some(Value::Object(st)) = status {
            let conds = st.entry("conditions").or_insert_with(|| json!([]));
            if let Value::Array(c) = conds {
                c.retain(|x| x.get("type").and_then(Value::as_str) != Some("PodScheduled"));
                c.push(json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now}));
            }
        }
        Ok(())
    })
    .await?;
    Ok((201, created_status()))
}

fn binding_subresource() -> CustomSubresource {
    CustomSubresource {
        name: "binding",
        verbs: &["create"],
        kind: ("", "v1", "Binding"),
        handler: Arc::new(|call: SubresourceCall<'_>| {
            Box::pin(async move {
                let body_name = call
                    .body
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !body_name.is_empty() && body_name != call.name {
                    return Err(ApiError::bad_request(format!(
                        "the name of the object ({body_name}) does not match the name on the URL ({})",
                        call.name
                    )));
                }
                bind(
                    call.store,
                    call.namespace,
                    call.name,
                    &call.body,
                    call.ctx.dry_run,
                )
                .await
            })
        }),
    }
}

fn eviction_subresource(budgets: DisruptionBudgets) -> CustomSubresource {
    CustomSubresource {
        name: "eviction",
        verbs: &["create"],
        kind: ("policy", "v1", "Eviction"),
        handler: Arc::new(move |call: SubresourceCall<'_>| {
            let budgets = budgets.clone();
            Box::pin(async move {
                let body_name = call
                    .body
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !body_name.is_empty() && body_name != call.name {
                    return Err(ApiError::bad_request(format!(
                        "name in URL does not match name in Eviction object: {} != {body_name}",
                        call.name
                    )));
                }
                let opts = call
                    .body
                    .get("deleteOptions")
                    .cloned()
                    .unwrap_or(Value::Null);
                let delete = DeleteOptions {
                    grace_period_seconds: opts.get("gracePeriodSeconds").and_then(Value::as_i64),
                    precondition_uid: opts
                        .pointer("/preconditions/uid")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    precondition_resource_version: opts
                        .pointer("/preconditions/resourceVersion")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    propagation_policy: None,
                    dry_run: call.ctx.dry_run,
                };
                let pod = call.store.get(call.namespace, call.name).await?;
                check_disruption_budget(&budgets, &pod, call.ctx.dry_run).await?;
                call.store
                    .delete(call.namespace, call.name, &delete, &call.ctx)
                    .await?;
                Ok((201, created_status()))
            })
        }),
    }
}

/// The pod subresources beyond status; eviction consults `budgets`.
pub fn pod_subresources(budgets: DisruptionBudgets) -> Vec<CustomSubresource> {
    vec![
        super::kubelet_subresources::kubelet_subresource("attach", "PodAttachOptions"),
        binding_subresource(),
        super::part_subresources::part_subresource(
            "ephemeralcontainers",
            ("", "v1", "Pod"),
            super::part_subresources::take_ephemeral_containers,
        ),
        eviction_subresource(budgets),
        super::kubelet_subresources::kubelet_subresource("exec", "PodExecOptions"),
        super::kubelet_subresources::kubelet_subresource("log", "Pod"),
        super::kubelet_subresources::kubelet_subresource("portforward", "PodPortForwardOptions"),
        super::kubelet_subresources::kubelet_subresource("proxy", "PodProxyOptions"),
        super::part_subresources::part_subresource(
            "resize",
            ("", "v1", "Pod"),
            super::part_subresources::take_resources,
        ),
    ]
}

/// The `bindings` resource (`POST /api/v1/namespaces/<ns>/bindings`),
/// which binds the pod named by the Binding.
pub fn register_bindings(groups: &mut apiserver::registry::catalog::Catalog) {
    let Some(pods) = groups.lookup("", "v1", "pods").cloned() else {
        return;
    };
    let def = kind::<v1::Binding>().verbs(&["create"]);
    groups.add_handler(
        def,
        Arc::new(move |req, info| {
            let pods = pods.clone();
            Box::pin(async move {
                let gr = GroupResource {
                    group: "",
                    resource: "bindings",
                };
                if info.verb != "create" || !info.name.is_empty() || info.namespace.is_empty() {
                    return ApiError::method_not_supported(gr, &info.verb).into_response();
                }
                let dry_run = Query::of(&info).dry_run("CreateOptions");
                let dry_run = match dry_run {
                    Ok(d) => d,
                    Err(e) => return e.into_response(),
                };
                let (headers, query) = (req.headers().clone(), Query::of(&info));
                let binding = match apiserver::endpoints::handlers::read_object_body(req).await {
                    Ok(Value::Null) => {
                        return ApiError::bad_request("the body of the request was empty")
                            .into_response()
                    }
                    Ok(b) => b,
                    Err(e) => return e.into_response(),
                };
                let name = binding
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if name.is_empty() {
                    let err = apiserver::apimachinery::validation::FieldError::required(
                        "metadata.name",
                        "name or generateName is required",
                    );
                    return ApiError::invalid("", "Binding", "", &[err]).into_response();
                }
                match bind(&pods, &info.namespace, &name, &binding, dry_run).await {
                    Ok((code, v)) => {
                        apiserver::endpoints::handlers::respond_to(&headers, &query, code, &v)
                    }
                    Err(e) => e.into_response(),
                }
            })
        }),
    );
}

/// `serviceaccounts/<name>/token` (TokenRequest): a signed JWT for the
/// service account, accepted by the service account token authenticator.
pub fn token_subresource(
    signer: Arc<apiserver::authentication::service_account::TokenSigner>,
    audiences: Vec<String>,
) -> CustomSubresource {
    CustomSubresource {
        name: "token",
        verbs: &["create"],
        kind: ("authentication.k8s.io", "v1", "TokenRequest"),
        handler: Arc::new(move |call: SubresourceCall<'_>| {
            let signer = signer.clone();
            let audiences = audiences.clone();
            Box::pin(async move {
                let sa = call.store.get(call.namespace, call.name).await?;
                let mut spec = call.body.get("spec").cloned().unwrap_or_else(|| json!({}));
                if !spec.is_object() {
                    spec = json!({});
                }
                let auds: Vec<String> = match spec.get("audiences").and_then(Value::as_array) {
                    Some(a) if !a.is_empty() => a
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    _ => audiences.clone(),
                };
                let exp_secs = spec
                    .get("expirationSeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(3600);
                let path = "spec.expirationSeconds";
                if exp_secs < 600 {
                    let err = apiserver::apimachinery::validation::FieldError::invalid(
                        path,
                        json!(exp_secs),
                        "may not specify a duration less than 10 minutes",
                    );
                    return Err(ApiError::invalid(
                        "authentication.k8s.io",
                        "TokenRequest",
                        call.name,
                        &[err],
                    ));
                }
                if exp_secs > 1 << 32 {
                    let err = apiserver::apimachinery::validation::FieldError::invalid(
                        path,
                        json!(exp_secs),
                        "may not specify a duration larger than 2^32 seconds",
                    );
                    return Err(ApiError::invalid(
                        "authentication.k8s.io",
                        "TokenRequest",
                        call.name,
                        &[err],
                    ));
                }
                let now = jiff::Timestamp::now().as_second();
                let sa_uid = sa
                    .pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let mut k8s = json!({
                    "namespace": call.namespace,
                    "serviceaccount": {"name": call.name, "uid": sa_uid},
                });
                if let Some(bound) = spec
                    .get("boundObjectRef")
                    .filter(|b| b.is_object())
                    .cloned()
                {
                    let kind = bound.get("kind").and_then(Value::as_str).unwrap_or("");
                    let field = match kind {
                        "Pod" => "pod",
                        "Secret" => "secret",
                        "Node" => "node",
                        other => {
                            let err =
                                apiserver::apimachinery::validation::FieldError::not_supported(
                                    "spec.boundObjectRef.kind",
                                    json!(other),
                                    &["Node", "Pod", "Secret"],
                                );
                            return Err(ApiError::invalid(
                                "authentication.k8s.io",
                                "TokenRequest",
                                call.name,
                                &[err],
                            ));
                        }
                    };
                    let bound_name = bound.get("name").and_then(Value::as_str).unwrap_or("");
                    let uid = bound_object_uid(&call, kind, bound_name).await?;
                    let claimed = bound.get("uid").and_then(Value::as_str).unwrap_or("");
                    if !claimed.is_empty() && claimed != uid {
                        return Err(ApiError::conflict(
                            apiserver::apimachinery::errors::GroupResource {
                                group: "",
                                resource: kind,
                            },
                            bound_name,
                            &format!("the UID in the bound object reference ({claimed}) does not match the UID in record. The object might have been deleted and then recreated"),
                        ));
                    }
                    spec["boundObjectRef"]["uid"] = json!(uid);
                    k8s[field] = json!({"name": bound_name, "uid": uid});
                }
                let claims = json!({
                    "aud": auds,
                    "exp": now + exp_secs,
                    "iat": now,
                    "nbf": now,
                    "jti": uuid::Uuid::new_v4().to_string(),
                    "sub": format!("system:serviceaccount:{}:{}", call.namespace, call.name),
                    "kubernetes.io": k8s,
                });
                let token = signer.sign(claims).map_err(ApiError::internal)?;
                let expires = jiff::Timestamp::from_second(now + exp_secs)
                    .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_default();
                spec["audiences"] = json!(auds);
                spec["expirationSeconds"] = json!(exp_secs);
                if spec.get("boundObjectRef").is_none() {
                    spec["boundObjectRef"] = Value::Null;
                }
                Ok((
                    201,
                    json!({
                        "kind": "TokenRequest",
                        "apiVersion": "authentication.k8s.io/v1",
                        "metadata": {"name": call.name, "namespace": call.namespace, "creationTimestamp": null},
                        "spec": spec,
                        "status": {"token": token, "expirationTimestamp": expires},
                    }),
                ))
            })
        }),
    }
}

/// The uid of the object a TokenRequest binds its token to, as upstream
/// looks it up: the object must exist (404 otherwise) and a pod must run as
/// the service account (400 otherwise).
async fn bound_object_uid(
    call: &SubresourceCall<'_>,
    kind: &str,
    name: &str,
) -> Result<String, ApiError> {
    let (key, resource) = match kind {
        "Pod" => (
            format!("{}/pods/{}/{name}", call.store.prefix(), call.namespace),
            "pods",
        ),
        "Secret" => (
            format!("{}/secrets/{}/{name}", call.store.prefix(), call.namespace),
            "secrets",
        ),
        _ => (format!("{}/minions/{name}", call.store.prefix()), "nodes"),
    };
    let not_found = || {
        ApiError::not_found(
            apiserver::apimachinery::errors::GroupResource {
                group: "",
                resource,
            },
            name,
        )
    };
    if name.is_empty() {
        return Err(not_found());
    }
    let kv = call
        .store
        .storage()
        .get(&key)
        .await
        .map_err(apiserver::registry::store::storage_error)?
        .ok_or_else(not_found)?;
    let obj = apiserver::protobuf::decode_from_storage(&kv.value).map_err(ApiError::internal)?;
    if kind == "Pod" {
        let sa = obj
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("default");
        if sa != call.name {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {:?} to pod running with different serviceaccount name.",
                call.name
            )));
        }
    }
    Ok(obj
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string())
}
