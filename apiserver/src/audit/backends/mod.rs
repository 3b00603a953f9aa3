//! Where audit records are written (upstream's `plugin/pkg/audit`):
//!
//! - [`log`]: one JSON line per record, to a rotating file or stdout;
//! - [`webhook`]: `EventList`s POSTed to a server named by a kubeconfig;
//!
//! each in one of upstream's modes ([`Mode`]): `blocking` writes within the
//! request and ignores failures, `blocking-strict` fails the request whose
//! `RequestReceived` record could not be written, `batch` queues records for
//! a background task ([`buffered`]) that writes them in batches, throttled.
//! Either can truncate ([`Truncate`]): records over the event limit lose
//! their objects, batches over the batch limit are split.

pub mod buffered;
pub mod log;
pub mod rotate;
pub mod webhook;

use std::str::FromStr;

use bytes::Bytes;

use super::event::Encoded;
use super::metrics;

/// How a backend takes records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Blocking,
    BlockingStrict,
    Batch,
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "blocking" => Ok(Mode::Blocking),
            "blocking-strict" => Ok(Mode::BlockingStrict),
            "batch" => Ok(Mode::Batch),
            _ => Err(format!(
                "invalid audit mode {s:?}: allowed modes are blocking, blocking-strict, batch"
            )),
        }
    }
}

/// Truncation limits (`--audit-*-truncate-max-event-size`, `-max-batch-size`).
#[derive(Clone, Copy, Debug)]
pub struct Truncate {
    pub max_event_bytes: usize,
    pub max_batch_bytes: usize,
}

/// The bytes a backend writes for one record: as encoded, or truncated to
/// the limit; `None` (counted as an error of `plugin`) when it cannot fit.
pub fn record_bytes(
    record: &Encoded<'_>,
    truncate: Option<&Truncate>,
    plugin: &str,
) -> Option<Bytes> {
    match truncate {
        None => Some(record.json().clone()),
        Some(t) => {
            let b = record.within(t.max_event_bytes);
            if b.is_none() {
                tracing::warn!(
                    audit_id = %record.event().audit_id,
                    limit = t.max_event_bytes,
                    "audit record larger than the event limit even without its objects; dropped"
                );
                metrics::errors(plugin, 1);
            }
            b
        }
    }
}

/// Splits `records` into batches of at most `max_bytes` (each record its own
/// batch if alone it is larger).
pub fn split_batches(records: Vec<Bytes>, max_bytes: usize) -> Vec<Vec<Bytes>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut size = 0;
    for r in records {
        if !cur.is_empty() && size + r.len() > max_bytes {
            out.push(std::mem::take(&mut cur));
            size = 0;
        }
        size += r.len();
        cur.push(r);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_split_at_the_byte_limit() {
        let r = |n: usize| Bytes::from(vec![b'x'; n]);
        let b = split_batches(vec![r(4), r(4), r(4), r(20), r(1)], 10);
        let sizes: Vec<Vec<usize>> = b
            .iter()
            .map(|b| b.iter().map(Bytes::len).collect())
            .collect();
        assert_eq!(sizes, [vec![4, 4], vec![4], vec![20], vec![1]]);
        assert!("bogus".parse::<Mode>().is_err());
        assert_eq!("blocking-strict".parse::<Mode>(), Ok(Mode::BlockingStrict));
    }
}
