//! The bootstrap RBAC policy: the ClusterRoles, Roles and bindings every
//! upstream cluster starts with (upstream's `bootstrappolicy`), written from
//! its documented contents. Each object carries the
//! `kubernetes.io/bootstrapping: rbac-defaults` label and the
//! `rbac.authorization.kubernetes.io/autoupdate: "true"` annotation.
//!
//! Covered: the user-facing roles (`cluster-admin`, `admin`, `edit`, `view`
//! and their `system:aggregate-to-*` parts), discovery and health
//! (`system:discovery`, `system:public-info-viewer`, `system:monitoring`,
//! `system:basic-user`), delegation (`system:auth-delegator`,
//! `extension-apiserver-authentication-reader`), the control-plane
//! components (`system:kube-controller-manager`, `system:kube-scheduler`,
//! `system:volume-scheduler`, `system:node`, `system:node-proxier`,
//! `system:kube-dns`), certificates and service-account issuer discovery.
//! Not covered: the per-controller `system:controller:*` roles.

use serde_json::{json, Value};

use crate::bootstrap::AUTHENTICATION_CONFIGMAP;

const RBAC: &str = "rbac.authorization.k8s.io/v1";
const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
const READ_WRITE: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const AGGREGATE_TO: &str = "rbac.authorization.k8s.io/aggregate-to-";

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn named_rule(groups: &[&str], resources: &[&str], names: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "resourceNames": names, "verbs": verbs})
}

fn urls(paths: &[&str], verbs: &[&str]) -> Value {
    json!({"nonResourceURLs": paths, "verbs": verbs})
}

fn metadata(name: &str, namespace: Option<&str>, labels: &[(&str, &str)]) -> Value {
    let mut l = serde_json::Map::new();
    l.insert("kubernetes.io/bootstrapping".into(), json!("rbac-defaults"));
    for (k, v) in labels {
        l.insert(k.to_string(), json!(v));
    }
    let mut m = json!({
        "name": name,
        "labels": l,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    });
    if let Some(ns) = namespace {
        m["namespace"] = json!(ns);
    }
    m
}

fn cluster_role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> (&'static str, Value) {
    (
        "clusterroles",
        json!({"apiVersion": RBAC, "kind": "ClusterRole", "metadata": metadata(name, None, labels), "rules": rules}),
    )
}

/// An aggregated ClusterRole: its rules are those of the ClusterRoles
/// labelled `aggregate-to-<to>: "true"`.
fn aggregated(name: &str, labels: &[(&str, &str)], to: &str) -> (&'static str, Value) {
    let (r, mut v) = cluster_role(name, labels, vec![]);
    v["aggregationRule"] = json!({"clusterRoleSelectors": [
        {"matchLabels": {format!("{AGGREGATE_TO}{to}"): "true"}}]});
    (r, v)
}

fn role(ns: &str, name: &str, rules: Vec<Value>) -> (&'static str, Value) {
    (
        "roles",
        json!({"apiVersion": RBAC, "kind": "Role", "metadata": metadata(name, Some(ns), &[]), "rules": rules}),
    )
}

