//! The built-in API surface as kubectl sees it: api-resources, defaults in
//! `-o yaml`, validation errors and Table columns.

use crate::harness::TestCluster;

/// `kubectl api-resources` rows (name, short names, apiVersion, namespaced,
/// kind) kube-core serves, as upstream 1.33 lists them.
const UPSTREAM_RESOURCES: &[(&str, &str, &str, &str, &str)] = &[
    ("bindings", "", "v1", "true", "Binding"),
    ("componentstatuses", "cs", "v1", "false", "ComponentStatus"),
    ("configmaps", "cm", "v1", "true", "ConfigMap"),
    ("endpoints", "ep", "v1", "true", "Endpoints"),
    ("events", "ev", "v1", "true", "Event"),
    ("limitranges", "limits", "v1", "true", "LimitRange"),
    ("namespaces", "ns", "v1", "false", "Namespace"),
    ("nodes", "no", "v1", "false", "Node"),
    (
        "persistentvolumeclaims",
        "pvc",
        "v1",
        "true",
        "PersistentVolumeClaim",
    ),
    ("persistentvolumes", "pv", "v1", "false", "PersistentVolume"),
    ("pods", "po", "v1", "true", "Pod"),
    ("podtemplates", "", "v1", "true", "PodTemplate"),
    (
        "replicationcontrollers",
        "rc",
        "v1",
        "true",
        "ReplicationController",
    ),
    ("resourcequotas", "quota", "v1", "true", "ResourceQuota"),
    ("secrets", "", "v1", "true", "Secret"),
    ("serviceaccounts", "sa", "v1", "true", "ServiceAccount"),
    ("services", "svc", "v1", "true", "Service"),
    (
        "mutatingwebhookconfigurations",
        "",
        "admissionregistration.k8s.io/v1",
        "false",
        "MutatingWebhookConfiguration",
    ),
    (
        "validatingadmissionpolicies",
        "",
        "admissionregistration.k8s.io/v1",
        "false",
        "ValidatingAdmissionPolicy",
    ),
    (
        "validatingadmissionpolicybindings",
        "",
        "admissionregistration.k8s.io/v1",
        "false",
        "ValidatingAdmissionPolicyBinding",
    ),
    (
        "validatingwebhookconfigurations",
        "",
        "admissionregistration.k8s.io/v1",
        "false",
        "ValidatingWebhookConfiguration",
    ),
    (
        "controllerrevisions",
        "",
        "apps/v1",
        "true",
        "ControllerRevision",
    ),
    ("daemonsets", "ds", "apps/v1", "true", "DaemonSet"),
    ("deployments", "deploy", "apps/v1", "true", "Deployment"),
    ("replicasets", "rs", "apps/v1", "true", "ReplicaSet"),
    ("statefulsets", "sts", "apps/v1", "true", "StatefulSet"),
    (
        "selfsubjectreviews",
        "",
        "authentication.k8s.io/v1",
        "false",
        "SelfSubjectReview",
    ),
    (
        "horizontalpodautoscalers",
        "hpa",
        "autoscaling/v2",
        "true",
        "HorizontalPodAutoscaler",
    ),
    ("cronjobs", "cj", "batch/v1", "true", "CronJob"),
    ("jobs", "", "batch/v1", "true", "Job"),
    (
        "certificatesigningrequests",
        "csr",
        "certificates.k8s.io/v1",
        "false",
        "CertificateSigningRequest",
    ),
    ("leases", "", "coordination.k8s.io/v1", "true", "Lease"),
    ("events", "ev", "events.k8s.io/v1", "true", "Event"),
    (
        "flowschemas",
        "",
        "flowcontrol.apiserver.k8s.io/v1",
        "false",
        "FlowSchema",
    ),
    (
        "prioritylevelconfigurations",
        "",
        "flowcontrol.apiserver.k8s.io/v1",
        "false",
        "PriorityLevelConfiguration",
    ),
    (
        "ingressclasses",
        "",
        "networking.k8s.io/v1",
        "false",
        "IngressClass",
    ),
    (
        "ingresses",
        "ing",
        "networking.k8s.io/v1",
        "true",
        "Ingress",
    ),
    (
        "ipaddresses",
        "ip",
        "networking.k8s.io/v1",
        "false",
        "IPAddress",
    ),
    (
        "networkpolicies",
        "netpol",
        "networking.k8s.io/v1",
        "true",
        "NetworkPolicy",
    ),
    (
        "servicecidrs",
        "",
        "networking.k8s.io/v1",
        "false",
        "ServiceCIDR",
    ),
    (
        "runtimeclasses",
        "",
        "node.k8s.io/v1",
        "false",
        "RuntimeClass",
    ),
    (
        "poddisruptionbudgets",
        "pdb",
        "policy/v1",
        "true",
        "PodDisruptionBudget",
    ),
    (
        "clusterrolebindings",
        "",
        "rbac.authorization.k8s.io/v1",
        "false",
        "ClusterRoleBinding",
    ),
    (
        "clusterroles",
        "",
        "rbac.authorization.k8s.io/v1",
        "false",
        "ClusterRole",
    ),
    (
        "rolebindings",
        "",
        "rbac.authorization.k8s.io/v1",
        "true",
        "RoleBinding",
    ),
    ("roles", "", "rbac.authorization.k8s.io/v1", "true", "Role"),
    (
        "priorityclasses",
        "pc",
        "scheduling.k8s.io/v1",
        "false",
        "PriorityClass",
    ),
    ("csidrivers", "", "storage.k8s.io/v1", "false", "CSIDriver"),
    ("csinodes", "", "storage.k8s.io/v1", "false", "CSINode"),
    (
        "csistoragecapacities",
        "",
        "storage.k8s.io/v1",
        "true",
        "CSIStorageCapacity",
    ),
    (
        "storageclasses",
        "sc",
        "storage.k8s.io/v1",
        "false",
        "StorageClass",
    ),
    (
        "volumeattachments",
        "",
        "storage.k8s.io/v1",
        "false",
        "VolumeAttachment",
    ),
];

