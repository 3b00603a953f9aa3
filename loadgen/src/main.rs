//! `kube-loadgen`: drives any Kubernetes API server from a kubeconfig and
//! prints figures: creates/s and GET/s at a concurrency with p50/p99, LIST
//! latency for N objects, watch fan-out delivery latency, the server's RSS
//! after loading N objects, and the same create loop straight against etcd
//! (the ceiling for writes). Creates, GETs and etcd puts also print the
//! CPU time each local server process spent per operation (see `cpu`).
//!
//! Every loop is bounded in count; nothing runs unbounded.

mod cpu;
mod stats;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::{Parser, Subcommand};
use futures_util::{StreamExt, TryStreamExt};
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, GetParams, ListParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;
use stats::Latencies;

#[derive(Parser, Debug)]
#[command(
    name = "kube-loadgen",
    about = "Load generator for Kubernetes API servers"
)]
struct Options {
    /// kubeconfig of the server under test (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true)]
    kubeconfig: Option<std::path::PathBuf>,
    /// Namespace used for the objects (created if missing, emptied at the end).
    #[arg(long, global = true, default_value = "loadgen")]
    namespace: String,
    /// Concurrent requests.
    #[arg(long, global = true, default_value_t = 16)]
    concurrency: usize,
    /// Size of each object's data in bytes.
    #[arg(long, global = true, default_value_t = 1024)]
    object_size: usize,
    /// Local processes (`comm` names, comma separated) whose CPU time per
    /// operation is printed after `creates`, `gets` and `etcd`; empty for none.
    #[arg(long, global = true, default_value = cpu::DEFAULT_PROCESSES)]
    cpu_of: String,
    /// A second server's kubeconfig: `creates` and `gets` then run against
    /// both alternately (`--rounds` times each, `--kubeconfig` first) and
    /// print each round's CPU per operation of the API server processes
    /// (every `--cpu-of` process but etcd), the medians and their ratio.
    /// Run it with both servers up and nothing else busy.
    #[arg(long, global = true)]
    compare: Option<std::path::PathBuf>,
    /// Rounds per server with `--compare`.
    #[arg(long, global = true, default_value_t = 3)]
    rounds: usize,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Creates `count` ConfigMaps; prints creates/s and latency.
    Creates {
        #[arg(long, default_value_t = 2000)]
        count: usize,
    },
    /// GETs existing ConfigMaps `count` times, consistent (etcd) and with
    /// `resourceVersion=0` (served from memory); prints GET/s and latency.
    Gets {
        #[arg(long, default_value_t = 5000)]
        count: usize,
    },
    /// Loads `objects` ConfigMaps, then times full LISTs (quorum and
    /// resourceVersion=0): time to the last byte of the response, and the
    /// same including kube-rs decoding it into typed objects.
    List {
        #[arg(long, default_value_t = 10_000)]
        objects: usize,
        #[arg(long, default_value_t = 5)]
        repeats: usize,
    },
    /// Opens `watchers` watches, writes `writes` times, prints delivery latency to all of them.
    Watch {
        #[arg(long, default_value_t = 1000)]
        watchers: usize,
        #[arg(long, default_value_t = 20)]
        writes: usize,
    },
    /// The same create loop straight against etcd.
    Etcd {
        #[arg(long, default_value = "https://127.0.0.1:2379", value_delimiter = ',')]
        endpoints: Vec<String>,
        #[arg(long, default_value_t = 2000)]
        count: usize,
        /// The PKI directory of the local cluster (`<state-dir>/pki`): etcd's
        /// CA and the tiers' etcd client certificate, for https endpoints.
        #[arg(long)]
        pki_dir: Option<std::path::PathBuf>,
    },
    /// Loads `objects` ConfigMaps and prints the RSS of a server process.
    Rss {
        #[arg(long, default_value_t = 100_000)]
        objects: usize,
        /// Process name (as in /proc/<pid>/comm) whose RSS is read.
        #[arg(long, default_value = "kube-core-apise")]
        process: String,
    },
}

