//! `service-proxy`: kube-proxy's iptables and nftables modes (see the crate README).

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use anyhow::Context;
use clap::CommandFactory;
use cluster_state::k8s::api::core::v1::Node;
use cluster_state::{Filter, Kind, ObjectRef, Reporter, Snapshot};
use iptables_exec::{Backend, Iptables};
use iptables_model::Cidr;
use iptables_model::kube::Proxier;
use nftables_model::kube::NftOptions;
use service_proxy::cli::{Args, Family, LocalMode, ProxyMode};
use service_proxy::config::Settings;
use service_proxy::config::configz::{configz, proxy_mode};
use service_proxy::feed::{self, Feed};
use service_proxy::health::{
    HealthCheckServers, MetricsPort, ProxyHealth, healthz_router, metrics_router,
};
use service_proxy::metrics::Metrics;
use service_proxy::nftables::NftRules;
use service_proxy::pacing::{Due, Pacer};
use service_proxy::proxy::{FamilyProxy, Rules};
use service_proxy::sysctl::Sysctls;
use service_proxy::{KINDS, REPORTING_CONTROLLER, leftovers, node, nodeports};
use tokio::net::TcpListener;

/// Whether `args` choose kube-proxy's nftables mode.
fn nftables_mode(args: &Args) -> bool {
    args.proxy_mode == Some(ProxyMode::Nftables)
}

fn family_proxies(
    args: &Args,
    backend: Backend,
    metrics: &Arc<Metrics>,
    health: &Arc<ProxyHealth>,
) -> anyhow::Result<Vec<(Family, FamilyProxy)>> {
    args.ip_families
        .iter()
        .map(|&family| {
            let options = args.options(family);
            let rules = if nftables_mode(args) {
                Rules::Nftables(
                    NftRules::new(NftOptions::new(options))
                        .context("the local-traffic detector cannot be written in nftables")?,
                )
            } else {
                Rules::Iptables {
                    iptables: Iptables::new(options.ipv6, backend),
                    proxier: Proxier::new(options).with_partial_sync(args.partial_sync.into()),
                }
            };
            let pacer = Pacer::new(
                args.iptables_min_sync_period,
                args.iptables_sync_period,
                args.full_sync_period,
            );
            let proxy = FamilyProxy::new(rules, pacer, Arc::clone(metrics), Arc::clone(health));
            Ok((family, proxy))
        })
        .collect()
}

async fn serve(address: std::net::SocketAddr, router: axum::Router) -> anyhow::Result<()> {
    let listener = TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address}"))?;
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!(%error, %address, "HTTP server stopped");
        }
    });
    Ok(())
}

/// What the sync loop feeds snapshots with.
struct Feeding<'a> {
    hostname: &'a str,
    metrics: &'a Metrics,
    health: &'a ProxyHealth,
    /// When this proxy started: EndpointSlice changes triggered before do not count towards
    /// the network-programming latency.
    started: SystemTime,
}

/// Feeds a snapshot's changes to every family; returns the health-check ports it calls for.
fn apply(
    feed: &mut Feed,
    snapshot: &Snapshot,
    proxies: &mut [(Family, FamilyProxy)],
    context: &Feeding<'_>,
) -> std::collections::BTreeMap<u16, service_proxy::health::ServiceHealth> {
    context.metrics.changes_seen(
        snapshot.changes.of(Kind::Service).count(),
        snapshot.changes.of(Kind::EndpointSlice).count(),
    );
    let updates = feed.updates(snapshot);
    let triggers = feed::trigger_times(snapshot, context.started);
    let now = Instant::now();
    // The source keeps this node's Node only (Filter::only_node).
    let node: Option<&Node> = snapshot
        .nodes
        .get(&ObjectRef::cluster(context.hostname))
        .map(AsRef::as_ref);
    context.health.node_seen(node);
    let zone = node::zone(node);
    if node.is_some() && zone.is_empty() && snapshot.changes.of(Kind::Node).next().is_some() {
        tracing::info!(
            node = context.hostname,
            "the Node has no {} label: zone hints are not followed (every endpoint is used)",
            node::ZONE_LABEL
        );
    }
    for (_, proxy) in proxies.iter_mut() {
        proxy.set_zone(zone);
        proxy.apply(&updates, &triggers, now);
    }
    feed.health_checks(snapshot, context.hostname)
}

