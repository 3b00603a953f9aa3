//! ValidatingAdmissionPolicy through kubectl: a policy with a ConfigMap
//! param (found in the request's namespace) and two bindings, one that
//! denies Deployments with too many replicas and one that only warns, chosen
//! by namespace labels; a missing param under `parameterNotFoundAction:
//! Deny`; and the policy kinds themselves exempt.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{eventually, TestCluster};

async fn create(c: &TestCluster, v: &Value) {
    let (ok, out, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&v.to_string()))
        .await;
    assert!(ok, "{out} {err}");
}

fn binding(name: &str, action: &str, env: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": "replica-limit", "validationActions": [action],
                 "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"},
                 "matchResources": {"namespaceSelector": {"matchLabels": {"env": env}}}}})
}

async fn namespace(c: &TestCluster, name: &str, env: &str, max: Option<&str>) {
    c.kubectl_ok(&["create", "namespace", name]).await;
    c.kubectl_ok(&["label", "namespace", name, &format!("env={env}")])
        .await;
    if let Some(max) = max {
        c.kubectl_ok(&[
            "create",
            "configmap",
            "limits",
            "-n",
            name,
            &format!("--from-literal=maxReplicas={max}"),
        ])
        .await;
    }
}

async fn deployment(
    c: &TestCluster,
    ns: &str,
    name: &str,
    replicas: u32,
) -> (bool, String, String) {
    c.kubectl(&[
        "create",
        "deployment",
        name,
        "-n",
        ns,
        "--image=registry.k8s.io/pause:3.10",
        &format!("--replicas={replicas}"),
    ])
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_with_a_configmap_param_denies_or_warns_per_binding() {
    let c = TestCluster::start().await;
    namespace(&c, "prod", "prod", Some("3")).await;
    namespace(&c, "test", "test", Some("3")).await;
    namespace(&c, "prod-unset", "prod", None).await;
    create(
        &c,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "replica-limit"},
            "spec": {
                "failurePolicy": "Fail",
                "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
                "variables": [{"name": "max", "expression": "int(params.data.maxReplicas)"}],
                "validations": [{
                    "expression": "object.spec.replicas <= variables.max",
                    "messageExpression": "'replicas must be no greater than ' + string(variables.max)",
                    "reason": "Invalid"}]}}),
    )
    .await;
    create(&c, &binding("replica-limit-deny", "Deny", "prod")).await;
    create(&c, &binding("replica-limit-warn", "Warn", "test")).await;

    // Deny, with upstream's message.
    let last = std::sync::Mutex::new(String::new());
    let attempt = std::sync::atomic::AtomicUsize::new(0);
    let denied = eventually(Duration::from_secs(15), || async {
        let n = attempt.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (ok, _, err) = deployment(&c, "prod", &format!("big-{n}"), 5).await;
        *last.lock().expect("lock") = err;
        !ok
    })
    .await;
    assert!(denied, "the Deny binding never applied");
    let last = last.lock().expect("lock").clone();
    assert!(
        last.contains(r#"deployments.apps "big-"#) && last.contains(r#"" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-deny' denied request: replicas must be no greater than 3"#),
        "{last}"
    );
    let n = attempt.load(std::sync::atomic::Ordering::SeqCst) - 1;
    assert!(
        !c.kubectl(&["get", "deployment", &format!("big-{n}"), "-n", "prod"])
            .await
            .0
    );
    let (ok, _, err) = deployment(&c, "prod", "small", 2).await;
    assert!(ok, "{err}");
    // An update past the limit is refused too (`scale` writes the
    // `deployments/scale` subresource, which the rule `deployments` does not
    // name, as upstream).
    let (ok, _, err) = c
        .kubectl(&[
            "patch",
            "deployment",
            "small",
            "-n",
            "prod",
            "-p",
            r#"{"spec":{"replicas":4}}"#,
        ])
        .await;
    assert!(
        !ok && err.contains("replicas must be no greater than 3"),
        "{err}"
    );

    // Warn: created, with a warning.
    let (ok, out, err) = deployment(&c, "test", "big", 5).await;
    assert!(ok, "{out} {err}");
    assert!(
        err.contains("Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-warn': replicas must be no greater than 3"),
        "{err}"
    );

    // No param where one is required: denied by the failure policy.
    let (ok, _, err) = deployment(&c, "prod-unset", "any", 1).await;
    assert!(!ok);
    assert!(
        err.contains("no params found for policy binding with `Deny` parameterNotFoundAction"),
        "{err}"
    );

    // Namespaces without a matching binding are not affected.
    c.kubectl_ok(&["create", "namespace", "dev"]).await;
    let (ok, _, err) = deployment(&c, "dev", "big", 9).await;
    assert!(ok, "{err}");

    // A dry run is checked too.
    let (ok, _, err) = c
        .kubectl(&[
            "create",
            "deployment",
            "dry",
            "-n",
            "prod",
            "--image=registry.k8s.io/pause:3.10",
            "--replicas=7",
            "--dry-run=server",
        ])
        .await;
    assert!(
        !ok && err.contains("replicas must be no greater than 3"),
        "{err}"
    );

    // The `authorizer` variable asks RBAC about the requesting user.
    create(
        &c,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "secret-readers-only"},
            "spec": {
                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
                "validations": [{
                    "expression": "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()",
                    "message": "only those who may read secrets may create configmaps"}]}}),
    )
    .await;
    create(
        &c,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "secret-readers-only"},
            "spec": {"policyName": "secret-readers-only", "validationActions": ["Deny"],
                     "matchResources": {"namespaceSelector": {"matchLabels": {"env": "test"}}}}}),
    )
    .await;
    let rbac = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-writer", "namespace": "test"},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "cm-writer", "namespace": "test"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}]}]});
    let (ok, out, err) = c
        .kubectl_stdin(
            &["create", "--validate=false", "-f", "-"],
            Some(&rbac.to_string()),
        )
        .await;
    assert!(ok, "{out} {err}");
    let refused = eventually(Duration::from_secs(15), || async {
        let (ok, _, err) = c
            .kubectl(&[
                "create",
                "configmap",
                "by-carol",
                "-n",
                "test",
                "--as=carol",
            ])
            .await;
        !ok && err.contains("only those who may read secrets may create configmaps")
    })
    .await;
    assert!(
        refused,
        "carol, who may not read secrets, created a configmap"
    );
    let (ok, _, err) = c
        .kubectl(&["create", "configmap", "by-admin", "-n", "test"])
        .await;
    assert!(ok, "{err}");

    // Type checking: a field the kind does not declare is reported in the
    // policy's status, as upstream's checker does.
    create(
        &c,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "typo"},
            "spec": {
                "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["deployments"]}]},
                "validations": [{"expression": "object.spec.replicas > 0"},
                                {"expression": "object.spec.replicsa > 1"}]}}),
    )
    .await;
    let expected = "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicsa'\n | object.spec.replicsa > 1\n | ...........^";
    let last = std::sync::Mutex::new(Value::Null);
    let checked = eventually(Duration::from_secs(15), || async {
        let out = c
            .kubectl_ok(&["get", "validatingadmissionpolicy", "typo", "-o", "json"])
            .await;
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        let ok = v["status"]["observedGeneration"] == 1
            && v["status"]["typeChecking"]["expressionWarnings"]
                == json!([{"fieldRef": "spec.validations[1].expression", "warning": expected}]);
        *last.lock().expect("lock") = v["status"].clone();
        ok
    })
    .await;
    assert!(checked, "status: {}", last.lock().expect("lock"));
}
