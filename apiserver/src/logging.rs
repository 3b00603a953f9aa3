//! Logging as upstream's components log (`k8s.io/component-base/logs`):
//! `--logging-format=text|json` and klog's verbosity `-v`/`--v`.
//!
//! Verbosity maps onto `tracing` levels: up to 3 shows `info` and above
//! (with the per-request `HTTP` line of `crate::filters::httplog` from 3
//! on, as upstream's httplog), 4 and 5 add `debug`, 6 and more `trace`.
//! `RUST_LOG`, when set, overrides the level filter. The JSON format writes
//! one object per line with upstream's keys: `ts` (seconds since the epoch),
//! `caller`, `msg`, `v` (0 for info, 4 for debug, 6 for trace), `err` for
//! errors, then the event's fields.

use std::sync::atomic::{AtomicU8, Ordering};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

static VERBOSITY: AtomicU8 = AtomicU8::new(0);

/// klog's verbosity of this process (`-v`).
pub fn verbosity() -> u8 {
    VERBOSITY.load(Ordering::Relaxed)
}

/// Whether lines at klog verbosity `level` are written.
pub fn enabled(level: u8) -> bool {
    verbosity() >= level
}

/// `--logging-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `--logging-format`, `-v`.
#[derive(clap::Args, Clone, Debug)]
pub struct LoggingOptions {
    /// Sets the log format. Permitted formats: "json", "text".
    #[arg(long, value_enum, default_value = "text", help_heading = "Logs flags")]
    pub logging_format: Format,
    /// number for the log level verbosity
    #[arg(
        short = 'v',
        long = "v",
        default_value_t = 0,
        help_heading = "Logs flags"
    )]
    pub v: u8,
}

impl Default for LoggingOptions {
    fn default() -> Self {
        LoggingOptions {
            logging_format: Format::Text,
            v: 0,
        }
    }
}

/// The `tracing` level filter of verbosity `v`.
pub fn level_filter(v: u8) -> &'static str {
    match v {
        0..=3 => "info",
        4 | 5 => "debug",
        _ => "trace",
    }
}

impl LoggingOptions {
    /// Installs the process's logger (once; later calls change nothing).
    pub fn init(&self) {
        VERBOSITY.store(self.v, Ordering::Relaxed);
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level_filter(self.v)));
        // Colours only on a terminal: log files and journald get plain text.
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(ansi)
            .with_target(false);
        let _ = match self.logging_format {
            Format::Text => builder.try_init(),
            Format::Json => builder.event_format(JsonLines).try_init(),
        };
    }
}

/// Upstream's JSON log line.
struct JsonLines;

#[derive(Default)]
struct Fields {
    msg: String,
    rest: serde_json::Map<String, serde_json::Value>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.msg = text;
        } else {
            self.rest
                .insert(field.name().to_string(), serde_json::Value::String(text));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.msg = value.to_string();
        } else {
            self.rest.insert(field.name().to_string(), value.into());
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.rest.insert(field.name().to_string(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.rest.insert(field.name().to_string(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.rest.insert(field.name().to_string(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.rest.insert(field.name().to_string(), value.into());
    }
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        writer.write_str(&json_line(event.metadata(), fields))?;
        writer.write_char('\n')
    }
}

fn json_line(meta: &tracing::Metadata<'_>, fields: Fields) -> String {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let mut line = serde_json::Map::new();
    line.insert("ts".into(), ts.into());
    if let (Some(file), Some(n)) = (meta.file(), meta.line()) {
        let file = file.rsplit('/').next().unwrap_or(file);
        line.insert("caller".into(), format!("{file}:{n}").into());
    }
    let level = *meta.level();
    if level <= Level::WARN {
        // klog's error and warning lines carry no `v`.
        if level == Level::ERROR {
            line.insert("msg".into(), fields.msg.into());
            if let Some(e) = fields.rest.get("error").cloned() {
                line.insert("err".into(), e);
            }
        } else {
            line.insert("msg".into(), fields.msg.into());
        }
    } else {
        line.insert("msg".into(), fields.msg.into());
        let v = match level {
            Level::INFO => 0,
            Level::DEBUG => 4,
            _ => 6,
        };
        line.insert("v".into(), v.into());
    }
    for (k, v) in fields.rest {
        if k == "error" && level == Level::ERROR {
            continue;
        }
        line.entry(k).or_insert(v);
    }
    serde_json::Value::Object(line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_maps_to_levels() {
        assert_eq!(level_filter(0), "info");
        assert_eq!(level_filter(3), "info");
        assert_eq!(level_filter(4), "debug");
        assert_eq!(level_filter(9), "trace");
    }

    #[test]
    fn json_lines_carry_upstreams_keys() {
        struct Capture(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for Capture {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .event_format(JsonLines)
            .with_writer(move || Capture(sink.clone()))
            .with_max_level(Level::DEBUG)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(verb = "GET", code = 200u64, "HTTP");
            tracing::error!(error = "boom", "writing failed");
        });
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["msg"], "HTTP");
        assert_eq!(lines[0]["v"], 0);
        assert_eq!(lines[0]["verb"], "GET");
        assert_eq!(lines[0]["code"], 200);
        assert!(lines[0]["ts"].as_f64().is_some_and(|t| t > 1.0e9));
        assert!(lines[0]["caller"]
            .as_str()
            .is_some_and(|c| c.starts_with("logging.rs:")));
        assert_eq!(lines[1]["msg"], "writing failed");
        assert_eq!(lines[1]["err"], "boom");
        assert!(lines[1].get("v").is_none());
    }
}
