//! Upstream's default-on admission plugins in kube-core, seen through
//! kubectl and the HTTP API: ServiceAccount, DefaultTolerationSeconds,
//! Priority, LimitRanger, RuntimeClass and ResourceQuota (with racing
//! creates), and NamespaceLifecycle for custom resources.

use crate::harness::{eventually, expect_status, Auth, SendExt, TestCluster};
use std::time::Duration;

use serde_json::{json, Value};

async fn apply(c: &TestCluster, v: &Value) -> (bool, String, String) {
    c.kubectl_stdin(&["create", "-f", "-"], Some(&v.to_string()))
        .await
}

fn pod(ns: &str, name: &str, extra_spec: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]});
    if let (Value::Object(s), Value::Object(e)) = (&mut spec, extra_spec) {
        s.extend(e);
    }
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns}, "spec": spec})
}

async fn get_json(c: &TestCluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    serde_json::from_str(&c.kubectl_ok(&all).await).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_get_their_service_account_token_tolerations_and_priority() {
    let c = TestCluster::start().await;
    c.create_namespace_for_pods("adm").await;
    let (ok, out, err) = apply(&c, &pod("adm", "p", json!({}))).await;
    assert!(ok, "{out} {err}");
    let p = get_json(&c, &["get", "pod", "p", "-n", "adm"]).await;
    let spec = &p["spec"];
    assert_eq!(spec["serviceAccountName"], "default");
    assert_eq!(spec["priority"], 0);
    assert_eq!(spec["preemptionPolicy"], "PreemptLowerPriority");
    let volume = spec["volumes"][0]["name"].as_str().unwrap_or("");
    assert!(volume.starts_with("kube-api-access-"), "{spec}");
    assert_eq!(
        spec["volumes"][0]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3607
    );
    let mount = &spec["containers"][0]["volumeMounts"][0];
    assert_eq!(
        mount["mountPath"],
        "/var/run/secrets/kubernetes.io/serviceaccount"
    );
    assert_eq!(mount["name"], volume);
    let tolerations = spec["tolerations"].as_array().expect("tolerations");
    assert!(tolerations
        .iter()
        .any(|t| t["key"] == "node.kubernetes.io/not-ready" && t["tolerationSeconds"] == 300));

    // Opting out of the token, through the pod or its account.
    let (ok, out, err) = apply(
        &c,
        &pod(
            "adm",
            "no-token",
            json!({"automountServiceAccountToken": false}),
        ),
    )
    .await;
    assert!(ok, "{out} {err}");
    let p = get_json(&c, &["get", "pod", "no-token", "-n", "adm"]).await;
    assert!(p["spec"].get("volumes").is_none(), "{}", p["spec"]);

    // An account that does not exist, a class that does not exist.
    let (ok, _, err) = apply(
        &c,
        &pod("adm", "ghost", json!({"serviceAccountName": "ghost"})),
    )
    .await;
    assert!(!ok);
    assert!(
        err.contains("pods \"ghost\" is forbidden: error looking up service account adm/ghost: serviceaccount \"ghost\" not found"),
        "{err}"
    );
    let (ok, _, err) = apply(
        &c,
        &pod("adm", "prio", json!({"priorityClassName": "nope"})),
    )
    .await;
    assert!(!ok);
    assert!(
        err.contains("no PriorityClass with name nope was found"),
        "{err}"
    );
    let (ok, _, err) = apply(&c, &pod("adm", "rc", json!({"runtimeClassName": "gvisor"}))).await;
    assert!(!ok);
    assert!(
        err.contains("pod rejected: RuntimeClass \"gvisor\" not found"),
        "{err}"
    );

    // The system classes exist, and a pod naming one gets its value.
    let (ok, out, err) = apply(
        &c,
        &pod(
            "adm",
            "critical",
            json!({"priorityClassName": "system-cluster-critical"}),
        ),
    )
    .await;
    assert!(ok, "{out} {err}");
    let p = get_json(&c, &["get", "pod", "critical", "-n", "adm"]).await;
    assert_eq!(p["spec"]["priority"], 2_000_000_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_ranges_default_and_bound_containers() {
    let c = TestCluster::start().await;
    c.create_namespace_for_pods("limits").await;
    let lr = json!({"apiVersion": "v1", "kind": "LimitRange",
        "metadata": {"name": "lr", "namespace": "limits"},
        "spec": {"limits": [{"type": "Container",
            "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m"},
            "max": {"cpu": "1"}}]}});
    let (ok, out, err) = apply(&c, &lr).await;
    assert!(ok, "{out} {err}");
    // The LimitRange itself is defaulted as upstream's.
    let stored = get_json(&c, &["get", "limitrange", "lr", "-n", "limits"]).await;
    assert_eq!(
        stored["spec"]["limits"][0]["defaultRequest"]["memory"],
        "256Mi"
    );

    let (ok, out, err) = apply(&c, &pod("limits", "p", json!({}))).await;
    assert!(ok, "{out} {err}");
    let p = get_json(&c, &["get", "pod", "p", "-n", "limits"]).await;
    let res = &p["spec"]["containers"][0]["resources"];
    assert_eq!(res["requests"]["cpu"], "100m", "{res}");
    assert_eq!(res["limits"]["cpu"], "500m", "{res}");
    assert_eq!(res["limits"]["memory"], "256Mi", "{res}");
    assert_eq!(p["status"]["qosClass"], "Burstable");
    assert_eq!(
        p["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"
    );

    let big = pod(
        "limits",
        "big",
        json!({"containers": [{"name": "app", "image": "x",
            "resources": {"limits": {"cpu": "2"}}}]}),
    );
    let (ok, _, err) = apply(&c, &big).await;
    assert!(!ok);
    assert!(
        err.contains(
            "pods \"big\" is forbidden: maximum cpu usage per Container is 1, but limit is 2"
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_quota_admits_exactly_its_limit_of_racing_creates() {
    let c = TestCluster::start().await;
    c.create_namespace_for_pods("quota").await;
    let q = json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "quota"},
        "spec": {"hard": {"pods": "2"}}});
    let (ok, out, err) = apply(&c, &q).await;
    assert!(ok, "{out} {err}");
    // What the quota controller of kube-controller-manager records first.
    let http = c.http(Auth::AdminCert);
    let status = json!({"status": {"hard": {"pods": "2"}, "used": {"pods": "0"}}});
    let resp = http
        .patch(c.url("/api/v1/namespaces/quota/resourcequotas/q/status"))
        .header("Content-Type", "application/merge-patch+json")
        .body(status.to_string())
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 200);

    let creates = (0..10).map(|i| {
        let http = http.clone();
        let url = c.url("/api/v1/namespaces/quota/pods");
        let body = pod("quota", &format!("p{i}"), json!({}));
        async move {
            http.post(url)
                .header("Content-Type", "application/json")
                .body(body.to_string())
                .sent()
                .await
        }
    });
    let responses = futures_util::future::join_all(creates).await;
    let mut created = 0;
    let mut refused = Vec::new();
    for r in responses {
        match r.status().as_u16() {
            201 => created += 1,
            _ => refused.push(r),
        }
    }
    assert_eq!(created, 2, "exactly the quota's two pods are created");
    for r in refused {
        let s = expect_status(r, 403, "Forbidden").await;
        let msg = s["message"].as_str().unwrap_or("");
        assert!(
            msg.contains("exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"),
            "{msg}"
        );
    }
    let quota = get_json(&c, &["get", "resourcequota", "q", "-n", "quota"]).await;
    assert_eq!(quota["status"]["used"]["pods"], "2");
    let pods = get_json(&c, &["get", "pods", "-n", "quota"]).await;
    assert_eq!(pods["items"].as_array().map(Vec::len), Some(2));

    // A dry run is checked but not charged.
    let resp = http
        .post(c.url("/api/v1/namespaces/quota/configmaps?dryRun=All"))
        .header("Content-Type", "application/json")
        .body(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}).to_string(),
        )
        .sent()
        .await;
    assert_eq!(resp.status().as_u16(), 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_flags_select_plugins() {
    let c = TestCluster::start().await;
    c.create_namespace_for_pods("flags").await;
    // A pod with no tolerations gets DefaultTolerationSeconds' two.
    let (ok, out, err) = apply(&c, &pod("flags", "p", json!({}))).await;
    assert!(ok, "{out} {err}");
    let p = get_json(&c, &["get", "pod", "p", "-n", "flags"]).await;
    assert_eq!(p["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
    // kube-core refuses an unknown plugin name at start, as upstream.
    let bin = c
        .cluster
        .config()
        .bin_dir
        .join(deploy::Tier::KubeCore.binary_name());
    let mut ports = c.cluster.ports();
    ports.kube_core = deploy::free_port().expect("free port");
    let mut args = deploy::tier_args(deploy::Tier::KubeCore, c.cluster.pki(), &ports, &[]);
    args.push("--enable-admission-plugins=Bogus".into());
    let out = tokio::process::Command::new(bin)
        .args(args)
        .output()
        .await
        .expect("run kube-core");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("enable-admission-plugins plugin \"Bogus\" is unknown"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_and_ingresses_get_the_default_class() {
    let c = TestCluster::start().await;
    let sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "fast",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "example.com/fast"});
    let ic = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": "nginx",
            "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "example.com/nginx"}});
    for obj in [&sc, &ic] {
        let (ok, out, err) = apply(&c, obj).await;
        assert!(ok, "{out} {err}");
    }
    let claim = |name: &str, class: Option<&str>| {
        let mut spec = json!({"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}});
        if let Some(cl) = class {
            spec["storageClassName"] = json!(cl);
        }
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec})
    };
    for obj in [claim("auto", None), claim("none", Some(""))] {
        let (ok, out, err) = apply(&c, &obj).await;
        assert!(ok, "{out} {err}");
    }
    let auto = get_json(&c, &["get", "pvc", "auto", "-n", "default"]).await;
    assert_eq!(auto["spec"]["storageClassName"], "fast");
    // An explicit "" asks for no class and keeps it.
    let none = get_json(&c, &["get", "pvc", "none", "-n", "default"]).await;
    assert_eq!(none["spec"]["storageClassName"], "");
    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}});
    let (ok, out, err) = apply(&c, &ing).await;
    assert!(ok, "{out} {err}");
    let ing = get_json(&c, &["get", "ingress", "web", "-n", "default"]).await;
    assert_eq!(ing["spec"]["ingressClassName"], "nginx");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_nodes_and_certificates_plugins() {
    let c = TestCluster::start().await;
    // StorageObjectInUseProtection.
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/pv1"}}});
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fixed",
                 "resources": {"requests": {"storage": "1Gi"}}}});
    let sc = |name: &str, expand: bool| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "example.com/csi", "allowVolumeExpansion": expand})
    };
    for obj in [&pv, &claim, &sc("fixed", false), &sc("growing", true)] {
        let (ok, out, err) = apply(&c, obj).await;
        assert!(ok, "{out} {err}");
    }
    let got = get_json(&c, &["get", "pv", "pv1"]).await;
    assert_eq!(
        got["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );
    let got = get_json(&c, &["get", "pvc", "data", "-n", "default"]).await;
    assert_eq!(
        got["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );

    // PersistentVolumeClaimResize.
    async fn grow(c: &TestCluster, name: &str) -> (bool, String, String) {
        let patch = r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#;
        c.kubectl(&["patch", "pvc", name, "-n", "default", "-p", patch])
            .await
    }
    let (ok, _, err) = grow(&c, "data").await;
    assert!(
        !ok && err.contains("Only bound persistent volume claims can be expanded"),
        "{err}"
    );
    let bind = |name: &str| {
        vec![
            "patch".to_string(),
            "pvc".into(),
            name.into(),
            "-n".into(),
            "default".into(),
            "--subresource=status".into(),
            "--type=merge".into(),
            "-p".into(),
            r#"{"status":{"phase":"Bound"}}"#.into(),
        ]
    };
    let args = bind("data");
    c.kubectl_ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    let (ok, _, err) = grow(&c, "data").await;
    assert!(
        !ok && err.contains("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"),
        "{err}"
    );
    let mut growing = claim.clone();
    growing["metadata"]["name"] = json!("more");
    growing["spec"]["storageClassName"] = json!("growing");
    let (ok, out, err) = apply(&c, &growing).await;
    assert!(ok, "{out} {err}");
    let args = bind("more");
    c.kubectl_ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    let (ok, _, err) = grow(&c, "more").await;
    assert!(ok, "{err}");

    // TaintNodesByCondition.
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}});
    let (ok, out, err) = apply(&c, &node).await;
    assert!(ok, "{out} {err}");
    let got = get_json(&c, &["get", "node", "n1"]).await;
    assert_eq!(
        got["spec"]["taints"],
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );

    // CertificateSubjectRestriction.
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "mallory");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:masters");
    let pem = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    let request = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pem);
    let csr = |name: &str, signer: &str| {
        json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {"request": request, "signerName": signer, "usages": ["client auth"]}})
    };
    let (ok, _, err) = apply(&c, &csr("masters", "kubernetes.io/kube-apiserver-client")).await;
    assert!(!ok);
    assert!(
        err.contains(r#"certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"#),
        "{err}"
    );
    // Another signer may carry the group.
    let (ok, out, err) = apply(&c, &csr("other", "example.com/signer")).await;
    assert!(ok, "{out} {err}");

    // CertificateApproval: updating the approval subresource is not enough;
    // the approver needs `approve` on the signer.
    let rbac = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "csr-approver"},
         "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
                    "verbs": ["get", "list", "update", "patch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "csr-approver"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csr-approver"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}]});
    let (ok, out, err) = c
        .kubectl_stdin(
            &["create", "--validate=false", "-f", "-"],
            Some(&rbac.to_string()),
        )
        .await;
    assert!(ok, "{out} {err}");
    let denied = eventually(Duration::from_secs(10), || async {
        let (ok, _, err) = c
            .kubectl(&["certificate", "approve", "other", "--as=bob"])
            .await;
        !ok && err.contains(
            r#"user not permitted to approve requests with signerName \"example.com/signer\""#,
        ) || err.contains(
            r#"user not permitted to approve requests with signerName "example.com/signer""#,
        )
    })
    .await;
    assert!(denied, "bob approved without approve on the signer");
    c.kubectl_ok(&["certificate", "approve", "other"]).await;

    // ClusterTrustBundleAttest: a bundle for a signer needs `attest` on it.
    let role = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "ctb-writer"},
         "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["clustertrustbundles"], "verbs": ["create"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "ctb-writer"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ctb-writer"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}]});
    let (ok, out, err) = c
        .kubectl_stdin(
            &["create", "--validate=false", "-f", "-"],
            Some(&role.to_string()),
        )
        .await;
    assert!(ok, "{out} {err}");
    let ca = std::fs::read_to_string(&c.cluster.pki().ca_cert).expect("ca");
    let bundle = |name: &str| {
        json!({"apiVersion": "certificates.k8s.io/v1", "kind": "ClusterTrustBundle",
            "metadata": {"name": name}, "spec": {"signerName": "example.com/signer", "trustBundle": ca}})
    };
    let last = std::sync::Mutex::new(String::new());
    let refused = eventually(Duration::from_secs(10), || async {
        let (ok, out, err) = c
            .kubectl_stdin(
                &["create", "--validate=false", "-f", "-", "--as=bob"],
                Some(&bundle("example.com:signer:bob").to_string()),
            )
            .await;
        *last.lock().expect("lock") = format!("{ok} {out} {err}");
        !ok && err.contains(r#"user not permitted to attest for signerName "example.com/signer""#)
    })
    .await;
    assert!(
        refused,
        "bob wrote a trust bundle without attest on the signer: {}",
        last.lock().expect("lock")
    );
    let (ok, out, err) = c
        .kubectl_stdin(
            &["create", "--validate=false", "-f", "-"],
            Some(&bundle("example.com:signer:admin").to_string()),
        )
        .await;
    assert!(ok, "{out} {err}");
}
