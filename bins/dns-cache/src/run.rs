//! The process: load the Corefile, start listeners and HTTP servers, then wait for
//! signals and reload checks. A reload builds the new plan completely (and binds any new
//! address) before it replaces the old one, so a bad Corefile (one that fails, or a file
//! left without server blocks) is logged and the running configuration keeps serving.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context as _;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;

use crate::cli::{Cli, version_text};
use crate::config::{self, Empty, Plan, Source, http_address};
use crate::logging;
use crate::metrics::Metrics;
use crate::server::Listener;
use crate::server::http::{Endpoints, HttpState, router, self_check};

/// The running servers.
struct Running {
    source: Source,
    workers: usize,
    plan: Plan,
    listeners: BTreeMap<SocketAddr, Listener>,
    http: BTreeMap<String, (Endpoints, JoinHandle<()>)>,
    state: Arc<HttpState>,
    metrics: Arc<Metrics>,
}

/// Why a reload was tried.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trigger {
    Signal,
    Poll,
}

/// Hooks for a mode that drives the server from outside (node-local).
#[derive(Debug, Default)]
pub struct Hooks {
    /// Notified to check the Corefile now (reloaded if its hash changed).
    pub reload: Arc<tokio::sync::Notify>,
    /// Sent once the first configuration is serving.
    pub started: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Runs the server until SIGTERM, SIGINT or a fatal error.
pub async fn run(cli: Cli, workers: usize) -> anyhow::Result<()> {
    serve(cli, workers, Hooks::default()).await
}

/// [`run`] with `hooks`.
pub async fn serve(cli: Cli, workers: usize, hooks: Hooks) -> anyhow::Result<()> {
    let source = Source::from_cli(&cli);
    let metrics = Arc::new(Metrics::new());
    let (input, filename) = source.read()?;
    let plan = config::build(&input, &filename, source.dns_port, Empty::Default, &metrics)?;
    let state = Arc::new(HttpState {
        shutting_down: Default::default(),
        metrics: Arc::clone(&metrics),
    });
    let mut running = Running {
        source,
        workers,
        plan: Plan::default(),
        listeners: BTreeMap::new(),
        http: BTreeMap::new(),
        state,
        metrics,
    };
    running.apply(plan)?;
    for line in &running.plan.banner {
        println!("{line}");
    }
    print!("{}", version_text());
    let pidfile = cli.pidfile.as_deref().map(PidFile::create).transpose()?;
    if let Some(started) = hooks.started {
        let _ = started.send(());
    }

    let mut usr1 = signal(SignalKind::user_defined1())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut quit = signal(SignalKind::quit())?;
    loop {
        let poll = running.next_poll();
        tokio::select! {
            _ = usr1.recv() => {
                tracing::info!("SIGUSR1: Reloading");
                running.reload(Trigger::Signal);
            }
            _ = sleep_or_forever(poll) => running.reload(Trigger::Poll),
            () = hooks.reload.notified() => running.reload(Trigger::Poll),
            _ = term.recv() => {
                tracing::info!("SIGTERM: Shutting down servers then terminating");
                break;
            }
            _ = int.recv() => {
                tracing::info!("SIGINT: Shutting down");
                break;
            }
            _ = quit.recv() => {
                tracing::info!("SIGQUIT: Quitting process immediately");
                drop(pidfile);
                return Ok(());
            }
        }
    }
    // A second SIGINT during lameduck quits at once (status 2), as CoreDNS does.
    tokio::select! {
        () = running.shutdown() => Ok(()),
        _ = int.recv() => {
            tracing::info!("SIGINT: Force quit");
            drop(pidfile);
            std::process::exit(2);
        }
    }
}

async fn sleep_or_forever(delay: Option<Duration>) {
    match delay {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

impl Running {
    /// Replaces the running configuration with `plan`: new addresses are bound first; if
    /// one fails, nothing changes.
    fn apply(&mut self, plan: Plan) -> anyhow::Result<()> {
        let mut started = BTreeMap::new();
        for l in &plan.listeners {
            if !self.listeners.contains_key(&l.addr) {
                let listener = Listener::start(l.addr, Arc::clone(&l.table), self.workers)
                    .with_context(|| format!("listen tcp/udp {}", l.addr))?;
                started.insert(l.addr, listener);
            }
        }
        for l in &plan.listeners {
            if let Some(running) = self.listeners.get(&l.addr) {
                running.update(Arc::clone(&l.table));
            }
        }
        self.listeners
            .retain(|addr, _| plan.listeners.iter().any(|l| l.addr == *addr));
        self.listeners.extend(started);
        self.apply_http(&plan);
        logging::set_debug(plan.debug);
        for detector in &plan.loops {
            tokio::spawn(Arc::clone(detector).run());
        }
        self.metrics.reload_version.clear();
        self.metrics
            .reload_version
            .get_or_create(&vec![
                ("hash", "sha512".to_owned()),
                ("value", plan.hash.clone()),
            ])
            .set(1);
        self.plan = plan;
        Ok(())
    }

    /// Starts, restarts or stops HTTP servers to match `plan`. A port in use is logged and
    /// left closed (as CoreDNS does).
    fn apply_http(&mut self, plan: &Plan) {
        let mut wanted: BTreeMap<String, Endpoints> = BTreeMap::new();
        if let Some(health) = &plan.health {
            wanted.entry(http_address(&health.addr)).or_default().health = true;
        }
        if let Some(ready) = &plan.ready {
            wanted.entry(http_address(ready)).or_default().ready = true;
        }
        for address in &plan.prometheus {
            wanted.entry(http_address(address)).or_default().metrics = true;
        }
        let old = std::mem::take(&mut self.http);
        for (address, (endpoints, task)) in old {
            if wanted.get(&address) == Some(&endpoints) {
                self.http.insert(address, (endpoints, task));
            } else {
                task.abort();
            }
        }
        for (address, endpoints) in wanted {
            if self.http.contains_key(&address) {
                continue;
            }
            let std_listener = match std::net::TcpListener::bind(&address)
                .and_then(|l| l.set_nonblocking(true).map(|()| l))
            {
                Ok(l) => l,
                Err(e) => {
                    tracing::error!("Failed to start HTTP server on {address}: {e}");
                    continue;
                }
            };
            let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) else {
                continue;
            };
            let app = router(endpoints, Arc::clone(&self.state));
            let local = listener.local_addr().ok();
            let metrics = Arc::clone(&self.metrics);
            let task = tokio::spawn(async move {
                let serve = axum::serve(listener, app);
                match local.filter(|_| endpoints.health) {
                    Some(addr) => {
                        tokio::select! {
                            _ = serve => {}
                            () = self_check(addr, metrics) => {}
                        }
                    }
                    None => {
                        let _ = serve.await;
                    }
                }
            });
            self.http.insert(address, (endpoints, task));
        }
    }

    /// When to check the Corefile next: the reload interval plus jitter.
    fn next_poll(&self) -> Option<Duration> {
        let reload = self.plan.reload?;
        let jitter_ms = u64::try_from(reload.jitter.as_millis()).unwrap_or(0);
        let extra = if jitter_ms == 0 {
            0
        } else {
            std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), 0u8) % jitter_ms
        };
        Some(reload.interval + Duration::from_millis(extra))
    }

