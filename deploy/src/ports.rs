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
    /// etcd client port (HTTPS, client certificates required).
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
    /// The ports come from below the kernel's ephemeral range (see
    /// [`free_port`]), so no outgoing connection can take one before the
    /// cluster binds it.
    pub fn free() -> std::io::Result<Self> {
        let mut ports = [0u16; 5];
        for i in 0..ports.len() {
            ports[i] = free_port_excluding(&ports[..i])?;
        }
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

/// A port that is free on 127.0.0.1 now and that the kernel will not hand
/// out as the source port of an outgoing connection.
///
/// Asking the kernel for port 0 returns a port from its ephemeral range
/// (`net.ipv4.ip_local_port_range`, usually 32768-60999), the same range it
/// draws source ports from: between releasing such a port and a server
/// binding it, any client connection on the machine (a test's etcd client,
/// a readiness probe) may take it, and the server fails with "address in
/// use". Ports below that range are only ever taken by an explicit bind, so
/// this walks them from a per-process random start and returns the first one
/// that binds. A process-wide cursor keeps concurrent callers in one test
/// binary from receiving the same port.
pub fn free_port() -> std::io::Result<u16> {
    free_port_excluding(&[])
}

fn free_port_excluding(taken: &[u16]) -> std::io::Result<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::OnceLock;

    const LOWEST: u32 = 15000;
    static CURSOR: OnceLock<AtomicU32> = OnceLock::new();
    let highest = ephemeral_range_start().saturating_sub(1).max(LOWEST + 1000);
    let span = highest - LOWEST;
    let cursor = CURSOR.get_or_init(|| AtomicU32::new(rand::random::<u32>() % span));
    for _ in 0..span {
        let port = (LOWEST + cursor.fetch_add(1, Ordering::Relaxed) % span) as u16;
        if taken.contains(&port) {
            continue;
        }
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return Ok(port);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        "no free loopback port below the ephemeral range",
    ))
}

/// The first port of the kernel's ephemeral range (32768 when unknown).
fn ephemeral_range_start() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768)
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

    #[test]
    fn free_ports_avoid_the_ephemeral_range() {
        let start = ephemeral_range_start();
        let p = Ports::free().unwrap();
        for (name, port) in p.named() {
            assert!(u32::from(port) < start, "{name} {port} >= {start}");
        }
        assert_ne!(free_port().unwrap(), free_port().unwrap());
    }
}
