//! The cluster IP and node port repair loops (upstream's repair
//! controllers): allocations a Service uses but the allocator lost are
//! restored; allocations no Service uses are released after a few passes.
//! A second kube-core replica runs the loops every second.

use std::time::Duration;

use k8s_pb::api::core::v1::RangeAllocation;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::{json, Value};

use crate::harness::{eventually, TestCluster};

const SERVICE: &str = r#"{"apiVersion": "v1", "kind": "Service",
 "metadata": {"name": "web", "namespace": "default"},
 "spec": {"type": "NodePort", "selector": {"app": "web"},
  "ports": [{"port": 80, "nodePort": 30080}]}}"#;

const NODE_PORTS: &str = "/registry/ranges/servicenodeports";

/// A kube-core replica whose repair loops run every second.
fn repairing_kube_core(c: &TestCluster) -> tokio::process::Child {
    let mut ports = c.cluster.ports();
    ports.kube_core = deploy::free_port().expect("free port");
    let args = deploy::tier_args(
        deploy::Tier::KubeCore,
        c.cluster.pki(),
        &ports,
        // Not elected: the cluster's own kube-core leads the singleton
        // loops, and this replica is here to run repair quickly.
        &[
            "--service-allocation-repair-interval=1s".to_string(),
            "--leader-elect=false".to_string(),
        ],
    );
    let bin = c
        .cluster
        .config()
        .bin_dir
        .join(deploy::Tier::KubeCore.binary_name());
    tokio::process::Command::new(bin)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("starting a repairing kube-core")
}

/// The stored node-port bitmap (a RangeAllocation in protobuf, as upstream
/// stores it) and the ports set in it.
async fn bitmap_ports(etcd: &mut etcd_client::Client) -> (RangeAllocation, Vec<i64>) {
    let resp = etcd.get(NODE_PORTS, None).await.expect("etcd get");
    let kv = resp.kvs().first().expect("bitmap stored");
    let body = kv
        .value()
        .strip_prefix(b"k8s\0".as_slice())
        .expect("the bitmap is stored in protobuf");
    let unknown = Unknown::decode(body).expect("runtime.Unknown");
    let kind = unknown.type_meta.as_ref().and_then(|t| t.kind.clone());
    assert_eq!(kind.as_deref(), Some("RangeAllocation"));
    let range = RangeAllocation::decode(unknown.raw.unwrap_or_default().as_slice())
        .expect("RangeAllocation");
    let bits = range.data.clone().unwrap_or_default();
    let ports = (0..bits.len() * 8)
        .filter(|i| bits[i / 8] & (1 << (i % 8)) != 0)
        .map(|i| 30000 + i as i64)
        .collect();
    (range, ports)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repair_loops_restore_and_release_allocations() {
    let c = TestCluster::start().await;
    let (ok, _, err) = c.kubectl_stdin(&["create", "-f", "-"], Some(SERVICE)).await;
    assert!(ok, "{err}");
    let svc: Value =
        serde_json::from_str(&c.kubectl_ok(&["get", "service", "web", "-o", "json"]).await)
            .expect("service json");
    let ip = svc["spec"]["clusterIP"]
        .as_str()
        .expect("clusterIP")
        .to_string();
    let _replica = repairing_kube_core(&c);

    // The Service's IPAddress is deleted by hand: repair restores it.
    c.kubectl_ok(&["delete", "ipaddress", &ip]).await;
    let restored = eventually(Duration::from_secs(30), || async {
        let (ok, out, _) = c.kubectl(&["get", "ipaddress", &ip, "-o", "json"]).await;
        ok && serde_json::from_str::<Value>(&out)
            .is_ok_and(|v| v["spec"]["parentRef"]["name"] == "web")
    })
    .await;
    assert!(restored, "the IPAddress of default/web was not restored");

    // An allocator-managed IPAddress whose Service does not exist: released.
    let ghost = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
        "metadata": {"name": "10.96.200.200", "labels": {
            "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}},
        "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "ghost"}}});
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&ghost.to_string()))
        .await;
    assert!(ok, "{err}");
    // One not managed by the allocator is left alone.
    let foreign = json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
        "metadata": {"name": "10.96.200.201"},
        "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "ghost"}}});
    let (ok, _, err) = c
        .kubectl_stdin(&["create", "-f", "-"], Some(&foreign.to_string()))
        .await;
    assert!(ok, "{err}");
    let released = eventually(Duration::from_secs(30), || async {
        let (ok, _, err) = c.kubectl(&["get", "ipaddress", "10.96.200.200"]).await;
        !ok && err.contains("NotFound")
    })
    .await;
    assert!(released, "the leaked IPAddress was not released");
    c.kubectl_ok(&["get", "ipaddress", "10.96.200.201"]).await;

    // The node port bitmap loses 30080 and gains a leaked 30001: repair
    // marks the one in use and clears the leak.
    let mut etcd = c.etcd().await;
    let (mut range, ports) = bitmap_ports(&mut etcd).await;
    assert!(ports.contains(&30080), "{ports:?}");
    assert_eq!(range.range.as_deref(), Some("30000-32767"));
    let mut bits = vec![0u8; 2768usize.div_ceil(8)];
    bits[0] |= 1 << 1; // 30001
    range.data = Some(bits);
    let stored = crate::client_go_writes::envelope("v1", "RangeAllocation", &range);
    etcd.put(NODE_PORTS, stored, None).await.expect("etcd put");
    let repaired = eventually(Duration::from_secs(30), || async {
        let mut etcd = etcd.clone();
        let (_, ports) = bitmap_ports(&mut etcd).await;
        ports == [30080]
    })
    .await;
    let (_, ports) = bitmap_ports(&mut etcd).await;
    assert!(repaired, "node port bitmap not repaired: {ports:?}");

    // A Service asking for the restored port is refused: it is held.
    let clash = SERVICE.replace("\"web\"", "\"clash\"");
    let (ok, _, err) = c.kubectl_stdin(&["create", "-f", "-"], Some(&clash)).await;
    assert!(
        !ok && err.contains("provided port is already allocated"),
        "{err}"
    );
}
