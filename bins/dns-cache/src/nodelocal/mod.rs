//! `dns-cache node-local`: NodeLocal DNSCache's `node-cache`, composed from our crates. It
//! renders the base Corefile ([`corefile`]) with the upstream Service's ClusterIP
//! ([`upstream`]), puts the local IPs on an interface ([`interface`]), serves the result
//! with the ordinary server ([`crate::run::serve`]), keeps the NOTRACK rules ([`rules`],
//! [`apply`]) in place every `-syncinterval` with the iptables build the host uses, and
//! removes rules and interface at exit unless `-skipteardown`.

pub mod apply;
pub mod args;
pub mod corefile;
pub mod interface;
pub mod rules;
pub mod setup_metrics;
pub mod upstream;
pub mod writer;

use std::sync::Arc;

use anyhow::Context as _;
use iptables_exec::Iptables;
use tokio::sync::{Notify, oneshot};

use crate::cli::Cli;
use crate::run::Hooks;
use crate::server::http::SourceCheck;
use args::NodeLocalArgs;
use interface::Interface;
use rules::{PlacedRule, node_cache_rules};
use setup_metrics::SetupMetrics;
use writer::CorefileWriter;

/// Runs node-local mode until SIGTERM, SIGINT or SIGQUIT, then tears down.
pub async fn run(args: NodeLocalArgs, workers: usize) -> anyhow::Result<()> {
    let metrics = Arc::new(SetupMetrics::new());
    let metrics_server = tokio::spawn(setup_metrics::serve(
        args.metrics_listen_address.clone(),
        Arc::clone(&metrics),
    ));
    let mut writer = CorefileWriter::start(&args)
        .await
        .context("reading the upstream Service")?;
    writer
        .refresh()
        .context("rendering the node-local Corefile")?;
    let mut network = Network {
        interface: if args.setup_interface {
            let interface = Interface::connect(&args.interface_name, &args.local_ips)
                .context("opening a netlink socket")?;
            Some(interface)
        } else {
            None
        },
        iptables: if args.setup_iptables {
            let ipv6 = args
                .local_ips
                .first()
                .is_some_and(std::net::IpAddr::is_ipv6);
            // As node-cache's image does (kubernetes' iptables-wrapper): the build whose
            // tables hold kubelet's chains, else the system's `iptables`.
            let backend = iptables_exec::detect().await;
            tracing::info!("Using the iptables build {backend:?}");
            Some((
                Iptables::new(ipv6, backend),
                node_cache_rules(&args.local_ips, args.dns_port, args.health_port),
            ))
        } else {
            None
        },
        metrics: Arc::clone(&metrics),
    };
    network.ensure_interface().await;

    let reload = Arc::new(Notify::new());
    let (started, started_rx) = oneshot::channel();
    let cli = Cli {
        conf: Some(args.corefile.clone()),
        dns_port: Some(args.dns_port),
        plugins: false,
        version: false,
        pidfile: args.pidfile.clone(),
        manifests: None,
    };
    let server = crate::run::serve(
        cli,
        workers,
        Hooks {
            reload: Arc::clone(&reload),
            started: Some(started),
            // A stuck manifest watcher turns `/health` red, so that kubelet restarts us.
            source_check: writer
                .source_health()
                .map(|health| -> SourceCheck { Arc::new(move |now| health.problem(now)) }),
        },
    );
    tokio::pin!(server);
    // The rules go in only once the server is up, so a broken configuration does not
    // black-hole DNS (node-cache waits for CoreDNS the same way).
    let result = tokio::select! {
        result = &mut server => result,
        _ = started_rx => {
            network.ensure_rules().await;
            let mut tick = tokio::time::interval(args.sync_interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tokio::select! {
                    result = &mut server => break result,
                    _ = tick.tick() => {
                        network.ensure_interface().await;
                        network.ensure_rules().await;
                        writer.refresh_logged(&metrics, &reload);
                    }
                    () = writer.upstream_changed() => writer.refresh_logged(&metrics, &reload),
                }
            }
        }
    };
    if args.skip_teardown {
        tracing::info!("Skipping teardown (-skipteardown)");
    } else {
        network.teardown().await;
    }
    metrics_server.abort();
    result
}

/// The interface and the rules, with the error counters.
struct Network {
    interface: Option<Interface>,
    iptables: Option<(Iptables, Vec<PlacedRule>)>,
    metrics: Arc<SetupMetrics>,
}

impl Network {
    async fn ensure_interface(&mut self) {
        let Some(interface) = &mut self.interface else {
            return;
        };
        let first = interface.placement().is_none();
        match interface.ensure().await {
            Ok(true) => tracing::info!("Added interface - {:?}", interface.placement()),
            Ok(false) => {}
            Err(e) => {
                tracing::error!("Error setting up the local IPs: {e}");
                self.metrics.error(if first {
                    "interface_add"
                } else {
                    "interface_check"
                });
            }
        }
    }

    async fn ensure_rules(&self) {
        let Some((iptables, rules)) = &self.iptables else {
            return;
        };
        match apply::ensure(iptables, rules).await {
            Ok(0) => {}
            Ok(n) => tracing::info!("Added back {n} nodelocaldns iptables rule(s)"),
            Err(e) => {
                tracing::error!("Error checking/adding iptables rules: {e}");
                self.metrics.error(if e.is_lock() {
                    "iptables_lock"
                } else {
                    "iptables"
                });
            }
        }
    }

    async fn teardown(&mut self) {
        tracing::info!("Tearing down");
        if let Some((iptables, rules)) = &self.iptables
            && let Err(e) = apply::remove(iptables, rules).await
        {
            tracing::error!("Failed deleting iptables rules: {e}");
        }
        if let Some(interface) = &mut self.interface
            && let Err(e) = interface.teardown().await
        {
            tracing::error!("Failed removing the local IPs: {e}");
        }
    }
}