// One thread: the load generator shares the machine with the servers it
// measures, and a single-threaded runtime wakes no other threads per
// request (half the CPU per GET of the multi-threaded one).
#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let opts = Options::parse();
    if let Command::Etcd {
        endpoints,
        count,
        pki_dir,
    } = &opts.command
    {
        let before = cpu::CpuSnapshot::take(&opts.cpu_of);
        etcd_puts(
            endpoints,
            pki_dir.as_deref(),
            *count,
            opts.concurrency,
            opts.object_size,
        )
        .await?;
        before.print_per_op(&cpu::CpuSnapshot::take(&opts.cpu_of), *count);
        return Ok(());
    }
    if let Some(other) = &opts.compare {
        return compare(&opts, other).await;
    }
    let client = client(opts.kubeconfig.as_deref()).await?;
    ensure_namespace(&client, &opts.namespace).await?;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &opts.namespace);
    match &opts.command {
        Command::Creates { count } => {
            let before = cpu::CpuSnapshot::take(&opts.cpu_of);
            let lat =
                create_many(&cms, "create", *count, opts.concurrency, opts.object_size).await?;
            lat.print("creates", opts.concurrency);
            before.print_per_op(&cpu::CpuSnapshot::take(&opts.cpu_of), *count);
        }
        Command::Gets { count } => {
            let names = existing_or_create(&cms, 100, opts.concurrency, opts.object_size).await?;
            for (label, params) in [
                ("GETs (consistent)", GetParams::default()),
                ("GETs (resourceVersion=0, from memory)", GetParams::any()),
            ] {
                let before = cpu::CpuSnapshot::take(&opts.cpu_of);
                let lat = get_many(&cms, &names, *count, opts.concurrency, &params).await?;
                lat.print(label, opts.concurrency);
                before.print_per_op(&cpu::CpuSnapshot::take(&opts.cpu_of), *count);
            }
        }
        Command::List { objects, repeats } => {
            list(&client, &cms, *objects, *repeats, &opts).await?
        }
        Command::Watch { watchers, writes } => {
            watch_fanout(&cms, *watchers, *writes, &opts.cpu_of).await?
        }
        Command::Rss { objects, process } => {
            let before = rss_of(process);
            let lat =
                create_many(&cms, "rss", *objects, opts.concurrency, opts.object_size).await?;
            lat.print("creates", opts.concurrency);
            let after = rss_of(process);
            let payload = (*objects * opts.object_size) as f64 / (1024.0 * 1024.0);
            println!(
                "RSS of {process}: before {} MiB, after {} MiB with {objects} objects of {} B ({payload:.1} MiB of data)",
                fmt_mib(before),
                fmt_mib(after),
                opts.object_size
            );
        }
        Command::Etcd { .. } => unreachable!("handled above"),
    }
    Ok(())
}

/// One measured pass of a `--compare` scenario against one server.
async fn measured_pass(
    cms: &Api<ConfigMap>,
    scenario: &str,
    count: usize,
    names: &[String],
    opts: &Options,
) -> anyhow::Result<(Latencies, cpu::CpuPerOp)> {
    let before = cpu::CpuSnapshot::take(&opts.cpu_of);
    let lat = match scenario {
        "create" => create_many(cms, "cmp", count, opts.concurrency, opts.object_size).await?,
        "GET consistent" => {
            get_many(cms, names, count, opts.concurrency, &GetParams::default()).await?
        }
        _ => get_many(cms, names, count, opts.concurrency, &GetParams::any()).await?,
    };
    let cpu = before.per_op(&cpu::CpuSnapshot::take(&opts.cpu_of), count);
    Ok((lat, cpu))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// `--compare`: the same scenarios against two servers, alternately, so
/// that both see the same machine conditions; the figure compared is the
/// CPU time per operation of the API server processes (throughput on a
/// shared machine moves with its neighbours; CPU per operation hardly does).
async fn compare(opts: &Options, other: &std::path::Path) -> anyhow::Result<()> {
    let (scenarios, count): (&[&str], usize) = match &opts.command {
        Command::Creates { count } => (&["create"], *count),
        Command::Gets { count } => (&["GET consistent", "GET resourceVersion=0"], *count),
        _ => anyhow::bail!("--compare runs the creates and gets scenarios"),
    };
    let a_name = opts
        .kubeconfig
        .as_ref()
        .map_or("$KUBECONFIG".to_string(), |p| p.display().to_string());
    let b_name = other.display().to_string();
    let mut sides = Vec::new();
    for kubeconfig in [opts.kubeconfig.as_deref(), Some(other)] {
        let client = client(kubeconfig).await?;
        ensure_namespace(&client, &opts.namespace).await?;
        let cms: Api<ConfigMap> = Api::namespaced(client, &opts.namespace);
        let names = existing_or_create(&cms, 100, opts.concurrency, opts.object_size).await?;
        sides.push((cms, names));
    }
    println!("A = {a_name}\nB = {b_name}");
    for scenario in scenarios {
        let mut cpu = [Vec::new(), Vec::new()];
        let mut rate = [Vec::new(), Vec::new()];
        for round in 1..=opts.rounds.max(1) {
            for (side, (cms, names)) in sides.iter().enumerate() {
                let (lat, per_op) = measured_pass(cms, scenario, count, names, opts).await?;
                let label = ["A", "B"][side];
                println!(
                    "{scenario} round {round} {label}: {:.0}/s, CPU per operation: {per_op}",
                    lat.rate()
                );
                cpu[side].push(per_op.servers());
                rate[side].push(lat.rate());
            }
        }
        let [a, b] = cpu.map(median);
        let [ra, rb] = rate.map(median);
        println!(
            "{scenario} (c={}, {} rounds of {count}): API server CPU per operation, median: A {a:.0} µs, B {b:.0} µs, B/A {:.2}; throughput A {ra:.0}/s, B {rb:.0}/s",
            opts.concurrency,
            opts.rounds.max(1),
            if a > 0.0 { b / a } else { f64::NAN },
        );
    }
    Ok(())
}

async fn client(kubeconfig: Option<&std::path::Path>) -> anyhow::Result<kube::Client> {
    let config = match kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?
        }
        None => kube::Config::infer().await?,
    };
    Ok(kube::Client::try_from(config)?)
}

