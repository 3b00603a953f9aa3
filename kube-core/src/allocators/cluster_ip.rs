//! Cluster IP allocation from `--service-cluster-ip-range`, one IPAddress
//! object per allocated address.

use std::net::IpAddr;

use apiserver::storage::{EtcdStorage, StorageError};
use bytes::Bytes;
use serde_json::{json, Value};

/// A parsed service CIDR (IPv4 or IPv6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceCidr {
    base: u128,
    bits: u8,
    prefix: u8,
    v6: bool,
}

impl ServiceCidr {
    /// Parses `10.96.0.0/12` or `fd00::/108`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (ip, len) = s
            .split_once('/')
            .ok_or_else(|| format!("invalid CIDR address: {s}"))?;
        let ip: IpAddr = ip
            .parse()
            .map_err(|_| format!("invalid CIDR address: {s}"))?;
        let prefix: u8 = len
            .parse()
            .map_err(|_| format!("invalid CIDR address: {s}"))?;
        let (v, bits, v6) = match ip {
            IpAddr::V4(a) => (u32::from(a) as u128, 32u8, false),
            IpAddr::V6(a) => (u128::from(a), 128u8, true),
        };
        if prefix > bits {
            return Err(format!("invalid CIDR address: {s}"));
        }
        if bits - prefix < 2 {
            return Err(format!("the service CIDR {s} is too small"));
        }
        let host_bits = bits - prefix;
        let mask = if host_bits >= 128 {
            0
        } else {
            !((1u128 << host_bits) - 1)
        };
        Ok(ServiceCidr {
            base: v & mask,
            bits,
            prefix,
            v6,
        })
    }

    /// How many host addresses, capped for huge IPv6 ranges.
    fn size(&self) -> u128 {
        let host_bits = (self.bits - self.prefix).min(64);
        1u128 << host_bits
    }

    /// Whether `ip` lies in the range (network and, for IPv4, broadcast
    /// addresses excluded, as upstream).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let Some(v) = self.to_u128(ip) else {
            return false;
        };
        let host_bits = self.bits - self.prefix;
        let end = if host_bits >= 128 {
            u128::MAX
        } else {
            self.base + ((1u128 << host_bits) - 1)
        };
        let last = if self.v6 { end } else { end - 1 };
        v > self.base && v <= last
    }

    fn to_u128(&self, ip: IpAddr) -> Option<u128> {
        match (ip, self.v6) {
            (IpAddr::V4(a), false) => Some(u32::from(a) as u128),
            (IpAddr::V6(a), true) => Some(u128::from(a)),
            _ => None,
        }
    }

    fn nth(&self, offset: u128) -> IpAddr {
        let v = self.base + offset;
        if self.v6 {
            IpAddr::V6(v.into())
        } else {
            IpAddr::V4((v as u32).into())
        }
    }

    /// The first usable address (the `kubernetes` Service's).
    pub fn first(&self) -> IpAddr {
        self.nth(1)
    }

    /// The IP family name (`IPv4`, `IPv6`).
    pub fn family(&self) -> &'static str {
        if self.v6 {
            "IPv6"
        } else {
            "IPv4"
        }
    }
}

impl std::fmt::Display for ServiceCidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.nth(0), self.prefix)
    }
}

/// Why an address could not be allocated.
#[derive(Debug, PartialEq, Eq)]
pub enum IpError {
    /// Outside the range: upstream's message names the range.
    NotInRange(String),
    /// Somebody has it.
    Allocated,
    /// The whole range is used.
    Full,
    /// etcd failed.
    Storage(String),
}

/// Hands out cluster IPs; safe across processes sharing one etcd.
#[derive(Clone)]
pub struct ClusterIpAllocator {
    storage: EtcdStorage,
    prefix: String,
    cidr: ServiceCidr,
}

impl ClusterIpAllocator {
    /// An allocator of `cidr` writing under `prefix` (`/registry`).
    pub fn new(storage: EtcdStorage, prefix: &str, cidr: ServiceCidr) -> Self {
        ClusterIpAllocator {
            storage,
            prefix: prefix.trim_end_matches('/').to_string(),
            cidr,
        }
    }

    /// The range served.
    pub fn cidr(&self) -> ServiceCidr {
        self.cidr
    }

    fn key(&self, ip: IpAddr) -> String {
        format!("{}/ipaddresses/{ip}", self.prefix)
    }

    fn record(&self, ip: IpAddr, namespace: &str, name: &str) -> Bytes {
        let obj = json!({
            "kind": "IPAddress",
            "apiVersion": "networking.k8s.io/v1",
            "metadata": {
                "name": ip.to_string(),
                "uid": uuid_v4(),
                "creationTimestamp": apiserver::apimachinery::meta::now_rfc3339(),
                "labels": {
                    "ipaddress.kubernetes.io/ip-family": self.cidr.family(),
                    "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
                },
            },
            "spec": {"parentRef": {"group": "", "resource": "services", "namespace": namespace, "name": name}},
        });
        // Stored as every built-in object is: protobuf.
        let bytes = apiserver::protobuf::encode_for_storage(&obj)
            .or_else(|_| serde_json::to_vec(&obj))
            .unwrap_or_default();
        Bytes::from(bytes)
    }

