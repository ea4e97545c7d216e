//! The control loop: objects in, nginx configured. Debounces bursts of changes, sends
//! endpoint-only changes to the balancer without a reload, validates every new configuration
//! before nginx sees it, keeps the last good one, and restarts nginx if it dies.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use cluster_state::{EventError, ObjectRef, Status};
use k8s_openapi::api::networking::v1::IngressLoadBalancerStatus;
use k8s_openapi::jiff::Timestamp;
use tokio::time::Instant;
use tracing::{error, info, warn};

use crate::class::Selection;
use crate::election::{Election, ElectionError};
use crate::model::{self, Problem};
use crate::nginx::{Nginx, NginxError};
use crate::objects::Objects;
use crate::reconcile::{Reconciler, config_hash};
use crate::reports::{self, Reporter};
use crate::serve::Shared;
use crate::{backends, certs, control, metrics, render, serve};

/// How the controller runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The nginx binary.
    pub nginx: PathBuf,
    /// Rendering options (prefix, ports).
    pub options: render::Options,
    /// Which Ingresses are ours.
    pub selection: Selection,
    /// Where the objects come from (manifests or the API server).
    pub source: cluster_state::SourceArgs,
    /// How often pending changes and unsent backend tables are looked at.
    pub poll: Duration,
    /// How long changes must settle before they are applied.
    pub debounce: Duration,
    /// Where `/healthz` and `/metrics` may listen: the first address that binds.
    pub healthz_addresses: Vec<SocketAddr>,
    /// What is read besides the usual kinds (Namespaces, the ConfigMap).
    pub extra: crate::objects::Extra,
    /// Ingress status publication, if any.
    pub status: Option<StatusSettings>,
    /// This replica's name in the events it records (`reportingInstance`).
    pub instance: String,
    /// The validating admission webhook, if any.
    pub webhook: Option<crate::webhook::Config>,
    /// ingress-nginx's metrics flags.
    pub metrics: metrics::MetricsArgs,
}

/// What Ingress status to publish, where, and who may.
#[derive(Clone, Debug)]
pub struct StatusSettings {
    /// Where the addresses written to `status.loadBalancer.ingress` come from.
    pub publish: crate::status::Publish,
    /// The election among replicas; without one this replica always writes.
    pub election: Option<Election>,
    /// Whether the leader clears the status when it stops and no other replica runs.
    pub clear_on_shutdown: bool,
    /// How often the leader re-checks every served Ingress's status.
    pub interval: Duration,
}