/// How long kube-proxy waits for its Node's pod CIDRs in NodeCIDR mode
/// (`timeoutForNodePodCIDR` in `cmd/kube-proxy/app/server_linux.go`).
const POD_CIDR_WAIT: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// The pod CIDRs of this node's Node, once it has some (waiting at most [`POD_CIDR_WAIT`], as
/// kube-proxy's `waitForPodCIDR`).
async fn wait_for_pod_cidrs(
    snapshots: &mut tokio::sync::watch::Receiver<Arc<Snapshot>>,
    hostname: &str,
) -> anyhow::Result<Vec<Cidr>> {
    let key = ObjectRef::cluster(hostname);
    let assigned =
        |s: &Arc<Snapshot>| !node::pod_cidrs(s.nodes.get(&key).map(AsRef::as_ref)).is_empty();
    if !assigned(&snapshots.borrow()) {
        tracing::info!(
            node = hostname,
            "waiting for the Node's podCIDRs (detect-local-mode NodeCIDR)"
        );
    }
    let waited = tokio::time::timeout(POD_CIDR_WAIT, snapshots.wait_for(assigned)).await;
    let snapshot = waited
        .map_err(|_| {
            anyhow::anyhow!(
                "detect-local-mode NodeCIDR: the Node {hostname:?} was given no spec.podCIDRs \
                 within {} s",
                POD_CIDR_WAIT.as_secs()
            )
        })?
        .context("the object source stopped")?;
    let cidrs = node::pod_cidrs(snapshot.nodes.get(&key).map(AsRef::as_ref));
    let text: Vec<_> = cidrs.iter().map(ToString::to_string).collect();
    tracing::info!(node = hostname, pod_cidrs = %text.join(","), "NodeCIDR local-traffic detector");
    Ok(cidrs)
}

