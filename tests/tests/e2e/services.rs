//! Service IP and NodePort allocation: unique across two kube-core replicas
//! sharing one etcd, released on delete; the `kubernetes` Service.

use crate::harness::{eventually, expect_code, Auth, SendExt, TestCluster};
use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kube_cores_never_assign_one_cluster_ip_twice() {
    let c = TestCluster::start().await;
    let (_second, port) = c.extra_kube_core(None);
    let http = c.http(Auth::AdminCert);
    let urls = [
        c.cluster.kube_core_url(),
        format!("https://127.0.0.1:{port}"),
    ];
    let ready = eventually(Duration::from_secs(30), || {
        let http = http.clone();
        let url = format!("{}/readyz", urls[1]);
        async move {
            http.get(url)
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        }
    })
    .await;
    assert!(ready, "second kube-core not ready");

    // The kubernetes Service holds the first address of the range.
    let ok = eventually(Duration::from_secs(20), || {
        let c = &c;
        async move {
            let (ok, out, _) = c
                .kubectl(&[
                    "get",
                    "svc",
                    "kubernetes",
                    "-n",
                    "default",
                    "-o",
                    "jsonpath={.spec.clusterIP} {.spec.ports[0].port}",
                ])
                .await;
            ok && out == "10.96.0.1 443"
        }
    })
    .await;
    assert!(ok, "the kubernetes Service");

    // 200 Services, created concurrently, alternating between the replicas;
    // every other one is a NodePort Service.
    let mut tasks = Vec::new();
    for i in 0..200 {
        let http = http.clone();
        let url = format!("{}/api/v1/namespaces/default/services", urls[i % 2]);
        let ty = if i % 2 == 0 { "NodePort" } else { "ClusterIP" };
        let body = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": format!("s{i}")},
            "spec": {"type": ty, "ports": [{"port": 80}]}});
        tasks.push(tokio::spawn(async move {
            let r = http.post(url).json(&body).sent().await;
            let code = r.status().as_u16();
            let v: Value = r.json().await.expect("json");
            assert_eq!(code, 201, "{v}");
            v
        }));
    }
    let mut ips = HashSet::new();
    let mut node_ports = HashSet::new();
    for t in tasks {
        let v = t.await.expect("task");
        let ip = v["spec"]["clusterIP"]
            .as_str()
            .expect("clusterIP")
            .to_string();
        assert!(ip.starts_with("10.") && ip != "10.96.0.1", "{ip}");
        assert_eq!(v["spec"]["clusterIPs"], json!([ip]));
        assert!(ips.insert(ip.clone()), "cluster IP {ip} assigned twice");
        if v["spec"]["type"] == "NodePort" {
            let p = v["spec"]["ports"][0]["nodePort"]
                .as_i64()
                .expect("nodePort");
            assert!((30000..=32767).contains(&p), "{p}");
            assert!(node_ports.insert(p), "node port {p} assigned twice");
        }
    }
    assert_eq!(ips.len(), 200);
    assert_eq!(node_ports.len(), 100);

    // Each address is recorded as an IPAddress object naming its Service.
    let out = c.kubectl_ok(&["get", "ipaddresses", "-o", "name"]).await;
    assert_eq!(out.lines().count(), 201, "{out}");

    // Asking for a taken address or port: 422 with upstream's field paths.
    let taken_ip = ips.iter().next().cloned().unwrap_or_default();
    let r = http
        .post(format!("{}/api/v1/namespaces/default/services", urls[0]))
        .json(
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dup"},
            "spec": {"clusterIP": taken_ip, "ports": [{"port": 80}]}}),
        )
        .sent()
        .await;
    let v = crate::harness::expect_status(r, 422, "Invalid").await;
    assert_eq!(v["details"]["causes"][0]["field"], "spec.clusterIPs", "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or("")
            .contains("provided IP is already allocated"),
        "{v}"
    );
    let taken_port = *node_ports.iter().next().unwrap_or(&0);
    let r = http
        .post(format!("{}/api/v1/namespaces/default/services", urls[1]))
        .json(
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dup"},
            "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": taken_port}]}}),
        )
        .sent()
        .await;
    let v = crate::harness::expect_status(r, 422, "Invalid").await;
    assert_eq!(
        v["details"]["causes"][0]["field"], "spec.ports[0].nodePort",
        "{v}"
    );

    // Changing the type allocates and releases node ports.
    c.kubectl_ok(&[
        "patch",
        "svc",
        "s3",
        "--type=merge",
        "-p",
        r#"{"spec":{"type":"NodePort"}}"#,
    ])
    .await;
    let np = c
        .kubectl_ok(&[
            "get",
            "svc",
            "s3",
            "-o",
            "jsonpath={.spec.ports[0].nodePort}",
        ])
        .await;
    let np: i64 = np
        .parse()
        .unwrap_or_else(|_| panic!("nodePort after type change: {np:?}"));
    assert!(!node_ports.contains(&np), "{np} was already taken");
    c.kubectl_ok(&[
        "patch",
        "svc",
        "s3",
        "--type=merge",
        "-p",
        r#"{"spec":{"type":"ClusterIP"}}"#,
    ])
    .await;
    let np_after = c
        .kubectl_ok(&[
            "get",
            "svc",
            "s3",
            "-o",
            "jsonpath={.spec.ports[0].nodePort}",
        ])
        .await;
    assert_eq!(np_after, "", "nodePort dropped with the type");
    let r = http
        .post(format!("{}/api/v1/namespaces/default/services", urls[0]))
        .json(
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "reuse"},
            "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": np}]}}),
        )
        .sent()
        .await;
    assert_eq!(
        r.status().as_u16(),
        201,
        "released port {np} can be taken again"
    );

    // Deleting releases: the address can be asked for again.
    c.kubectl_ok(&["delete", "svc", "s1", "-n", "default"])
        .await;
    let released = c
        .kubectl_ok(&["get", "ipaddresses", "-o", "name"])
        .await
        .lines()
        .count();
    assert_eq!(released, 201, "s1 released, reuse added");
    let s0 = c
        .kubectl_ok(&[
            "get",
            "svc",
            "s0",
            "-o",
            "jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}",
        ])
        .await;
    let (ip0, port0) = s0.split_once(' ').expect("ip and port");
    c.kubectl_ok(&["delete", "svc", "s0"]).await;
    let r = http
        .post(format!("{}/api/v1/namespaces/default/services", urls[1]))
        .json(
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "again"},
            "spec": {"type": "NodePort", "clusterIP": ip0,
                     "ports": [{"port": 80, "nodePort": port0.parse::<i64>().unwrap_or(0)}]}}),
        )
        .sent()
        .await;
    expect_code(r, 201).await;
}

