//! NodePort allocation from `--service-node-port-range`: upstream's
//! RangeAllocation object (a bitmap of used ports) at
//! `/registry/ranges/servicenodeports`, changed only by compare-and-swap.

use apiserver::storage::{EtcdStorage, KeyValue, Retry, StorageError};
use base64::Engine;
use bytes::Bytes;
use serde_json::{json, Value};

/// An inclusive port range (`30000-32767`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    pub base: u16,
    pub size: u16,
}

impl PortRange {
    /// Parses `30000-32767` (or a single port).
    pub fn parse(s: &str) -> Result<Self, String> {
        let err = || format!("invalid port range: {s:?}");
        let (a, b) = s.split_once('-').unwrap_or((s, s));
        let a: u16 = a.trim().parse().map_err(|_| err())?;
        let b: u16 = b.trim().parse().map_err(|_| err())?;
        if b < a || a == 0 {
            return Err(err());
        }
        Ok(PortRange {
            base: a,
            size: b - a + 1,
        })
    }

    /// Whether `port` lies in the range.
    pub fn contains(&self, port: i64) -> bool {
        port >= self.base as i64 && port < self.base as i64 + self.size as i64
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}",
            self.base,
            self.base as u32 + self.size as u32 - 1
        )
    }
}

/// Why a port could not be allocated.
#[derive(Debug, PartialEq, Eq)]
pub enum PortError {
    NotInRange(String),
    Allocated,
    Full,
    Storage(String),
}

/// Hands out node ports; safe across processes sharing one etcd.
#[derive(Clone)]
pub struct NodePortAllocator {
    storage: EtcdStorage,
    key: String,
    range: PortRange,
    /// Serialises this process's changes; only other replicas race the CAS.
    lock: std::sync::Arc<tokio::sync::Mutex<()>>,
}

const MAX_CAS_ATTEMPTS: usize = 64;

impl NodePortAllocator {
    /// An allocator of `range` writing under `prefix` (`/registry`).
    pub fn new(storage: EtcdStorage, prefix: &str, range: PortRange) -> Self {
        NodePortAllocator {
            storage,
            key: format!("{}/ranges/servicenodeports", prefix.trim_end_matches('/')),
            range,
            lock: Default::default(),
        }
    }

