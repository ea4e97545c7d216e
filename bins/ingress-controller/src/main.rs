//! `ingress-controller`: Ingress objects to a real nginx.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use cluster_state::SourceArgs;
use ingress_controller::class::Selection;
use ingress_controller::objects::Objects;
use ingress_controller::{control, controller, election, model, render};

/// Ingress objects to a real nginx, rendered through nginx-conf's builder.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the nginx.conf that would be written for the objects, and the problems found;
    /// runs nothing.
    Render {
        #[command(flatten)]
        source: SourceArgs,
        #[command(flatten)]
        selection: SelectionArgs,
        #[command(flatten)]
        nginx: NginxArgs,
        /// Print the backend table the balancer would receive instead of nginx.conf.
        #[arg(long)]
        backends: bool,
    },
    /// Run nginx and keep it configured from the objects.
    Run(Box<RunArgs>),
    /// Print what a running controller's nginx runs: its configuration, the balancer's
    /// backends, and the certificate files (never their content).
    Dbg {
        /// nginx's prefix directory.
        #[arg(long, default_value = "/var/lib/ingress-controller")]
        prefix: PathBuf,
        /// What to print.
        #[arg(value_enum, default_value = "all")]
        what: DbgWhat,
    },
}

/// `run`'s options.
#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    selection: SelectionArgs,
    #[command(flatten)]
    nginx: NginxArgs,
    /// The nginx binary.
    #[arg(long, default_value = "nginx")]
    nginx_binary: PathBuf,
    /// Address of `/healthz` and `/metrics`.
    #[arg(long, default_value = "127.0.0.1:10254")]
    metrics_address: SocketAddr,
    /// How often the manifests are checked, in milliseconds.
    #[arg(long, default_value_t = 200)]
    poll_ms: u64,
    /// How long changes must settle before they are applied, in milliseconds.
    #[arg(long, default_value_t = 300)]
    debounce_ms: u64,
    #[command(flatten)]
    status: StatusArgs,
}

/// Parts of `dbg`'s report.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DbgWhat {
    /// Everything.
    All,
    /// The running nginx.conf.
    Conf,
    /// The balancer's backend table.
    Backends,
    /// The certificate files.
    Certs,
}

/// Which Ingresses are ours.
#[derive(Args, Debug)]
struct SelectionArgs {
    /// The `spec.controller` of the IngressClasses this controller serves.
    #[arg(long, default_value = "k8s.io/ingress-nginx")]
    controller_class: String,
    /// Serve only Ingresses of this namespace.
    #[arg(long)]
    watch_namespace: Option<String>,
}

impl SelectionArgs {
    fn selection(&self) -> Selection {
        Selection {
            controller: self.controller_class.clone(),
            namespace: self.watch_namespace.clone(),
        }
    }
}

/// Ingress status publication and leader election.
#[derive(Args, Debug)]
struct StatusArgs {
    /// Address written to the served Ingresses' `status.loadBalancer` (repeatable; IP or
    /// host name). Without it no status is written.
    #[arg(long)]
    publish_status_address: Vec<String>,
    /// This replica's identity in the election (default: HOSTNAME, else the pid).
    #[arg(long)]
    election_id: Option<String>,
    /// Elect a leader on this lease file (replicas on one machine).
    #[arg(long, conflicts_with = "etcd_endpoint")]
    lease_file: Option<PathBuf>,
    /// Elect a leader on an etcd key at this endpoint.
    #[arg(long)]
    etcd_endpoint: Option<String>,
    /// The etcd key of the lease.
    #[arg(long, default_value = "/kube-node-net/ingress-controller/leader")]
    lease_key: String,
    /// Lease duration in milliseconds.
    #[arg(long, default_value_t = 15_000)]
    lease_ms: u64,
    /// Renew deadline in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    renew_ms: u64,
    /// Retry period in milliseconds.
    #[arg(long, default_value_t = 2_000)]
    retry_ms: u64,
}

