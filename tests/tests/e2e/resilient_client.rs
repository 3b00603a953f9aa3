//! The client behaviour the crash, HA and rolling-restart tests hold the
//! servers to: a watch that resumes from its last resourceVersion whenever
//! its stream ends or cannot be opened, as client-go's reflector does
//! (every event exactly once, no relist), and creates retried as clients
//! retry them.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// What a resuming watch hands its caller, with the resourceVersion it
/// would resume from at that moment.
pub enum Resumed<'a> {
    /// A stream is about to be opened (the first, or a resumption).
    Opening,
    /// The server refused to open one, with this status (410: the
    /// resourceVersion is gone, so a real client would relist).
    Refused(u16),
    /// An ERROR event.
    Error(&'a Value),
    /// Any other event; its resourceVersion, if any, is now the one to
    /// resume from.
    Event(&'a Value),
}

/// Watches (`?watch=1&allowWatchBookmarks=true`) the collections at `urls`
/// in turn, one per stream (several fronts of one server), from `rv` until
/// `stop`; after a refusal or transport error it waits `pause`. Each stream
/// may last `stream_timeout`. Returns how many streams were opened.
pub async fn watch_resuming(
    http: &reqwest::Client,
    urls: &[String],
    mut rv: String,
    stream_timeout: Duration,
    pause: Duration,
    stop: &AtomicBool,
    mut on: impl FnMut(Resumed<'_>, &str),
) -> usize {
    let mut streams = 0;
    let mut attempt = 0usize;
    while !stop.load(Ordering::SeqCst) && !urls.is_empty() {
        let url = &urls[attempt % urls.len()];
        attempt += 1;
        on(Resumed::Opening, &rv);
        let resp = http
            .get(format!(
                "{url}?watch=1&allowWatchBookmarks=true&resourceVersion={rv}"
            ))
            .timeout(stream_timeout)
            .send()
            .await;
        let mut resp = match resp {
            Ok(r) if r.status().is_success() => r,
            Ok(r) => {
                on(Resumed::Refused(r.status().as_u16()), &rv);
                tokio::time::sleep(pause).await;
                continue;
            }
            Err(_) => {
                tokio::time::sleep(pause).await;
                continue;
            }
        };
        streams += 1;
        let mut buf = Vec::new();
        loop {
            let chunk = tokio::select! {
                c = resp.chunk() => c,
                _ = tokio::time::sleep(Duration::from_millis(500)) => {
                    if stop.load(Ordering::SeqCst) { break; }
                    continue;
                }
            };
            let Ok(Some(chunk)) = chunk else { break };
            buf.extend_from_slice(&chunk);
            while let Some(end) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=end).collect();
                let Ok(ev) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                if ev["type"] == "ERROR" {
                    on(Resumed::Error(&ev), &rv);
                    continue;
                }
                if let Some(v) = ev["object"]["metadata"]["resourceVersion"].as_str() {
                    rv = v.to_string();
                }
                on(Resumed::Event(&ev), &rv);
            }
        }
    }
    streams
}

/// How [`create_retrying`] retries.
#[derive(Clone)]
pub struct Retry {
    /// Attempts at most.
    pub attempts: usize,
    /// And no attempt after this long.
    pub within: Duration,
    /// Between attempts.
    pub pause: Duration,
    /// Whether a 404 is retried too (a tier restarting: its group is
    /// briefly unknown to the aggregator's discovery of it).
    pub not_found: bool,
}

