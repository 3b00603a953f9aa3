//! The real upstream control plane against the chain: v1.36's
//! kube-controller-manager and kube-scheduler, and kubemark hollow nodes (a
//! kubelet with a fake container runtime), all unmodified upstream binaries.
//!
//! The binaries are not part of the repository: build them from upstream's
//! source (README, "The real control plane") and point
//! `KUBE_CONTROL_PLANE_BIN` at the directory holding `kube-controller-manager`,
//! `kube-scheduler` and `kubemark`. Without it the test says so and passes
//! without running anything: CI has no Go toolchain.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::harness::TestCluster;

/// Where the upstream binaries are, when they are.
fn control_plane_bin() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("KUBE_CONTROL_PLANE_BIN")?);
    let all = ["kube-controller-manager", "kube-scheduler", "kubemark"]
        .iter()
        .all(|b| dir.join(b).is_file());
    all.then_some(dir)
}

fn free_port() -> u16 {
    deploy::free_port().expect("a free loopback port")
}

/// One upstream process, its output in `log`; killed on drop.
struct Component {
    name: String,
    log: PathBuf,
    child: tokio::process::Child,
}

impl Component {
    fn spawn(bin: &Path, name: &str, args: &[String], logs: &Path) -> Component {
        let log = logs.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let child = tokio::process::Command::new(bin)
            .args(args)
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
        Component {
            name: name.to_string(),
            log,
            child,
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// klog error lines (`E1204 16:30:50.888743 ...`), with the messages
    /// upstream's own server also makes these components print.
    fn unexpected_errors(&self) -> Vec<String> {
        // Printed against upstream too:
        // - "The manifest file is empty": no static pod manifests (kubelet
        //   options parsed by the scheduler's and kubemark's shared flags);
        // - the ReplicaSet controller's consistency check (v1.36's
        //   `read version: X is not as new as written version: Y`): its
        //   informer has not yet seen the controller's own write, and the
        //   sync is requeued. Upstream's watch cache delivers the write a
        //   little later than the response too.
        const KNOWN: [&str; 2] = [
            "The manifest file is empty",
            "is not as new as written version",
        ];
        self.log_text()
            .lines()
            .filter(|l| {
                l.len() > 5 && l.starts_with('E') && l[1..5].bytes().all(|b| b.is_ascii_digit())
            })
            .filter(|l| !KNOWN.iter().any(|k| l.contains(k)))
            .map(str::to_string)
            .collect()
    }

    fn tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

fn hollow_node(bin: &Path, kubeconfig: &str, name: &str, logs: &Path) -> Component {
    Component::spawn(
        &bin.join("kubemark"),
        name,
        &[
            "--morph=kubelet".into(),
            format!("--name={name}"),
            format!("--kubeconfig={kubeconfig}"),
            format!("--kubelet-port={}", free_port()),
            "--kubelet-read-only-port=0".into(),
            "--use-host-image-service=false".into(),
        ],
        logs,
    )
}

async fn running_pods(pods: &Api<Pod>, selector: &str) -> Vec<Pod> {
    pods.list(&ListParams::default().labels(selector))
        .await
        .map(|l| {
            l.items
                .into_iter()
                .filter(|p| {
                    p.metadata.deletion_timestamp.is_none()
                        && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                        && p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some()
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn pod_count(pods: &Api<Pod>, selector: &str) -> usize {
    pods.list(&ListParams::default().labels(selector))
        .await
        .map(|l| l.items.len())
        .unwrap_or(usize::MAX)
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]}}}
    }))
    .expect("a Deployment")
}

/// Polls `f` until it holds; on timeout fails with the components' log tails.
async fn wait(
    what: &str,
    timeout_s: u64,
    components: &[&Component],
    mut f: impl AsyncFnMut() -> bool,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout_s);
    let mut held = f().await;
    while !held && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        held = f().await;
    }
    if !held {
        let tails: Vec<String> = components
            .iter()
            .map(|c| format!("--- {} ---\n{}", c.name, c.tail()))
            .collect();
        panic!("timed out waiting for {what}\n{}", tails.join("\n"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_controller_manager_scheduler_and_hollow_nodes_run_pods() {
    let Some(bin) = control_plane_bin() else {
        eprintln!(
            "skipping: set KUBE_CONTROL_PLANE_BIN to a directory with upstream's \
             kube-controller-manager, kube-scheduler and kubemark (README: The real control plane)"
        );
        return;
    };
    let c = TestCluster::start().await;
    let logs = tempfile::tempdir().expect("tempdir");
    let kc = c.kubeconfig().display().to_string();
    let pki = c.cluster.pki();
    let common = |port: u16| {
        vec![
            format!("--kubeconfig={kc}"),
            format!("--authentication-kubeconfig={kc}"),
            format!("--authorization-kubeconfig={kc}"),
            format!("--secure-port={port}"),
            format!(
                "--cert-dir={}",
                logs.path().join(format!("certs-{port}")).display()
            ),
            "--leader-elect=true".into(),
        ]
    };
    let scheduler = Component::spawn(
        &bin.join("kube-scheduler"),
        "kube-scheduler",
        &common(free_port()),
        logs.path(),
    );
    let mut kcm_args = common(free_port());
    kcm_args.extend([
        "--controllers=*".to_string(),
        format!(
            "--service-account-private-key-file={}",
            pki.service_account_key.display()
        ),
        format!("--root-ca-file={}", pki.ca_cert.display()),
        format!("--cluster-signing-cert-file={}", pki.ca_cert.display()),
        format!("--cluster-signing-key-file={}", pki.ca_key.display()),
    ]);
    let kcm = Component::spawn(
        &bin.join("kube-controller-manager"),
        "kube-controller-manager",
        &kcm_args,
        logs.path(),
    );
    let node1 = hollow_node(&bin, &kc, "hollow-node-1", logs.path());
    let node2 = hollow_node(&bin, &kc, "hollow-node-2", logs.path());
    let all = [&scheduler, &kcm, &node1, &node2];

    let client = c.client().await;
    let nodes: Api<Node> = Api::all(client.clone());
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");

    // Hollow nodes register, become Ready and renew their leases; both
    // components hold their leader-election leases.
    wait("two Ready nodes", 120, &all, async || {
        let Ok(list) = nodes.list(&ListParams::default()).await else {
            return false;
        };
        list.items
            .iter()
            .filter(|n| {
                n.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
            })
            .count()
            == 2
    })
    .await;
    for node in ["hollow-node-1", "hollow-node-2"] {
        wait("node leases", 60, &all, async || {
            leases
                .get(node)
                .await
                .is_ok_and(|l| l.spec.and_then(|s| s.holder_identity).as_deref() == Some(node))
        })
        .await;
    }
    let system_leases: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
    for holder in ["kube-scheduler", "kube-controller-manager"] {
        wait("leader election leases", 60, &all, async || {
            system_leases
                .get(holder)
                .await
                .is_ok_and(|l| l.spec.and_then(|s| s.holder_identity).is_some())
        })
        .await;
    }

    // Deployment → ReplicaSet → 3 Pods, scheduled and Running, status reported.
    deployments
        .create(&PostParams::default(), &deployment("web", 3))
        .await
        .expect("create deployment");
    wait("3 Running pods", 90, &all, async || {
        running_pods(&pods, "app=web").await.len() == 3
    })
    .await;
    wait("deployment status", 60, &all, async || {
        deployments.get("web").await.is_ok_and(|d| {
            d.status
                .is_some_and(|s| s.ready_replicas == Some(3) && s.available_replicas == Some(3))
        })
    })
    .await;
    let placed: std::collections::BTreeSet<String> = running_pods(&pods, "app=web")
        .await
        .into_iter()
        .filter_map(|p| p.spec.and_then(|s| s.node_name))
        .collect();
    assert!(
        placed.iter().all(|n| n.starts_with("hollow-node-")),
        "{placed:?}"
    );

    // Scale up, then to zero: the pods come and go.
    let scale = |n: i32| Patch::Merge(json!({"spec": {"replicas": n}}));
    deployments
        .patch_scale("web", &PatchParams::default(), &scale(5))
        .await
        .expect("scale up");
    wait("5 Running pods", 90, &all, async || {
        running_pods(&pods, "app=web").await.len() == 5
    })
    .await;
    deployments
        .patch_scale("web", &PatchParams::default(), &scale(0))
        .await
        .expect("scale to 0");
    wait("no pods after scaling to 0", 90, &all, async || {
        pod_count(&pods, "app=web").await == 0
    })
    .await;

    // Foreground deletion: the Deployment stays, marked, until its
    // ReplicaSet and pods are gone.
    deployments
        .patch_scale("web", &PatchParams::default(), &scale(2))
        .await
        .expect("scale to 2");
    wait("2 Running pods", 90, &all, async || {
        running_pods(&pods, "app=web").await.len() == 2
    })
    .await;
    deployments
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("foreground delete");
    let marked = deployments
        .get("web")
        .await
        .expect("held for its dependents");
    assert!(marked
        .metadata
        .finalizers
        .unwrap_or_default()
        .contains(&"foregroundDeletion".to_string()));
    wait("foreground deletion", 90, &all, async || {
        deployments.get("web").await.is_err()
            && pod_count(&pods, "app=web").await == 0
            && replica_sets
                .list(&ListParams::default().labels("app=web"))
                .await
                .is_ok_and(|l| l.items.is_empty())
    })
    .await;

    // Background deletion: the Deployment goes at once, the collector
    // removes the rest.
    deployments
        .create(&PostParams::default(), &deployment("bg", 2))
        .await
        .expect("create");
    wait("2 Running pods", 90, &all, async || {
        running_pods(&pods, "app=bg").await.len() == 2
    })
    .await;
    deployments
        .delete("bg", &DeleteParams::background())
        .await
        .expect("background delete");
    wait("background deletion", 90, &all, async || {
        pod_count(&pods, "app=bg").await == 0
            && replica_sets
                .list(&ListParams::default().labels("app=bg"))
                .await
                .is_ok_and(|l| l.items.is_empty())
    })
    .await;

    // Orphaning: the ReplicaSet survives its Deployment, without an owner.
    deployments
        .create(&PostParams::default(), &deployment("orph", 1))
        .await
        .expect("create");
    wait("1 Running pod", 90, &all, async || {
        running_pods(&pods, "app=orph").await.len() == 1
    })
    .await;
    deployments
        .delete("orph", &DeleteParams::orphan())
        .await
        .expect("orphan delete");
    wait("orphaned ReplicaSet", 90, &all, async || {
        deployments.get("orph").await.is_err()
            && replica_sets
                .list(&ListParams::default().labels("app=orph"))
                .await
                .is_ok_and(|l| {
                    l.items.len() == 1
                        && l.items[0]
                            .metadata
                            .owner_references
                            .as_deref()
                            .unwrap_or_default()
                            .is_empty()
                })
    })
    .await;
    assert_eq!(running_pods(&pods, "app=orph").await.len(), 1);

    // A node whose Node object is deleted loses its pods to the pod GC.
    deployments
        .create(&PostParams::default(), &deployment("gc", 4))
        .await
        .expect("create");
    wait("4 Running pods", 90, &all, async || {
        running_pods(&pods, "app=gc").await.len() == 4
    })
    .await;
    let on_node2 = |list: Vec<Pod>| {
        list.into_iter()
            .filter(|p| {
                p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some("hollow-node-2")
            })
            .count()
    };
    assert!(
        on_node2(running_pods(&pods, "app=gc").await) > 0,
        "the scheduler spreads pods over both nodes"
    );
    // Stopped first, or its kubelet registers the node again.
    let pid = node2.child.id().expect("hollow-node-2 is running");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    nodes
        .delete("hollow-node-2", &DeleteParams::default())
        .await
        .expect("delete node");
    // PodGC waits out its 40 s quarantine before force-deleting orphans.
    wait("pod GC of hollow-node-2's pods", 150, &all, async || {
        let list = pods
            .list(&ListParams::default().labels("app=gc"))
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        on_node2(list) == 0
    })
    .await;
    wait("4 Running pods on hollow-node-1", 90, &all, async || {
        running_pods(&pods, "app=gc").await.len() == 4
    })
    .await;

    for comp in [&kcm, &scheduler] {
        let errors = comp.unexpected_errors();
        assert!(
            errors.is_empty(),
            "{} printed errors it does not print against upstream:\n{}",
            comp.name,
            errors.join("\n")
        );
    }
}