/// A subject: `("User"|"Group", name)` or `("ServiceAccount", "ns/name")`.
fn subject(kind: &str, name: &str) -> Value {
    match (kind, name.split_once('/')) {
        ("ServiceAccount", Some((ns, n))) => json!({"kind": kind, "name": n, "namespace": ns}),
        _ => json!({"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}),
    }
}

fn cluster_binding(name: &str, role: &str, subjects: &[(&str, &str)]) -> (&'static str, Value) {
    (
        "clusterrolebindings",
        json!({"apiVersion": RBAC, "kind": "ClusterRoleBinding",
            "metadata": metadata(name, None, &[]),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": subjects.iter().map(|(k, n)| subject(k, n)).collect::<Vec<_>>()}),
    )
}

fn binding(ns: &str, name: &str, role: &str, subjects: &[(&str, &str)]) -> (&'static str, Value) {
    (
        "rolebindings",
        json!({"apiVersion": RBAC, "kind": "RoleBinding",
            "metadata": metadata(name, Some(ns), &[]),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": subjects.iter().map(|(k, n)| subject(k, n)).collect::<Vec<_>>()}),
    )
}

fn label(to: &str) -> String {
    format!("{AGGREGATE_TO}{to}")
}

/// Upstream's `NodeRules()`: the rules of the `system:node` ClusterRole,
/// which the Node authorizer also applies to every kubelet for what it does
/// not decide from its graph. The API is v1.37's, so the rules of features
/// enabled there are included (DRA, ClusterTrustBundles, service accounts
/// for credential providers, PodCertificateRequests).
pub fn node_rules() -> Vec<Value> {
    vec![
        rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
        rule(
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews", "subjectaccessreviews"],
            &["create"],
        ),
        rule(&[""], &["services"], READ),
        rule(&[""], &["nodes"], &["create", "get", "list", "watch"]),
        rule(&[""], &["nodes/status"], &["patch", "update"]),
        rule(&[""], &["nodes"], &["patch", "update"]),
        rule(
            &["", "events.k8s.io"],
            &["events"],
            &["create", "patch", "update"],
        ),
        rule(&[""], &["pods"], READ),
        rule(&[""], &["pods"], &["create", "delete"]),
        rule(&[""], &["pods/status"], &["patch", "update"]),
        rule(&[""], &["pods/eviction"], &["create"]),
        rule(&[""], &["configmaps", "secrets"], &["get", "list", "watch"]),
        rule(
            &[""],
            &["persistentvolumeclaims", "persistentvolumes"],
            &["get"],
        ),
        rule(&[""], &["endpoints"], &["get"]),
        rule(
            &["certificates.k8s.io"],
            &["certificatesigningrequests"],
            &["create", "get", "list", "watch"],
        ),
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["create", "delete", "get", "patch", "update"],
        ),
        rule(&["storage.k8s.io"], &["volumeattachments"], &["get"]),
        rule(&[""], &["serviceaccounts/token"], &["create"]),
        rule(
            &[""],
            &["persistentvolumeclaims/status"],
            &["get", "patch", "update"],
        ),
        rule(&["storage.k8s.io"], &["csidrivers"], READ),
        rule(
            &["storage.k8s.io"],
            &["csinodes"],
            &["create", "delete", "get", "patch", "update"],
        ),
        rule(&["node.k8s.io"], &["runtimeclasses"], READ),
        rule(&["resource.k8s.io"], &["resourceclaims"], &["get"]),
        rule(
            &["resource.k8s.io"],
            &["resourceslices"],
            &["deletecollection"],
        ),
        rule(&["certificates.k8s.io"], &["clustertrustbundles"], READ),
        rule(&[""], &["serviceaccounts"], &["get"]),
        rule(
            &["certificates.k8s.io"],
            &["podcertificaterequests"],
            &["create", "get", "list", "watch"],
        ),
    ]
}

/// Every bootstrap object as `(resource, object)`, cluster roles first.
pub fn objects() -> Vec<(&'static str, Value)> {
    let (admin, edit, view) = (label("admin"), label("edit"), label("view"));
    let health = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    let mut out = vec![
        cluster_role(
            "cluster-admin",
            &[],
            vec![rule(&["*"], &["*"], &["*"]), urls(&["*"], &["*"])],
        ),
        cluster_role(
            "system:discovery",
            &[],
            vec![urls(
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
                &["get"],
            )],
        ),
        cluster_role(
            "system:public-info-viewer",
            &[],
            vec![urls(&health, &["get"])],
        ),
        cluster_role(
            "system:monitoring",
            &[],
            vec![urls(
                &[
                    "/healthz",
                    "/healthz/*",
                    "/livez",
                    "/livez/*",
                    "/metrics",
                    "/metrics/slis",
                    "/readyz",
                    "/readyz/*",
                ],
                &["get"],
            )],
        ),
        cluster_role(
            "system:basic-user",
            &[],
            vec![
                rule(
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    &["create"],
                ),
                rule(
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                    &["create"],
                ),
            ],
        ),
        aggregated("admin", &[], "admin"),
        aggregated("edit", &[(&admin, "true")], "edit"),
        aggregated("view", &[(&edit, "true")], "view"),
        cluster_role(
            "system:aggregate-to-admin",
            &[(&admin, "true")],
            vec![
                rule(
                    &["authorization.k8s.io"],
                    &["localsubjectaccessreviews"],
                    &["create"],
                ),
                rule(
                    &["rbac.authorization.k8s.io"],
                    &["rolebindings", "roles"],
                    READ_WRITE,
                ),
            ],
        ),
        cluster_role(
            "system:aggregate-to-edit",
            &[(&edit, "true")],
            vec![
                rule(
                    &[""],
                    &[
                        "pods/attach",
                        "pods/exec",
                        "pods/portforward",
                        "pods/proxy",
                        "secrets",
                        "services/proxy",
                    ],
                    READ,
                ),
                rule(&[""], &["serviceaccounts"], &["impersonate"]),
                rule(
                    &[""],
                    &[
                        "pods",
                        "pods/attach",
                        "pods/exec",
                        "pods/portforward",
                        "pods/proxy",
                    ],
                    WRITE,
                ),
                rule(&[""], &["pods/eviction"], &["create"]),
                rule(
                    &[""],
                    &[
                        "configmaps",
                        "events",
                        "persistentvolumeclaims",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "secrets",
                        "serviceaccounts",
                        "services",
                        "services/proxy",
                    ],
                    WRITE,
                ),
                rule(&[""], &["serviceaccounts/token"], &["create"]),
                rule(
                    &["apps"],
                    &[
                        "daemonsets",
                        "deployments",
                        "deployments/rollback",
                        "deployments/scale",
                        "replicasets",
                        "replicasets/scale",
                        "statefulsets",
                        "statefulsets/scale",
                    ],
                    WRITE,
                ),
                rule(&["autoscaling"], &["horizontalpodautoscalers"], WRITE),
                rule(&["batch"], &["cronjobs", "jobs"], WRITE),
                rule(&["policy"], &["poddisruptionbudgets"], WRITE),
                rule(
                    &["networking.k8s.io"],
                    &["ingresses", "networkpolicies"],
                    WRITE,
                ),
                rule(&["coordination.k8s.io"], &["leases"], READ_WRITE),
            ],
        ),
        cluster_role(
            "system:aggregate-to-view",
            &[(&view, "true")],
            vec![
                rule(
                    &[""],
                    &[
                        "configmaps",
                        "endpoints",
                        "persistentvolumeclaims",
                        "persistentvolumeclaims/status",
                        "pods",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/status",
                    ],
                    READ,
                ),
                rule(
                    &[""],
                    &[
                        "bindings",
                        "events",
                        "limitranges",
                        "namespaces/status",
                        "pods/log",
                        "pods/status",
                        "replicationcontrollers/status",
                        "resourcequotas",
                        "resourcequotas/status",
                    ],
                    READ,
                ),
                rule(&[""], &["namespaces"], READ),
                rule(&["discovery.k8s.io"], &["endpointslices"], READ),
                rule(
                    &["apps"],
                    &[
                        "controllerrevisions",
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/scale",
                        "deployments/status",
                        "replicasets",
                        "replicasets/scale",
                        "replicasets/status",
                        "statefulsets",
                        "statefulsets/scale",
                        "statefulsets/status",
                    ],
                    READ,
                ),
                rule(
                    &["autoscaling"],
                    &[
                        "horizontalpodautoscalers",
                        "horizontalpodautoscalers/status",
                    ],
                    READ,
                ),
                rule(
                    &["batch"],
                    &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
                    READ,
                ),
                rule(
                    &["policy"],
                    &["poddisruptionbudgets", "poddisruptionbudgets/status"],
                    READ,
                ),
                rule(
                    &["networking.k8s.io"],
                    &["ingresses", "ingresses/status", "networkpolicies"],
                    READ,
                ),
            ],
        ),
        cluster_role(
            "system:auth-delegator",
            &[],
            vec![
                rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
                rule(
                    &["authorization.k8s.io"],
                    &["subjectaccessreviews"],
                    &["create"],
                ),
            ],
        ),
        cluster_role(
            "system:kube-controller-manager",
            &[],
            vec![
                rule(
                    &["", "events.k8s.io"],
                    &["events"],
                    &["create", "patch", "update"],
                ),
                rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                named_rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["kube-controller-manager"],
                    &["get", "update"],
                ),
                rule(&[""], &["secrets", "serviceaccounts"], &["create"]),
                rule(&[""], &["secrets"], &["delete"]),
                rule(
                    &[""],
                    &["configmaps", "namespaces", "secrets", "serviceaccounts"],
                    &["get"],
                ),
                rule(&[""], &["secrets", "serviceaccounts"], &["update"]),
                rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
                rule(
                    &["authorization.k8s.io"],
                    &["subjectaccessreviews"],
                    &["create"],
                ),
                rule(&["*"], &["*"], &["list", "watch"]),
                rule(&[""], &["serviceaccounts/token"], &["create"]),
            ],
        ),
        cluster_role(
            "system:kube-scheduler",
            &[],
            vec![
                rule(
                    &["", "events.k8s.io"],
                    &["events"],
                    &["create", "patch", "update"],
                ),
                rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                named_rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["kube-scheduler"],
                    &["get", "update"],
                ),
                rule(&[""], &["nodes"], READ),
                rule(&[""], &["namespaces"], READ),
                rule(&[""], &["pods"], &["delete", "get", "list", "watch"]),
                rule(&[""], &["bindings", "pods/binding"], &["create"]),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                rule(&[""], &["replicationcontrollers", "services"], READ),
                rule(&["apps"], &["replicasets", "statefulsets"], READ),
                rule(&["policy"], &["poddisruptionbudgets"], READ),
                rule(
                    &[""],
                    &["persistentvolumeclaims", "persistentvolumes"],
                    READ,
                ),
                rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
                rule(
                    &["authorization.k8s.io"],
                    &["subjectaccessreviews"],
                    &["create"],
                ),
                rule(
                    &["storage.k8s.io"],
                    &[
                        "csidrivers",
                        "csinodes",
                        "csistoragecapacities",
                        "storageclasses",
                    ],
                    READ,
                ),
                rule(&[""], &["configmaps"], READ),
            ],
        ),
        cluster_role(
            "system:volume-scheduler",
            &[],
            vec![
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "patch", "update", "watch"],
                ),
                rule(&["storage.k8s.io"], &["storageclasses"], READ),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["get", "list", "patch", "update", "watch"],
                ),
            ],
        ),
        cluster_role("system:node", &[], node_rules()),
        cluster_role(
            "system:node-proxier",
            &[],
            vec![
                rule(&[""], &["endpoints", "services"], &["list", "watch"]),
                rule(&[""], &["nodes"], READ),
                rule(
                    &["", "events.k8s.io"],
                    &["events"],
                    &["create", "patch", "update"],
                ),
                rule(
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                    &["list", "watch"],
                ),
            ],
        ),
        cluster_role(
            "system:kube-dns",
            &[],
            vec![rule(&[""], &["endpoints", "services"], &["list", "watch"])],
        ),
        cluster_role(
            "system:node-bootstrapper",
            &[],
            vec![rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests"],
                &["create", "get", "list", "watch"],
            )],
        ),
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
            &[],
            vec![rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests/nodeclient"],
                &["create"],
            )],
        ),
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
            &[],
            vec![rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests/selfnodeclient"],
                &["create"],
            )],
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            &[],
            vec![urls(
                &[
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
                &["get"],
            )],
        ),
    ];
    for (name, signer) in [
        (
            "kube-apiserver-client-approver",
            "kubernetes.io/kube-apiserver-client",
        ),
        (
            "kube-apiserver-client-kubelet-approver",
            "kubernetes.io/kube-apiserver-client-kubelet",
        ),
        ("kubelet-serving-approver", "kubernetes.io/kubelet-serving"),
        ("legacy-unknown-approver", "kubernetes.io/legacy-unknown"),
    ] {
        out.push(cluster_role(
            &format!("system:certificates.k8s.io:{name}"),
            &[],
            vec![named_rule(
                &["certificates.k8s.io"],
                &["signers"],
                &[signer],
                &["approve"],
            )],
        ));
    }
    out.extend([
        cluster_binding(
            "cluster-admin",
            "cluster-admin",
            &[("Group", "system:masters")],
        ),
        cluster_binding(
            "system:basic-user",
            "system:basic-user",
            &[("Group", "system:authenticated")],
        ),
        cluster_binding(
            "system:discovery",
            "system:discovery",
            &[("Group", "system:authenticated")],
        ),
        cluster_binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &[
                ("Group", "system:authenticated"),
                ("Group", "system:unauthenticated"),
            ],
        ),
        cluster_binding(
            "system:monitoring",
            "system:monitoring",
            &[("Group", "system:monitoring")],
        ),
        cluster_binding(
            "system:kube-controller-manager",
            "system:kube-controller-manager",
            &[("User", "system:kube-controller-manager")],
        ),
        cluster_binding(
            "system:kube-scheduler",
            "system:kube-scheduler",
            &[("User", "system:kube-scheduler")],
        ),
        cluster_binding(
            "system:volume-scheduler",
            "system:volume-scheduler",
            &[("User", "system:kube-scheduler")],
        ),
        cluster_binding(
            "system:node-proxier",
            "system:node-proxier",
            &[("User", "system:kube-proxy")],
        ),
        cluster_binding(
            "system:kube-dns",
            "system:kube-dns",
            &[("ServiceAccount", "kube-system/kube-dns")],
        ),
        cluster_binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            &[("Group", "system:serviceaccounts")],
        ),
        cluster_binding("system:node", "system:node", &[]),
        role(
            "kube-system",
            "extension-apiserver-authentication-reader",
            vec![named_rule(
                &[""],
                &["configmaps"],
                &[AUTHENTICATION_CONFIGMAP],
                READ,
            )],
        ),
        role(
            "kube-system",
            "system::leader-locking-kube-controller-manager",
            vec![
                rule(&[""], &["configmaps"], &["watch"]),
                named_rule(
                    &[""],
                    &["configmaps"],
                    &["kube-controller-manager"],
                    &["get", "update"],
                ),
            ],
        ),
        role(
            "kube-system",
            "system::leader-locking-kube-scheduler",
            vec![
                rule(&[""], &["configmaps"], &["watch"]),
                named_rule(
                    &[""],
                    &["configmaps"],
                    &["kube-scheduler"],
                    &["get", "update"],
                ),
            ],
        ),
        binding(
            "kube-system",
            "system::extension-apiserver-authentication-reader",
            "extension-apiserver-authentication-reader",
            &[
                ("User", "system:kube-controller-manager"),
                ("User", "system:kube-scheduler"),
            ],
        ),
        binding(
            "kube-system",
            "system::leader-locking-kube-controller-manager",
            "system::leader-locking-kube-controller-manager",
            &[
                ("User", "system:kube-controller-manager"),
                ("ServiceAccount", "kube-system/kube-controller-manager"),
            ],
        ),
        binding(
            "kube-system",
            "system::leader-locking-kube-scheduler",
            "system::leader-locking-kube-scheduler",
            &[
                ("User", "system:kube-scheduler"),
                ("ServiceAccount", "kube-system/kube-scheduler"),
            ],
        ),
    ]);
    out
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
