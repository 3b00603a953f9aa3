//! The type checker of ValidatingAdmissionPolicies (upstream's
//! `validatingadmissionpolicy-status` controller): for every policy whose
//! `status.observedGeneration` lags its `metadata.generation`, each
//! expression (validations, message expressions, variables, match
//! conditions, audit annotations) is checked against the schema of every
//! kind its `matchConstraints` name, and the warnings are written to
//! `status.typeChecking.expressionWarnings` with the expression's
//! `fieldRef`, as `apps/v1, Kind=Deployment: ERROR: <input>:1:12:
//! undefined field 'replicsa' ...`.

use std::sync::Arc;
use std::time::Duration;

use apiserver::openapi::OpenApi;
use apiserver::registry::catalog::Catalog;
use apiserver::registry::resource::Subresource;
use apiserver::registry::store::{Store, UpdateKind, WriteContext};
use serde_json::{json, Value};

/// Runs forever.
pub async fn run(groups: Arc<Catalog>, openapi: Arc<OpenApi>) {
    let Some(policies) = groups
        .lookup(
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicies",
        )
        .cloned()
    else {
        return;
    };
    let (tx, mut rx) = apiserver::registry::informer::channel();
    tokio::spawn(apiserver::registry::informer::run((*policies).clone(), tx));
    loop {
        let pending: Vec<Value> = rx
            .borrow_and_update()
            .objects
            .values()
            .filter(|p| {
                let generation = p.pointer("/metadata/generation").and_then(Value::as_i64);
                generation.is_some()
                    && generation
                        != p.pointer("/status/observedGeneration")
                            .and_then(Value::as_i64)
            })
            .cloned()
            .collect();
        for policy in pending {
            if let Err(e) = check(&groups, &openapi, &policies, &policy).await {
                tracing::debug!(error = %e, "type checking a ValidatingAdmissionPolicy");
            }
        }
        if tokio::time::timeout(Duration::from_secs(30), rx.changed())
            .await
            .is_ok_and(|r| r.is_err())
        {
            return;
        }
    }
}

/// The `(fieldRef, expression)` pairs of a policy.
fn expressions(spec: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (list, keys) in [
        ("validations", &["expression", "messageExpression"][..]),
        ("variables", &["expression"][..]),
        ("matchConditions", &["expression"][..]),
        ("auditAnnotations", &["valueExpression"][..]),
    ] {
        for (i, item) in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            for k in keys {
                if let Some(e) = item
                    .get(*k)
                    .and_then(Value::as_str)
                    .filter(|e| !e.is_empty())
                {
                    out.push((format!("spec.{list}[{i}].{k}"), e.to_string()));
                }
            }
        }
    }
    out
}

/// The kinds the policy's resource rules name (wildcards are not checked),
/// as `(gvk for messages, schema ref)`.
fn matched_kinds(groups: &Catalog, openapi: &OpenApi, spec: &Value) -> Vec<(String, Value)> {
    let strings = |v: &Value, k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let mut out: Vec<(String, Value)> = Vec::new();
    for rule in spec
        .pointer("/matchConstraints/resourceRules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for g in strings(rule, "apiGroups") {
            for v in strings(rule, "apiVersions") {
                for r in strings(rule, "resources") {
                    let base = r.split('/').next().unwrap_or("");
                    if [g.as_str(), v.as_str(), base].contains(&"*") || r.contains('/') {
                        continue;
                    }
                    let Some(store) = groups.lookup(&g, &v, base) else {
                        continue;
                    };
                    let kind = &store.def.kind;
                    let Some(root) = openapi.schema_ref(&g, &v, kind) else {
                        continue;
                    };
                    let gv = if g.is_empty() {
                        v.clone()
                    } else {
                        format!("{g}/{v}")
                    };
                    let name = format!("{gv}, Kind={kind}");
                    if !out.iter().any(|(n, _)| *n == name) {
                        out.push((name, root));
                    }
                }
            }
        }
    }
    out
}

async fn check(
    groups: &Catalog,
    openapi: &OpenApi,
    policies: &Store,
    policy: &Value,
) -> Result<(), String> {
    let spec = policy.get("spec").cloned().unwrap_or(Value::Null);
    let generation = policy
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let kinds = matched_kinds(groups, openapi, &spec);
    let mut warnings = Vec::new();
    for (field_ref, expr) in expressions(&spec) {
        let mut issues = Vec::new();
        for (gvk, root) in &kinds {
            let errors = apiserver::schema::typecheck::check(&expr, root, openapi.components());
            if !errors.is_empty() {
                issues.push(format!("{gvk}: {}", errors.join("\n")));
            }
        }
        if !issues.is_empty() {
            warnings.push(json!({"fieldRef": field_ref, "warning": issues.join("\n")}));
        }
    }
    let name = apiserver::apimachinery::meta::name(policy).to_string();
    let set = move |old: &Value| {
        let mut new = old.clone();
        let status = new
            .as_object_mut()
            .map(|m| m.entry("status").or_insert_with(|| json!({})));
        if let Some(Value::Object(s)) = status {
            s.insert("observedGeneration".into(), json!(generation));
            s.insert(
                "typeChecking".into(),
                if warnings.is_empty() {
                    json!({})
                } else {
                    json!({"expressionWarnings": warnings})
                },
            );
        }
        Ok(new)
    };
    policies
        .update(
            "",
            &name,
            Some(Subresource::Status),
            UpdateKind::Patch(&set),
            &WriteContext::default(),
        )
        .await
        .map(|_| ())
        .map_err(|e| e.message)
}