const DEPLOYMENT: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web", "namespace": "default"},
 "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
  "template": {"metadata": {"labels": {"app": "web"}},
   "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]}}}}"#;

const MORE_OBJECTS: &str = r#"{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
  "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}},
 {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj", "namespace": "default"},
  "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
   "containers": [{"name": "c", "image": "busybox"}]}}}}}},
 {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
  "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
   "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}},
 {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
  "spec": {"selector": {"matchLabels": {"app": "rs"}},
   "template": {"metadata": {"labels": {"app": "rs"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}},
 {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "default"},
  "spec": {"selector": {"matchLabels": {"app": "ds"}},
   "template": {"metadata": {"labels": {"app": "ds"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}},
 {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "default"}},
 {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}, "stringData": {"a": "b"}},
 {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i", "namespace": "default"},
  "spec": {"rules": [{"host": "a.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
   "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}},
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb", "namespace": "default"},
  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
  "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}]},
 {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "namespace": "default"},
  "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}},
 {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc", "namespace": "default"},
  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
 {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "default"},
  "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}}
]}"#;

fn header(table: &str) -> Vec<String> {
    // Column names may contain one space (`NOMINATED NODE`): split on runs of
    // two or more spaces.
    table
        .lines()
        .next()
        .unwrap_or("")
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_resources_defaults_validation_and_columns_match_upstream() {
    let c = TestCluster::start().await;

    // api-resources: every resource with upstream's short names, version and scope.
    let out = c.kubectl_ok(&["api-resources", "--no-headers"]).await;
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for (name, short, version, namespaced, kind) in UPSTREAM_RESOURCES {
        let mut want = vec![*name];
        if !short.is_empty() {
            want.push(short);
        }
        want.extend([*version, *namespaced, *kind]);
        assert!(
            rows.iter().any(|r| *r == want),
            "missing {want:?} in:\n{out}"
        );
    }
    // `all` covers the workload kinds.
    let (ok, _, err) = c.kubectl(&["get", "all", "-n", "default"]).await;
    assert!(ok, "{err}");

    // A deployment: defaults seen in -o yaml as upstream sets them.
    c.kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(DEPLOYMENT))
        .await;
    let yaml = c
        .kubectl_ok(&["get", "deployment", "web", "-o", "yaml"])
        .await;
    for want in [
        "progressDeadlineSeconds: 600",
        "revisionHistoryLimit: 10",
        "maxSurge: 25%",
        "maxUnavailable: 25%",
        "type: RollingUpdate",
        "restartPolicy: Always",
        "dnsPolicy: ClusterFirst",
        "schedulerName: default-scheduler",
        "terminationGracePeriodSeconds: 30",
        "terminationMessagePath: /dev/termination-log",
        "terminationMessagePolicy: File",
        "imagePullPolicy: IfNotPresent",
        "protocol: TCP",
        "generation: 1",
    ] {
        assert!(yaml.contains(want), "missing {want} in:\n{yaml}");
    }

    // Table columns, normal and wide.
    let t = c.kubectl_ok(&["get", "deployments"]).await;
    assert_eq!(
        header(&t),
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("web ") && l.contains("0/2")),
        "{t}"
    );
    let t = c.kubectl_ok(&["get", "deployments", "-o", "wide"]).await;
    assert_eq!(
        header(&t),
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ],
        "{t}"
    );
    assert!(t.contains("nginx:1.27") && t.contains("app=web"), "{t}");

    // An invalid deployment: 422 with upstream's field path and message.
    let bad = DEPLOYMENT
        .replace("\"name\": \"web\"", "\"name\": \"bad\"")
        .replace(
            "{\"labels\": {\"app\": \"web\"}}",
            "{\"labels\": {\"app\": \"other\"}}",
        );
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(&bad))
        .await;
    assert!(!ok);
    assert!(
        err.contains("The Deployment \"bad\" is invalid")
            && err.contains("spec.template.metadata.labels: Invalid value")
            && err.contains("`selector` does not match template `labels`"),
        "{err}"
    );

    // Selector is immutable.
    let patch = r#"{"spec":{"selector":{"matchLabels":{"app":"web","tier":"x"}},"template":{"metadata":{"labels":{"app":"web","tier":"x"}}}}}"#;
    let (ok, _, err) = c
        .kubectl(&["patch", "deployment", "web", "--type=merge", "-p", patch])
        .await;
    assert!(!ok);
    assert!(
        err.contains("spec.selector: Invalid value") && err.contains("field is immutable"),
        "{err}"
    );

    // A service gets upstream's defaults and columns.
    let svc = r#"{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
      "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}"#;
    c.kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(svc))
        .await;
    let yaml = c.kubectl_ok(&["get", "svc", "web", "-o", "yaml"]).await;
    for want in [
        "type: ClusterIP",
        "sessionAffinity: None",
        "- IPv4",
        "ipFamilyPolicy: SingleStack",
        "internalTrafficPolicy: Cluster",
        "targetPort: 80",
    ] {
        assert!(yaml.contains(want), "missing {want} in:\n{yaml}");
    }
    let t = c.kubectl_ok(&["get", "svc", "web", "-o", "wide"]).await;
    assert_eq!(
        header(&t),
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ],
        "{t}"
    );

    // A pod: defaults and the wide columns.
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
      "spec": {"containers": [{"name": "c", "image": "busybox"}]}}"#;
    c.kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(pod))
        .await;
    let yaml = c.kubectl_ok(&["get", "pod", "p", "-o", "yaml"]).await;
    for want in [
        "imagePullPolicy: Always",
        "serviceAccountName: default",
        "enableServiceLinks: true",
        "qosClass: BestEffort",
    ] {
        assert!(yaml.contains(want), "missing {want} in:\n{yaml}");
    }
    let t = c.kubectl_ok(&["get", "pods", "-o", "wide"]).await;
    assert_eq!(
        header(&t),
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES"
        ],
        "{t}"
    );

    // Events print without a leading NAME column, as upstream.
    let t = c.kubectl_ok(&["get", "events", "-A"]).await;
    if !t.trim().is_empty() && !t.contains("No resources found") {
        assert!(t.starts_with("NAMESPACE   LAST SEEN"), "{t}");
    }

    // Headers of other common kinds, one object of each.
    let (ok, _, err) = c
        .kubectl_stdin(
            &["create", "--validate=false", "-f", "-"],
            Some(MORE_OBJECTS),
        )
        .await;
    assert!(ok, "{err}");
    for (args, want) in [
        (
            vec!["get", "jobs"],
            vec!["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
        ),
        (
            vec!["get", "cronjobs"],
            vec![
                "NAME",
                "SCHEDULE",
                "TIMEZONE",
                "SUSPEND",
                "ACTIVE",
                "LAST SCHEDULE",
                "AGE",
            ],
        ),
        (vec!["get", "statefulsets"], vec!["NAME", "READY", "AGE"]),
        (
            vec!["get", "replicasets"],
            vec!["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
        ),
        (
            vec!["get", "daemonsets"],
            vec![
                "NAME",
                "DESIRED",
                "CURRENT",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "NODE SELECTOR",
                "AGE",
            ],
        ),
        (
            vec!["get", "serviceaccounts"],
            vec!["NAME", "SECRETS", "AGE"],
        ),
        (vec!["get", "secrets"], vec!["NAME", "TYPE", "DATA", "AGE"]),
        (vec!["get", "namespaces"], vec!["NAME", "STATUS", "AGE"]),
        (
            vec!["get", "ingresses"],
            vec!["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
        ),
        (vec!["get", "rolebindings"], vec!["NAME", "ROLE", "AGE"]),
        (vec!["get", "leases"], vec!["NAME", "HOLDER", "AGE"]),
        (
            vec!["get", "pvc"],
            vec![
                "NAME",
                "STATUS",
                "VOLUME",
                "CAPACITY",
                "ACCESS MODES",
                "STORAGECLASS",
                "VOLUMEATTRIBUTESCLASS",
                "AGE",
            ],
        ),
        (
            vec!["get", "hpa"],
            vec![
                "NAME",
                "REFERENCE",
                "TARGETS",
                "MINPODS",
                "MAXPODS",
                "REPLICAS",
                "AGE",
            ],
        ),
    ] {
        let (ok, out, err) = c.kubectl(&args).await;
        assert!(ok, "{args:?}: {err}");
        assert_eq!(header(&out), want, "{args:?}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_and_field_validation_use_the_openapi_documents() {
    let c = TestCluster::start().await;

    let out = c
        .kubectl_ok(&["explain", "deployment.spec.strategy.rollingUpdate"])
        .await;
    for want in [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "maxSurge",
        "maxUnavailable",
        "The maximum number of pods that can be scheduled above the desired number",
    ] {
        assert!(out.contains(want), "missing {want} in:\n{out}");
    }
    let out = c
        .kubectl_ok(&["explain", "pods.spec.containers.ports"])
        .await;
    assert!(
        out.contains("containerPort") && out.contains("<integer>"),
        "{out}"
    );

    // kubectl's default validation (strict) now uses the server: an unknown
    // field fails with upstream's message.
    let bad = DEPLOYMENT.replace("\"replicas\": 2,", "\"replicas\": 2, \"replicaz\": 3,");
    let (ok, _, err) = c.kubectl_stdin(&["apply", "-f", "-"], Some(&bad)).await;
    assert!(!ok);
    assert!(
        err.contains(
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replicaz\""
        ),
        "{err}"
    );
    // With --validate=warn it is created, and kubectl prints the warning.
    let (ok, _, err) = c
        .kubectl_stdin(&["apply", "--validate=warn", "-f", "-"], Some(&bad))
        .await;
    assert!(ok, "{err}");
    assert!(
        err.contains("Warning: unknown field \"spec.replicaz\""),
        "{err}"
    );
    // A valid apply with default validation works and a second apply is a no-op patch.
    c.kubectl_ok(&["delete", "deployment", "web"]).await;
    let out = c
        .kubectl_stdin(&["apply", "-f", "-"], Some(DEPLOYMENT))
        .await;
    assert!(out.0, "{}", out.2);
    let out = c
        .kubectl_stdin(&["apply", "-f", "-"], Some(DEPLOYMENT))
        .await;
    assert!(out.0 && out.1.contains("unchanged"), "{out:?}");

    // A changed apply is a strategic merge patch: containers merge by name
    // (the port stays), no patch directive is stored.
    let changed = DEPLOYMENT.replace("nginx:1.27", "nginx:1.28");
    let out = c.kubectl_stdin(&["apply", "-f", "-"], Some(&changed)).await;
    assert!(out.0 && out.1.contains("configured"), "{out:?}");
    let json = c
        .kubectl_ok(&["get", "deployment", "web", "-o", "json"])
        .await;
    assert!(!json.contains("$setElementOrder"), "{json}");
    let d: serde_json::Value = serde_json::from_str(&json).expect("json");
    let containers = &d["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "nginx:1.28", "{containers}");
    assert_eq!(
        containers[0]["ports"][0]["containerPort"], 80,
        "{containers}"
    );
    // kubectl patch (strategic by default) adds a container by name.
    c.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}"#,
    ])
    .await;
    let names = c
        .kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[*].name}",
        ])
        .await;
    assert_eq!(names, "nginx sidecar");

    // /openapi/v3 lists group versions with hashes; the hashed URL is immutable.
    let http = c.http(crate::harness::Auth::AdminCert);
    let root: serde_json::Value = http
        .get(c.url("/openapi/v3"))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    let url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .expect("apps/v1 listed")
        .to_string();
    assert!(root["paths"]["api/v1"].is_object(), "{root}");
    let r = http.get(c.url(&url)).send().await.expect("get");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "public, immutable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_scale_uses_the_scale_subresource() {
    let c = TestCluster::start().await;
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(DEPLOYMENT))
        .await;
    assert!(ok, "{err}");
    let out = c
        .kubectl_ok(&["scale", "deployment", "web", "--replicas=5"])
        .await;
    assert!(out.contains("deployment.apps/web scaled"), "{out}");
    let r = c
        .kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.generation}",
        ])
        .await;
    assert_eq!(r, "5 2");
    // A stale precondition is refused.
    let (ok, _, err) = c
        .kubectl(&[
            "scale",
            "deployment",
            "web",
            "--current-replicas=3",
            "--replicas=1",
        ])
        .await;
    assert!(!ok);
    assert!(err.contains("Expected replicas to be 3, was 5"), "{err}");

    // The Scale view, as upstream serves it.
    let http = c.http(crate::harness::Auth::AdminCert);
    let s: serde_json::Value = http
        .get(c.url("/apis/apps/v1/namespaces/default/deployments/web/scale"))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(s["kind"], "Scale");
    assert_eq!(s["apiVersion"], "autoscaling/v1");
    assert_eq!(s["spec"]["replicas"], 5);
    assert_eq!(s["status"]["selector"], "app=web");
    // Negative replicas: 422.
    let r = http
        .patch(c.url("/apis/apps/v1/namespaces/default/deployments/web/scale"))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"spec":{"replicas":-1}}"#)
        .send()
        .await
        .expect("patch");
    let v = crate::harness::expect_status(r, 422, "Invalid").await;
    assert_eq!(v["details"]["causes"][0]["field"], "spec.replicas", "{v}");
    // Discovery names the subresource's kind.
    let list: serde_json::Value = http
        .get(c.url("/apis/apps/v1"))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    let scale = list["resources"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["name"] == "deployments/scale"))
        .cloned()
        .expect("deployments/scale listed");
    assert_eq!(scale["group"], "autoscaling");
    assert_eq!(scale["version"], "v1");
    assert_eq!(scale["kind"], "Scale");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_eviction_approval_and_kubelet_subresources() {
    let c = TestCluster::start().await;
    let http = c.http(crate::harness::Auth::AdminCert);
    let pod = |name: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    };
    for n in ["a", "b"] {
        let r = http
            .post(c.url("/api/v1/namespaces/default/pods"))
            .json(&pod(n))
            .send()
            .await
            .expect("create");
        assert_eq!(r.status(), 201);
    }
    // pods/binding, as kube-scheduler binds.
    let binding = serde_json::json!({"apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "a"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}});
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/a/binding"))
        .json(&binding)
        .send()
        .await
        .expect("bind");
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    let node = c
        .kubectl_ok(&[
            "get",
            "pod",
            "a",
            "-o",
            "jsonpath={.spec.nodeName} {.status.conditions[0].type}",
        ])
        .await;
    assert_eq!(node, "node-1 PodScheduled");
    // Binding again: 409.
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/a/binding"))
        .json(&binding)
        .send()
        .await
        .expect("bind");
    let v = crate::harness::expect_status(r, 409, "Conflict").await;
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("pod a is already assigned to node \"node-1\""),
        "{v}"
    );
    // The bindings resource.
    let r = http
        .post(c.url("/api/v1/namespaces/default/bindings"))
        .json(&serde_json::json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": "b"}, "target": {"kind": "Node", "name": "node-2"}}))
        .send()
        .await
        .expect("bind");
    assert_eq!(r.status(), 201);
    assert_eq!(
        c.kubectl_ok(&["get", "pod", "b", "-o", "jsonpath={.spec.nodeName}"])
            .await,
        "node-2"
    );

    // Kubelet subresources answer with a clear error.
    let (ok, _, err) = c.kubectl(&["logs", "a"]).await;
    assert!(!ok);
    assert!(err.contains("no connection to kubelets"), "{err}");

    // A PodDisruptionBudget protects a running pod: 429 until its status
    // allows a disruption, which the eviction then takes.
    let r = http
        .patch(c.url("/api/v1/namespaces/default/pods/b/status"))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"status":{"phase":"Running"}}"#)
        .send()
        .await
        .expect("status");
    assert_eq!(r.status(), 200);
    let pdb = r#"{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "default"},
      "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "b"}}}}"#;
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(pdb))
        .await;
    assert!(ok, "{err}");
    let evict = serde_json::json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "b"}, "deleteOptions": {"gracePeriodSeconds": 0}});
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/b/eviction"))
        .json(&evict)
        .send()
        .await
        .expect("evict");
    let v = crate::harness::expect_status(r, 429, "TooManyRequests").await;
    assert_eq!(
        v["message"], "Cannot evict pod as it would violate the pod's disruption budget.",
        "{v}"
    );
    assert_eq!(
        v["details"]["causes"][0]["reason"], "DisruptionBudget",
        "{v}"
    );
    let r = http
        .patch(c.url("/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb/status"))
        .header("Content-Type", "application/merge-patch+json")
        .body(r#"{"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}}"#)
        .send()
        .await
        .expect("status");
    assert_eq!(r.status(), 200);

    // pods/eviction deletes the pod (gracefully, as it is bound).
    let r = http
        .post(c.url("/api/v1/namespaces/default/pods/b/eviction"))
        .json(
            &serde_json::json!({"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": "b"}, "deleteOptions": {"gracePeriodSeconds": 0}}),
        )
        .send()
        .await
        .expect("evict");
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());
    let (ok, _, err) = c.kubectl(&["get", "pod", "b"]).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    let left = c
        .kubectl_ok(&[
            "get",
            "pdb",
            "pdb",
            "-o",
            "jsonpath={.status.disruptionsAllowed}",
        ])
        .await;
    assert_eq!(left, "0");

    // CSR approval: kubectl certificate approve.
    let csr = r#"{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
      "metadata": {"name": "req"},
      "spec": {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K", "signerName": "example.com/signer", "usages": ["client auth"]}}"#;
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "--validate=false", "-f", "-"], Some(csr))
        .await;
    assert!(ok, "{err}");
    let t = c.kubectl_ok(&["get", "csr", "req"]).await;
    assert!(t.contains("Pending"), "{t}");
    // (kubectl certificate approve sends protobuf, not decoded yet: send
    // the same update as JSON.)
    let mut obj: serde_json::Value = http
        .get(c.url("/apis/certificates.k8s.io/v1/certificatesigningrequests/req"))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    obj["status"]["conditions"] = serde_json::json!([{"type": "Approved", "status": "True",
        "reason": "KubectlApprove", "message": "This CSR was approved by kubectl certificate approve."}]);
    obj["spec"]["signerName"] = serde_json::json!("ignored.example.com/changed");
    let r = http
        .put(c.url("/apis/certificates.k8s.io/v1/certificatesigningrequests/req/approval"))
        .json(&obj)
        .send()
        .await
        .expect("approve");
    assert_eq!(r.status(), 200, "{}", r.text().await.unwrap_or_default());
    let signer = c
        .kubectl_ok(&["get", "csr", "req", "-o", "jsonpath={.spec.signerName}"])
        .await;
    assert_eq!(
        signer, "example.com/signer",
        "approval changes only conditions"
    );
    let t = c.kubectl_ok(&["get", "csr", "req"]).await;
    assert!(t.contains("Approved"), "{t}");
}