/// POSTs `body` to the collections at `urls` in turn (one per attempt: a
/// client behind a load balancer over several fronts), retrying on 5xx,
/// 429 and transport errors as `retry` says; a retry answered 409 found
/// the object created by an attempt whose answer was lost, so it counts as
/// success. Each retry is counted in `retries`. Returns the attempts made.
pub async fn create_retrying(
    http: &reqwest::Client,
    urls: &[String],
    body: &Value,
    retry: &Retry,
    retries: &AtomicUsize,
) -> Result<usize, String> {
    let deadline = Instant::now() + retry.within;
    let mut last = "no attempt".to_string();
    for attempt in 0..retry.attempts {
        if attempt > 0 {
            if Instant::now() >= deadline {
                break;
            }
            retries.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(retry.pause).await;
        }
        let Some(url) = urls.get(attempt % urls.len().max(1)) else {
            break;
        };
        match http.post(url).json(body).send().await {
            Ok(r) if r.status().as_u16() == 201 => return Ok(attempt + 1),
            Ok(r) if r.status().as_u16() == 409 && attempt > 0 => return Ok(attempt + 1),
            Ok(r)
                if r.status().is_server_error()
                    || r.status().as_u16() == 429
                    || (retry.not_found && r.status().as_u16() == 404) =>
            {
                last = format!("{} {}", r.status(), r.text().await.unwrap_or_default())
            }
            Ok(r) => {
                return Err(format!(
                    "{} {}",
                    r.status(),
                    r.text().await.unwrap_or_default()
                ))
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

/// The ConfigMap these tests write: named `name`, holding its name.
pub fn configmap(name: &str) -> Value {
    serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"n": name}})
}

/// A write load: ConfigMaps `<prefix>0`, `<prefix>1`, … created at `urls`
/// (each attempt at the next, see [`create_retrying`]) one after another,
/// 20 ms apart, until `stop` is set.
pub struct WriteLoad {
    acked: Arc<Mutex<Vec<String>>>,
    failed: Arc<Mutex<Vec<String>>>,
    retries: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

/// What a [`WriteLoad`] did: the names acknowledged, the writes that failed
/// after their retries (`name: error`), and the retries made in all.
pub struct Written {
    pub acked: Vec<String>,
    pub failed: Vec<String>,
    pub retries: usize,
}

impl WriteLoad {
    /// Starts the load.
    pub fn start(
        http: &reqwest::Client,
        urls: Vec<String>,
        prefix: &str,
        retry: Retry,
        stop: Arc<AtomicBool>,
    ) -> WriteLoad {
        let acked: Arc<Mutex<Vec<String>>> = Arc::default();
        let failed: Arc<Mutex<Vec<String>>> = Arc::default();
        let retries = Arc::new(AtomicUsize::new(0));
        let task = {
            let (http, prefix) = (http.clone(), prefix.to_string());
            let (acked, failed, retries) = (acked.clone(), failed.clone(), retries.clone());
            tokio::spawn(async move {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let name = format!("{prefix}{i}");
                    match create_retrying(&http, &urls, &configmap(&name), &retry, &retries).await {
                        Ok(_) => acked.lock().unwrap().push(name),
                        Err(e) => failed.lock().unwrap().push(format!("{name}: {e}")),
                    }
                    i += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
        };
        WriteLoad {
            acked,
            failed,
            retries,
            task,
        }
    }

    /// Waits for the load to end (once `stop` is set) and says what it did.
    pub async fn finish(self) -> Written {
        self.task.await.expect("the write load panicked");
        Written {
            acked: self.acked.lock().unwrap().clone(),
            failed: self.failed.lock().unwrap().clone(),
            retries: self.retries.load(Ordering::SeqCst),
        }
    }
}

/// How the ADDED events a watcher recorded compare with the acknowledged
/// writes: the distinct names seen, the ones seen more than once, and the
/// acknowledged ones never seen.
pub struct Delivery {
    pub distinct: BTreeSet<String>,
    pub duplicated: Vec<String>,
    pub missed: Vec<String>,
}

/// Waits up to `wait` until `seen` holds as many names starting with
/// `prefix` as were `acked` (the watch may trail the last write), then
/// compares them.
pub async fn delivery(
    seen: &Mutex<Vec<String>>,
    prefix: &str,
    acked: &[String],
    wait: Duration,
) -> Delivery {
    let ours = |seen: &[String]| -> Vec<String> {
        seen.iter()
            .filter(|n| n.starts_with(prefix))
            .cloned()
            .collect()
    };
    let deadline = Instant::now() + wait;
    while ours(&seen.lock().unwrap()).len() < acked.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seen = ours(&seen.lock().unwrap());
    let mut distinct = BTreeSet::new();
    let duplicated = seen
        .into_iter()
        .filter(|n| !distinct.insert(n.clone()))
        .collect();
    let missed = acked
        .iter()
        .filter(|n| !distinct.contains(*n))
        .cloned()
        .collect();
    Delivery {
        distinct,
        duplicated,
        missed,
    }
}