    /// Reserves `ip` for the Service `namespace/name`.
    pub async fn allocate_specific(
        &self,
        ip: IpAddr,
        namespace: &str,
        name: &str,
    ) -> Result<(), IpError> {
        if !self.cidr.contains(ip) {
            return Err(IpError::NotInRange(self.cidr.to_string()));
        }
        match self
            .storage
            .create(&self.key(ip), self.record(ip, namespace, name))
            .await
        {
            Ok(_) => Ok(()),
            Err(StorageError::AlreadyExists) => Err(IpError::Allocated),
            Err(e) => Err(IpError::Storage(e.to_string())),
        }
    }

    /// Picks a free address: a random start, then the next free one. The
    /// addresses taken are learnt with one keys-only read, so an allocation
    /// costs that read and one create, whatever the range's fill (a create
    /// that loses a race to another writer moves on to the next free one,
    /// a bounded number of times).
    pub async fn allocate_next(&self, namespace: &str, name: &str) -> Result<IpAddr, IpError> {
        const RACES: usize = 16;
        let size = self.cidr.size();
        let usable = if self.cidr.v6 { size - 1 } else { size - 2 };
        let taken: std::collections::HashSet<u128> = self
            .storage
            .list_keys(&format!("{}/ipaddresses/", self.prefix))
            .await
            .map_err(|e| IpError::Storage(e.to_string()))?
            .iter()
            .filter_map(|k| k.rsplit('/').next()?.parse::<IpAddr>().ok())
            .filter_map(|ip| self.cidr.to_u128(ip))
            .filter(|v| *v > self.cidr.base)
            .map(|v| v - self.cidr.base)
            .collect();
        if taken.len() as u128 >= usable {
            return Err(IpError::Full);
        }
        // Upstream keeps the lower band for static addresses; start at
        // random in the whole range and scan forward from there.
        let start = random_u128() % usable;
        let mut races = 0;
        let mut lost = std::collections::HashSet::new();
        let scan = usable.min(1 << 24);
        for i in 0..scan {
            let offset = 1 + (start + i) % usable;
            if taken.contains(&offset) || lost.contains(&offset) {
                continue;
            }
            let ip = self.cidr.nth(offset);
            match self
                .storage
                .create(&self.key(ip), self.record(ip, namespace, name))
                .await
            {
                Ok(_) => return Ok(ip),
                Err(StorageError::AlreadyExists) if races < RACES => {
                    races += 1;
                    lost.insert(offset);
                }
                Err(StorageError::AlreadyExists) => break,
                Err(e) => return Err(IpError::Storage(e.to_string())),
            }
        }
        Err(IpError::Full)
    }

    /// Frees `ip` if the Service `namespace/name` holds it (its IPAddress
    /// names that Service as parent); an address another Service holds, or
    /// one not allocated, is left as it is. The delete is conditional on the
    /// record read, so a concurrent reallocation is never freed either.
    pub async fn release_held(&self, ip: IpAddr, namespace: &str, name: &str) {
        let key = self.key(ip);
        let kv = match self.storage.get(&key).await {
            Ok(Some(kv)) => kv,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(%ip, error = %e, "reading a cluster IP to release");
                return;
            }
        };
        let parent = apiserver::protobuf::decode_from_storage(&kv.value)
            .ok()
            .and_then(|o| o.pointer("/spec/parentRef").cloned());
        let held = parent.as_ref().is_some_and(|p| {
            p.get("resource").and_then(Value::as_str) == Some("services")
                && p.get("namespace").and_then(Value::as_str) == Some(namespace)
                && p.get("name").and_then(Value::as_str) == Some(name)
        });
        if !held {
            tracing::warn!(%ip, service = %format!("{namespace}/{name}"), "not releasing a cluster IP the Service does not hold");
            return;
        }
        if let Err(e) = self.storage.delete(&key, Some(kv.mod_revision)).await {
            if !matches!(e, StorageError::NotFound | StorageError::Conflict { .. }) {
                tracing::warn!(%ip, error = %e, "releasing cluster IP");
            }
        }
    }

    /// Frees `ip` whoever holds it (no-op when it is not allocated): for
    /// the repair loop, which has checked that no Service uses it.
    pub async fn release(&self, ip: IpAddr) {
        if let Err(e) = self.storage.delete(&self.key(ip), None).await {
            if !matches!(e, StorageError::NotFound) {
                tracing::warn!(%ip, error = %e, "releasing cluster IP");
            }
        }
    }
}

fn random_u128() -> u128 {
    let u = uuid::Uuid::new_v4();
    u.as_u128()
}

fn uuid_v4() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr() {
        let c = ServiceCidr::parse("10.96.0.0/12").unwrap();
        assert_eq!(c.to_string(), "10.96.0.0/12");
        assert_eq!(c.first().to_string(), "10.96.0.1");
        assert!(c.contains("10.96.0.10".parse().unwrap()));
        assert!(!c.contains("10.96.0.0".parse().unwrap()));
        assert!(!c.contains("10.111.255.255".parse().unwrap()));
        assert!(c.contains("10.111.255.254".parse().unwrap()));
        assert!(!c.contains("10.112.0.1".parse().unwrap()));
        assert!(ServiceCidr::parse("10.0.0.0/31").is_err());
        assert!(ServiceCidr::parse("nope").is_err());
        let v6 = ServiceCidr::parse("fd00::/108").unwrap();
        assert!(v6.contains("fd00::5".parse().unwrap()));
        assert_eq!(v6.family(), "IPv6");
    }
}
