//! CPU time spent per operation by the processes serving a run.
//!
//! Throughput and latency on a shared or virtualized machine move with what
//! else runs there (hypervisor steal made back-to-back runs differ by up to
//! 4x on the project's test VM). The CPU time a process spends per
//! operation hardly does: it is what the code costs, and it is what says
//! how many operations a given number of cores can carry. It is read from
//! `/proc/<pid>/stat` (user + system time) of every local process whose
//! `comm` is one of the watched names, and of the load generator itself.

use std::time::Duration;

/// Default processes watched: the three tiers, upstream's kube-apiserver
/// (the usual baseline of `--compare`) and etcd (`comm` is cut to 15 bytes,
/// hence `kube-core-apise`).
pub const DEFAULT_PROCESSES: &str =
    "kube-aggregator,kube-core-apise,kube-extensions,kube-apiserver,etcd";

/// CPU time used so far by each watched process name (summed over its
/// processes) and by this process.
pub struct CpuSnapshot {
    by_name: Vec<(String, Option<Duration>)>,
    own: Option<Duration>,
}

/// Clock ticks per second of `/proc/<pid>/stat` times.
fn ticks_per_second() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

/// User + system CPU time of the process whose `/proc` directory is `dir`.
fn cpu_of(dir: &std::path::Path) -> Option<Duration> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold
    // spaces: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime + stime;
    let per_second = ticks_per_second();
    Some(Duration::from_micros(ticks * 1_000_000 / per_second))
}

impl CpuSnapshot {
    /// Reads the CPU time of every process named in `names` (comma
    /// separated `comm` values) and of this process.
    pub fn take(names: &str) -> CpuSnapshot {
        let names: Vec<&str> = names.split(',').filter(|n| !n.is_empty()).collect();
        let mut totals: Vec<(String, Option<Duration>)> =
            names.iter().map(|n| (n.to_string(), None)).collect();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let path = entry.path();
                let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
                    continue;
                };
                let Some(slot) = totals.iter_mut().find(|(n, _)| n == comm.trim()) else {
                    continue;
                };
                if let Some(cpu) = cpu_of(&path) {
                    slot.1 = Some(slot.1.unwrap_or_default() + cpu);
                }
            }
        }
        CpuSnapshot {
            by_name: totals,
            own: cpu_of(std::path::Path::new("/proc/self")),
        }
    }

    /// The CPU time per operation each process spent since `self`.
    pub fn per_op(&self, after: &CpuSnapshot, ops: usize) -> CpuPerOp {
        let per_op = |before: Option<Duration>, after: Option<Duration>| {
            let (b, a) = (before?, after?);
            (ops > 0).then(|| a.saturating_sub(b).as_secs_f64() * 1e6 / ops as f64)
        };
        CpuPerOp {
            by_name: self
                .by_name
                .iter()
                .zip(&after.by_name)
                .filter_map(|((name, before), (_, now))| {
                    Some((name.clone(), per_op(*before, *now)?))
                })
                .collect(),
            own: per_op(self.own, after.own),
        }
    }

    /// Prints the CPU time per operation each process spent since `self`.
    pub fn print_per_op(&self, after: &CpuSnapshot, ops: usize) {
        let cpu = self.per_op(after, ops);
        if !cpu.is_empty() {
            println!("  CPU per operation: {cpu}");
        }
    }
}

/// CPU time per operation, in µs, of each watched process name that was
/// running, and of the load generator.
#[derive(Debug, Clone, Default)]
pub struct CpuPerOp {
    pub by_name: Vec<(String, f64)>,
    pub own: Option<f64>,
}

impl CpuPerOp {
    fn is_empty(&self) -> bool {
        self.by_name.is_empty() && self.own.is_none()
    }

    /// The API server's share: every watched process but etcd (and not the
    /// load generator), the figure `--compare` sets side by side.
    pub fn servers(&self) -> f64 {
        self.by_name
            .iter()
            .filter(|(n, _)| n != "etcd")
            .map(|(_, us)| us)
            .sum()
    }
}

impl std::fmt::Display for CpuPerOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut total = 0.0;
        let mut first = true;
        for (name, us) in self
            .by_name
            .iter()
            .map(|(n, us)| (n.as_str(), *us))
            .chain(self.own.map(|us| ("kube-loadgen", us)))
        {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            total += us;
            write!(f, "{name} {us:.0} µs")?;
        }
        write!(f, " (total {total:.0} µs)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_cpu_time_is_read_and_grows() {
        let before = CpuSnapshot::take("no-such-process");
        assert!(before.own.is_some());
        assert_eq!(before.by_name.len(), 1);
        assert!(before.by_name[0].1.is_none(), "nothing has that name");
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let after = CpuSnapshot::take("no-such-process");
        assert!(
            after.own > before.own,
            "{:?} -> {:?}",
            before.own,
            after.own
        );
    }
}
