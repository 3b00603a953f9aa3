//! The replicas of the next tier a [`super::Delegate`] spreads requests
//! over (`--delegate-url https://a,https://b`): round robin over those that
//! are ready, skipping a replica for a while after a connection to it
//! failed, and, with more than one, a probe of each replica's `/readyz`
//! every second, so a replica that begins shutting down (its `/readyz` fails
//! first) gets no new requests before it closes its listener.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http::Uri;

/// How long a replica a connection failed to is passed over.
const FAILED_FOR: Duration = Duration::from_secs(2);

/// One replica.
pub struct Endpoint {
    pub base: Uri,
    ready: AtomicBool,
    /// Milliseconds after `origin` until which the replica is passed over.
    failed_until: AtomicU64,
}

/// The replicas and the round-robin cursor.
pub struct Endpoints {
    list: Vec<Endpoint>,
    next: AtomicUsize,
    origin: Instant,
}

impl Endpoints {
    /// The replicas at `bases` (at least one).
    pub fn new(bases: Vec<Uri>) -> Self {
        Endpoints {
            list: bases
                .into_iter()
                .map(|base| Endpoint {
                    base,
                    ready: AtomicBool::new(true),
                    failed_until: AtomicU64::new(0),
                })
                .collect(),
            next: AtomicUsize::new(0),
            origin: Instant::now(),
        }
    }

    /// How many replicas there are.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none (never, for a built delegate).
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The replica `i`.
    pub fn get(&self, i: usize) -> &Endpoint {
        &self.list[i]
    }

    /// Every replica.
    pub fn iter(&self) -> impl Iterator<Item = &Endpoint> {
        self.list.iter()
    }

    fn now_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    fn usable(&self, e: &Endpoint) -> bool {
        e.ready.load(Ordering::Relaxed) && e.failed_until.load(Ordering::Relaxed) <= self.now_ms()
    }

    /// The order in which one request tries the replicas: from the
    /// round-robin cursor, usable replicas first, then the others (so a
    /// request still goes somewhere when none looks usable).
    pub fn order(&self) -> Vec<usize> {
        let n = self.list.len();
        if n <= 1 {
            return vec![0];
        }
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let mut usable = Vec::with_capacity(n);
        let mut others = Vec::new();
        for k in 0..n {
            let i = (start + k) % n;
            if self.usable(&self.list[i]) {
                usable.push(i);
            } else {
                others.push(i);
            }
        }
        usable.extend(others);
        usable
    }

    /// A connection to replica `i` failed: pass it over for a while.
    pub fn failed(&self, i: usize) {
        if let Some(e) = self.list.get(i) {
            let until = self.now_ms() + FAILED_FOR.as_millis() as u64;
            e.failed_until.store(until, Ordering::Relaxed);
        }
    }

    /// What the last probe of replica `i` found.
    pub fn set_ready(&self, i: usize, ready: bool) {
        if let Some(e) = self.list.get(i) {
            let was = e.ready.swap(ready, Ordering::Relaxed);
            if was != ready {
                tracing::info!(replica = %e.base, ready, "delegate replica readiness changed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three() -> Endpoints {
        Endpoints::new(
            ["https://a", "https://b", "https://c"]
                .iter()
                .map(|u| u.parse().unwrap())
                .collect(),
        )
    }

    #[test]
    fn requests_rotate_and_skip_unready_and_failed_replicas() {
        let e = three();
        let firsts: Vec<usize> = (0..6).map(|_| e.order()[0]).collect();
        assert_eq!(firsts, [0, 1, 2, 0, 1, 2]);
        e.set_ready(1, false);
        e.failed(2);
        for _ in 0..4 {
            let o = e.order();
            assert_eq!(o[0], 0, "{o:?}");
            assert_eq!(o.len(), 3, "the others are still tried last: {o:?}");
        }
        e.set_ready(1, true);
        assert!((0..4).any(|_| e.order()[0] == 1));
        assert_eq!(
            Endpoints::new(vec!["https://x".parse().unwrap()]).order(),
            [0]
        );
    }
}
