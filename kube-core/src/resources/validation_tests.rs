//! Table-driven validation tests: for each kind a valid object that must be
//! accepted, and invalid variants of it that must fail with upstream's field
//! paths. Objects go through the same steps as a create in the store
//! (defaults, then metadata and kind validation).

use serde_json::{json, Value};
use shared::registry::resource::ResourceDef;
use shared::registry::validation::{validate_object_meta, FieldPath};

fn def(group: &str, resource: &str) -> ResourceDef {
    super::definitions()
        .into_iter()
        .find(|d| d.group == group && d.resource == resource)
        .unwrap_or_else(|| panic!("{group}/{resource} is declared"))
}

/// Runs create-time defaulting and validation; returns the error fields.
fn create_errors(def: &ResourceDef, mut obj: Value) -> Vec<String> {
    if let Some(Value::Object(m)) = obj.get_mut("metadata") {
        m.insert("uid".into(), json!("0b0b0b0b-0000-0000-0000-000000000000"));
    }
    def.strategy.prepare_for_create(&mut obj);
    let mut errs = validate_object_meta(
        obj.get("metadata").unwrap_or(&Value::Null),
        def.namespaced,
        def.name_rule,
        &FieldPath::new("metadata"),
    );
    errs.extend(def.strategy.validate(&obj));
    errs.into_iter().map(|e| e.field.clone()).collect()
}

/// Sets (or with `Value::Null` as `remove`, removes) the value at a JSON pointer.
fn mutate(base: &Value, pointer: &str, value: Option<Value>) -> Value {
    let mut obj = base.clone();
    let (parent, last) = pointer.rsplit_once('/').expect("pointer");
    let mut cur = &mut obj;
    for seg in parent.split('/').skip(1) {
        cur = match cur {
            Value::Array(a) => &mut a[seg.parse::<usize>().expect("index")],
            Value::Object(m) => m.entry(seg.to_string()).or_insert_with(|| json!({})),
            _ => panic!("{pointer}: not a container"),
        };
    }
    match (cur, value) {
        (Value::Object(m), Some(v)) => {
            m.insert(last.to_string(), v);
        }
        (Value::Object(m), None) => {
            m.remove(last);
        }
        (Value::Array(a), Some(v)) => {
            let i: usize = last.parse().expect("index");
            if i < a.len() {
                a[i] = v;
            } else {
                a.push(v);
            }
        }
        _ => panic!("{pointer}: cannot set"),
    }
    obj
}

fn pod_template(labels: Value) -> Value {
    json!({
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
            "ports": [{"containerPort": 80}],
            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}}]}
    })
}

