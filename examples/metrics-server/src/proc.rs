//! This machine's CPU and memory usage, read from `/proc` as the kubelet's
//! resource metrics endpoint would report them for a node.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Ticks per second of `/proc/stat` (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// One usage figure for the node.
#[derive(Clone, Debug, PartialEq)]
pub struct Usage {
    /// CPU in nanocores, averaged over `window`.
    pub nanocores: u64,
    /// Working set in KiB (`MemTotal - MemAvailable`).
    pub memory_kib: u64,
    /// When the window ended (RFC 3339).
    pub timestamp: String,
    pub window: Duration,
}

/// Busy and total ticks from the first line of `/proc/stat`.
pub fn parse_stat(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    if fields.len() < 4 {
        return None;
    }
    let total: u64 = fields.iter().take(8).sum();
    let idle = fields[3] + fields.get(4).copied().unwrap_or(0);
    Some((total.saturating_sub(idle), total))
}

/// `MemTotal - MemAvailable` in KiB from `/proc/meminfo`.
pub fn parse_meminfo(text: &str) -> Option<u64> {
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))?
            .split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
    };
    Some(field("MemTotal:")?.saturating_sub(field("MemAvailable:")?))
}

fn sample() -> Option<(Instant, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    Some((Instant::now(), parse_stat(&stat)?.0))
}

/// The latest usage, refreshed in the background.
#[derive(Clone, Default)]
pub struct NodeUsage(Arc<RwLock<Option<Usage>>>);

impl NodeUsage {
    /// The last figure (`None` until the first window has passed).
    pub fn get(&self) -> Option<Usage> {
        self.0.read().ok()?.clone()
    }

    /// Samples `/proc` every `window`, forever.
    pub async fn run(self, window: Duration) {
        let mut prev = sample();
        loop {
            tokio::time::sleep(window).await;
            let cur = sample();
            let mem = std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|t| parse_meminfo(&t));
            if let (Some((t0, b0)), Some((t1, b1)), Some(memory_kib)) = (prev, cur, mem) {
                let secs = t1.duration_since(t0).as_secs_f64();
                if secs > 0.0 {
                    let cores = b1.saturating_sub(b0) as f64 / USER_HZ / secs;
                    let usage = Usage {
                        nanocores: (cores * 1e9) as u64,
                        memory_kib,
                        timestamp: jiff::Timestamp::now()
                            .round(jiff::Unit::Second)
                            .map(|t| t.to_string())
                            .unwrap_or_default(),
                        window: t1.duration_since(t0),
                    };
                    if let Ok(mut u) = self.0.write() {
                        *u = Some(usage);
                    }
                }
            }
            prev = cur;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_excludes_idle_and_iowait() {
        let stat = "cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 1 2 3 4\n";
        assert_eq!(parse_stat(stat), Some((161, 1181)));
        assert_eq!(parse_stat("intr 1 2"), None);
    }

    #[test]
    fn memory_is_total_minus_available() {
        let m = "MemTotal:       16000 kB\nMemFree:   100 kB\nMemAvailable:    6000 kB\n";
        assert_eq!(parse_meminfo(m), Some(10000));
    }
}
