//! The live set of webhooks of one kind, mirrored from etcd and
//! recompiled whenever a configuration changes.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::config::{self, Webhook};
use crate::apimachinery::errors::{ApiError, GroupResource};
use crate::registry::informer::Mirror;
use crate::storage::EtcdStorage;

/// How long a write waits at start-up for the configurations to be read.
const SYNC_WAIT: Duration = Duration::from_secs(5);

/// The webhooks of one kind (mutating or validating), recompiled whenever a
/// configuration changes.
#[derive(Clone)]
pub struct WebhookSource {
    current: Arc<RwLock<Arc<Vec<Arc<Webhook>>>>>,
    mirror: tokio::sync::watch::Receiver<Mirror>,
}

impl WebhookSource {
    /// Mirrors the configurations stored under `key_prefix`.
    pub fn spawn(storage: EtcdStorage, key_prefix: String, mutating: bool) -> Self {
        let mirror = crate::registry::etcd_mirror::spawn(storage, key_prefix);
        let current: Arc<RwLock<Arc<Vec<Arc<Webhook>>>>> = Arc::default();
        let (mut rx, out) = (mirror.clone(), current.clone());
        tokio::spawn(async move {
            loop {
                let hooks: Vec<Arc<Webhook>> = {
                    let m = rx.borrow_and_update();
                    // Configurations in name order, webhooks in their order.
                    m.objects
                        .values()
                        .flat_map(|c| config::webhooks_of(c, mutating))
                        .map(Arc::new)
                        .collect()
                };
                if let Ok(mut cur) = out.write() {
                    *cur = Arc::new(hooks);
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        });
        WebhookSource { current, mirror }
    }

    /// The webhooks now; waits (briefly) for the first read at start-up.
    pub(super) async fn hooks(&self) -> Result<Arc<Vec<Arc<Webhook>>>, ApiError> {
        let synced = self.mirror.borrow().synced;
        if !synced {
            let mut rx = self.mirror.clone();
            let ready = tokio::time::timeout(SYNC_WAIT, rx.wait_for(|m| m.synced))
                .await
                .map(|r| r.is_ok())
                .unwrap_or(false);
            if !ready {
                return Err(ApiError::forbidden_message(
                    GroupResource {
                        group: "admissionregistration.k8s.io",
                        resource: "webhookconfigurations",
                    },
                    "",
                    "not yet ready to handle request".into(),
                ));
            }
            // The compile task runs right after the mirror syncs.
            tokio::task::yield_now().await;
        }
        Ok(self.current.read().map(|c| c.clone()).unwrap_or_default())
    }
}
