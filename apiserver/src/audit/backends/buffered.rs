//! The `batch` mode: records are queued (up to the buffer size; beyond it
//! they are dropped and counted as errors) and a background task writes them
//! in batches of up to `max_batch_size` records, at the latest `max_wait`
//! after a batch's first record, at most `qps` batches a second (bursts of
//! `burst`) when throttled. At shutdown what is queued is written.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::{record_bytes, split_batches, Truncate};
use crate::audit::event::Encoded;
use crate::audit::{metrics, Sink};

/// `--audit-*-batch-*`.
#[derive(Clone, Debug)]
pub struct BatchConfig {
    pub buffer_size: usize,
    pub max_batch_size: usize,
    pub max_batch_wait: Duration,
    /// `(qps, burst)` when throttling is enabled.
    pub throttle: Option<(f64, usize)>,
}

/// What writes one batch.
pub trait BatchWriter: Send + Sync + 'static {
    /// Writes `batch` (encoded records); an error loses the batch.
    fn write(&self, batch: Vec<Bytes>) -> BoxFuture<'_, Result<(), String>>;
}

/// A batching backend.
pub struct Buffered {
    plugin: &'static str,
    tx: Mutex<Option<mpsc::Sender<Bytes>>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    truncate: Option<Truncate>,
}

impl Buffered {
    /// Starts the background task of `writer` (on the current runtime).
    pub fn start(
        plugin: &'static str,
        writer: Arc<dyn BatchWriter>,
        cfg: BatchConfig,
        truncate: Option<Truncate>,
    ) -> Self {
        let (tx, rx) = mpsc::channel(cfg.buffer_size.max(1));
        let task = tokio::spawn(run(plugin, writer, cfg, truncate, rx));
        Buffered {
            plugin,
            tx: Mutex::new(Some(tx)),
            task: Mutex::new(Some(task)),
            truncate,
        }
    }
}

impl Sink for Buffered {
    fn process(&self, record: &Encoded<'_>) -> bool {
        let Some(bytes) = record_bytes(record, self.truncate.as_ref(), self.plugin) else {
            return true;
        };
        let sent = self
            .tx
            .lock()
            .ok()
            .and_then(|tx| tx.as_ref().map(|tx| tx.try_send(bytes)));
        match sent {
            Some(Ok(())) => {}
            Some(Err(mpsc::error::TrySendError::Full(_))) => {
                tracing::error!(plugin = self.plugin, audit_id = %record.event().audit_id,
                    "audit buffer full; record dropped");
                metrics::errors(self.plugin, 1);
            }
            _ => {
                tracing::error!(
                    plugin = self.plugin,
                    "audit backend shut down; record dropped"
                );
                metrics::errors(self.plugin, 1);
            }
        }
        // Batching never fails a request.
        true
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        let tx = self.tx.lock().ok().and_then(|mut t| t.take());
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        Box::pin(async move {
            drop(tx);
            if let Some(task) = task {
                let _ = task.await;
            }
        })
    }
}

async fn run(
    plugin: &'static str,
    writer: Arc<dyn BatchWriter>,
    cfg: BatchConfig,
    truncate: Option<Truncate>,
    mut rx: mpsc::Receiver<Bytes>,
) {
    let max = cfg.max_batch_size.max(1);
    let mut bucket = cfg
        .throttle
        .map(|(qps, burst)| TokenBucket::new(qps, burst));
    let mut open = true;
    while open {
        let Some(first) = rx.recv().await else {
            break;
        };
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + cfg.max_batch_wait;
        while batch.len() < max {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(r)) => batch.push(r),
                Ok(None) => {
                    open = false;
                    break;
                }
                Err(_) => break,
            }
        }
        let batches = match &truncate {
            Some(t) => split_batches(batch, t.max_batch_bytes),
            None => vec![batch],
        };
        for batch in batches {
            if let Some(b) = bucket.as_mut() {
                b.take().await;
            }
            let n = batch.len();
            if let Err(e) = writer.write(batch).await {
                tracing::error!(plugin, error = %e, records = n, "writing an audit batch failed");
                metrics::errors(plugin, n);
            }
        }
    }
}

/// Upstream's client-side rate limiter: `qps` tokens a second, at most
/// `burst` saved.
struct TokenBucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    at: tokio::time::Instant,
}

impl TokenBucket {
    fn new(qps: f64, burst: usize) -> Self {
        let burst = burst.max(1) as f64;
        TokenBucket {
            qps: qps.max(f64::MIN_POSITIVE),
            burst,
            tokens: burst,
            at: tokio::time::Instant::now(),
        }
    }

    async fn take(&mut self) {
        let now = tokio::time::Instant::now();
        self.tokens = (self.tokens + (now - self.at).as_secs_f64() * self.qps).min(self.burst);
        self.at = now;
        if self.tokens < 1.0 {
            let wait = Duration::from_secs_f64((1.0 - self.tokens) / self.qps);
            tokio::time::sleep(wait).await;
            self.tokens = 1.0;
            self.at = tokio::time::Instant::now();
        }
        self.tokens -= 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{event::MicroTime, Event, Level};

    #[derive(Default)]
    struct Collect(Mutex<Vec<usize>>);

    impl BatchWriter for Collect {
        fn write(&self, batch: Vec<Bytes>) -> BoxFuture<'_, Result<(), String>> {
            self.0.lock().unwrap().push(batch.len());
            Box::pin(async { Ok(()) })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn records_are_batched_by_count_and_time_and_flushed_at_shutdown() {
        let writer = Arc::new(Collect::default());
        let b = Buffered::start(
            "test",
            writer.clone(),
            BatchConfig {
                buffer_size: 100,
                max_batch_size: 3,
                max_batch_wait: Duration::from_secs(5),
                throttle: Some((1.0, 1)),
            },
            None,
        );
        let ev = Event::new(Level::Metadata, "x".into(), MicroTime::now());
        for _ in 0..4 {
            assert!(b.process(&Encoded::new(&ev)));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(*writer.0.lock().unwrap(), [3], "a full batch goes at once");
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(*writer.0.lock().unwrap(), [3, 1], "the rest after max-wait");
        assert!(b.process(&Encoded::new(&ev)));
        b.shutdown().await;
        assert_eq!(*writer.0.lock().unwrap(), [3, 1, 1], "flushed at shutdown");
        assert!(
            b.process(&Encoded::new(&ev)),
            "after shutdown: dropped, not failed"
        );
    }
}
