//! The webhook backend (`--audit-webhook-config-file`): records are POSTed
//! as an `audit.k8s.io/v1` `EventList` to the server of a kubeconfig file
//! (its current context: server URL, CA, client certificate or token).
//! A failed POST (no connection, 429, 5xx) is retried with exponential
//! backoff from `--audit-webhook-initial-backoff` (×1.5, five tries), as
//! upstream; a batch that still fails is counted as lost.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use super::buffered::{BatchConfig, BatchWriter, Buffered};
use super::{record_bytes, Mode, Truncate};
use crate::audit::event::Encoded;
use crate::audit::{metrics, Sink};
use crate::client::ApiClient;

const PLUGIN: &str = "webhook";
/// Deadline of one POST.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Tries of one batch.
const TRIES: u32 = 5;

/// The client posting `EventList`s.
pub struct Webhook {
    client: ApiClient,
    initial_backoff: Duration,
}

impl Webhook {
    /// The webhook of the kubeconfig at `path`.
    pub fn from_kubeconfig(path: &Path, initial_backoff: Duration) -> anyhow::Result<Self> {
        Ok(Webhook {
            client: ApiClient::from_kubeconfig(path)?,
            initial_backoff,
        })
    }

    async fn send(&self, records: &[Bytes]) -> Result<(), String> {
        let body = event_list(records);
        let mut backoff = self.initial_backoff;
        let mut last = String::new();
        for attempt in 1..=TRIES {
            match self
                .client
                .post("", "application/json", body.clone(), CALL_TIMEOUT)
                .await
            {
                Ok((code, _)) if (200..300).contains(&code) => return Ok(()),
                Ok((code, answer)) if code != 429 && code < 500 => {
                    return Err(format!(
                        "the audit webhook answered {code}: {}",
                        String::from_utf8_lossy(&answer[..answer.len().min(512)])
                    ))
                }
                Ok((code, _)) => last = format!("the audit webhook answered {code}"),
                Err(e) => last = e,
            }
            if attempt < TRIES {
                tokio::time::sleep(backoff).await;
                backoff = backoff.mul_f64(1.5);
            }
        }
        Err(last)
    }
}

/// An `EventList` of encoded records (their bytes are copied in as they are).
pub fn event_list(records: &[Bytes]) -> Bytes {
    let head = br#"{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":["#;
    let mut out =
        Vec::with_capacity(head.len() + 2 + records.iter().map(|r| r.len() + 1).sum::<usize>());
    out.extend_from_slice(head);
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(r);
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
}

impl BatchWriter for Webhook {
    fn write(&self, batch: Vec<Bytes>) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move { self.send(&batch).await })
    }
}

/// The webhook in a blocking mode: the request waits for the POST.
struct Blocking {
    webhook: Arc<Webhook>,
    strict: bool,
    truncate: Option<Truncate>,
}

impl Sink for Blocking {
    fn process(&self, record: &Encoded<'_>) -> bool {
        let Some(bytes) = record_bytes(record, self.truncate.as_ref(), PLUGIN) else {
            return !self.strict;
        };
        let result = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| h.block_on(self.webhook.send(&[bytes])))
            }
            _ => Err("the blocking audit webhook needs a multi-threaded runtime".to_string()),
        };
        match result {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(error = %e, audit_id = %record.event().audit_id, "sending an audit record failed");
                metrics::errors(PLUGIN, 1);
                !self.strict
            }
        }
    }
}

/// The webhook backend in `mode`.
pub fn backend(
    webhook: Webhook,
    mode: Mode,
    batch: BatchConfig,
    truncate: Option<Truncate>,
) -> Arc<dyn Sink> {
    let webhook = Arc::new(webhook);
    match mode {
        Mode::Blocking | Mode::BlockingStrict => Arc::new(Blocking {
            webhook,
            strict: mode == Mode::BlockingStrict,
            truncate,
        }),
        Mode::Batch => Arc::new(Buffered::start(PLUGIN, webhook, batch, truncate)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_list_holds_the_records() {
        let list = event_list(&[
            Bytes::from_static(b"{\"a\":1}"),
            Bytes::from_static(b"{\"b\":2}"),
        ]);
        let v: serde_json::Value = serde_json::from_slice(&list).unwrap();
        assert_eq!(v["kind"], "EventList");
        assert_eq!(v["apiVersion"], "audit.k8s.io/v1");
        assert_eq!(v["items"], serde_json::json!([{"a": 1}, {"b": 2}]));
        let empty: serde_json::Value = serde_json::from_slice(&event_list(&[])).unwrap();
        assert_eq!(empty["items"], serde_json::json!([]));
    }
}
