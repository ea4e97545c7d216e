//! The command line: `render`, `run` and `dbg`, parsed by clap.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use cluster_state::SourceArgs;

use crate::class::Selection;
use crate::{controller, election, render};

/// Ingress objects to a real nginx, rendered through nginx-conf's builder.
#[derive(Parser, Debug)]
#[command(version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the nginx.conf that would be written for the objects, and the problems found;
    /// runs nothing.
    Render {
        /// Where the objects come from.
        #[command(flatten)]
        source: SourceArgs,
        /// Which Ingresses are ours.
        #[command(flatten)]
        selection: SelectionArgs,
        /// Where and how nginx runs.
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
pub struct RunArgs {
    /// Where the objects come from.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Which Ingresses are ours.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Where and how nginx runs.
    #[command(flatten)]
    pub nginx: NginxArgs,
    /// The nginx binary.
    #[arg(long, default_value = "nginx")]
    pub nginx_binary: PathBuf,
    /// Address of `/healthz` and `/metrics`.
    #[arg(long, default_value = "127.0.0.1:10254")]
    pub metrics_address: SocketAddr,
    /// How often the manifests are checked, in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub poll_ms: u64,
    /// How long changes must settle before they are applied, in milliseconds.
    #[arg(long, default_value_t = 300)]
    pub debounce_ms: u64,
    /// Ingress status publication and leader election.
    #[command(flatten)]
    pub status: StatusArgs,
    /// ingress-nginx's metrics flags.
    #[command(flatten)]
    pub metrics: crate::metrics::MetricsArgs,
}

/// Parts of `dbg`'s report.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbgWhat {
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
pub struct SelectionArgs {
    /// The `spec.controller` of the IngressClasses this controller serves.
    #[arg(long, default_value = "k8s.io/ingress-nginx")]
    pub controller_class: String,
    /// Serve only Ingresses of this namespace.
    #[arg(long)]
    pub watch_namespace: Option<String>,
}

impl SelectionArgs {
    /// The Ingress selection these flags describe.
    pub fn selection(&self) -> Selection {
        Selection {
            controller: self.controller_class.clone(),
            namespace: self.watch_namespace.clone(),
        }
    }
}

/// Ingress status publication and leader election.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Address written to the served Ingresses' `status.loadBalancer` (repeatable; IP or
    /// host name). Without it no status is written.
    #[arg(long)]
    pub publish_status_address: Vec<String>,
    /// This replica's identity in the election (default: HOSTNAME, else the pid).
    #[arg(long)]
    pub election_id: Option<String>,
    /// Elect a leader on this Lease (`NAMESPACE/NAME`) of the API server the objects come
    /// from (in-cluster or `--kubeconfig`).
    #[arg(long, value_name = "NAMESPACE/NAME", conflicts_with_all = ["lease_file", "etcd_endpoint"])]
    pub kubernetes_lease: Option<String>,
    /// Elect a leader on this lease file (replicas on one machine).
    #[arg(long, conflicts_with = "etcd_endpoint")]
    pub lease_file: Option<PathBuf>,
    /// Elect a leader on an etcd key at this endpoint.
    #[arg(long)]
    pub etcd_endpoint: Option<String>,
    /// The etcd key of the lease.
    #[arg(long, default_value = "/kube-node-net/ingress-controller/leader")]
    pub lease_key: String,
    /// Lease duration in milliseconds.
    #[arg(long, default_value_t = 15_000)]
    pub lease_ms: u64,
    /// Renew deadline in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    pub renew_ms: u64,
    /// Retry period in milliseconds.
    #[arg(long, default_value_t = 2_000)]
    pub retry_ms: u64,
}

impl StatusArgs {
    /// This replica's identity: `--election-id`, else HOSTNAME, else the pid. It names the
    /// replica in the election and in the events it records.
    pub fn identity(&self) -> String {
        self.election_id.clone().unwrap_or_else(|| {
            std::env::var("HOSTNAME").unwrap_or_else(|_| format!("pid-{}", std::process::id()))
        })
    }

    /// The status settings, or `None` when no status address is given.
    ///
    /// `kubeconfig` is the object source's, for a `--kubernetes-lease`.
    pub fn settings(&self, kubeconfig: Option<&Path>) -> Option<controller::StatusSettings> {
        if self.publish_status_address.is_empty() {
            return None;
        }
        let kubernetes = self.kubernetes_lease.as_deref().map(|lease| {
            let (namespace, name) = lease.split_once('/').unwrap_or(("default", lease));
            election::LeaseStore::Kubernetes {
                kubeconfig: kubeconfig.map(Path::to_path_buf),
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            }
        });
        let store = match (&self.lease_file, &self.etcd_endpoint) {
            (Some(path), _) => Some(election::LeaseStore::File(path.clone())),
            (None, Some(endpoint)) => Some(election::LeaseStore::Etcd {
                endpoint: endpoint.clone(),
                key: self.lease_key.clone(),
            }),
            (None, None) => kubernetes,
        };
        let id = self.identity();
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
pub struct NginxArgs {
    /// nginx's prefix directory (config, pid, logs, certificates, control socket).
    #[arg(long, default_value = "/var/lib/ingress-controller")]
    pub prefix: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    pub listen_address: String,
    /// HTTP port.
    #[arg(long, default_value_t = 80)]
    pub http_port: u16,
    /// HTTPS port.
    #[arg(long, default_value_t = 443)]
    pub https_port: u16,
    /// nginx `worker_processes`.
    #[arg(long, default_value = "auto")]
    pub workers: String,
    /// Directory holding ndk_http_module.so and ngx_http_lua_module.so (Debian's default).
    #[arg(long, default_value = "/usr/lib/nginx/modules")]
    pub modules_dir: PathBuf,
}

impl NginxArgs {
    /// The renderer options these flags describe.
    pub fn options(&self) -> render::Options {
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
