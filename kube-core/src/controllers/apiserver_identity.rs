//! The API server identity Leases (upstream's `apiserverleasegc` and the
//! `start-kube-apiserver-identity-lease-controller` post-start hook): each
//! kube-core replica holds `kube-system/apiserver-<id>` labelled
//! `apiserver.kubernetes.io/identity=kube-apiserver`, renewed every 10 s
//! with a one-hour duration, and every replica deletes such Leases that were
//! not renewed within their duration (replicas that are gone).
//!
//! Upstream derives `<id>` from the host name alone; here the secure port is
//! part of it, so replicas on one machine each have their own Lease.

use std::sync::Arc;
use std::time::Duration;

use apiserver::registry::catalog::Catalog;
use apiserver::registry::store::{DeleteOptions, ListOptions, Store, UpdateKind, WriteContext};
use serde_json::{json, Value};

/// The label of identity Leases, and its value for kube-apiservers.
pub const IDENTITY_LABEL: &str = "apiserver.kubernetes.io/identity";
const IDENTITY_VALUE: &str = "kube-apiserver";
const LEASE_DURATION_SECONDS: i64 = 3600;
const RENEW_INTERVAL: Duration = Duration::from_secs(10);
const NAMESPACE: &str = "kube-system";

/// RFC 4648 base32, lower case, without padding (upstream's encoding of
/// the identity hash).
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            out.push(ALPHABET[((buffer >> (bits - 5)) & 31) as usize] as char);
            bits -= 5;
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The Lease name of the replica on `host` serving on `port`.
pub fn lease_name(host: &str, port: u16) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, format!("{host}:{port}").as_bytes());
    format!("apiserver-{}", base32(&digest.as_ref()[..16]))
}

fn now() -> String {
    let t = jiff::Timestamp::now();
    format!(
        "{}.{:06}Z",
        t.strftime("%Y-%m-%dT%H:%M:%S"),
        t.subsec_microsecond()
    )
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".to_string())
}

/// Holds this replica's identity Lease and collects the expired ones of
/// others, forever.
pub async fn run(groups: Arc<Catalog>, port: u16) {
    let Some(leases) = groups
        .lookup("coordination.k8s.io", "v1", "leases")
        .cloned()
    else {
        return;
    };
    let host = host_name();
    let name = lease_name(&host, port);
    let holder = format!("{name}_{}", uuid::Uuid::new_v4());
    let mut ticks = 0u64;
    loop {
        let wait = match renew(&leases, &name, &holder, &host).await {
            Ok(()) => RENEW_INTERVAL,
            Err(e) => {
                // kube-system may not exist yet on a fresh cluster.
                tracing::debug!(lease = %name, error = %e, "renewing the identity lease failed");
                Duration::from_secs(1)
            }
        };
        if ticks % 6 == 0 {
            collect_expired(&leases, &name).await;
        }
        ticks += 1;
        tokio::time::sleep(wait).await;
    }
}

async fn renew(leases: &Store, name: &str, holder: &str, host: &str) -> Result<(), String> {
    let ctx = WriteContext::default();
    let t = now();
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": NAMESPACE,
            "labels": {IDENTITY_LABEL: IDENTITY_VALUE, "kubernetes.io/hostname": host}},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "acquireTime": t, "renewTime": t},
    });
    match leases.create(NAMESPACE, lease, &ctx).await {
        Ok(_) => return Ok(()),
        Err(e) if e.code != 409 => return Err(e.message),
        Err(_) => {}
    }
    let holder = holder.to_string();
    let set = move |cur: &Value| {
        let mut cur = cur.clone();
        cur["spec"]["holderIdentity"] = json!(holder);
        cur["spec"]["renewTime"] = json!(now());
        cur["spec"]["leaseDurationSeconds"] = json!(LEASE_DURATION_SECONDS);
        Ok(cur)
    };
    leases
        .update(NAMESPACE, name, None, UpdateKind::Patch(&set), &ctx)
        .await
        .map(|_| ())
        .map_err(|e| e.message)
}

/// Whether an identity Lease was last renewed longer ago than its duration.
pub fn expired(lease: &Value, now: jiff::Timestamp) -> bool {
    let spec = &lease["spec"];
    let duration = spec["leaseDurationSeconds"]
        .as_i64()
        .unwrap_or(LEASE_DURATION_SECONDS);
    match spec["renewTime"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    {
        Some(renewed) => renewed
            .checked_add(jiff::SignedDuration::from_secs(duration))
            .is_ok_and(|until| until < now),
        None => false,
    }
}

async fn collect_expired(leases: &Store, own: &str) {
    let Ok(page) = leases.list(NAMESPACE, &ListOptions::default()).await else {
        return;
    };
    let now = jiff::Timestamp::now();
    for lease in page.items {
        let name = lease["metadata"]["name"].as_str().unwrap_or("");
        if name == own
            || lease["metadata"]["labels"][IDENTITY_LABEL] != IDENTITY_VALUE
            || !expired(&lease, now)
        {
            continue;
        }
        let opts = DeleteOptions {
            precondition_resource_version: lease["metadata"]["resourceVersion"]
                .as_str()
                .map(str::to_string),
            ..Default::default()
        };
        match leases
            .delete(NAMESPACE, name, &opts, &WriteContext::default())
            .await
        {
            Ok(_) => tracing::info!(
                lease = name,
                "deleted the expired identity lease of a gone API server"
            ),
            Err(e) => {
                tracing::debug!(lease = name, error = %e.message, "deleting an expired identity lease")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_per_host_and_port() {
        assert_eq!(base32(b"foobar"), "mzxw6ytboi");
        let a = lease_name("node-1", 6444);
        assert_eq!(a, lease_name("node-1", 6444));
        assert_ne!(a, lease_name("node-1", 6446));
        assert!(
            a.starts_with("apiserver-") && a.len() == "apiserver-".len() + 26,
            "{a}"
        );
    }

    #[test]
    fn a_lease_expires_after_its_duration() {
        let now: jiff::Timestamp = "2026-12-05T12:00:00Z".parse().unwrap();
        let lease =
            |renewed: &str| json!({"spec": {"renewTime": renewed, "leaseDurationSeconds": 3600}});
        assert!(expired(&lease("2026-12-05T10:59:59.000000Z"), now));
        assert!(!expired(&lease("2026-12-05T11:00:01.000000Z"), now));
        assert!(!expired(&json!({"spec": {}}), now));
    }
}
