//! `kube-local-cluster`: start, stop and inspect a local cluster (etcd and
//! the three API server tiers) from a state directory.

mod supervisor;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs a local Kubernetes API server (aggregator -> kube-core -> extensions) backed by etcd.
#[derive(Parser, Debug)]
#[command(name = "kube-local-cluster", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start etcd and the three tiers (foreground, or detached with --background).
    Up(UpArgs),
    /// Stop a cluster started with `up` (foreground or background).
    Down(StateArgs),
    /// Tell whether a cluster is running and where its kubeconfig is.
    Status(StateArgs),
    /// Write (or complete) the PKI in kubeadm's layout, e.g. to /etc/kubernetes/pki.
    Pki {
        /// The directory (created if missing).
        #[arg(long, default_value = deploy::render::KUBEADM_PKI_DIR)]
        dir: PathBuf,
    },
    /// Write the systemd units and static-pod manifests of the tiers for
    /// real clusters (`<out>/systemd/`, `<out>/manifests/static-pods/`).
    Render {
        /// Where to write them.
        #[arg(long, default_value = "deploy")]
        out: PathBuf,
    },
}

/// Where the cluster keeps its state.
#[derive(Args, Debug, Clone)]
struct StateArgs {
    /// State directory: PKI, etcd data, kubeconfig, logs, pid file.
    #[arg(long, default_value = ".local-cluster")]
    state_dir: PathBuf,
}

/// Options of `up`.
#[derive(Args, Debug, Clone)]
struct UpArgs {
    #[command(flatten)]
    state: StateArgs,
    /// Directory with kube-aggregator, kube-core-apiserver and
    /// kube-extensions-apiserver [default: directory of this executable].
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// HTTPS port of the aggregator (the API endpoint in the kubeconfig).
    #[arg(long, default_value_t = 6443)]
    aggregator_port: u16,
    /// HTTPS port of kube-core.
    #[arg(long, default_value_t = 6444)]
    kube_core_port: u16,
    /// HTTPS port of the extensions tier.
    #[arg(long, default_value_t = 6445)]
    extensions_port: u16,
    /// etcd client port.
    #[arg(long, default_value_t = 2379)]
    etcd_client_port: u16,
    /// etcd peer port.
    #[arg(long, default_value_t = 2380)]
    etcd_peer_port: u16,
    /// The etcd binary (a bare name is looked up in PATH).
    #[arg(long, default_value = deploy::DEFAULT_ETCD_BINARY)]
    etcd_binary: PathBuf,
    /// Let the processes write to this terminal instead of STATE_DIR/logs.
    #[arg(long)]
    no_log_files: bool,
    /// Detach: run the supervisor in a new session (output in
    /// STATE_DIR/logs/supervisor.log) and return once the cluster is ready.
    #[arg(long)]
    background: bool,
    /// The highly available layout: three etcd members (client ports
    /// etcd-client-port, +2, +4; peers etcd-peer-port, +2, +4) and two
    /// replicas of each tier (the tier's port and the port + 10).
    #[arg(long)]
    ha: bool,
    /// How each tier reaches the next: `unix-socket` (the next tier's Unix
    /// socket under STATE_DIR/run, plain HTTP, the front proxy identified
    /// by its peer credentials) or `tls` (HTTPS on loopback with the
    /// front-proxy client certificate, as between hosts). The HA layout
    /// always uses `tls` (its replicas are reached by URL).
    #[arg(long, value_enum, default_value_t = TierLinkArg::UnixSocket)]
    tier_link: TierLinkArg,
}

/// `--tier-link`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
enum TierLinkArg {
    UnixSocket,
    Tls,
}

impl From<TierLinkArg> for deploy::TierLink {
    fn from(a: TierLinkArg) -> Self {
        match a {
            TierLinkArg::UnixSocket => deploy::TierLink::UnixSocket,
            TierLinkArg::Tls => deploy::TierLink::Tls,
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Up(args) if args.background => supervisor::up_background(&args).await,
            Command::Up(args) => supervisor::up_foreground(&args).await,
            Command::Down(args) => supervisor::down(&args.state_dir).await,
            Command::Status(args) => supervisor::status(&args.state_dir).await,
            Command::Pki { dir } => deploy::pki::ensure(&dir).map(|pki| {
                println!("PKI in kubeadm's layout at {}", pki.dir.display());
                ExitCode::SUCCESS
            }),
            Command::Render { out } => deploy::render::write_all(&out).map(|()| {
                println!(
                    "wrote {0}/systemd/*.service and {0}/manifests/static-pods/*.yaml",
                    out.display()
                );
                ExitCode::SUCCESS
            }),
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
