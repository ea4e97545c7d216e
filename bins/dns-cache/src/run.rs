//! The process: load the Corefile, start listeners and HTTP servers, then wait for
//! signals and reload checks. A reload builds the new plan completely and binds every
//! new DNS and HTTP address before it replaces the old one, so a bad Corefile (one that
//! fails, or a file left without server blocks) or a port that cannot be bound is
//! logged, and the running configuration keeps serving.

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
use crate::server::http::{Endpoints, HttpState, SourceCheck, router, self_check};

/// One HTTP address being served.
struct HttpServer {
    /// What it serves.
    endpoints: Endpoints,
    /// The bound socket, kept so that a reload changing `endpoints` hands it to the new
    /// server instead of binding the port again.
    socket: std::net::TcpListener,
    /// The server.
    task: JoinHandle<()>,
}

/// Sockets opened for HTTP servers about to start, by address: the endpoints, the socket
/// to keep and its tokio listener.
type HttpSockets = BTreeMap<String, (Endpoints, std::net::TcpListener, tokio::net::TcpListener)>;

/// The running servers.
struct Running {
    source: Source,
    workers: usize,
    plan: Plan,
    /// The hash of the last Corefile a poll could not build (it does not parse, or names
    /// something this server cannot do): polls skip it until the file changes, so its error is
    /// logged once per change, as CoreDNS's reload does. A file that built but could not bind
    /// is not remembered: the next poll tries it again, once the address may be free.
    refused: Option<String>,
    listeners: BTreeMap<SocketAddr, Listener>,
    http: BTreeMap<String, HttpServer>,
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
#[derive(Default)]
pub struct Hooks {
    /// Notified to check the Corefile now (reloaded if its hash changed).
    pub reload: Arc<tokio::sync::Notify>,
    /// Sent once the first configuration is serving.
    pub started: Option<tokio::sync::oneshot::Sender<()>>,
    /// Why the source the mode reads objects from is stuck, if it is: `/health` answers 503
    /// then (none: always healthy).
    pub source_check: Option<SourceCheck>,
}

/// Runs the server until SIGTERM, SIGINT or a fatal error.
pub async fn run(cli: Cli, workers: usize) -> anyhow::Result<()> {
    serve(cli, workers, Hooks::default()).await
}

/// [`run`] with `hooks`.
pub async fn serve(cli: Cli, workers: usize, hooks: Hooks) -> anyhow::Result<()> {
    let source = Source::from_cli(&cli);
    if let Some(dir) = &cli.manifests {
        crate::plugin::kubernetes::read_manifests_from(dir.clone());
    }
    let metrics = Arc::new(Metrics::new());
    let (input, filename) = source.read()?;
    let plan = config::build(&input, &filename, source.dns_port, Empty::Default, &metrics)?;
    wait_until_ready(&plan).await;
    let state = Arc::new(HttpState {
        shutting_down: Default::default(),
        metrics: Arc::clone(&metrics),
        source_check: hooks.source_check,
        ready_checks: Default::default(),
    });
    let mut running = Running {
        source,
        workers,
        plan: Plan::default(),
        refused: None,
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
                running.reload(Trigger::Signal).await;
            }
            _ = sleep_or_forever(poll) => running.reload(Trigger::Poll).await,
            () = hooks.reload.notified() => running.reload(Trigger::Poll).await,
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

/// CoreDNS's `kubernetes` start-up: serving a plan (at start or reload) waits up to
/// `startup_timeout` for the plugins that report readiness, saying so every 500 ms, then
/// starts anyway.
async fn wait_until_ready(plan: &Plan) {
    let ready = || plan.ready_checks.iter().all(|(_, ok)| ok());
    let start = tokio::time::Instant::now();
    let mut said = start;
    while !ready() {
        if start.elapsed() >= plan.startup_wait {
            tracing::warn!(
                plugin = "kubernetes",
                "starting server with unsynced Kubernetes API"
            );
            return;
        }
        if said.elapsed() >= Duration::from_millis(500) {
            tracing::info!(
                plugin = "kubernetes",
                "waiting for Kubernetes API before starting server"
            );
            said = tokio::time::Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn sleep_or_forever(delay: Option<Duration>) {
    match delay {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

impl Running {
    /// Replaces the running configuration with `plan`. Every DNS listener and HTTP server
    /// the plan adds is bound first; if one cannot be, what was bound is released, nothing
    /// changes and the error says which address failed. At start-up that error is fatal,
    /// as CoreDNS's is (`caddy.Start` fails when a `health` or `prometheus` port cannot be
    /// bound); at reload the old configuration keeps serving.
    fn apply(&mut self, plan: Plan) -> anyhow::Result<()> {
        let mut started = BTreeMap::new();
        for l in &plan.listeners {
            if !self.listeners.contains_key(&l.addr) {
                let listener = Listener::start(l.addr, Arc::clone(&l.table), self.workers)
                    .with_context(|| format!("listen tcp/udp {}", l.addr))?;
                started.insert(l.addr, listener);
            }
        }
        let http = wanted_http(&plan);
        let sockets = self.bind_http(&http)?;
        // From here on nothing fails: the plan is committed.
        for l in &plan.listeners {
            if let Some(running) = self.listeners.get(&l.addr) {
                running.update(Arc::clone(&l.table));
            }
        }
        self.listeners
            .retain(|addr, _| plan.listeners.iter().any(|l| l.addr == *addr));
        self.listeners.extend(started);
        self.apply_http(&http, sockets);
        logging::set_debug(plan.debug);
        if let Ok(mut checks) = self.state.ready_checks.write() {
            checks.clone_from(&plan.ready_checks);
        }
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

    /// Opens a socket for each address of `wanted` whose server must (re)start: a new
    /// address is bound; one already served with other endpoints hands over its bound
    /// socket, so the port is never released in between. Addresses served as wanted
    /// already need nothing.
    fn bind_http(&self, wanted: &BTreeMap<String, Endpoints>) -> anyhow::Result<HttpSockets> {
        let mut sockets = BTreeMap::new();
        for (address, endpoints) in wanted {
            let socket = match self.http.get(address) {
                Some(running) if running.endpoints == *endpoints => continue,
                Some(running) => running.socket.try_clone(),
                None => std::net::TcpListener::bind(address)
                    .and_then(|l| l.set_nonblocking(true).map(|()| l)),
            };
            let opened = socket.and_then(|socket| {
                let listener = tokio::net::TcpListener::from_std(socket.try_clone()?)?;
                Ok((socket, listener))
            });
            let (socket, listener) = opened.with_context(|| format!("listen tcp {address}"))?;
            sockets.insert(address.clone(), (*endpoints, socket, listener));
        }
        Ok(sockets)
    }

    /// Makes the HTTP servers match `wanted`: stops those no longer wanted or whose
    /// endpoints change, and serves each socket of `sockets` (from [`Running::bind_http`]).
    fn apply_http(&mut self, wanted: &BTreeMap<String, Endpoints>, sockets: HttpSockets) {
        self.http.retain(|address, server| {
            let keep = wanted.get(address) == Some(&server.endpoints);
            if !keep {
                server.task.abort();
            }
            keep
        });
        for (address, (endpoints, socket, listener)) in sockets {
            let app = router(endpoints, Arc::clone(&self.state));
            let local = listener.local_addr().ok();
            let metrics = Arc::clone(&self.metrics);
            let task = tokio::spawn(async move {
                let serve = crate::server::http::serve(listener, app);
                match local.filter(|_| endpoints.health) {
                    Some(addr) => {
                        tokio::select! {
                            () = serve => {}
                            () = self_check(addr, metrics) => {}
                        }
                    }
                    None => serve.await,
                }
            });
            self.http.insert(
                address,
                HttpServer {
                    endpoints,
                    socket,
                    task,
                },
            );
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
    async fn reload(&mut self, trigger: Trigger) {
        let result = self.source.read().and_then(|(input, filename)| {
            let hash = config::build_hash(&input);
            if trigger == Trigger::Poll
                && (hash == self.plan.hash || self.refused.as_ref() == Some(&hash))
            {
                return Ok(None);
            }
            if trigger == Trigger::Poll {
                tracing::info!("Reloading");
            }
            let built = config::build(
                &input,
                &filename,
                self.source.dns_port,
                self.source.empty_at_reload(),
                &self.metrics,
            );
            self.refused = built.is_err().then_some(hash);
            built.map(Some)
        });
        let outcome = match result {
            Ok(None) => return,
            Ok(Some(plan)) => {
                // As CoreDNS runs the new instance's start-up (the kubernetes plugin's wait
                // for its objects) before it serves: the running plan answers meanwhile.
                wait_until_ready(&plan).await;
                self.apply(plan)
            }
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
        for server in self.http.into_values() {
            server.task.abort();
        }
    }
}

/// The HTTP endpoints `plan` asks for, by address (plugins naming the same address share
/// one server).
fn wanted_http(plan: &Plan) -> BTreeMap<String, Endpoints> {
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
    wanted
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
