//! Every built-in resource kube-core serves, declared on the generic store.

mod authentication_v1;
mod authorization_v1;
mod core_v1;
mod discovery_v1;

pub use authentication_v1::register_token_review;
pub use authorization_v1::register as register_access_reviews;
use shared::admission::AdmissionChain;
use shared::endpoints::discovery::GroupSet;
use shared::registry::resource::ResourceDef;
use shared::registry::store::Store;
use shared::storage::EtcdStorage;

/// All resource declarations, in discovery order.
pub fn definitions() -> Vec<ResourceDef> {
    let mut defs = core_v1::definitions();
    defs.extend(discovery_v1::definitions());
    defs
}

/// Builds the stores of every declared resource.
pub fn build(storage: &EtcdStorage, prefix: &str, admission: &AdmissionChain) -> GroupSet {
    let mut groups = GroupSet::default();
    for def in definitions() {
        groups.add(Store::new(def, storage.clone(), prefix, admission.clone()));
    }
    authentication_v1::register(&mut groups);
    groups
}
