//! The standard `process_*` metrics every Prometheus client exports (and
//! kube-apiserver's dashboards read): CPU seconds, resident and virtual
//! memory, open and maximum file descriptors, start time, read from `/proc`
//! at each scrape. Outside Linux the collector reports nothing.

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{Gauge, IntGauge, Opts};

/// Collects the `process_*` metrics of this process.
pub struct ProcessCollector {
    descs: Vec<Desc>,
}

const METRICS: [(&str, &str); 6] = [
    (
        "process_cpu_seconds_total",
        "Total user and system CPU time spent in seconds.",
    ),
    (
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
    ),
    (
        "process_virtual_memory_bytes",
        "Virtual memory size in bytes.",
    ),
    ("process_open_fds", "Number of open file descriptors."),
    (
        "process_max_fds",
        "Maximum number of open file descriptors.",
    ),
    (
        "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.",
    ),
];

impl ProcessCollector {
    /// A collector of this process's figures.
    pub fn new() -> Self {
        let descs = METRICS
            .iter()
            .filter_map(|(name, help)| {
                Desc::new(
                    name.to_string(),
                    help.to_string(),
                    vec![],
                    Default::default(),
                )
                .ok()
            })
            .collect();
        ProcessCollector { descs }
    }
}

impl Default for ProcessCollector {
    fn default() -> Self {
        Self::new()
    }
}

/// This process's figures, from `/proc/self`.
#[derive(Debug, Default, PartialEq)]
struct Figures {
    cpu_seconds: f64,
    resident_bytes: u64,
    virtual_bytes: u64,
    open_fds: u64,
    max_fds: u64,
    start_time_seconds: f64,
}

fn read_figures() -> Option<Figures> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which may hold spaces and parens.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field numbers of proc(5), counted from `state` (field 3) at index 0.
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    // SAFETY: sysconf and getrlimit only read process-wide settings.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    let boot_time = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| {
            l.strip_prefix("btime ")
                .and_then(|v| v.trim().parse::<f64>().ok())
        })?;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit to fill.
    let max_fds = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur
    } else {
        0
    };
    Some(Figures {
        cpu_seconds: (field(14)? + field(15)?) as f64 / ticks,
        start_time_seconds: boot_time + field(22)? as f64 / ticks,
        virtual_bytes: field(23)?,
        resident_bytes: field(24)? * page,
        open_fds: std::fs::read_dir("/proc/self/fd")
            .map(|d| d.count() as u64)
            .unwrap_or(0),
        max_fds,
    })
}

impl Collector for ProcessCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let Some(f) = read_figures() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let opts = |i: usize| Opts::new(METRICS[i].0, METRICS[i].1);
        if let Ok(c) = prometheus::Counter::with_opts(opts(0)) {
            c.inc_by(f.cpu_seconds);
            out.extend(c.collect());
        }
        for (i, v) in [
            (1, f.resident_bytes),
            (2, f.virtual_bytes),
            (3, f.open_fds),
            (4, f.max_fds),
        ] {
            if let Ok(g) = IntGauge::with_opts(opts(i)) {
                g.set(v as i64);
                out.extend(g.collect());
            }
        }
        if let Ok(g) = Gauge::with_opts(opts(5)) {
            g.set(f.start_time_seconds);
            out.extend(g.collect());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_of_this_process_are_plausible() {
        let f = read_figures().expect("/proc/self");
        assert!(f.resident_bytes > 1 << 20, "{f:?}");
        assert!(f.virtual_bytes >= f.resident_bytes, "{f:?}");
        assert!(f.open_fds >= 3 && f.max_fds >= f.open_fds, "{f:?}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs_f64();
        assert!(
            f.start_time_seconds <= now + 1.0 && f.start_time_seconds > now - 86400.0,
            "{f:?}"
        );
    }
}