/// No Service can free or take an address or node port another Service
/// holds: an ExternalName may not carry cluster IPs (upstream's
/// validation), a LoadBalancer without node port allocation still has the
/// node ports it names allocated, and deleting either leaves the other
/// Services' allocations in place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_cannot_free_or_steal_other_services_addresses_and_ports() {
    let c = TestCluster::start().await;
    let apply = |doc: Value| {
        let c = &c;
        async move {
            c.kubectl_stdin(&["apply", "-f", "-"], Some(&doc.to_string()))
                .await
        }
    };
    let (ok, _, err) = apply(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "victim", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]}}))
    .await;
    assert!(ok, "{err}");
    let (ok, _, err) = apply(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "np", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30556}]}}))
    .await;
    assert!(ok, "{err}");
    let victim: Value = serde_json::from_str(
        &c.kubectl_ok(&["get", "service", "victim", "-o", "json"])
            .await,
    )
    .expect("service json");
    let ip = victim["spec"]["clusterIP"]
        .as_str()
        .expect("clusterIP")
        .to_string();

    // The victim's address written into an ExternalName Service.
    let (ok, _, err) = apply(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "thief", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "example.com",
            "clusterIP": ip, "clusterIPs": [ip]}}))
    .await;
    assert!(
        !ok && err.contains("spec.clusterIPs: Forbidden: may not be set for ExternalName services"),
        "{err}"
    );
    // The NodePort Service's port named by a LoadBalancer that allocates none.
    let (ok, _, err) = apply(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "lb", "namespace": "default"},
        "spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
            "ports": [{"port": 80, "nodePort": 30556}]}}))
    .await;
    assert!(
        !ok && err.contains("provided port is already allocated"),
        "{err}"
    );
    // A LoadBalancer that allocates no node ports gets the one it asks for,
    // and none for the port that names none.
    let (ok, _, err) = apply(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "lb", "namespace": "default"},
        "spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
            "ports": [{"name": "a", "port": 80, "nodePort": 30557}, {"name": "b", "port": 81}]}}))
    .await;
    assert!(ok, "{err}");
    let lb: Value =
        serde_json::from_str(&c.kubectl_ok(&["get", "service", "lb", "-o", "json"]).await)
            .expect("service json");
    assert_eq!(lb["spec"]["ports"][0]["nodePort"], 30557);
    assert!(lb["spec"]["ports"][1].get("nodePort").is_none(), "{lb}");
    c.kubectl_ok(&["delete", "service", "lb"]).await;

    // Both victims keep what they hold.
    let held = c
        .kubectl_ok(&[
            "get",
            "ipaddress",
            &ip,
            "-o",
            "jsonpath={.spec.parentRef.name}",
        ])
        .await;
    assert_eq!(held.trim(), "victim");
    let (ok, _, err) = apply(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "np2", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30556}]}}))
    .await;
    assert!(
        !ok && err.contains("provided port is already allocated"),
        "{err}"
    );
    // The LoadBalancer's port was released with it.
    let (ok, _, err) = apply(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "np3", "namespace": "default"},
        "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30557}]}}))
    .await;
    assert!(ok, "{err}");
}
