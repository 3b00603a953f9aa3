//! What a request is, recognised once at the edge of a tier and read by
//! every layer after it (upstream's `k8s.io/apiserver/pkg/endpoints/request`):
//!
//! - [`info`]: the parsed target ([`info::RequestInfo`]: verb, group, version,
//!   resource, subresource, namespace, name, selectors);
//! - [`peer`]: the client certificate chain of the connection;
//! - [`Warnings`] for the client and the [`RequestStart`], carried by every
//!   write through admission and the store.

pub mod info;
pub mod peer;

use std::sync::Mutex;

/// Warnings collected during one request, returned as `Warning` headers.
#[derive(Default, Debug)]
pub struct Warnings(Mutex<Vec<String>>);

impl Warnings {
    /// Adds one warning (duplicates are sent once).
    pub fn add(&self, text: impl Into<String>) {
        let text = text.into();
        if let Ok(mut w) = self.0.lock() {
            if !w.contains(&text) {
                w.push(text);
            }
        }
    }

    /// The warnings so far, in the order they were added.
    pub fn to_vec(&self) -> Vec<String> {
        self.0.lock().map(|w| w.clone()).unwrap_or_default()
    }
}

/// When a request began; the default is now.
#[derive(Clone, Copy, Debug)]
pub struct RequestStart(pub std::time::Instant);

impl Default for RequestStart {
    fn default() -> Self {
        RequestStart(std::time::Instant::now())
    }
}

/// Marks a response that another server produced (the next tier, or an
/// aggregated API server) and this one only passed on: the request metrics
/// count a request where it is served, once.
#[derive(Clone, Copy, Debug)]
pub struct Forwarded;

/// The address of the client at the other end of the connection (the proxy
/// in front, for a request it forwarded), in every request's extensions.
#[derive(Clone, Copy, Debug)]
pub struct RemoteAddr(pub std::net::SocketAddr);

/// Tells a long-running request that the server is shutting down: a watch
/// then sends its final BOOKMARK and ends, so its client resumes from there
/// (on another replica) instead of relisting; a stream this server only
/// proxies is cut a grace period later. Every request carries one.
///
/// The value is the shutdown phase: 0 running, 1 watches end, 2 proxied
/// streams are cut.
#[derive(Clone, Debug)]
pub struct WatchTermination(pub tokio::sync::watch::Receiver<u8>);

impl WatchTermination {
    async fn reach(&mut self, phase: u8) {
        if self.0.wait_for(|p| *p >= phase).await.is_err() {
            // The server is gone: as good as there.
        }
    }

    /// Resolves once the server begins ending watches.
    pub async fn wait(&mut self) {
        self.reach(1).await
    }

    /// Resolves once streams the server only proxies are to be cut.
    pub async fn cut(mut self) {
        self.reach(2).await
    }

    /// Whether the server has begun ending watches.
    pub fn is_set(&self) -> bool {
        *self.0.borrow() >= 1
    }
}
