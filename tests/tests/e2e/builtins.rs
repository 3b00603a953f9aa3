//! The built-in API surface as kubectl sees it: api-resources, defaults in
//! `-o yaml`, validation errors and Table columns.

use crate::harness::{SendExt, TestCluster};

/// `kubectl api-resources` rows (name, short names, apiVersion, namespaced,
/// kind) the chain serves, as upstream v1.36 lists its default set, plus the
/// kinds v1.37 makes GA (ClusterTrustBundle, PodCertificateRequest,
/// DeviceTaintRule, StorageVersionMigration).
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
        "tokenreviews",
        "",
        "authentication.k8s.io/v1",
        "false",
        "TokenReview",
    ),
    (
        "localsubjectaccessreviews",
        "",
        "authorization.k8s.io/v1",
        "true",
        "LocalSubjectAccessReview",
    ),
    (
        "selfsubjectaccessreviews",
        "",
        "authorization.k8s.io/v1",
        "false",
        "SelfSubjectAccessReview",
    ),
    (
        "selfsubjectrulesreviews",
        "",
        "authorization.k8s.io/v1",
        "false",
        "SelfSubjectRulesReview",
    ),
    (
        "subjectaccessreviews",
        "",
        "authorization.k8s.io/v1",
        "false",
        "SubjectAccessReview",
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
    (
        "mutatingadmissionpolicies",
        "",
        "admissionregistration.k8s.io/v1",
        "false",
        "MutatingAdmissionPolicy",
    ),
    (
        "mutatingadmissionpolicybindings",
        "",
        "admissionregistration.k8s.io/v1",
        "false",
        "MutatingAdmissionPolicyBinding",
    ),
    (
        "customresourcedefinitions",
        "crd,crds",
        "apiextensions.k8s.io/v1",
        "false",
        "CustomResourceDefinition",
    ),
    (
        "apiservices",
        "",
        "apiregistration.k8s.io/v1",
        "false",
        "APIService",
    ),
    (
        "clustertrustbundles",
        "",
        "certificates.k8s.io/v1",
        "false",
        "ClusterTrustBundle",
    ),
    (
        "podcertificaterequests",
        "",
        "certificates.k8s.io/v1",
        "true",
        "PodCertificateRequest",
    ),
    (
        "endpointslices",
        "",
        "discovery.k8s.io/v1",
        "true",
        "EndpointSlice",
    ),
    (
        "deviceclasses",
        "",
        "resource.k8s.io/v1",
        "false",
        "DeviceClass",
    ),
    (
        "devicetaintrules",
        "",
        "resource.k8s.io/v1",
        "false",
        "DeviceTaintRule",
    ),
    (
        "resourceclaims",
        "",
        "resource.k8s.io/v1",
        "true",
        "ResourceClaim",
    ),
    (
        "resourceclaimtemplates",
        "",
        "resource.k8s.io/v1",
        "true",
        "ResourceClaimTemplate",
    ),
    (
        "resourceslices",
        "",
        "resource.k8s.io/v1",
        "false",
        "ResourceSlice",
    ),
    (
        "volumeattributesclasses",
        "vac",
        "storage.k8s.io/v1",
        "false",
        "VolumeAttributesClass",
    ),
    (
        "storageversionmigrations",
        "",
        "storagemigration.k8s.io/v1",
        "false",
        "StorageVersionMigration",
    ),
];

pub(crate) const DEPLOYMENT: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
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
    // ... and nothing else: the set is upstream's, kind for kind.
    let extra: Vec<&Vec<&str>> = rows
        .iter()
        .filter(|row| {
            let kind = row.last().copied().unwrap_or("");
            let version = row.get(row.len().saturating_sub(3)).copied().unwrap_or("");
            !UPSTREAM_RESOURCES
                .iter()
                .any(|(_, _, v, _, k)| *k == kind && *v == version)
        })
        .collect();
    assert!(
        extra.is_empty(),
        "served but not in upstream's default set: {extra:?}"
    );
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
            vec!["get", "configmaps", "-n", "kube-system"],
            vec!["NAME", "DATA", "AGE"],
        ),
        (vec!["get", "clusterroles"], vec!["NAME", "CREATED AT"]),
        (
            vec!["get", "roles", "-n", "kube-system"],
            vec!["NAME", "CREATED AT"],
        ),
        (
            vec!["get", "clusterrolebindings", "-o", "wide"],
            vec!["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"],
        ),
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

/// As upstream's node strategy: a Node created with a status (as a kubelet
/// registers it) keeps it, and nodes carry no `metadata.generation`; other
/// kinds with a `/status` subresource start without the status sent.
#[tokio::test]
async fn a_node_created_with_its_status_keeps_it() {
    let c = TestCluster::start().await;
    let http = c.http(crate::harness::Auth::AdminCert);
    let node = serde_json::json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "registered"},
        "status": {
            "conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                            "message": "container runtime status check may not have completed yet"}],
            "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
            "nodeInfo": {"kubeletVersion": "v1.36.2", "machineID": "", "systemUUID": "",
                         "bootID": "", "kernelVersion": "", "osImage": "",
                         "containerRuntimeVersion": "", "kubeProxyVersion": "",
                         "operatingSystem": "linux", "architecture": "amd64"}
        }
    });
    let resp = http.post(c.url("/api/v1/nodes")).json(&node).sent().await;
    assert_eq!(resp.status().as_u16(), 201);
    let got: serde_json::Value = http
        .get(c.url("/api/v1/nodes/registered"))
        .fetch_json()
        .await;
    assert_eq!(got["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(got["status"]["capacity"]["pods"], "110");
    assert_eq!(got["status"]["nodeInfo"]["kubeletVersion"], "v1.36.2");
    assert!(got["metadata"].get("generation").is_none(), "{got}");

    // A Service's status is not the client's to set on create.
    let svc = serde_json::json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "no-status", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}
    });
    let created: serde_json::Value = http
        .post(c.url("/api/v1/namespaces/default/services"))
        .json(&svc)
        .fetch_json()
        .await;
    assert!(
        created["status"]["loadBalancer"].get("ingress").is_none(),
        "{created}"
    );
}
