//! Configuration changes reaching every replica of the highly available layout.

use super::*;
use crate::harness::{expect_code, SendExt};

/// Polls `probe` until it holds, up to `limit`; returns how long it took,
/// or `None` when it never held.
async fn time_until<F, Fut>(limit: Duration, mut probe: F) -> Option<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if probe().await {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// Issue 17: every replica sees a configuration change (a CRD, an RBAC
/// binding, an admission webhook, an APIService) within a second of the
/// write that made it, whichever replica took the write. Each replica is
/// asked directly, not through the round robin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_changes_reach_every_replica_within_a_second() {
    const LIMIT: Duration = Duration::from_secs(1);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = HaConfig::new(dir.path().join("state"));
    cfg.ports = HaPorts::free().expect("ports");
    let mut c = HaCluster::start(cfg).await.expect("the HA layout starts");
    let http = admin_client(&c);
    let front = c.url(Member::Tier(Tier::Aggregator, 0));
    let replicas = |t: Tier| [c.url(Member::Tier(t, 0)), c.url(Member::Tier(t, 1))];
    let mut figures = Vec::new();

    // A CRD: both extensions replicas and both aggregators serve its
    // resources.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.ha.example.com"},
        "spec": {"group": "ha.example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let r = http
        .post(format!(
            "{front}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        ))
        .json(&crd)
        .sent()
        .await;
    expect_code(r, 201).await;
    let established = time_until(Duration::from_secs(10), || async {
        let Ok(r) = http
            .get(format!("{front}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.ha.example.com"))
            .send()
            .await
        else {
            return false;
        };
        let crd: Value = r.json().await.unwrap_or_default();
        crd["status"]["conditions"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Established" && c["status"] == "True"))
    })
    .await;
    assert!(established.is_some(), "the CRD was never Established");
    for base in replicas(Tier::Extensions)
        .into_iter()
        .chain(replicas(Tier::Aggregator))
    {
        let url = format!("{base}/apis/ha.example.com/v1/namespaces/default/gadgets");
        let took = time_until(LIMIT, || async {
            matches!(http.get(&url).send().await, Ok(r) if r.status().as_u16() == 200)
        })
        .await;
        assert!(
            took.is_some(),
            "{base} does not serve the new CRD's resources within {LIMIT:?}"
        );
        figures.push(format!("CRD at {base}: {:?}", took.unwrap_or_default()));
    }

    // RBAC: a binding written through one kube-core replica authorizes the
    // user on both.
    let pods_as_alice = |base: &str| {
        http.get(format!("{base}/api/v1/namespaces/default/pods"))
            .header("Impersonate-User", "alice")
    };
    for base in replicas(Tier::KubeCore) {
        let r = pods_as_alice(&base).sent().await;
        assert_eq!(
            r.status().as_u16(),
            403,
            "alice may not list pods before the binding"
        );
    }
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]
    });
    let writer = replicas(Tier::KubeCore)[0].clone();
    let r = http
        .post(format!(
            "{writer}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
        ))
        .json(&binding)
        .sent()
        .await;
    expect_code(r, 201).await;
    for base in replicas(Tier::KubeCore) {
        let took = time_until(LIMIT, || async {
            matches!(pods_as_alice(&base).send().await, Ok(r) if r.status().as_u16() == 200)
        })
        .await;
        assert!(
            took.is_some(),
            "{base} does not authorize the new binding within {LIMIT:?}"
        );
        figures.push(format!(
            "ClusterRoleBinding at {base}: {:?}",
            took.unwrap_or_default()
        ));
    }

    // An admission webhook that fails closed, for ConfigMaps labelled
    // ha-webhook: both kube-core replicas call it (and so refuse).
    let webhook = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "ha-deny"},
        "webhooks": [{"name": "deny.ha.example.com", "sideEffects": "None",
            "admissionReviewVersions": ["v1"], "failurePolicy": "Fail", "timeoutSeconds": 1,
            "clientConfig": {"url": "https://127.0.0.1:9/deny"},
            "objectSelector": {"matchLabels": {"ha-webhook": "on"}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]}]
    });
    let r = http
        .post(format!(
            "{writer}/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
        ))
        .json(&webhook)
        .sent()
        .await;
    expect_code(r, 201).await;
    for (i, base) in replicas(Tier::KubeCore).into_iter().enumerate() {
        let n = AtomicUsize::new(0);
        let took = time_until(LIMIT, || async {
            let name = format!("webhooked-{i}-{}", n.fetch_add(1, Ordering::SeqCst));
            let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"ha-webhook": "on"}}});
            match http
                .post(format!("{base}/api/v1/namespaces/default/configmaps"))
                .json(&cm)
                .send()
                .await
            {
                Ok(r) => {
                    let status = r.status().as_u16();
                    let body = r.text().await.unwrap_or_default();
                    status >= 400 && body.contains("deny.ha.example.com")
                }
                Err(_) => false,
            }
        })
        .await;
        assert!(
            took.is_some(),
            "{base} does not call the new webhook within {LIMIT:?}"
        );
        figures.push(format!("webhook at {base}: {:?}", took.unwrap_or_default()));
    }

    // An APIService: written through one aggregator, the other lists its
    // group in discovery.
    let apiservice = json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.ha.metrics.example.com"},
        "spec": {"group": "ha.metrics.example.com", "version": "v1",
            "groupPriorityMinimum": 100, "versionPriority": 10,
            "insecureSkipTLSVerify": true,
            "service": {"namespace": "default", "name": "nowhere", "port": 443}}
    });
    let r = http
        .post(format!(
            "{front}/apis/apiregistration.k8s.io/v1/apiservices"
        ))
        .json(&apiservice)
        .sent()
        .await;
    expect_code(r, 201).await;
    for base in replicas(Tier::Aggregator) {
        let took = time_until(LIMIT, || async {
            let Ok(r) = http
                .get(format!("{base}/apis"))
                .header("Accept", "application/json")
                .send()
                .await
            else {
                return false;
            };
            r.text()
                .await
                .unwrap_or_default()
                .contains("ha.metrics.example.com")
        })
        .await;
        assert!(
            took.is_some(),
            "{base} does not list the new APIService within {LIMIT:?}"
        );
        figures.push(format!(
            "APIService at {base}: {:?}",
            took.unwrap_or_default()
        ));
    }
    eprintln!("configuration propagation: {}", figures.join(", "));
    c.stop().await.expect("stop");
}
