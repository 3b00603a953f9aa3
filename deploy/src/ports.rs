//! Loopback ports used by the cluster's processes.

use std::net::{Ipv4Addr, TcpListener};

/// The TCP ports (all on 127.0.0.1) the cluster listens on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    /// HTTPS port of the aggregator (the cluster's front door).
    pub aggregator: u16,
    /// HTTPS port of kube-core.
    pub kube_core: u16,
    /// HTTPS port of the extensions tier.
    pub extensions: u16,
    /// etcd client port (plain HTTP).
    pub etcd_client: u16,
    /// etcd peer port (plain HTTP).
    pub etcd_peer: u16,
}

impl Default for Ports {
    fn default() -> Self {
        Self::defaults()
    }
}

impl Ports {
    /// The well-known ports: 6443, 6444, 6445 for the tiers, 2379/2380 for etcd.
    pub fn defaults() -> Self {
        Ports {
            aggregator: 6443,
            kube_core: 6444,
            extensions: 6445,
            etcd_client: 2379,
            etcd_peer: 2380,
        }
    }

    /// Picks five distinct ports that are currently free on 127.0.0.1.
    ///
    /// The ports are only reserved while this function runs, so another
    /// process may grab one before the cluster binds it; this is good enough
    /// for tests running side by side.
    pub fn free() -> std::io::Result<Self> {
        // Hold all listeners at once so the kernel hands out distinct ports.
        let listeners = (0..5)
            .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
            .collect::<std::io::Result<Vec<_>>>()?;
        let ports = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Ports {
            aggregator: ports[0],
            kube_core: ports[1],
            extensions: ports[2],
            etcd_client: ports[3],
            etcd_peer: ports[4],
        })
    }

    /// All ports with a human-readable name, in start order.
    pub fn named(&self) -> [(&'static str, u16); 5] {
        [
            ("etcd client", self.etcd_client),
            ("etcd peer", self.etcd_peer),
            ("extensions", self.extensions),
            ("kube-core", self.kube_core),
            ("aggregator", self.aggregator),
        ]
    }

    /// Fails with a readable message if any port cannot be bound on 127.0.0.1
    /// right now (usually: another cluster is still running).
    pub fn ensure_available(&self) -> anyhow::Result<()> {
        let mut seen = std::collections::HashSet::new();
        for (name, port) in self.named() {
            if !seen.insert(port) {
                anyhow::bail!("port {port} is configured twice (second use: {name})");
            }
            ensure_port_available(name, port)?;
        }
        Ok(())
    }
}

/// Fails if `port` cannot be bound on 127.0.0.1 right now.
pub(crate) fn ensure_port_available(name: &str, port: u16) -> anyhow::Result<()> {
    match TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
        Ok(_) => Ok(()),
        Err(e) => Err(anyhow::anyhow!(
            "port {port} for {name} is not available on 127.0.0.1 ({e}); \
             is another cluster still running? (try `kube-local-cluster down`)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_well_known_ports() {
        let p = Ports::defaults();
        assert_eq!(
            (
                p.aggregator,
                p.kube_core,
                p.extensions,
                p.etcd_client,
                p.etcd_peer
            ),
            (6443, 6444, 6445, 2379, 2380)
        );
    }

    #[test]
    fn free_ports_are_distinct_and_bindable() {
        let p = Ports::free().unwrap();
        let mut all: Vec<u16> = p.named().iter().map(|(_, port)| *port).collect();
        assert!(all.iter().all(|&port| port != 0));
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 5);
        p.ensure_available().unwrap();
    }

    #[test]
    fn busy_port_is_reported() {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let busy = l.local_addr().unwrap().port();
        let mut p = Ports::free().unwrap();
        p.kube_core = busy;
        let err = p.ensure_available().unwrap_err().to_string();
        assert!(err.contains("kube-core"), "{err}");
        assert!(err.contains(&busy.to_string()), "{err}");
    }

    #[test]
    fn duplicate_port_is_reported() {
        let mut p = Ports::free().unwrap();
        p.extensions = p.kube_core;
        assert!(p.ensure_available().is_err());
    }
}