impl StatusArgs {
    fn settings(&self) -> Option<controller::StatusSettings> {
        if self.publish_status_address.is_empty() {
            return None;
        }
        let store = match (&self.lease_file, &self.etcd_endpoint) {
            (Some(path), _) => Some(election::LeaseStore::File(path.clone())),
            (None, Some(endpoint)) => Some(election::LeaseStore::Etcd {
                endpoint: endpoint.clone(),
                key: self.lease_key.clone(),
            }),
            (None, None) => None,
        };
        let id = self.election_id.clone().unwrap_or_else(|| {
            std::env::var("HOSTNAME").unwrap_or_else(|_| format!("pid-{}", std::process::id()))
        });
        Some(controller::StatusSettings {
            addresses: self.publish_status_address.clone(),
            election: store.map(|store| election::Election {
                id,
                store,
                lease: Duration::from_millis(self.lease_ms),
                renew: Duration::from_millis(self.renew_ms),
                retry: Duration::from_millis(self.retry_ms),
            }),
        })
    }
}

/// Where and how nginx runs.
#[derive(Args, Debug)]
struct NginxArgs {
    /// nginx's prefix directory (config, pid, logs, certificates, control socket).
    #[arg(long, default_value = "/var/lib/ingress-controller")]
    prefix: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    listen_address: String,
    /// HTTP port.
    #[arg(long, default_value_t = 80)]
    http_port: u16,
    /// HTTPS port.
    #[arg(long, default_value_t = 443)]
    https_port: u16,
    /// nginx `worker_processes`.
    #[arg(long, default_value = "auto")]
    workers: String,
    /// Directory holding ndk_http_module.so and ngx_http_lua_module.so (Debian's default).
    #[arg(long, default_value = "/usr/lib/nginx/modules")]
    modules_dir: PathBuf,
}

impl NginxArgs {
    fn options(&self) -> render::Options {
        render::Options {
            prefix: self.prefix.clone(),
            listen_address: self.listen_address.clone(),
            http_port: self.http_port,
            https_port: self.https_port,
            workers: self.workers.clone(),
            modules_dir: Some(self.modules_dir.clone()),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Render {
            source,
            selection,
            nginx,
            backends,
        } => {
            let objects = runtime()?.block_on(snapshot(&source))?;
            let model = model::build(&objects, &selection.selection());
            for problem in &model.problems {
                eprintln!("warning: {problem}");
            }
            if backends {
                print!("{}", ingress_controller::backends::table(&model));
            } else {
                let text =
                    render::render(&model, &nginx.options()).context("cannot render nginx.conf")?;
                print!("{text}");
            }
            Ok(())
        }
        Command::Run(args) => {
            let RunArgs {
                source,
                selection,
                nginx,
                nginx_binary,
                metrics_address,
                poll_ms,
                debounce_ms,
                status,
            } = *args;
            let settings = controller::Settings {
                status: status.settings(),
                nginx: nginx_binary,
                options: nginx.options(),
                selection: selection.selection(),
                source,
                poll: Duration::from_millis(poll_ms.max(10)),
                debounce: Duration::from_millis(debounce_ms),
                metrics_address,
            };
            runtime()?.block_on(controller::run(settings, shutdown()))?;
            Ok(())
        }
        Command::Dbg { prefix, what } => runtime()?.block_on(dbg(&prefix, what)),
    }
}

/// The objects once the source has read everything (the first complete snapshot).
async fn snapshot(source: &SourceArgs) -> anyhow::Result<Objects> {
    let source = source.start(&ingress_controller::objects::KINDS).await?;
    let mut snapshots = source.snapshots();
    let snapshot = snapshots
        .wait_for(|s| s.revision > 0)
        .await
        .context("the object source stopped before reading everything")?;
    Ok(Objects::from_snapshot(&snapshot))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}

async fn dbg(prefix: &std::path::Path, what: DbgWhat) -> anyhow::Result<()> {
    let all = what == DbgWhat::All;
    if all || what == DbgWhat::Conf {
        let path = prefix.join("nginx.conf");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        println!("# {}", path.display());
        print!("{text}");
    }
    if all || what == DbgWhat::Backends {
        let socket = prefix.join("control.sock");
        let table = control::backends(&socket).await?;
        println!("# backends (from {})", socket.display());
        print!("{table}");
    }
    if all || what == DbgWhat::Certs {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = prefix.join("certs");
        println!("# certificates (in {})", dir.display());
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let meta = entry.metadata()?;
            println!(
                "{} {:o} {} bytes",
                entry.file_name().to_string_lossy(),
                meta.permissions().mode() & 0o777,
                meta.len()
            );
        }
    }
    Ok(())
}
