//! `service-proxy`: kube-proxy's iptables mode (see the crate README).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use iptables_model::kube::Proxier;
use service_proxy::cli::{Args, Family};
use service_proxy::health::{HealthCheckServers, ProxyHealth, healthz_router, metrics_router};
use service_proxy::iptables::Iptables;
use service_proxy::manifests::{self, Objects};
use service_proxy::metrics::Metrics;
use service_proxy::pacing::{Due, Pacer};
use service_proxy::proxy::{FamilyProxy, State};
use tokio::net::TcpListener;

/// How often the manifests directory is re-read.
const MANIFEST_POLL: Duration = Duration::from_secs(1);

fn family_proxies(
    args: &Args,
    metrics: &Arc<Metrics>,
    health: &Arc<ProxyHealth>,
) -> Vec<(Family, FamilyProxy)> {
    args.ip_families
        .iter()
        .map(|&family| {
            let options = args.options(family);
            let iptables = Iptables::new(options.ipv6, args.iptables_variant);
            let proxier = Proxier::new(options).with_partial_sync(args.partial_sync.into());
            let pacer = Pacer::new(
                args.iptables_min_sync_period,
                args.iptables_sync_period,
                args.full_sync_period,
            );
            let proxy = FamilyProxy::new(
                proxier,
                iptables,
                pacer,
                Arc::clone(metrics),
                Arc::clone(health),
            );
            (family, proxy)
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

async fn run(args: Args) -> anyhow::Result<()> {
    let metrics = Arc::new(Metrics::new());
    let health = Arc::new(ProxyHealth::new(2 * args.iptables_sync_period));
    let mut proxies = family_proxies(&args, &metrics, &health);
    if args.cleanup {
        for (family, proxy) in &proxies {
            proxy
                .cleanup()
                .await
                .with_context(|| format!("cleanup of {family:?} failed"))?;
        }
        tracing::info!("every rule and chain of service-proxy removed");
        return Ok(());
    }
    let dir = args.manifests.clone().context("--manifests is required")?;
    // Taken before reading: a change made meanwhile is seen by the next poll.
    let mut seen = fingerprint(&dir);
    let objects = manifests::read(&dir)
        .with_context(|| format!("cannot read the manifests in {}", dir.display()))?;
    if args.dry_run {
        for (family, proxy) in &mut proxies {
            let state = State::translate(&objects, *family == Family::Ipv6);
            print!("{}", proxy.dry_run(&state));
        }
        return Ok(());
    }
    serve(
        args.healthz_bind_address,
        healthz_router(Arc::clone(&health), Arc::clone(&metrics)),
    )
    .await?;
    serve(
        args.metrics_bind_address,
        metrics_router(Arc::clone(&metrics)),
    )
    .await?;
    let mut health_checks = HealthCheckServers::new(args.health_check_address, Arc::clone(&health));
    let hostname = args.hostname();
    let apply = |objects: Objects, proxies: &mut Vec<(Family, FamilyProxy)>| {
        let now = Instant::now();
        let mut v4 = State::default();
        for (family, proxy) in proxies.iter_mut() {
            let state = State::translate(&objects, *family == Family::Ipv6);
            proxy.update(&state, now);
            if *family == Family::Ipv4 || v4.services.is_empty() {
                v4 = state;
            }
        }
        v4.health_checks(&hostname)
    };
    let wanted = apply(objects, &mut proxies);
    health_checks.update(wanted).await;
    let shutdown = tokio::signal::ctrl_c();
    tokio::pin!(shutdown);
    let mut poll = tokio::time::interval(MANIFEST_POLL);
    loop {
        let now = Instant::now();
        let mut next = now + MANIFEST_POLL;
        let mut synced = false;
        for (_, proxy) in &mut proxies {
            match proxy.due(now) {
                Due::Now(reason) => {
                    proxy.sync(reason, now).await;
                    synced = true;
                }
                Due::At(at) => next = next.min(at),
            }
        }
        if synced {
            continue;
        }
        tokio::select! {
            _ = &mut shutdown => break,
            _ = tokio::time::sleep_until(next.into()) => {}
            _ = poll.tick() => {
                let print = fingerprint(&dir);
                if print == seen {
                    continue;
                }
                seen = print;
                match manifests::read(&dir) {
                    Ok(objects) => {
                        let wanted = apply(objects, &mut proxies);
                        health_checks.update(wanted).await;
                    }
                    Err(error) => tracing::error!(%error, "manifests not applied: the previous ones stay"),
                }
            }
        }
    }
    tracing::info!("shutting down: the rules stay in place (run --cleanup to remove them)");
    Ok(())
}

/// The names, sizes and modification times of the manifests: re-read when it changes.
fn fingerprint(dir: &std::path::Path) -> String {
    let mut print = String::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut lines: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some(format!(
                    "{:?} {} {:?}",
                    e.path(),
                    meta.len(),
                    meta.modified().ok()
                ))
            })
            .collect();
        lines.sort();
        print = lines.join("\n");
    }
    print
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    run(Args::parse()).await
}