    fn decode(&self, kv: Option<&KeyValue>) -> (Vec<u8>, i64) {
        let bytes = (self.range.size as usize).div_ceil(8);
        let Some(kv) = kv else {
            return (vec![0; bytes], 0);
        };
        // Protobuf as upstream writes it; JSON as this server wrote it before.
        let mut bits = apiserver::protobuf::decode_from_storage(&kv.value)
            .ok()
            .and_then(|v| v.get("data").and_then(Value::as_str).map(str::to_string))
            .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok())
            .unwrap_or_default();
        bits.resize(bytes, 0);
        (bits, kv.mod_revision)
    }

    fn encode(&self, bits: &[u8]) -> Result<Bytes, PortError> {
        let obj = json!({
            "kind": "RangeAllocation",
            "apiVersion": "v1",
            "metadata": {"creationTimestamp": null},
            "range": self.range.to_string(),
            "data": base64::engine::general_purpose::STANDARD.encode(bits),
        });
        apiserver::protobuf::encode_for_storage(&obj)
            .map(Bytes::from)
            .map_err(|e| PortError::Storage(format!("encoding the node port range: {e}")))
    }

    /// Runs `change` on the bitmap and writes it back with compare-and-swap,
    /// retrying on concurrent changes ([`EtcdStorage::guaranteed_update`]).
    async fn modify<T>(
        &self,
        mut change: impl FnMut(&mut Vec<u8>) -> Result<T, PortError>,
    ) -> Result<T, PortError> {
        let _guard = self.lock.lock().await;
        let change = &mut change;
        self.storage
            .guaranteed_update(
                &self.key,
                MAX_CAS_ATTEMPTS,
                |current| {
                    let (mut bits, rev) = self.decode(current.as_ref());
                    let out = change(&mut bits);
                    async move {
                        let out = out?;
                        let bytes = self.encode(&bits)?;
                        let write = if rev == 0 {
                            self.storage.create(&self.key, bytes).await
                        } else {
                            self.storage.update(&self.key, rev, bytes).await
                        };
                        match write {
                            Ok(_) => Ok(out),
                            Err(StorageError::Conflict { current }) => {
                                // Another replica won: back off a little, at random.
                                let jitter = (uuid::Uuid::new_v4().as_u128() % 20) as u64;
                                tokio::time::sleep(std::time::Duration::from_millis(jitter)).await;
                                Err(Retry::Conflict(current))
                            }
                            Err(StorageError::AlreadyExists) => Err(Retry::Conflict(None)),
                            Err(e) => Err(Retry::Fail(PortError::Storage(e.to_string()))),
                        }
                    }
                },
                |e| PortError::Storage(e.to_string()),
                || PortError::Storage("too many concurrent node port allocations".into()),
            )
            .await
    }

    /// Reserves `port`.
    pub async fn allocate_specific(&self, port: i64) -> Result<(), PortError> {
        if !self.range.contains(port) {
            return Err(PortError::NotInRange(self.range.to_string()));
        }
        let i = (port - self.range.base as i64) as usize;
        self.modify(|bits| {
            if bits[i / 8] & (1 << (i % 8)) != 0 {
                return Err(PortError::Allocated);
            }
            bits[i / 8] |= 1 << (i % 8);
            Ok(())
        })
        .await
    }

    /// Picks a free port, starting at a random offset.
    pub async fn allocate_next(&self) -> Result<i64, PortError> {
        let size = self.range.size as usize;
        let start = (uuid::Uuid::new_v4().as_u128() % size as u128) as usize;
        let base = self.range.base as i64;
        self.modify(|bits| {
            for k in 0..size {
                let i = (start + k) % size;
                if bits[i / 8] & (1 << (i % 8)) == 0 {
                    bits[i / 8] |= 1 << (i % 8);
                    return Ok(base + i as i64);
                }
            }
            Err(PortError::Full)
        })
        .await
    }

    /// The range served.
    pub fn range(&self) -> PortRange {
        self.range
    }

    /// The ports the bitmap holds now.
    pub async fn snapshot(&self) -> Result<std::collections::BTreeSet<i64>, String> {
        let kv = self
            .storage
            .get(&self.key)
            .await
            .map_err(|e| format!("reading the node port bitmap: {e}"))?;
        let (bits, _) = self.decode(kv.as_ref());
        let base = self.range.base as i64;
        Ok((0..self.range.size as usize)
            .filter(|i| bits[i / 8] & (1 << (i % 8)) != 0)
            .map(|i| base + i as i64)
            .collect())
    }

    /// Marks the ports in `in_use` (within the range) and clears those in
    /// `release` that are not in use, in one compare-and-swap; returns how
    /// many were (marked, cleared).
    pub async fn repair(
        &self,
        in_use: &std::collections::BTreeSet<i64>,
        release: &std::collections::BTreeSet<i64>,
    ) -> Result<(usize, usize), String> {
        let base = self.range.base as i64;
        let range = self.range;
        self.modify(|bits| {
            let (mut marked, mut cleared) = (0, 0);
            for p in in_use.iter().filter(|p| range.contains(**p)) {
                let i = (p - base) as usize;
                if bits[i / 8] & (1 << (i % 8)) == 0 {
                    bits[i / 8] |= 1 << (i % 8);
                    marked += 1;
                }
            }
            for p in release
                .iter()
                .filter(|p| range.contains(**p) && !in_use.contains(p))
            {
                let i = (p - base) as usize;
                if bits[i / 8] & (1 << (i % 8)) != 0 {
                    bits[i / 8] &= !(1 << (i % 8));
                    cleared += 1;
                }
            }
            Ok((marked, cleared))
        })
        .await
        .map_err(|e| format!("repairing the node port bitmap: {e:?}"))
    }

    /// Frees `port` (no-op outside the range or when free).
    pub async fn release(&self, port: i64) {
        if !self.range.contains(port) {
            return;
        }
        let i = (port - self.range.base as i64) as usize;
        if let Err(e) = self
            .modify(|bits| {
                bits[i / 8] &= !(1 << (i % 8));
                Ok(())
            })
            .await
        {
            tracing::warn!(port, error = ?e, "releasing node port");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let r = PortRange::parse("30000-32767").unwrap();
        assert_eq!(r.size, 2768);
        assert!(r.contains(30000) && r.contains(32767) && !r.contains(32768));
        assert_eq!(r.to_string(), "30000-32767");
        assert!(PortRange::parse("5-1").is_err());
        assert!(PortRange::parse("x").is_err());
    }
}
