//! The `default/kubernetes` Service: the API's in-cluster address, holding
//! the first address of the service range, as upstream's bootstrap
//! controller creates it.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use apiserver::registry::catalog::Catalog;
use apiserver::registry::store::WriteContext;
use serde_json::json;

/// The Service upstream creates, pointing at `target_port`.
pub fn kubernetes_service(ip: IpAddr, target_port: u16) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": ip.to_string(),
            "sessionAffinity": "None",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": target_port}],
        },
    })
}

/// Creates the Service once the `default` namespace exists, retrying until
/// etcd answers; leaves an existing one alone.
pub async fn ensure(groups: Arc<Catalog>, ip: IpAddr, target_port: u16) {
    let Some(services) = groups.lookup("", "v1", "services").cloned() else {
        return;
    };
    let ctx = WriteContext::default();
    loop {
        match services.get("default", "kubernetes").await {
            Ok(_) => return,
            Err(e) if e.code == 404 => {}
            Err(e) => tracing::warn!(error = %e, "reading the kubernetes Service; retrying"),
        }
        match services
            .create("default", kubernetes_service(ip, target_port), &ctx)
            .await
        {
            Ok(_) => {
                tracing::info!(%ip, "created the kubernetes Service");
                return;
            }
            Err(e) if e.code == 409 => return,
            Err(e) => tracing::debug!(error = %e, "creating the kubernetes Service; retrying"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