/// Why the controller could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// nginx's prefix could not be prepared.
    #[error(transparent)]
    Nginx(#[from] NginxError),
    /// The object source could not start.
    #[error(transparent)]
    Source(#[from] cluster_state::SourceError),
    /// The election could not start.
    #[error(transparent)]
    Election(#[from] ElectionError),
    /// The admission webhook could not start.
    #[error(transparent)]
    Webhook(#[from] crate::webhook::WebhookError),
    /// The health and metrics address could not be bound.
    #[error("cannot listen on {address} for /healthz and /metrics: {source}")]
    Listen {
        /// The (last) address tried.
        address: String,
        /// The error.
        source: std::io::Error,
    },
}

struct Loop {
    settings: Settings,
    nginx: Nginx,
    reconciler: Reconciler,
    shared: Arc<Shared>,
    table: String,
    problems: Vec<Problem>,
    /// What the ConfigMap's reading refused or ignored, as last logged.
    global_notes: crate::configmap::Notes,
    /// The default certificate, as last logged.
    default_certificate: model::DefaultCertificate,
    /// What was reported of the problems as events, and the UIDs of the Ingresses they regard.
    reporter: Reporter,
    uids: BTreeMap<reports::Subject, Option<String>>,
    /// The Ingresses served (`namespace/name`).
    served: Vec<String>,
    /// The `status.loadBalancer` the source holds for each Ingress, as of the last objects
    /// and this replica's own writes since: status is written only where it differs.
    held: BTreeMap<String, Option<IngressLoadBalancerStatus>>,
    /// The status to publish, as of the last objects (`None`: nothing to publish yet).
    wanted: Option<IngressLoadBalancerStatus>,
    leader: Option<tokio::sync::watch::Receiver<lease_driver::Status>>,
    /// Whether this replica led when the lease's status last changed.
    was_leading: bool,
    /// The objects of the last sync, whose Gateway API statuses the leader keeps current.
    objects: Objects,
    /// The Gateways the configuration nginx runs serves (`Programmed`), and where.
    loaded_gateways: BTreeMap<ObjectRef, crate::gateway::plan::Served>,
    /// What the Gateway API objects of the last model could not have served, as last logged.
    gateway_problems: Vec<crate::gateway::plan::Problem>,
    /// What the last model's configuration leaves out on shared sockets (Gateway servers, and
    /// locations an Ingress and HTTPRoutes both claim), as last logged.
    collisions: crate::gateway::collisions::Collisions,
    /// The listeners the last model's configuration serves nothing of, and why (their
    /// `Conflicted` condition).
    conflicts: BTreeMap<(ObjectRef, String), crate::gateway::collisions::Conflict>,
    /// The statuses last wanted for the Gateways of ours: one that stops being ours while it
    /// still holds its status gets our conditions reset (S-ST.2).
    last_gateways: BTreeMap<ObjectRef, cluster_state::gateway::GatewayStatus>,
    /// The Gateways of the last model the address pool has no address for, and why (their
    /// `Programmed`, S-GW.7).
    address_faults: BTreeMap<ObjectRef, crate::gateway::Fault>,
    /// A validated and installed configuration whose start failed: the restart on nginx's exit
    /// starts it again.
    unstarted: Option<String>,
    source: cluster_state::Source,
}

/// Runs until `shutdown` completes, then stops nginx.
///
/// # Errors
///
/// [`ControllerError`] when the controller cannot start; later failures are logged, counted
/// and retried.
pub async fn run(
    mut settings: Settings,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ControllerError> {
    let nginx = Nginx::new(settings.nginx.clone(), settings.options.prefix.clone())?;
    // The default server's certificate when no --default-ssl-certificate loads (ingress-nginx
    // generates its "Fake Certificate" at start too).
    let fallback = certs::write_fake(&settings.options.prefix).map_err(|source| {
        ControllerError::Nginx(NginxError::Io {
            what: "cannot write the generated default certificate".into(),
            source,
        })
    })?;
    settings.options.fallback_certificate = Some(fallback);
    let metrics = metrics::Metrics::new(settings.metrics.clone());
    let registry = metrics.register(&metrics::Exporter::from_env(&settings.selection.controller));
    let shared = Arc::new(Shared {
        metrics,
        registry,
        healthy: false.into(),
        source: std::sync::OnceLock::new(),
        nginx: settings.options.clone(),
    });
    let listener = bind(&settings.healthz_addresses).await?;
    if let Ok(address) = listener.local_addr() {
        info!(%address, "serving /healthz and /metrics");
    }
    let server =
        tokio::spawn(axum::serve(listener, serve::router(Arc::clone(&shared))).into_future());
    // The webhook reviews against the objects of the last sync.
    let (applied, objects) = tokio::sync::watch::channel(Arc::default());
    let webhook =
        crate::webhook::spawn(&settings, objects, shared.metrics.admission.clone()).await?;
    // Objects the source leaves out as invalid are also events from this replica.
    let reporter = cluster_state::Reporter {
        controller: reports::REPORTING_CONTROLLER,
        instance: settings.instance.clone(),
    };
    let source = crate::objects::start(&settings.source, &settings.extra, Some(reporter)).await?;
    let _ = shared.source.set(source.health());
    let mut snapshots = source.snapshots();
    snapshots.mark_changed();
    let (stop_election, election_stopped) = tokio::sync::watch::channel(false);
    let election = settings.status.as_ref().and_then(|s| s.election.clone());
    let leader = match election {
        Some(election) => Some(crate::election::campaign(election, election_stopped).await?),
        None => None,
    };
    let mut state = Loop {
        settings,
        nginx,
        reconciler: Reconciler::default(),
        shared,
        table: String::new(),
        problems: Vec::new(),
        global_notes: crate::configmap::Notes::default(),
        default_certificate: model::DefaultCertificate::Generated,
        reporter: Reporter::default(),
        uids: BTreeMap::new(),
        served: Vec::new(),
        held: BTreeMap::new(),
        wanted: None,
        leader,
        was_leading: false,
        objects: Objects::default(),
        loaded_gateways: BTreeMap::new(),
        gateway_problems: Vec::new(),
        collisions: crate::gateway::collisions::Collisions::default(),
        conflicts: BTreeMap::new(),
        address_faults: BTreeMap::new(),
        last_gateways: BTreeMap::new(),
        unstarted: None,
        source,
    };
    let mut pending: Option<(Objects, Instant, Instant)> = None;
    let mut tick = tokio::time::interval(state.settings.poll);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = std::pin::pin!(shutdown);
    let status_interval = state
        .settings
        .status
        .as_ref()
        .map_or(Duration::from_secs(60), |s| s.interval);
    let mut status_tick =
        tokio::time::interval_at(Instant::now() + status_interval, status_interval);
    status_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            _ = status_tick.tick() => state.recheck_status().await,
            status = state.nginx.exited() => state.restart(status).await,
            () = leadership_changed(&mut state.leader) => state.lease_changed().await,
            changed = snapshots.changed() => {
                if changed.is_err() {
                    warn!("the object source stopped; keeping the current configuration");
                    break;
                }
                let snapshot = Arc::clone(&snapshots.borrow_and_update());
                // Revision 0 is the empty view before the source has read everything once.
                if snapshot.revision > 0 {
                    let now = Instant::now();
                    let first = pending.as_ref().map_or(now, |p| p.1);
                    pending = Some((Objects::from_snapshot(&snapshot), first, now));
                }
            }
            _ = tick.tick() => {
                let debounce = state.settings.debounce;
                let settled = pending.as_ref().is_some_and(|(_, first, last)| {
                    last.elapsed() >= debounce || first.elapsed() >= debounce * 5
                });
                if settled && let Some((objects, _, _)) = pending.take() {
                    state.apply(&objects).await;
                    applied.send_replace(Arc::new(objects));
                } else if state.reconciler.running().is_some()
                    && state.reconciler.table_pending(&state.table)
                    && state.nginx.is_running()
                {
                    // A table that could not be sent is retried on every tick.
                    state.send_table().await;
                }
            }
        }
    }
    info!("shutting down: releasing the lease and stopping nginx");
    state.clear_status_on_shutdown().await;
    let _ = stop_election.send(true);
    state.nginx.stop().await;
    server.abort();
    if let Some(webhook) = webhook {
        webhook.abort();
    }
    Ok(())
}

/// The UID of every object problems are reported on (absent from manifests).
fn uids(objects: &Objects) -> BTreeMap<reports::Subject, Option<String>> {
    use cluster_state::Kind;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    let entry = |kind: Kind, meta: &ObjectMeta| {
        let key = ObjectRef::from_meta(meta);
        (reports::Subject { kind, key }, meta.uid.clone())
    };
    let ingresses = objects
        .ingresses
        .values()
        .map(|o| entry(Kind::Ingress, &o.metadata));
    let gateways = objects
        .gateways
        .values()
        .map(|o| entry(Kind::Gateway, &o.metadata));
    let routes = objects.http_routes.values();
    let routes = routes.map(|o| entry(Kind::HttpRoute, &o.metadata));
    let grpc_routes = objects.grpc_routes.values();
    let grpc_routes = grpc_routes.map(|o| entry(Kind::GrpcRoute, &o.metadata));
    ingresses
        .chain(gateways)
        .chain(routes)
        .chain(grpc_routes)
        .collect()
}

/// Binds the first of `addresses` that can be bound.
async fn bind(addresses: &[SocketAddr]) -> Result<tokio::net::TcpListener, ControllerError> {
    let mut last = ControllerError::Listen {
        address: "no address".into(),
        source: std::io::Error::other("no address to listen on"),
    };
    for address in addresses {
        match tokio::net::TcpListener::bind(address).await {
            Ok(listener) => return Ok(listener),
            Err(source) => {
                last = ControllerError::Listen {
                    address: address.to_string(),
                    source,
                };
            }
        }
    }
    Err(last)
}

/// Resolves when the leadership status changes (never without an election).
async fn leadership_changed(
    leader: &mut Option<tokio::sync::watch::Receiver<lease_driver::Status>>,
) {
    let Some(receiver) = leader else {
        return std::future::pending().await;
    };
    if receiver.changed().await.is_err() {
        // The campaign ended (shutdown): nothing more will change.
        *leader = None;
        std::future::pending::<()>().await;
    }
}

impl Loop {
    /// Whether this replica writes status and events: it leads, or there is no election.
    fn leading(&self) -> bool {
        self.leader
            .as_ref()
            .is_none_or(|l| l.borrow().is_leading(Instant::now()))
    }

    /// Acts on a change of the lease's status. A renewal changes it too (a new
    /// `valid_until`), so only the start of a term counts: the new leader writes every
    /// served Ingress's status once (its view of what the source holds may predate the last
    /// leader's writes) and reports the current problems.
    async fn lease_changed(&mut self) {
        let leading = self.leading();
        let started = leading && !self.was_leading;
        self.was_leading = leading;
        if let Some(election) = self
            .settings
            .status
            .as_ref()
            .and_then(|s| s.election.as_ref())
        {
            let name = metrics::controller::lease_name(&election.store);
            self.shared.metrics.controller.leading(&name, leading);
        }
        if started {
            self.held.clear();
            self.publish_status().await;
            self.publish_gateway_status().await;
            self.report_problems().await;
        }
    }

    /// Writes, if this replica leads, the status of each served Ingress whose status in the
    /// source differs from the one to publish. A failed write is retried at the next change
    /// or the next periodic re-check.
    async fn publish_status(&mut self) {
        if self.settings.status.is_none() || !self.leading() {
            return;
        }
        let Some(status) = self.wanted.clone() else {
            return;
        };
        let served = self.served.clone();
        self.write_status(&served, &status).await;
    }

    /// Writes, if this replica leads and status is written at all (`--update-status`), the
    /// Gateway API statuses that differ from what the objects of the last sync hold. A failed
    /// write is retried at the next change or the next periodic re-check.
    async fn publish_gateway_status(&mut self) {
        if self.settings.status.is_none() || !self.leading() {
            return;
        }
        use crate::gateway::plan::Served;
        use crate::gateway_status::{address, published_addresses, set_addresses, set_conflicts};
        let loaded = self.loaded_gateways.keys().cloned().collect();
        let inputs = crate::gateway::GatewayInputs::new(&self.objects, &loaded);
        let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Timestamp::now());
        let mut evaluation =
            crate::gateway::evaluate(inputs, &self.settings.selection.gateway, &now);
        // S-GW.12: where each served Gateway is reached; those on the shared listen address
        // where the Ingresses are.
        let published = self.wanted.as_ref().map(published_addresses);
        set_addresses(&mut evaluation, |key| {
            match self.loaded_gateways.get(key)? {
                Served::Own(ip) => Some(vec![address("IPAddress", &ip.to_string())]),
                Served::Shared => published.clone(),
            }
        });
        set_conflicts(&mut evaluation, &self.conflicts, &self.objects, &now);
        let faults = &self.address_faults;
        crate::gateway_status::set_address_faults(&mut evaluation, faults, &self.objects, &now);
        let last = &self.last_gateways;
        let released = crate::gateway_status::released(last, &evaluation, &self.objects, &now);
        self.last_gateways.clone_from(&evaluation.gateways);
        let changed = crate::gateway_status::changed(evaluation, &self.objects);
        for (key, status) in changed.into_iter().chain(released) {
            let kind = status.kind();
            match self.source.write_status(&key, status).await {
                Ok(()) => {
                    self.shared.metrics.status_writes.inc();
                }
                Err(e) => warn!("cannot write the status of {kind} {key}: {e}"),
            }
        }
    }

    /// Writes `status` to each of `ingresses` that does not hold it already.
    async fn write_status(&mut self, ingresses: &[String], status: &IngressLoadBalancerStatus) {
        for ingress in ingresses {
            let held = self.held.get(ingress).cloned().flatten();
            if crate::status::holds(held.as_ref(), status) {
                continue;
            }
            let (namespace, name) = ingress.split_once('/').unwrap_or(("", ingress));
            let key = cluster_state::ObjectRef::new(namespace, name);
            let write = Status::Ingress(status.clone());
            match self.source.write_status(&key, write).await {
                Ok(()) => {
                    self.shared.metrics.status_writes.inc();
                    self.held.insert(ingress.clone(), Some(status.clone()));
                }
                Err(e) => warn!("cannot write the status of Ingress {ingress}: {e}"),
            }
        }
    }

    /// The periodic re-check (`--status-update-interval`): what the source holds now is
    /// compared again with what is published, and what drifted is written.
    async fn recheck_status(&mut self) {
        if self.settings.status.is_none() || !self.leading() {
            return;
        }
        let snapshot = self.source.current();
        for (key, ingress) in &snapshot.ingresses {
            let held = ingress
                .status
                .as_ref()
                .and_then(|s| s.load_balancer.clone());
            self.held.insert(key.to_string(), held);
        }
        self.publish_status().await;
        // What the source holds now, for the Gateway API statuses too.
        let mut objects = Objects::from_snapshot(&snapshot);
        objects.now = self.objects.now;
        self.objects = objects;
        self.publish_gateway_status().await;
    }

    /// `--update-status-on-shutdown`, as ingress-nginx: the leader clears the status of the
    /// served Ingresses when it publishes at most one address and no other replica of its pod
    /// runs (a rolling update leaves the status to the next leader). Where replicas cannot be
    /// counted (manifests), only a controller without an election clears it.
    async fn clear_status_on_shutdown(&mut self) {
        let Some(settings) = &self.settings.status else {
            return;
        };
        if !settings.clear_on_shutdown || !self.leading() {
            return;
        }
        let addresses = self
            .wanted
            .as_ref()
            .and_then(|s| s.ingress.as_ref())
            .map_or(0, Vec::len);
        if addresses > 1 {
            info!("leaving the Ingress status to the next leader ({addresses} addresses)");
            return;
        }
        let namespace = std::env::var("POD_NAMESPACE").unwrap_or_default();
        let pod = crate::cli::status::identity();
        let alone = match self.source.running_peers(&namespace, &pod).await {
            Ok(Some(peers)) => peers == 0,
            Ok(None) => settings.election.is_none(),
            Err(e) => {
                warn!("{e}; the Ingress status is left as it is");
                false
            }
        };
        if !alone {
            info!("other replicas run: the Ingress status is left to them");
            return;
        }
        info!("removing this controller's addresses from the status of the served Ingresses");
        let empty = IngressLoadBalancerStatus {
            ingress: Some(Vec::new()),
        };
        let served = self.served.clone();
        self.write_status(&served, &empty).await;
    }

    /// Records the problems that appeared since the last report as events on their
    /// Ingresses, if this replica leads (a new leader reports every current problem once).
    async fn report_problems(&mut self) {
        if !self.leading() {
            return;
        }
        let now = Timestamp::now();
        let uids = &self.uids;
        let ingress = self.problems.iter().map(reports::Finding::from);
        let gateway = self.gateway_problems.iter().map(reports::Finding::from);
        let collisions = self.collisions.findings();
        let findings: Vec<reports::Finding> = ingress.chain(gateway).chain(collisions).collect();
        let reports = self
            .reporter
            .update(&findings, |subject| uids.contains_key(subject), now);
        for report in reports {
            let uid = uids.get(&report.subject).cloned().flatten();
            let event = reports::event(&report, uid.as_deref(), &self.settings.instance, now);
            match self.source.record_event(&event).await {
                Ok(()) => {
                    self.shared.metrics.events.inc();
                }
                // Only in manifests: an Ingress no event can name; its problem is logged.
                Err(EventError::InvalidName { .. }) => {}
                Err(e) => {
                    warn!("{e}; retried at the next change");
                    self.reporter.failed(&report);
                }
            }
        }
    }

    /// Configures nginx for `objects`, then writes the statuses they call for.
    async fn apply(&mut self, objects: &Objects) {
        self.objects = objects.clone();
        self.configure(objects).await;
        self.publish_gateway_status().await;
    }

    async fn configure(&mut self, objects: &Objects) {
        let model = model::build(objects, &self.settings.selection);
        self.served.clone_from(&model.ingresses);
        self.wanted = self
            .settings
            .status
            .as_ref()
            .and_then(|s| s.publish.status(&objects.services));
        self.shared.metrics.requests.serve(&model.ingresses);
        self.held = objects
            .ingresses
            .values()
            .map(|i| {
                let held = i.status.as_ref().and_then(|s| s.load_balancer.clone());
                (crate::objects::key(&i.metadata), held)
            })
            .collect();
        self.publish_status().await;
        if model.default_certificate != self.default_certificate {
            if let model::DefaultCertificate::Refused(why) = &model.default_certificate {
                warn!("--default-ssl-certificate: {why}; the generated certificate serves");
            }
            self.default_certificate
                .clone_from(&model.default_certificate);
        }
        if model.global_notes != self.global_notes {
            for line in model.global_notes.lines() {
                warn!("{line}");
            }
            self.global_notes.clone_from(&model.global_notes);
        }
        if model.problems != self.problems {
            for problem in &model.problems {
                warn!("{problem}");
            }
            self.problems.clone_from(&model.problems);
        }
        if model.gateway.problems != self.gateway_problems {
            for problem in &model.gateway.problems {
                warn!("{problem}");
            }
            self.gateway_problems.clone_from(&model.gateway.problems);
        }
        let pool = self.settings.options.gateway_addresses.as_ref();
        self.address_faults = model.gateway.address_faults(pool);
        let collisions = render::gateway_collisions(&model, &self.settings.options);
        self.conflicts =
            crate::gateway::collisions::conflicted_listeners(&model.gateway, &collisions.servers);
        if collisions != self.collisions {
            for line in collisions.lines() {
                warn!("{line}");
            }
            self.collisions = collisions;
        }
        self.uids = uids(objects);
        self.report_problems().await;
        let metrics = &self.shared.metrics;
        metrics
            .problems
            .set(i64::try_from(model.problems.len()).unwrap_or(i64::MAX));
        if let Err(e) = certs::write_all(&self.settings.options, &model.certificates) {
            error!("cannot write certificates, configuration not applied: {e}");
            return;
        }
        let text = match render::render(&model, &self.settings.options) {
            Ok(text) => text,
            Err(e) => {
                error!("configuration not applied: {e}");
                return;
            }
        };
        self.table = backends::table(&model);
        let plan = self.reconciler.plan(&text, &self.table);
        if self.nginx.is_running() {
            if plan.table.is_some() {
                self.send_table().await;
            }
            if let Some(config) = plan.config {
                self.load(&model, config, false).await;
            }
        } else if let Some(config) = plan.config {
            self.load(&model, config, true).await;
        }
    }

    /// Validates `config`, the rendering of `model`, and makes nginx run it (starting nginx
    /// when `start`). `nginx -t` checks `model` rendered for its private prefix.
    async fn load(&mut self, model: &model::Model, config: String, start: bool) {
        let metrics = &self.shared.metrics;
        let private = self
            .settings
            .options
            .with_prefix(self.nginx.validation_prefix());
        let mut installed = false;
        let result = async {
            let candidate = render::render(model, &private).map_err(NginxError::Render)?;
            self.nginx.validate(&candidate).await?;
            self.nginx.install(&config).await?;
            installed = true;
            if start {
                self.nginx
                    .start(&self.settings.options.control_socket())
                    .await
            } else {
                self.nginx.reload().await
            }
        }
        .await;
        let hash = config_hash(&config);
        metrics.controller.loaded(result.is_ok(), hash);
        match result {
            Ok(()) => {
                info!(
                    hash = format_args!("{hash:016x}"),
                    start, "nginx runs the new configuration"
                );
                metrics
                    .controller
                    .certificates(model, &self.settings.selection.controller);
                self.reconciler.loaded(config);
                self.unstarted = None;
                let pool = self.settings.options.gateway_addresses.as_ref();
                self.loaded_gateways = model.gateway.addresses(pool);
                // The files of the configuration nginx ran before are no longer read.
                if let Err(e) = certs::prune(&self.settings.options, &model.certificates) {
                    warn!("cannot remove unused certificate files: {e}");
                }
                if start {
                    self.reconciler.restarted();
                    self.send_table().await;
                }
                self.shared.healthy.store(true, Ordering::Relaxed);
            }
            Err(e) => {
                error!("{e}");
                if start && installed {
                    // nginx did not come up (a port in use, say): not the configuration's fault.
                    self.unstarted = Some(config);
                } else {
                    self.reconciler.refused(config);
                }
            }
        }
    }

    async fn send_table(&mut self) {
        let socket = self.settings.options.control_socket();
        match control::post_backends(&socket, &self.table).await {
            Ok(()) => {
                self.shared.metrics.backend_updates.inc();
                self.reconciler.table_sent(self.table.clone());
            }
            Err(e) => warn!("backends not updated, will retry on the next change: {e}"),
        }
    }

    async fn restart(&mut self, status: std::io::Result<std::process::ExitStatus>) {
        // Here, not in `exited`: a branch of the main loop's `select!` must not await after it
        // has consumed its event, or another branch that wins meanwhile drops the exit.
        self.nginx.reap().await;
        self.shared.healthy.store(false, Ordering::Relaxed);
        self.reconciler.restarted();
        let first = self.reconciler.running().is_none();
        let Some(config) =
            (self.reconciler.running().map(String::from)).or_else(|| self.unstarted.take())
        else {
            return;
        };
        warn!("nginx exited ({status:?}); restarting it on the last good configuration");
        self.shared.metrics.nginx_restarts.inc();
        tokio::time::sleep(Duration::from_millis(200)).await;
        match self
            .nginx
            .start(&self.settings.options.control_socket())
            .await
        {
            Ok(()) => {
                info!("nginx runs again");
                if first {
                    // The configuration whose start had failed is loaded now.
                    self.shared
                        .metrics
                        .controller
                        .loaded(true, config_hash(&config));
                }
                self.reconciler.loaded(config);
                self.shared.healthy.store(true, Ordering::Relaxed);
                self.send_table().await;
            }
            Err(e) => {
                error!("cannot restart nginx, retrying: {e}");
                if first {
                    self.unstarted = Some(config);
                }
            }
        }
    }
}
