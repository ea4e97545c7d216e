//! The Prometheus metrics of `/metrics`: ingress-nginx's `nginx_ingress_controller_*`
//! families, with its names, types, label names and buckets, so its dashboards and alerts
//! read them unchanged, and this controller's own `ingress_controller_*` counters (what
//! ingress-nginx has no family for).
//!
//! - [`requests`]: per-request families, read from nginx's Lua log phase at scrape time;
//! - [`controller`]: configuration loads, certificates, leadership;
//! - [`process`]: `nginx_process_*`, from nginx's `stub_status` and `/proc`;
//! - [`admission`]: the admission webhook's last accepted review.
//!
//! ingress-nginx's families carry the constant labels `controller_namespace` (POD_NAMESPACE),
//! `controller_class` (the controller class) and `controller_pod` (POD_NAME, else the host name),
//! except `ssl_expire_time_seconds`, which has its own, as there.

pub mod admission;
pub mod controller;
pub mod process;
pub mod requests;

use std::borrow::Cow;
use std::path::Path;

use clap::Args;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use self::admission::AdmissionMetrics;
use self::controller::ControllerMetrics;
use self::process::{ProcessCollector, ProcessScrape};
use self::requests::RequestCollector;

/// ingress-nginx's metrics flags.
#[derive(Args, Clone, Debug)]
pub struct MetricsArgs {
    /// Export ingress-nginx's `nginx_ingress_controller_*` families. Off by default, as in
    /// ingress-nginx since v1.13 (its manifests and chart pass `--enable-metrics=true`);
    /// without it only the `ingress_controller_*` counters are exported.
    #[arg(long, default_value_t = false, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub enable_metrics: bool,
    /// Label request metrics with the host; requests to no host of the configuration are then
    /// left out of them, as ingress-nginx does.
    #[arg(long, default_value_t = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub metrics_per_host: bool,
}

impl Default for MetricsArgs {
    fn default() -> Self {
        MetricsArgs {
            enable_metrics: false,
            metrics_per_host: true,
        }
    }
}

/// Every metric the controller exports.
#[derive(Debug, Default)]
pub struct Metrics {
    /// The flags.
    pub args: MetricsArgs,
    /// ingress-nginx's controller families.
    pub controller: ControllerMetrics,
    /// The request families, as of the last scrape.
    pub requests: RequestCollector,
    /// The `nginx_process_*` families, as of the last scrape.
    pub process: ProcessCollector,
    /// The admission webhook's families (the webhook's checker holds a clone).
    pub admission: AdmissionMetrics,
    /// Backend tables sent to nginx's balancer (no reload).
    pub backend_updates: Counter,
    /// Times nginx had to be restarted after it died.
    pub nginx_restarts: Counter,
    /// Objects problems in the current model.
    pub problems: Gauge,
    /// Ingress statuses written (by this replica, as leader).
    pub status_writes: Counter,
    /// Events recorded on Ingresses (by this replica, as leader).
    pub events: Counter,
}

/// ingress-nginx's constant labels: who exports the metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exporter {
    /// `controller_namespace`: the pod's namespace.
    pub namespace: String,
    /// `controller_class`: the controller class served.
    pub class: String,
    /// `controller_pod`: the pod's name.
    pub pod: String,
}

impl Exporter {
    /// The labels of this process: POD_NAMESPACE, `class`, and its identity (POD_NAME, else the
    /// host name),
    /// the variables ingress-nginx's manifests set from the downward API.
    pub fn from_env(class: &str) -> Exporter {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Exporter {
            namespace: var("POD_NAMESPACE").unwrap_or_default(),
            class: class.to_owned(),
            pod: crate::cli::status::identity(),
        }
    }
}

impl Metrics {
    /// The metrics of a controller run with `args`.
    pub fn new(args: MetricsArgs) -> Metrics {
        Metrics {
            args,
            ..Metrics::default()
        }
    }

