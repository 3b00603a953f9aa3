//! Runs a complete local cluster on this machine: a PKI, etcd, the three API
//! server tiers (aggregator -> kube-core -> extensions, chained over HTTPS)
//! and a kubeconfig for `kubectl`.
//!
//! The library is used by the `kube-local-cluster` binary and by the
//! integration tests. It never links against the tiers: it spawns their
//! binaries (found in [`ClusterConfig::bin_dir`]) and talks to them over HTTPS.
//!
//! # State directory layout
//!
//! Everything lives below one state directory (the binary defaults to
//! `./.local-cluster`):
//!
//! ```text
//! <state-dir>/pki/ca.crt ca.key                         cluster CA (signs serving certs and client certs)
//! <state-dir>/pki/front-proxy-ca.crt front-proxy-ca.key  separate front-proxy CA
//! <state-dir>/pki/front-proxy-client.crt .key           CN=front-proxy-client, EKU clientAuth, signed by the front-proxy CA
//! <state-dir>/pki/aggregator.crt .key                   serving cert: localhost, 127.0.0.1, ::1, kubernetes[.default[.svc[.cluster.local]]], 10.96.0.1
//! <state-dir>/pki/kube-core.crt .key                    serving cert: localhost, 127.0.0.1, ::1
//! <state-dir>/pki/extensions.crt .key                   serving cert: localhost, 127.0.0.1, ::1
//! <state-dir>/pki/admin.crt admin.key                   client cert CN=kubernetes-admin, O=system:masters
//! <state-dir>/pki/tokens.csv                            static token file: `<token>,admin,admin-uid,"system:masters"`
//! <state-dir>/etcd/                                     etcd data dir (survives restarts)
//! <state-dir>/kubeconfig                                cluster "local", user "admin" (embedded client cert/key and CA)
//! <state-dir>/logs/{etcd,aggregator,kube-core,extensions}.log
//! <state-dir>/logs/supervisor.log                       output of a background `up`
//! <state-dir>/cluster.pid                               pid of the `up` supervisor
//! ```
//!
//! The PKI is generated once and reused on later starts; only missing files
//! are created (a missing CA forces the certificates it signs to be reissued).
//! Keys are ECDSA P-256 and written with mode 0600. Leaf certificates are
//! valid for one year, the CAs for ten.
//!
//! # Processes
//!
//! Start order is etcd, extensions, kube-core, aggregator; each must become
//! ready (etcd: `GET /health`, tiers: `GET /readyz` over HTTPS verified with
//! `ca.crt`) before the next one starts. Stop order is the reverse: SIGTERM,
//! up to 10 s grace, then SIGKILL.

mod cluster;
pub mod ha;
pub mod kubeconfig;
pub mod pki;
mod ports;
mod process;
pub mod render;

pub use cluster::{
    socket_path, tier_args, tier_args_linked, Cluster, ClusterConfig, ExitedProcess, ExtraArgs,
    Tier, TierLink,
};
pub use kubeconfig::write_kubeconfig;
pub use pki::Pki;
pub use ports::{free_port, Ports};
pub use process::{etcd_http_client, probe_etcd, probe_https_ready};

use std::path::PathBuf;

/// Name of the etcd binary used when none is configured (looked up in `PATH`).
pub const DEFAULT_ETCD_BINARY: &str = "etcd";

/// The directory holding the tier binaries when nothing else is configured:
/// the directory of the current executable, leaving a trailing `deps/` (so a
/// test binary in `target/debug/deps` finds `target/debug/<bin>`).
///
/// Falls back to `.` when the current executable cannot be determined.
pub fn default_bin_dir() -> PathBuf {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(_) => return PathBuf::from("."),
    };
    let mut dir = match exe.parent() {
        Some(dir) => dir.to_path_buf(),
        None => return PathBuf::from("."),
    };
    if dir.file_name().is_some_and(|n| n == "deps") {
        if let Some(up) = dir.parent() {
            dir = up.to_path_buf();
        }
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_bin_dir_leaves_deps() {
        let dir = default_bin_dir();
        // Unit tests run from target/<profile>/deps; the result must be target/<profile>.
        assert_ne!(dir.file_name().and_then(|n| n.to_str()), Some("deps"));
        let exe = std::env::current_exe().unwrap();
        assert!(exe.starts_with(&dir));
    }
}
