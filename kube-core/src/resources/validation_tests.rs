//! Table-driven validation tests: for each kind a valid object that must be
//! accepted, and invalid variants of it that must fail with upstream's field
//! paths. Objects go through the same steps as a create in the store
//! (defaults, then metadata and kind validation).

use apiserver::apimachinery::validation::{validate_object_meta, FieldPath};
use apiserver::registry::resource::ResourceDef;
use serde_json::{json, Value};

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

#[path = "validation_cases.rs"]
mod validation_cases;
use validation_cases::cases;

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
