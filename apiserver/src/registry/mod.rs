//! Resources and the generic store that serves them.

pub mod admit;
pub mod cache_serving;
#[cfg(test)]
mod cache_stop_tests;
pub mod cached_reads;
pub mod catalog;
#[cfg(test)]
mod consistent_read_tests;
pub mod conversion;
pub mod delete;
pub mod etcd_mirror;
pub mod informer;
pub mod json_patch;
pub mod list;
pub mod list_encoded;
pub mod read;
#[cfg(test)]
mod read_path_tests;
pub mod resource;
#[cfg(test)]
mod shared_cache_tests;
pub mod store;
pub mod strategy;
pub mod table;
pub mod update;
pub mod watch;
pub mod watch_event;