async fn ensure_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    if api.get_opt(name).await?.is_none() {
        let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
        api.create(&PostParams::default(), &ns).await?;
    }
    Ok(())
}

fn configmap(name: &str, size: usize) -> ConfigMap {
    let data = "x".repeat(size);
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"payload": data}}))
        .unwrap_or_default()
}

/// Runs `count` operations with `concurrency` in flight; returns latencies.
async fn run_concurrently<F, Fut>(
    count: usize,
    concurrency: usize,
    op: F,
) -> anyhow::Result<Latencies>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let started = Instant::now();
    let samples: Vec<Duration> = futures_util::stream::iter(0..count)
        .map(|i| {
            let fut = op(i);
            async move {
                let t = Instant::now();
                fut.await.map(|_| t.elapsed())
            }
        })
        .buffer_unordered(concurrency.max(1))
        .try_collect()
        .await?;
    Ok(Latencies::new(samples, started.elapsed()))
}

async fn create_many(
    cms: &Api<ConfigMap>,
    prefix: &str,
    count: usize,
    concurrency: usize,
    size: usize,
) -> anyhow::Result<Latencies> {
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    run_concurrently(count, concurrency, |i| {
        let cms = cms.clone();
        let name = format!("{prefix}-{run}-{i}");
        async move {
            cms.create(&PostParams::default(), &configmap(&name, size))
                .await?;
            Ok(())
        }
    })
    .await
}

async fn existing_or_create(
    cms: &Api<ConfigMap>,
    n: usize,
    concurrency: usize,
    size: usize,
) -> anyhow::Result<Vec<String>> {
    let list = cms.list(&ListParams::default().limit(n as u32)).await?;
    let mut names: Vec<String> = list
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    if names.len() < n {
        create_many(cms, "get", n - names.len(), concurrency, size).await?;
        names = cms
            .list(&ListParams::default().limit(n as u32))
            .await?
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect();
    }
    Ok(names)
}

async fn get_many(
    cms: &Api<ConfigMap>,
    names: &[String],
    count: usize,
    concurrency: usize,
    params: &GetParams,
) -> anyhow::Result<Latencies> {
    let names = Arc::new(names.to_vec());
    run_concurrently(count, concurrency, |i| {
        let cms = cms.clone();
        let names = names.clone();
        let params = params.clone();
        async move {
            let name = &names[i % names.len().max(1)];
            cms.get_with(name, &params).await?;
            Ok(())
        }
    })
    .await
}

