//! The flags of a running controller: where objects come from, which Ingresses are ours,
//! where nginx listens, the health and metrics port.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;

use clap::{ArgAction, Args};
use cluster_state::{LabelSelector, SourceArgs};

use super::NamespacedName;
use super::status::StatusArgs;
use super::unimplemented::Unimplemented;
use crate::class::Selection;
use crate::render;

/// The flags of `run` (and of the command line without a subcommand).
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
    /// Port of `/healthz` and `/metrics`.
    #[arg(long, default_value_t = 10254)]
    pub healthz_port: u16,
    /// Address `/healthz` and `/metrics` listen on (default: every address).
    #[arg(long)]
    pub healthz_host: Option<IpAddr>,
    /// The ConfigMap (`NAMESPACE/NAME`) of global settings, watched.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub configmap: Option<NamespacedName>,
    /// How often the manifests are checked, in milliseconds.
    #[arg(long, default_value_t = 200)]
    pub poll_ms: u64,
    /// How long changes must settle before they are applied, in milliseconds.
    #[arg(long, default_value_t = 300)]
    pub debounce_ms: u64,
    /// Ingress status publication and leader election.
    #[command(flatten)]
    pub status: StatusArgs,
    /// The validating admission webhook.
    #[command(flatten)]
    pub webhook: crate::webhook::args::WebhookArgs,
    /// ingress-nginx's metrics flags.
    #[command(flatten)]
    pub metrics: crate::metrics::MetricsArgs,
    /// ingress-nginx's flags that are accepted but not implemented.
    #[command(flatten)]
    pub unimplemented: Unimplemented,
}

impl RunArgs {
    /// Where `/healthz` and `/metrics` may listen, the first that binds: `--healthz-host`
    /// on `--healthz-port`; when unset every address, as ingress-nginx (IPv6 and IPv4, else
    /// IPv4 alone on a host without IPv6).
    pub fn healthz_addresses(&self) -> Vec<SocketAddr> {
        let hosts = match self.healthz_host {
            Some(host) => vec![host],
            None => vec![
                IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            ],
        };
        hosts
            .into_iter()
            .map(|host| SocketAddr::new(host, self.healthz_port))
            .collect()
    }
}

/// Which Ingresses are ours, with ingress-nginx's flags.
#[derive(Args, Debug)]
pub struct SelectionArgs {
    /// The `spec.controller` of the IngressClasses this controller serves.
    #[arg(long, default_value = "k8s.io/ingress-nginx")]
    pub controller_class: String,
    /// The value of the deprecated `kubernetes.io/ingress.class` annotation this controller
    /// serves (and, with `--ingress-class-by-name`, an IngressClass name it serves).
    #[arg(long, default_value = "nginx")]
    pub ingress_class: String,
    /// Also serve Ingresses that name no class at all.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set)]
    pub watch_ingress_without_class: bool,
    /// Also serve the IngressClass named by `--ingress-class`, whatever its controller.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set)]
    pub ingress_class_by_name: bool,
    /// Serve only Ingresses of this namespace.
    #[arg(long, conflicts_with = "watch_namespace_selector")]
    pub watch_namespace: Option<String>,
    /// Serve only Ingresses of the namespaces this label selector picks.
    #[arg(long, value_parser = parse_selector)]
    pub watch_namespace_selector: Option<LabelSelector>,
    /// The TLS Secret (`NAMESPACE/NAME`) of the default server, and of TLS hosts whose own
    /// Secret is not named, missing or refused (default: a generated self-signed one).
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub default_ssl_certificate: Option<NamespacedName>,
    /// The `spec.controllerName` of the GatewayClasses this controller serves (Gateway API;
    /// not an ingress-nginx flag).
    #[arg(long, default_value = crate::gateway::DEFAULT_CONTROLLER_NAME)]
    pub gateway_controller_name: String,
}

fn parse_selector(text: &str) -> Result<LabelSelector, String> {
    LabelSelector::parse(text).map_err(|e| e.to_string())
}

impl SelectionArgs {
    /// The Ingress selection these flags describe, with where `nginx` serves the Gateways.
    pub fn selection(&self, nginx: &NginxArgs) -> Selection {
        Selection {
            controller: self.controller_class.clone(),
            annotation: self.ingress_class.clone(),
            without_class: self.watch_ingress_without_class,
            by_name: self.ingress_class_by_name,
            namespace: self.watch_namespace.clone().filter(|n| !n.is_empty()),
            namespace_selector: self
                .watch_namespace_selector
                .clone()
                .filter(|s| !s.is_empty()),
            default_certificate: self
                .default_ssl_certificate
                .as_ref()
                .map(ToString::to_string),
            gateway: crate::gateway::Settings {
                controller_name: self.gateway_controller_name.clone(),
                own_addresses: nginx.gateway_addresses.is_some(),
                http_port: i32::from(nginx.http_port),
                ..crate::gateway::Settings::default()
            },
        }
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
    /// nginx `worker_processes` (the ConfigMap's `worker-processes` wins).
    #[arg(long, default_value = "auto")]
    pub workers: String,
    /// Directory holding ndk_http_module.so and ngx_http_lua_module.so (Debian's default).
    #[arg(long, default_value = "/usr/lib/nginx/modules")]
    pub modules_dir: PathBuf,
    /// Gives each Gateway an address of its own from this network (`ADDRESS/PREFIX`), kept
    /// once in its status (default: Gateways share `--listen-address` with the Ingresses; not
    /// an ingress-nginx flag).
    #[arg(long, value_name = "CIDR")]
    pub gateway_addresses: Option<crate::gateway::addresses::Pool>,
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
            // Generated by the running controller (controller::run).
            fallback_certificate: None,
            gateway_addresses: self.gateway_addresses,
        }
    }
}