fn bases() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "",
            "pods",
            json!({"metadata": {"name": "p", "namespace": "d"},
            "spec": {"containers": [{"name": "app", "image": "nginx",
                "ports": [{"containerPort": 80, "name": "http"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                "env": [{"name": "A", "value": "b"}]}],
                "volumes": [{"name": "data", "emptyDir": {}}]}}),
        ),
        (
            "",
            "services",
            json!({"metadata": {"name": "s", "namespace": "d"},
            "spec": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "https", "port": 443}]}}),
        ),
        (
            "",
            "configmaps",
            json!({"metadata": {"name": "c", "namespace": "d"}, "data": {"a.b": "c"}}),
        ),
        (
            "",
            "secrets",
            json!({"metadata": {"name": "s", "namespace": "d"}, "type": "kubernetes.io/tls",
            "data": {"tls.crt": "YQ==", "tls.key": "Yg=="}}),
        ),
        (
            "",
            "serviceaccounts",
            json!({"metadata": {"name": "sa", "namespace": "d"}}),
        ),
        ("", "namespaces", json!({"metadata": {"name": "team-a"}})),
        (
            "",
            "replicationcontrollers",
            json!({"metadata": {"name": "rc", "namespace": "d"},
            "spec": {"selector": {"app": "x"}, "template": pod_template(json!({"app": "x"}))}}),
        ),
        (
            "apps",
            "deployments",
            json!({"metadata": {"name": "web", "namespace": "d"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": pod_template(json!({"app": "web"}))}}),
        ),
        (
            "apps",
            "replicasets",
            json!({"metadata": {"name": "rs", "namespace": "d"},
            "spec": {"selector": {"matchLabels": {"app": "rs"}}, "template": pod_template(json!({"app": "rs"}))}}),
        ),
        (
            "apps",
            "statefulsets",
            json!({"metadata": {"name": "db", "namespace": "d"},
            "spec": {"serviceName": "db", "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]},
                "template": pod_template(json!({"app": "db"}))}}),
        ),
        (
            "apps",
            "daemonsets",
            json!({"metadata": {"name": "ds", "namespace": "d"},
            "spec": {"selector": {"matchLabels": {"app": "ds"}}, "template": pod_template(json!({"app": "ds"}))}}),
        ),
        (
            "batch",
            "jobs",
            json!({"metadata": {"name": "j", "namespace": "d"},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
        ),
        (
            "batch",
            "cronjobs",
            json!({"metadata": {"name": "cj", "namespace": "d"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
        ),
        (
            "rbac.authorization.k8s.io",
            "roles",
            json!({"metadata": {"name": "r", "namespace": "d"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        ),
        (
            "rbac.authorization.k8s.io",
            "clusterroles",
            json!({"metadata": {"name": "system:r"},
            "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}),
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            json!({"metadata": {"name": "rb", "namespace": "d"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"}]}),
        ),
        (
            "rbac.authorization.k8s.io",
            "clusterrolebindings",
            json!({"metadata": {"name": "crb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "d"}]}),
        ),
        (
            "networking.k8s.io",
            "ingresses",
            json!({"metadata": {"name": "i", "namespace": "d"},
            "spec": {"rules": [{"host": "*.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}}),
        ),
        (
            "coordination.k8s.io",
            "leases",
            json!({"metadata": {"name": "l", "namespace": "d"},
            "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}}),
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            json!({"metadata": {"name": "fast"}, "provisioner": "csi.example.com"}),
        ),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            json!({"metadata": {"name": "high"}, "value": 1000}),
        ),
        (
            "autoscaling",
            "horizontalpodautoscalers",
            json!({"metadata": {"name": "h", "namespace": "d"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}}),
        ),
    ]
}

/// (group, resource, JSON pointer, new value or None to remove, expected field path).
#[allow(clippy::type_complexity)]
fn cases() -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    Option<Value>,
    &'static str,
)> {
    vec![
        // metadata, all kinds
        (
            "",
            "configmaps",
            "/metadata/name",
            Some(json!("Bad_Name")),
            "metadata.name",
        ),
        (
            "",
            "configmaps",
            "/metadata/labels",
            Some(json!({"a b": "c"})),
            "metadata.labels",
        ),
        (
            "",
            "configmaps",
            "/metadata/annotations",
            Some(json!({"-x": "c"})),
            "metadata.annotations",
        ),
        (
            "",
            "configmaps",
            "/metadata/ownerReferences",
            Some(json!([{"apiVersion": "v1", "kind": "Pod", "name": "", "uid": ""}])),
            "metadata.ownerReferences.name",
        ),
        (
            "",
            "namespaces",
            "/metadata/name",
            Some(json!("a.b")),
            "metadata.name",
        ),
        (
            "",
            "services",
            "/metadata/name",
            Some(json!("1svc")),
            "metadata.name",
        ),
        // pods
        (
            "",
            "pods",
            "/spec/containers",
            Some(json!([])),
            "spec.containers",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/name",
            Some(json!("App")),
            "spec.containers[0].name",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/name",
            None,
            "spec.containers[0].name",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/image",
            None,
            "spec.containers[0].image",
        ),
        (
            "",
            "pods",
            "/spec/containers/1",
            Some(json!({"name": "app", "image": "x"})),
            "spec.containers[1].name",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/ports/0/containerPort",
            Some(json!(70000)),
            "spec.containers[0].ports[0].containerPort",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/ports/0/containerPort",
            None,
            "spec.containers[0].ports[0].containerPort",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/ports/0/protocol",
            Some(json!("HTTP")),
            "spec.containers[0].ports[0].protocol",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/ports/0/name",
            Some(json!("http_port")),
            "spec.containers[0].ports[0].name",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/resources/requests/cpu",
            Some(json!("2")),
            "spec.containers[0].resources.requests[cpu]",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/resources/limits/memory",
            Some(json!("lots")),
            "spec.containers[0].resources.limits[memory]",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/imagePullPolicy",
            Some(json!("Sometimes")),
            "spec.containers[0].imagePullPolicy",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/terminationMessagePolicy",
            Some(json!("Stdout")),
            "spec.containers[0].terminationMessagePolicy",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/volumeMounts/0/name",
            Some(json!("missing")),
            "spec.containers[0].volumeMounts[0].name",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/volumeMounts/0/mountPath",
            None,
            "spec.containers[0].volumeMounts[0].mountPath",
        ),
        (
            "",
            "pods",
            "/spec/containers/0/env/0/name",
            None,
            "spec.containers[0].env[0].name",
        ),
        (
            "",
            "pods",
            "/spec/volumes/1",
            Some(json!({"name": "data", "emptyDir": {}})),
            "spec.volumes[1].name",
        ),
        (
            "",
            "pods",
            "/spec/restartPolicy",
            Some(json!("Sometimes")),
            "spec.restartPolicy",
        ),
        (
            "",
            "pods",
            "/spec/dnsPolicy",
            Some(json!("Google")),
            "spec.dnsPolicy",
        ),
        (
            "",
            "pods",
            "/spec/activeDeadlineSeconds",
            Some(json!(0)),
            "spec.activeDeadlineSeconds",
        ),
        (
            "",
            "pods",
            "/spec/serviceAccountName",
            Some(json!("Bad SA")),
            "spec.serviceAccountName",
        ),
        (
            "",
            "pods",
            "/spec/nodeSelector",
            Some(json!({"a b": "c"})),
            "spec.nodeSelector",
        ),
        // services
        ("", "services", "/spec/ports", Some(json!([])), "spec.ports"),
        (
            "",
            "services",
            "/spec/ports/0/port",
            Some(json!(0)),
            "spec.ports[0].port",
        ),
        (
            "",
            "services",
            "/spec/ports/0/port",
            Some(json!(65536)),
            "spec.ports[0].port",
        ),
        (
            "",
            "services",
            "/spec/ports/0/protocol",
            Some(json!("ICMP")),
            "spec.ports[0].protocol",
        ),
        (
            "",
            "services",
            "/spec/ports/1/name",
            None,
            "spec.ports[1].name",
        ),
        (
            "",
            "services",
            "/spec/ports/1/name",
            Some(json!("http")),
            "spec.ports[1].name",
        ),
        (
            "",
            "services",
            "/spec/ports/0/targetPort",
            Some(json!("Not_A_Port")),
            "spec.ports[0].targetPort",
        ),
        (
            "",
            "services",
            "/spec/ports/0/nodePort",
            Some(json!(30080)),
            "spec.ports[0].nodePort",
        ),
        (
            "",
            "services",
            "/spec/type",
            Some(json!("Magic")),
            "spec.type",
        ),
        (
            "",
            "services",
            "/spec/sessionAffinity",
            Some(json!("Sticky")),
            "spec.sessionAffinity",
        ),
        (
            "",
            "services",
            "/spec/clusterIP",
            Some(json!("10.0.0.300")),
            "spec.clusterIPs[0]",
        ),
        (
            "",
            "services",
            "/spec/type",
            Some(json!("ExternalName")),
            "spec.externalName",
        ),
        // configmaps and secrets
        ("", "configmaps", "/data/a b", Some(json!("x")), "data[a b]"),
        (
            "",
            "configmaps",
            "/binaryData",
            Some(json!({"a.b": "eA=="})),
            "data[a.b]",
        ),
        ("", "secrets", "/data/tls.key", None, "data[tls.key]"),
        (
            "",
            "secrets",
            "/data/bad key",
            Some(json!("eA==")),
            "data[bad key]",
        ),
        (
            "",
            "secrets",
            "/type",
            Some(json!("kubernetes.io/dockerconfigjson")),
            "data[.dockerconfigjson]",
        ),
        (
            "",
            "secrets",
            "/type",
            Some(json!("kubernetes.io/service-account-token")),
            "metadata.annotations[kubernetes.io/service-account.name]",
        ),
        // replication controllers
        (
            "",
            "replicationcontrollers",
            "/spec/template/metadata/labels",
            Some(json!({"app": "y"})),
            "spec.template.metadata.labels",
        ),
        (
            "",
            "replicationcontrollers",
            "/spec/replicas",
            Some(json!(-1)),
            "spec.replicas",
        ),
        // deployments
        (
            "apps",
            "deployments",
            "/spec/selector",
            None,
            "spec.selector",
        ),
        (
            "apps",
            "deployments",
            "/spec/selector",
            Some(json!({})),
            "spec.selector",
        ),
        (
            "apps",
            "deployments",
            "/spec/template/metadata/labels",
            Some(json!({"app": "other"})),
            "spec.template.metadata.labels",
        ),
        (
            "apps",
            "deployments",
            "/spec/replicas",
            Some(json!(-1)),
            "spec.replicas",
        ),
        (
            "apps",
            "deployments",
            "/spec/strategy",
            Some(json!({"type": "BlueGreen"})),
            "spec.strategy.type",
        ),
        (
            "apps",
            "deployments",
            "/spec/strategy",
            Some(
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
            ),
            "spec.strategy.rollingUpdate.maxUnavailable",
        ),
        (
            "apps",
            "deployments",
            "/spec/strategy",
            Some(json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "abc"}})),
            "spec.strategy.rollingUpdate.maxSurge",
        ),
        (
            "apps",
            "deployments",
            "/spec/strategy",
            Some(json!({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})),
            "spec.strategy.rollingUpdate",
        ),
        (
            "apps",
            "deployments",
            "/spec/template/spec/restartPolicy",
            Some(json!("Never")),
            "spec.template.spec.restartPolicy",
        ),
        (
            "apps",
            "deployments",
            "/spec/template/spec/containers/0/image",
            Some(json!("")),
            "spec.template.spec.containers[0].image",
        ),
        (
            "apps",
            "deployments",
            "/spec/progressDeadlineSeconds",
            Some(json!(0)),
            "spec.progressDeadlineSeconds",
        ),
        (
            "apps",
            "deployments",
            "/spec/revisionHistoryLimit",
            Some(json!(-2)),
            "spec.revisionHistoryLimit",
        ),
        (
            "apps",
            "deployments",
            "/spec/selector/matchExpressions",
            Some(json!([{"key": "app", "operator": "Near"}])),
            "spec.selector.matchExpressions[0].operator",
        ),
        (
            "apps",
            "replicasets",
            "/spec/template/metadata/labels",
            Some(json!({})),
            "spec.template.metadata.labels",
        ),
        (
            "apps",
            "replicasets",
            "/spec/template",
            None,
            "spec.template.spec.containers",
        ),
        (
            "apps",
            "statefulsets",
            "/spec/podManagementPolicy",
            Some(json!("Random")),
            "spec.podManagementPolicy",
        ),
        (
            "apps",
            "statefulsets",
            "/spec/template/metadata/labels",
            Some(json!({"app": "web"})),
            "spec.template.metadata.labels",
        ),
        (
            "apps",
            "daemonsets",
            "/spec/template/spec/containers/0/ports/0/containerPort",
            Some(json!(-1)),
            "spec.template.spec.containers[0].ports[0].containerPort",
        ),
        (
            "apps",
            "daemonsets",
            "/spec/minReadySeconds",
            Some(json!(-5)),
            "spec.minReadySeconds",
        ),
        // jobs and cronjobs
        (
            "batch",
            "jobs",
            "/spec/template/spec/restartPolicy",
            Some(json!("Always")),
            "spec.template.spec.restartPolicy",
        ),
        (
            "batch",
            "jobs",
            "/spec/backoffLimit",
            Some(json!(-1)),
            "spec.backoffLimit",
        ),
        (
            "batch",
            "jobs",
            "/spec/completionMode",
            Some(json!("Random")),
            "spec.completionMode",
        ),
        (
            "batch",
            "jobs",
            "/spec/parallelism",
            Some(json!(-3)),
            "spec.parallelism",
        ),
        ("batch", "cronjobs", "/spec/schedule", None, "spec.schedule"),
        (
            "batch",
            "cronjobs",
            "/spec/concurrencyPolicy",
            Some(json!("Sometimes")),
            "spec.concurrencyPolicy",
        ),
        (
            "batch",
            "cronjobs",
            "/spec/jobTemplate/spec/template/spec/restartPolicy",
            Some(json!("Always")),
            "spec.jobTemplate.spec.template.spec.restartPolicy",
        ),
        (
            "batch",
            "cronjobs",
            "/spec/successfulJobsHistoryLimit",
            Some(json!(-1)),
            "spec.successfulJobsHistoryLimit",
        ),
        // RBAC
        (
            "rbac.authorization.k8s.io",
            "roles",
            "/rules/0/verbs",
            Some(json!([])),
            "rules[0].verbs",
        ),
        (
            "rbac.authorization.k8s.io",
            "roles",
            "/rules/0/apiGroups",
            None,
            "rules[0].apiGroups",
        ),
        (
            "rbac.authorization.k8s.io",
            "roles",
            "/rules/0/resources",
            Some(json!([])),
            "rules[0].resources",
        ),
        (
            "rbac.authorization.k8s.io",
            "roles",
            "/rules/0/nonResourceURLs",
            Some(json!(["/x"])),
            "rules[0].nonResourceURLs",
        ),
        (
            "rbac.authorization.k8s.io",
            "clusterroles",
            "/rules/0/resources",
            Some(json!(["pods"])),
            "rules[0].nonResourceURLs",
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            "/roleRef/kind",
            Some(json!("User")),
            "roleRef.kind",
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            "/roleRef/apiGroup",
            Some(json!("")),
            "roleRef.apiGroup",
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            "/roleRef/name",
            Some(json!("")),
            "roleRef.name",
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            "/subjects/0/kind",
            Some(json!("Robot")),
            "subjects[0].kind",
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            "/subjects/1/apiGroup",
            Some(json!("")),
            "subjects[1].apiGroup",
        ),
        (
            "rbac.authorization.k8s.io",
            "rolebindings",
            "/subjects/1/name",
            None,
            "subjects[1].name",
        ),
        (
            "rbac.authorization.k8s.io",
            "clusterrolebindings",
            "/subjects/0/namespace",
            None,
            "subjects[0].namespace",
        ),
        (
            "rbac.authorization.k8s.io",
            "clusterrolebindings",
            "/roleRef/kind",
            Some(json!("Role")),
            "roleRef.kind",
        ),
        // ingresses
        (
            "networking.k8s.io",
            "ingresses",
            "/spec/rules",
            Some(json!([])),
            "spec",
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "/spec/rules/0/http/paths/0/pathType",
            None,
            "spec.rules[0].http.paths[0].pathType",
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "/spec/rules/0/http/paths/0/pathType",
            Some(json!("Regex")),
            "spec.rules[0].http.paths[0].pathType",
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "/spec/rules/0/http/paths/0/path",
            Some(json!("foo")),
            "spec.rules[0].http.paths[0].path",
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "/spec/rules/0/http/paths/0/backend/service/port",
            Some(json!({})),
            "spec.rules[0].http.paths[0].backend.service.port",
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "/spec/rules/0/http/paths/0/backend/service/name",
            Some(json!("")),
            "spec.rules[0].http.paths[0].backend.service.name",
        ),
        (
            "networking.k8s.io",
            "ingresses",
            "/spec/rules/0/host",
            Some(json!("Bad_Host")),
            "spec.rules[0].host",
        ),
        // leases, storage classes, priority classes, HPAs
        (
            "coordination.k8s.io",
            "leases",
            "/spec/leaseDurationSeconds",
            Some(json!(0)),
            "spec.leaseDurationSeconds",
        ),
        (
            "coordination.k8s.io",
            "leases",
            "/spec/leaseTransitions",
            Some(json!(-1)),
            "spec.leaseTransitions",
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            "/provisioner",
            None,
            "provisioner",
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            "/reclaimPolicy",
            Some(json!("Recycle")),
            "reclaimPolicy",
        ),
        (
            "storage.k8s.io",
            "storageclasses",
            "/volumeBindingMode",
            Some(json!("Later")),
            "volumeBindingMode",
        ),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            "/value",
            Some(json!(2_000_000_000)),
            "value",
        ),
        (
            "scheduling.k8s.io",
            "priorityclasses",
            "/preemptionPolicy",
            Some(json!("Always")),
            "preemptionPolicy",
        ),
        (
            "autoscaling",
            "horizontalpodautoscalers",
            "/spec/maxReplicas",
            Some(json!(0)),
            "spec.maxReplicas",
        ),
        (
            "autoscaling",
            "horizontalpodautoscalers",
            "/spec/minReplicas",
            Some(json!(5)),
            "spec.maxReplicas",
        ),
        (
            "autoscaling",
            "horizontalpodautoscalers",
            "/spec/scaleTargetRef/name",
            None,
            "spec.scaleTargetRef.name",
        ),
    ]
}

#[test]
fn valid_objects_are_accepted() {
    for (group, resource, obj) in bases() {
        let errs = create_errors(&def(group, resource), obj);
        assert!(
            errs.is_empty(),
            "{group}/{resource}: unexpected errors {errs:?}"
        );
    }
}

#[test]
fn invalid_objects_fail_with_upstream_field_paths() {
    let bases = bases();
    let cases = cases();
    assert!(cases.len() >= 60, "at least 60 invalid objects");
    let mut failures = Vec::new();
    for (group, resource, pointer, value, field) in cases {
        let (_, _, base) = bases
            .iter()
            .find(|(g, r, _)| *g == group && *r == resource)
            .unwrap_or_else(|| panic!("no base for {group}/{resource}"));
        let obj = mutate(base, pointer, value.clone());
        let errs = create_errors(&def(group, resource), obj);
        if !errs.iter().any(|e| e == field) {
            failures.push(format!(
                "{group}/{resource} {pointer}={value:?}: want {field}, got {errs:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn defaults_match_upstream() {
    let d = def("apps", "deployments");
    let (_, _, mut obj) = bases()
        .into_iter()
        .find(|(_, r, _)| *r == "deployments")
        .unwrap();
    d.strategy.prepare_for_create(&mut obj);
    let spec = &obj["spec"];
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], json!(10));
    assert_eq!(spec["progressDeadlineSeconds"], json!(600));
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], json!("Always"));
    assert_eq!(pod["dnsPolicy"], json!("ClusterFirst"));
    assert_eq!(pod["schedulerName"], json!("default-scheduler"));
    assert_eq!(pod["terminationGracePeriodSeconds"], json!(30));
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], json!("IfNotPresent"));
    assert_eq!(c["terminationMessagePath"], json!("/dev/termination-log"));
    assert_eq!(c["terminationMessagePolicy"], json!("File"));
    assert_eq!(c["ports"][0]["protocol"], json!("TCP"));

    let s = def("", "services");
    let mut svc = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}});
    s.strategy.prepare_for_create(&mut svc);
    assert_eq!(svc["spec"]["type"], json!("ClusterIP"));
    assert_eq!(svc["spec"]["sessionAffinity"], json!("None"));
    assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(svc["spec"]["ipFamilyPolicy"], json!("SingleStack"));
    assert_eq!(svc["spec"]["internalTrafficPolicy"], json!("Cluster"));
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], json!(80));

    let j = def("batch", "jobs");
    let (_, _, mut job) = bases().into_iter().find(|(_, r, _)| *r == "jobs").unwrap();
    job["metadata"]["uid"] = json!("u1");
    j.strategy.prepare_for_create(&mut job);
    assert_eq!(job["spec"]["backoffLimit"], json!(6));
    assert_eq!(job["spec"]["completions"], json!(1));
    assert_eq!(
        job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        json!("u1")
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["job-name"],
        json!("j")
    );
}

#[test]
fn immutable_fields() {
    let d = def("apps", "deployments");
    let (_, _, mut old) = bases()
        .into_iter()
        .find(|(_, r, _)| *r == "deployments")
        .unwrap();
    d.strategy.prepare_for_create(&mut old);
    let new = mutate(&old, "/spec/selector/matchLabels/tier", Some(json!("x")));
    let new = mutate(
        &new,
        "/spec/template/metadata/labels/tier",
        Some(json!("x")),
    );
    let errs: Vec<String> = d
        .strategy
        .validate_update(&new, &old)
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(errs, vec!["spec.selector"]);

    let c = def("", "configmaps");
    let old = json!({"metadata": {"name": "c"}, "immutable": true, "data": {"a": "b"}});
    let new = json!({"metadata": {"name": "c"}, "immutable": true, "data": {"a": "c"}});
    let errs: Vec<String> = c
        .strategy
        .validate_update(&new, &old)
        .into_iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(
        errs,
        vec!["data: Forbidden: field is immutable when `immutable` is set"]
    );

    let s = def("", "services");
    let old = json!({"metadata": {"name": "s"}, "spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "ports": [{"port": 80}]}});
    let new = json!({"metadata": {"name": "s"}, "spec": {"clusterIP": "10.96.0.11", "clusterIPs": ["10.96.0.11"], "ports": [{"port": 80}]}});
    let errs: Vec<String> = s
        .strategy
        .validate_update(&new, &old)
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(errs, vec!["spec.clusterIPs[0]"]);

    let p = def("", "pods");
    let (_, _, mut old) = bases().into_iter().find(|(_, r, _)| *r == "pods").unwrap();
    p.strategy.prepare_for_create(&mut old);
    let new = mutate(&old, "/spec/containers/0/image", Some(json!("nginx:2")));
    assert!(
        p.strategy.validate_update(&new, &old).is_empty(),
        "image may change"
    );
    let new = mutate(&old, "/spec/restartPolicy", Some(json!("Never")));
    let errs: Vec<String> = p
        .strategy
        .validate_update(&new, &old)
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(errs, vec!["spec"]);
}