async fn list(
    client: &kube::Client,
    cms: &Api<ConfigMap>,
    objects: usize,
    repeats: usize,
    opts: &Options,
) -> anyhow::Result<()> {
    let have = cms.list_metadata(&ListParams::default()).await?.items.len();
    if have < objects {
        let lat = create_many(
            cms,
            "list",
            objects - have,
            opts.concurrency,
            opts.object_size,
        )
        .await?;
        lat.print("creates (loading)", opts.concurrency);
    }
    let path = format!("/api/v1/namespaces/{}/configmaps", opts.namespace);
    for (label, query) in [
        ("LIST (consistent), last byte", ""),
        ("LIST (resourceVersion=0), last byte", "?resourceVersion=0"),
    ] {
        let mut samples = Vec::new();
        let mut size = 0;
        for _ in 0..repeats.max(1) {
            let request = http::Request::get(format!("{path}{query}"))
                .header(http::header::ACCEPT, "application/json")
                .body(Vec::new())?;
            let t = Instant::now();
            let response = client.send(request.map(kube::client::Body::from)).await?;
            anyhow::ensure!(
                response.status().is_success(),
                "LIST: {}",
                response.status()
            );
            size = response.into_body().collect().await?.to_bytes().len();
            samples.push(t.elapsed());
        }
        let total: Duration = samples.iter().sum();
        Latencies::new(samples, total).print_list(&format!("{label} ({size} bytes)"), objects);
    }
    for (label, params) in [
        (
            "LIST (consistent), decoded by kube-rs",
            ListParams::default(),
        ),
        (
            "LIST (resourceVersion=0), decoded by kube-rs",
            ListParams::default().match_any(),
        ),
    ] {
        let mut samples = Vec::new();
        let mut items = 0;
        for _ in 0..repeats.max(1) {
            let t = Instant::now();
            items = cms.list(&params).await?.items.len();
            samples.push(t.elapsed());
        }
        let total: Duration = samples.iter().sum();
        Latencies::new(samples, total).print_list(label, items);
    }
    Ok(())
}

