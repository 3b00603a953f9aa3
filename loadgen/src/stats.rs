//! Latency samples and the figures printed from them.

use std::time::Duration;

/// Latencies of a run and its wall-clock duration.
pub struct Latencies {
    samples: Vec<Duration>,
    elapsed: Duration,
}

impl Latencies {
    /// Sorts the samples once.
    pub fn new(mut samples: Vec<Duration>, elapsed: Duration) -> Self {
        samples.sort_unstable();
        Latencies { samples, elapsed }
    }

    /// The `p`-th percentile (0–100), or zero without samples.
    pub fn percentile(&self, p: f64) -> Duration {
        if self.samples.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * (self.samples.len() - 1) as f64).round() as usize;
        self.samples[rank.min(self.samples.len() - 1)]
    }

    /// Operations per second over the wall-clock time.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs == 0.0 {
            0.0
        } else {
            self.samples.len() as f64 / secs
        }
    }

    /// One line for a throughput run.
    pub fn print(&self, what: &str, concurrency: usize) {
        println!(
            "{what}: {} ops in {:.2} s at concurrency {concurrency}: {:.0}/s, p50 {}, p99 {}",
            self.samples.len(),
            self.elapsed.as_secs_f64(),
            self.rate(),
            ms(self.percentile(50.0)),
            ms(self.percentile(99.0)),
        );
    }

    /// One line for repeated LISTs.
    pub fn print_list(&self, what: &str, items: usize) {
        println!(
            "{what} of {items} objects: p50 {}, max {} over {} runs",
            ms(self.percentile(50.0)),
            ms(self.percentile(100.0)),
            self.samples.len()
        );
    }

    /// One line for watch fan-out.
    pub fn print_fanout(&self, watchers: usize, writes: usize) {
        println!(
            "watch fan-out: {writes} writes to {watchers} watchers, {} deliveries: p50 {}, p99 {}, max {}",
            self.samples.len(),
            ms(self.percentile(50.0)),
            ms(self.percentile(99.0)),
            ms(self.percentile(100.0)),
        );
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let l = Latencies::new(
            (1..=100).map(Duration::from_millis).collect(),
            Duration::from_secs(1),
        );
        assert_eq!(l.percentile(50.0), Duration::from_millis(51));
        assert_eq!(l.percentile(99.0), Duration::from_millis(99));
        assert_eq!(l.rate(), 100.0);
        assert_eq!(
            Latencies::new(vec![], Duration::ZERO).percentile(50.0),
            Duration::ZERO
        );
    }
}