    /// Registers every metric in a new registry.
    pub fn register(&self, exporter: &Exporter) -> Registry {
        let mut registry = Registry::default();
        let own = registry.sub_registry_with_prefix("ingress_controller");
        own.register(
            "backend_updates",
            "Backend tables sent to the balancer without a reload",
            self.backend_updates.clone(),
        );
        own.register(
            "nginx_restarts",
            "nginx restarts after it died",
            self.nginx_restarts.clone(),
        );
        own.register(
            "problems",
            "Refused object fields and annotations in the current model",
            self.problems.clone(),
        );
        own.register(
            "status_writes",
            "Ingress statuses written by this replica as leader",
            self.status_writes.clone(),
        );
        own.register(
            "events",
            "Events recorded on Ingresses by this replica as leader",
            self.events.clone(),
        );
        if !self.args.enable_metrics {
            return registry;
        }
        let ingress_nginx = registry.sub_registry_with_prefix("nginx_ingress_controller");
        self.controller.register_unlabelled(ingress_nginx);
        let labels = [
            ("controller_namespace", &exporter.namespace),
            ("controller_class", &exporter.class),
            ("controller_pod", &exporter.pod),
        ]
        .map(|(k, v)| (Cow::Borrowed(k), Cow::Owned(v.clone())));
        let labelled = ingress_nginx.sub_registry_with_labels(labels.into_iter());
        self.controller.register(labelled);
        self.admission.register(labelled);
        labelled.register_collector(Box::new(self.requests.clone()));
        labelled.register_collector(Box::new(self.process.clone()));
        registry
    }

    /// Reads what nginx knows (request series, `stub_status`, its processes) for the next
    /// encoding, from the nginx `options` describe.
    pub async fn scrape(&self, options: &crate::render::Options) {
        if !self.args.enable_metrics {
            return;
        }
        let socket = options.control_socket();
        let requests = crate::control::request(&socket, "GET", "/metrics", "", 200).await;
        self.requests.set(
            requests
                .map(|text| requests::parse(&text, self.args.metrics_per_host))
                .unwrap_or_default(),
        );
        let status = crate::control::request(&socket, "GET", "/nginx_status", "", 200)
            .await
            .ok()
            .and_then(|text| process::parse_stub_status(&text));
        let pid_file = crate::nginx::pid_file(&options.prefix);
        let processes = tokio::task::spawn_blocking(move || {
            let pid = std::fs::read_to_string(pid_file)
                .ok()?
                .trim()
                .parse()
                .ok()?;
            process::read_processes(Path::new("/proc"), pid)
        })
        .await
        .ok()
        .flatten();
        self.process.set(ProcessScrape { status, processes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        metrics: MetricsArgs,
    }

    fn args(line: &[&str]) -> MetricsArgs {
        Cli::try_parse_from(std::iter::once("x").chain(line.iter().copied()))
            .unwrap()
            .metrics
    }

    #[test]
    fn flags_as_ingress_nginx_spells_them() {
        let default = args(&[]);
        assert!(!default.enable_metrics && default.metrics_per_host);
        assert!(!args(&["--enable-metrics=false"]).enable_metrics);
        assert!(args(&["--enable-metrics"]).enable_metrics);
        assert!(args(&["--enable-metrics=true"]).enable_metrics);
        assert!(!args(&["--metrics-per-host=false"]).metrics_per_host);
        // pflag's booleans take their value after `=` only.
        assert!(Cli::try_parse_from(["x", "--metrics-per-host", "false"]).is_err());
    }

    fn encoded(enable_metrics: bool) -> String {
        let metrics = Metrics::new(MetricsArgs {
            enable_metrics,
            metrics_per_host: true,
        });
        let exporter = Exporter {
            namespace: "ingress-nginx".into(),
            class: "k8s.io/ingress-nginx".into(),
            pod: "controller-0".into(),
        };
        let registry = metrics.register(&exporter);
        metrics.controller.loaded(true, 7);
        metrics.controller.leading("ingress-nginx-leader", true);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        text
    }

    #[test]
    fn controller_families_with_the_constant_labels() {
        let text = encoded(true);
        let labels = "controller_namespace=\"ingress-nginx\",\
                      controller_class=\"k8s.io/ingress-nginx\",controller_pod=\"controller-0\"";
        for line in [
            format!("nginx_ingress_controller_success{{{labels}}} 1"),
            format!("nginx_ingress_controller_errors{{{labels}}} 0"),
            format!("nginx_ingress_controller_config_last_reload_successful{{{labels}}} 1"),
            format!("nginx_ingress_controller_config_hash{{{labels}}} 7.0"),
            format!(
                "nginx_ingress_controller_leader_election_status{{{labels},\
                 name=\"ingress-nginx-leader\"}} 1"
            ),
            "ingress_controller_backend_updates_total 0".to_owned(),
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in\n{text}");
        }
    }

    #[test]
    fn disabled_leaves_only_the_own_counters() {
        let text = encoded(false);
        assert!(!text.contains("nginx_ingress_controller"), "{text}");
        assert!(
            text.contains("ingress_controller_nginx_restarts_total 0"),
            "{text}"
        );
    }
}