/// Opens `watchers` watches of one object, writes it `writes` times, and
/// prints delivery latency and the CPU per event delivered (one write's
/// cost is spread over its `watchers` deliveries).
async fn watch_fanout(
    cms: &Api<ConfigMap>,
    watchers: usize,
    writes: usize,
    cpu_of: &str,
) -> anyhow::Result<()> {
    let name = "watch-fanout";
    let _ = cms.delete(name, &DeleteParams::default()).await;
    let rv = cms
        .list_metadata(&ListParams::default().limit(1))
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Duration>();
    let mut tasks = Vec::new();
    let params = WatchParams::default()
        .fields(&format!("metadata.name={name}"))
        .timeout(290);
    // Watches are opened at most `OPENING` at a time (thousands of TLS
    // handshakes at once overflow the listen backlog, and a SYN retried
    // seconds later would be timed as delivery latency), and the writes
    // start once every watch has its response headers or has failed.
    const OPENING: usize = 128;
    let opening = Arc::new(tokio::sync::Semaphore::new(OPENING));
    let (opened_tx, mut opened_rx) = tokio::sync::mpsc::unbounded_channel::<Result<(), String>>();
    let open_started = Instant::now();
    for _ in 0..watchers {
        let cms = cms.clone();
        let tx = tx.clone();
        let opened_tx = opened_tx.clone();
        let params = params.clone();
        let rv = rv.clone();
        let opening = opening.clone();
        tasks.push(tokio::spawn(async move {
            let permit = opening.acquire_owned().await;
            let stream = match cms.watch(&params, &rv).await {
                Ok(stream) => stream,
                Err(e) => {
                    let _ = opened_tx.send(Err(format!("{e:?}")));
                    return;
                }
            };
            drop(permit);
            let _ = opened_tx.send(Ok(()));
            tokio::pin!(stream);
            while let Some(Ok(ev)) = stream.next().await {
                if let WatchEvent::Added(o) | WatchEvent::Modified(o) = ev {
                    if let Some(sent) = o
                        .data
                        .as_ref()
                        .and_then(|d| d.get("sent"))
                        .and_then(|s| s.parse::<u128>().ok())
                    {
                        let now = SystemTime::now()
                            .duration_since(UNIX_EPOCH)
                            .map(|d| d.as_nanos())
                            .unwrap_or(0);
                        let _ = tx.send(Duration::from_nanos(now.saturating_sub(sent) as u64));
                    }
                }
            }
        }));
    }
    drop(tx);
    drop(opened_tx);
    let (mut open, mut failed, mut first_error) = (0usize, 0usize, None);
    while open + failed < watchers {
        // Each watcher reports once and keeps its sender while it runs.
        let Some(result) = opened_rx.recv().await else {
            break;
        };
        match result {
            Ok(()) => open += 1,
            Err(e) => {
                failed += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    println!(
        "{open} of {watchers} watches open in {:.1} s{}",
        open_started.elapsed().as_secs_f64(),
        match &first_error {
            Some(e) => format!(" ({failed} failed; first error: {e})"),
            None => String::new(),
        }
    );
    let watchers = open;
    let mut samples = Vec::new();
    let cpu_before = cpu::CpuSnapshot::take(cpu_of);
    let started = Instant::now();
    for i in 0..writes {
        let sent = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut cm = configmap(name, 16);
        cm.data
            .get_or_insert_with(Default::default)
            .insert("sent".into(), sent.to_string());
        if i == 0 {
            cms.create(&PostParams::default(), &cm).await?;
        } else {
            cms.replace(name, &PostParams::default(), &{
                let mut current = cms.get(name).await?;
                current.data = cm.data.clone();
                current
            })
            .await?;
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut got = 0;
        while got < watchers && Instant::now() < deadline {
            match tokio::time::timeout(Duration::from_millis(500), rx.recv()).await {
                Ok(Some(d)) => {
                    samples.push(d);
                    got += 1;
                }
                Ok(None) => break,
                Err(_) => {}
            }
        }
        if got < watchers {
            println!("write {i}: only {got} of {watchers} watchers received it within 10 s");
        }
    }
    let elapsed = started.elapsed();
    let cpu_after = cpu::CpuSnapshot::take(cpu_of);
    let delivered = samples.len();
    for t in tasks {
        t.abort();
    }
    let _ = cms.delete(name, &DeleteParams::default()).await;
    Latencies::new(samples, elapsed).print_fanout(watchers, writes);
    println!("  per event delivered:");
    cpu_before.print_per_op(&cpu_after, delivered);
    Ok(())
}

async fn etcd_puts(
    endpoints: &[String],
    pki_dir: Option<&std::path::Path>,
    count: usize,
    concurrency: usize,
    size: usize,
) -> anyhow::Result<()> {
    let options = match pki_dir {
        Some(dir) => {
            let read = |name: &str| {
                std::fs::read(dir.join(name))
                    .with_context(|| format!("reading {name} in {}", dir.display()))
            };
            let tls = etcd_client::TlsOptions::new()
                .ca_certificate(etcd_client::Certificate::from_pem(read("etcd/ca.crt")?))
                .identity(etcd_client::Identity::from_pem(
                    read("apiserver-etcd-client.crt")?,
                    read("apiserver-etcd-client.key")?,
                ));
            Some(etcd_client::ConnectOptions::new().with_tls(tls))
        }
        None => None,
    };
    let client = etcd_client::Client::connect(endpoints, options)
        .await
        .context("connecting to etcd")?;
    let value = vec![b'x'; size];
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let lat = run_concurrently(count, concurrency, |i| {
        let mut kv = client.kv_client();
        let key = format!("/loadgen/{run}/{i}");
        let value = value.clone();
        async move {
            // The same shape of write as an API create: a transaction that
            // puts only if the key does not exist.
            let txn = etcd_client::Txn::new()
                .when([etcd_client::Compare::mod_revision(
                    key.clone(),
                    etcd_client::CompareOp::Equal,
                    0,
                )])
                .and_then([etcd_client::TxnOp::put(key, value, None)]);
            kv.txn(txn).await?;
            Ok(())
        }
    })
    .await?;
    lat.print("etcd txn puts", concurrency);
    let mut kv = client.kv_client();
    kv.delete(
        format!("/loadgen/{run}/"),
        Some(etcd_client::DeleteOptions::new().with_prefix()),
    )
    .await?;
    Ok(())
}

/// RSS in bytes of the first process whose `comm` equals `name`.
fn rss_of(name: &str) -> Option<u64> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let path = entry.path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else {
            continue;
        };
        if comm.trim() != name {
            continue;
        }
        let status = std::fs::read_to_string(path.join("status")).ok()?;
        let kb: u64 = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        return Some(kb * 1024);
    }
    None
}

fn fmt_mib(v: Option<u64>) -> String {
    v.map(|b| format!("{:.1}", b as f64 / (1024.0 * 1024.0)))
        .unwrap_or_else(|| "?".into())
}
