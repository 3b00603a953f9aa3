//! The log backend (`--audit-log-path`): one JSON `Event` per line, to a
//! rotating file or, for `-`, to stdout.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::buffered::{BatchConfig, BatchWriter, Buffered};
use super::rotate::{RotatingFile, Rotation};
use super::{record_bytes, Mode, Truncate};
use crate::audit::event::Encoded;
use crate::audit::{metrics, Sink};

const PLUGIN: &str = "log";

enum Target {
    Stdout,
    File(RotatingFile),
}

/// Where lines go.
pub struct LogFile(Mutex<Target>);

impl LogFile {
    /// The log at `path` (`-`: stdout).
    pub fn open(path: &Path, rotation: Rotation) -> std::io::Result<Self> {
        let target = if path.as_os_str() == "-" {
            Target::Stdout
        } else {
            Target::File(RotatingFile::open(path, rotation)?)
        };
        Ok(LogFile(Mutex::new(target)))
    }

    /// Writes the records, one line each, in one write.
    fn write_lines(&self, records: &[Bytes]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(records.iter().map(|r| r.len() + 1).sum());
        for r in records {
            buf.extend_from_slice(r);
            buf.push(b'\n');
        }
        let mut target = self
            .0
            .lock()
            .map_err(|_| std::io::Error::other("audit log lock poisoned"))?;
        match &mut *target {
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(&buf)?;
                out.flush()
            }
            Target::File(f) => f.write_all(&buf),
        }
    }

    fn sync(&self) {
        if let Ok(mut t) = self.0.lock() {
            if let Target::File(f) = &mut *t {
                let _ = f.sync();
            }
        }
    }
}

impl BatchWriter for LogFile {
    fn write(&self, batch: Vec<Bytes>) -> BoxFuture<'_, Result<(), String>> {
        let r = self.write_lines(&batch).map_err(|e| e.to_string());
        Box::pin(async move { r })
    }
}

/// The log backend in a blocking mode.
struct Blocking {
    file: Arc<LogFile>,
    strict: bool,
    truncate: Option<Truncate>,
}

impl Sink for Blocking {
    fn process(&self, record: &Encoded<'_>) -> bool {
        let Some(bytes) = record_bytes(record, self.truncate.as_ref(), PLUGIN) else {
            return !self.strict;
        };
        match self.file.write_lines(std::slice::from_ref(&bytes)) {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(error = %e, audit_id = %record.event().audit_id, "writing the audit log failed");
                metrics::errors(PLUGIN, 1);
                !self.strict
            }
        }
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        self.file.sync();
        Box::pin(async {})
    }
}

/// The log backend writing to `file` in `mode`.
pub fn backend(
    file: LogFile,
    mode: Mode,
    batch: BatchConfig,
    truncate: Option<Truncate>,
) -> Arc<dyn Sink> {
    let file = Arc::new(file);
    match mode {
        Mode::Blocking | Mode::BlockingStrict => Arc::new(Blocking {
            file,
            strict: mode == Mode::BlockingStrict,
            truncate,
        }),
        Mode::Batch => Arc::new(Buffered::start(PLUGIN, file, batch, truncate)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{event::MicroTime, Event, Level};

    #[test]
    fn blocking_writes_one_line_per_record() {
        let dir = std::env::temp_dir().join(format!("audit-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub").join("audit.log");
        let rotation = Rotation {
            max_size_mb: 0,
            max_backups: 0,
            max_age_days: 0,
        };
        let sink = backend(
            LogFile::open(&path, rotation).unwrap(),
            Mode::BlockingStrict,
            BatchConfig {
                buffer_size: 1,
                max_batch_size: 1,
                max_batch_wait: std::time::Duration::ZERO,
                throttle: None,
            },
            None,
        );
        let mut ev = Event::new(Level::Metadata, "id-1".into(), MicroTime::now());
        assert!(sink.process(&Encoded::new(&ev)));
        ev.audit_id = "id-2".into();
        assert!(sink.process(&Encoded::new(&ev)));
        let text = std::fs::read_to_string(&path).unwrap();
        let ids: Vec<String> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["auditID"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(ids, ["id-1", "id-2"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
