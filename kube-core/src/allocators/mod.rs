//! Service cluster IP and node port allocation, persisted in etcd so that
//! several kube-core replicas never hand out the same value.
//!
//! Cluster IPs are recorded as upstream 1.33 records them: one
//! `networking.k8s.io/v1` IPAddress object per address (`/registry/ipaddresses/<ip>`),
//! created with an etcd create-if-absent transaction, so the key itself is
//! the lock. Node ports use upstream's RangeAllocation bitmap at
//! `/registry/ranges/servicenodeports`, updated with compare-and-swap.

pub mod cluster_ip;
pub mod kubernetes_service;
pub mod node_port;
pub mod repair;
pub mod service;

pub use cluster_ip::{ClusterIpAllocator, ServiceCidr};
pub use node_port::{NodePortAllocator, PortRange};
pub use service::AllocatingServiceStrategy;