/// In NodeCIDR mode, fails when the Node's pod CIDRs are no longer `used`: kube-proxy exits
/// then (`NodePodCIDRHandler`), to start again with the new ones.
fn check_pod_cidrs(snapshot: &Snapshot, hostname: &str, used: &[Cidr]) -> anyhow::Result<()> {
    let node = snapshot.nodes.get(&ObjectRef::cluster(hostname));
    let now = node::pod_cidrs(node.map(AsRef::as_ref));
    if node.is_none() || now == used {
        return Ok(());
    }
    let list = |cidrs: &[Cidr]| {
        cidrs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    anyhow::bail!(
        "the Node's podCIDRs changed from {} to {} (detect-local-mode NodeCIDR): exiting to \
         start again with them, as kube-proxy does",
        list(used),
        list(&now)
    )
}

async fn run(mut args: Args) -> anyhow::Result<()> {
    let started = SystemTime::now();
    nodeports::validate(&args.nodeport_addresses).map_err(anyhow::Error::msg)?;
    let metrics = Arc::new(Metrics::new());
    let health = Arc::new(ProxyHealth::new(2 * args.iptables_sync_period));
    // A dry run touches no rules, so it need not look for the host's backend.
    let backend = if args.dry_run && !args.cleanup {
        Backend::System
    } else {
        args.iptables_variant.backend().await
    };
    tracing::info!(?backend, variant = ?args.iptables_variant, "iptables build chosen");
    let nftables = nftables_mode(&args);
    if args.cleanup {
        // As kube-proxy's --cleanup: the rules of both modes; a failure in the mode chosen
        // is an error, one in the other is logged.
        let families: Vec<bool> = args
            .ip_families
            .iter()
            .map(|&f| f == Family::Ipv6)
            .collect();
        if nftables {
            leftovers::remove_nftables().await?;
            leftovers::remove_iptables_leftovers(backend).await;
        } else {
            leftovers::remove_iptables(&families, backend).await?;
            leftovers::remove_nftables_leftovers().await;
        }
        tracing::info!("every rule and chain of service-proxy removed");
        return Ok(());
    }
    if !args.dry_run {
        // Switching modes: the other mode's rules go, as kube-proxy's cleanupLeftovers.
        if nftables {
            leftovers::remove_iptables_leftovers(backend).await;
        } else {
            leftovers::remove_nftables_leftovers().await;
        }
        let options: Vec<_> = args.ip_families.iter().map(|&f| args.options(f)).collect();
        if let Err(error) = Sysctls::system().prepare(&options) {
            // kube-proxy exits here; only localhost NodePorts are lost, so the rest is served.
            tracing::error!(%error, "NodePorts will not answer on 127.0.0.1");
        }
    }
    // The node's name, leaked once: the filter that keeps its Node stays `Copy` with it.
    let hostname: &'static str = Box::leak(args.hostname().into_boxed_str());
    // Objects the source leaves out as invalid are also events on the API server.
    let reporter = Reporter {
        controller: REPORTING_CONTROLLER,
        instance: hostname.to_owned(),
    };
    let filter = Filter::default().only_node(hostname);
    let source = args
        .source
        .start_reporting(KINDS, filter, Some(reporter))
        .await
        .context("cannot start the object source")?;
    let source_health = source.health();
    health.watch_source(move |now| source_health.healthy(now));
    let mut snapshots = source.snapshots();
    // Nothing is synced before every object has been read once (revision 0: not yet).
    snapshots
        .wait_for(|s| s.revision > 0)
        .await
        .context("the object source stopped")?;
    // NodeCIDR: pod traffic is what comes from the Node's pod CIDRs, known once it has them.
    let node_cidrs = if args.detect_local_mode == Some(LocalMode::NodeCidr) {
        let cidrs = wait_for_pod_cidrs(&mut snapshots, hostname).await?;
        args.cluster_cidr.clone_from(&cidrs);
        Some(cidrs)
    } else {
        None
    };
    let mut proxies = family_proxies(&args, backend, &metrics, &health)?;
    let context = Feeding {
        hostname,
        metrics: &metrics,
        health: &health,
        started,
    };
    let mut feed = Feed::default();
    let snapshot = snapshots.borrow_and_update().clone();
    let wanted = apply(&mut feed, &snapshot, &mut proxies, &context);
    if args.dry_run {
        for (_, proxy) in &mut proxies {
            proxy.refresh_interface_addresses().await;
            print!("{}", proxy.dry_run());
        }
        return Ok(());
    }
    for (family, proxy) in &mut proxies {
        if let Err(error) = proxy.note_existing().await {
            tracing::warn!(?family, %error, "cannot list the table left by an earlier run: its unused chains stay");
        }
    }
    serve(
        args.healthz_bind_address,
        healthz_router(Arc::clone(&health), Arc::clone(&metrics)),
    )
    .await?;
    let metrics_port = MetricsPort {
        proxy_mode: proxy_mode(&args),
        configz: configz(&args),
    };
    serve(
        args.metrics_bind_address,
        metrics_router(Arc::clone(&metrics), metrics_port),
    )
    .await?;
    let mut health_checks = HealthCheckServers::new(args.health_check_address, Arc::clone(&health));
    health_checks.update(wanted).await;
    let shutdown = tokio::signal::ctrl_c();
    tokio::pin!(shutdown);
    loop {
        let now = Instant::now();
        let mut next = None;
        let mut synced = false;
        for (_, proxy) in &mut proxies {
            match proxy.due(now) {
                Due::Now(reason) => {
                    proxy.sync(reason, now).await;
                    synced = true;
                }
                Due::At(at) => next = Some(next.map_or(at, |n: Instant| n.min(at))),
            }
        }
        if synced {
            continue;
        }
        let next = next.unwrap_or(now + args.iptables_sync_period);
        tokio::select! {
            _ = &mut shutdown => break,
            _ = tokio::time::sleep_until(next.into()) => {}
            changed = snapshots.changed() => {
                if changed.is_err() {
                    anyhow::bail!("the object source stopped");
                }
                let snapshot = snapshots.borrow_and_update().clone();
                if let Some(cidrs) = &node_cidrs {
                    check_pod_cidrs(&snapshot, hostname, cidrs)?;
                }
                let wanted = apply(&mut feed, &snapshot, &mut proxies, &context);
                health_checks.update(wanted).await;
            }
        }
    }
    tracing::info!("shutting down: the rules stay in place (run --cleanup to remove them)");
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The flags and --config resolved first: the file may set the log verbosity.
    let settings = Settings::resolve(&Args::command().get_matches())?;
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(settings.log_filter())),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    settings.log_start_up();
    run(settings.args).await
}