    /// Reloads if the Corefile changed (poll) or always (SIGUSR1).
    fn reload(&mut self, trigger: Trigger) {
        let result = self.source.read().and_then(|(input, filename)| {
            let hash = config::build_hash(&input);
            if trigger == Trigger::Poll && hash == self.plan.hash {
                return Ok(None);
            }
            if trigger == Trigger::Poll {
                tracing::info!("Reloading");
            }
            config::build(
                &input,
                &filename,
                self.source.dns_port,
                self.source.empty_at_reload(),
                &self.metrics,
            )
            .map(Some)
        });
        let outcome = match result {
            Ok(None) => return,
            Ok(Some(plan)) => self.apply(plan),
            Err(e) => Err(e.into()),
        };
        match (outcome, trigger) {
            (Ok(()), Trigger::Poll) => tracing::info!("Reloading complete"),
            (Ok(()), Trigger::Signal) => {}
            (Err(e), Trigger::Poll) => {
                self.metrics.reload_failed.inc();
                tracing::error!("Restart failed: {e:#}");
            }
            (Err(e), Trigger::Signal) => {
                self.metrics.reload_failed.inc();
                tracing::error!("SIGUSR1: {e:#}");
            }
        }
    }

    /// Lameduck (if `health` asks for it): keep answering, `/ready` says 503; then stop.
    async fn shutdown(self) {
        self.state.shutting_down.store(true, Ordering::Relaxed);
        if let Some(health) = &self.plan.health
            && !health.lameduck.is_zero()
        {
            tracing::info!(
                plugin = "health",
                "Going into lameduck mode for {}",
                crate::duration::go(health.lameduck)
            );
            tokio::time::sleep(health.lameduck).await;
        }
        drop(self.listeners);
        for (_, (_, task)) in self.http {
            task.abort();
        }
    }
}

/// The `-pidfile`, removed when dropped.
struct PidFile(PathBuf);

impl PidFile {
    fn create(path: &std::path::Path) -> anyhow::Result<Self> {
        std::fs::write(path, format!("{}\n", std::process::id()))
            .with_context(|| format!("writing pidfile {}", path.display()))?;
        Ok(Self(path.to_owned()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
