//! One IP family's proxy: translated objects in, `iptables-restore` runs out, paced, with the
//! canary check, the jumps installed before full syncs, a full resync after any failure, and
//! the stale UDP conntrack flows deleted once the rules are in place.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use cluster_state::ObjectRef;
use iptables_exec::{ExecError, Iptables};
use iptables_model::kube::Proxier;

use crate::addresses;
use crate::chains;
use crate::conntrack::Reconciler;
use crate::feed::Update;
use crate::health::ProxyHealth;
use crate::metrics::Metrics;
use crate::pacing::{Due, Pacer, Reason};
use crate::tally::RuleTally;
use crate::translate;

/// The changes received since the last sync started (kube-proxy's change trackers).
#[derive(Debug, Default)]
struct Received {
    /// Services with a Service change.
    services: BTreeSet<ObjectRef>,
    /// Services with an EndpointSlice change.
    endpoints: BTreeSet<ObjectRef>,
    /// When the EndpointSlice changes were triggered (network-programming latency).
    triggers: Vec<SystemTime>,
}

/// The proxy of one family.
#[derive(Debug)]
pub struct FamilyProxy {
    proxier: Proxier,
    iptables: Iptables,
    pacer: Pacer,
    metrics: Arc<Metrics>,
    health: Arc<ProxyHealth>,
    family: &'static str,
    received: Received,
    tally: RuleTally,
    conntrack: Reconciler,
}

impl FamilyProxy {
    /// A proxy that has not synced yet.
    pub fn new(
        proxier: Proxier,
        iptables: Iptables,
        pacer: Pacer,
        metrics: Arc<Metrics>,
        health: Arc<ProxyHealth>,
    ) -> Self {
        let ipv6 = proxier.options().ipv6;
        let family = if ipv6 { "IPv6" } else { "IPv4" };
        Self {
            proxier,
            iptables,
            pacer,
            metrics,
            health,
            family,
            received: Received::default(),
            tally: RuleTally::default(),
            conntrack: Reconciler::new(ipv6, family),
        }
    }

    /// Applies changed objects, whose EndpointSlice changes were triggered at `triggers`;
    /// invalid objects are logged and treated as absent.
    pub fn apply(&mut self, updates: &[Update], triggers: &[SystemTime], now: Instant) {
        let ipv6 = self.proxier.options().ipv6;
        self.received.triggers.extend_from_slice(triggers);
        for update in updates {
            match update {
                Update::Service(key, object) => {
                    self.received.services.insert(key.clone());
                    let service = match object.as_deref().map(|o| translate::service(o, ipv6)) {
                        Some(Ok(service)) => Some(service),
                        Some(Err(reason)) => {
                            tracing::warn!(service = %key, %reason, "Service skipped");
                            None
                        }
                        None => None,
                    };
                    let name = (key.namespace.clone(), key.name.clone());
                    self.conntrack.service_changed(name, service.as_ref());
                    match service {
                        Some(service) => self.proxier.update_service(service),
                        None => self.proxier.remove_service(&key.namespace, &key.name),
                    }
                }
                Update::Slices(key, objects) => {
                    self.received.endpoints.insert(key.clone());
                    let slices = objects
                        .iter()
                        .filter_map(|o| {
                            translate::endpoint_slice(o)
                                .inspect_err(|reason| {
                                    let name = o.metadata.name.as_deref().unwrap_or("");
                                    tracing::warn!(slice = name, %reason, "EndpointSlice skipped");
                                })
                                .ok()
                        })
                        .collect::<Vec<_>>();
                    let name = (key.namespace.clone(), key.name.clone());
                    self.conntrack.slices_changed(name, &slices);
                    self.proxier
                        .update_endpoint_slices(&key.namespace, &key.name, slices);
                }
            }
        }
        let queued = self.proxier.pending_changes() > 0;
        if queued {
            self.health.queued(now);
        }
        self.metrics.pending(
            queued.then(SystemTime::now),
            self.received.services.len(),
            self.received.endpoints.len(),
        );
    }

    /// Sets the node's zone, which EndpointSlice zone hints are matched against (a change
    /// makes the next sync full, as kube-proxy's on a change of the node's topology labels).
    pub fn set_zone(&mut self, zone: &str) {
        if self.proxier.set_zone(zone) {
            tracing::info!(family = self.family, zone, "node zone changed: full resync");
        }
    }

    /// Re-reads the node's interface addresses when `--nodeport-addresses` is matched
    /// against them (a change makes the next sync full).
    pub async fn refresh_interface_addresses(&mut self) {
        if self.proxier.options().node_port_addresses.is_none() {
            return;
        }
        match addresses::interface_addresses().await {
            Ok(found) => {
                if self.proxier.set_interface_addresses(found) {
                    tracing::info!(family = self.family, "node addresses changed: full resync");
                }
            }
            Err(error) => {
                tracing::warn!(family = self.family, %error, "cannot list the node's addresses; NodePorts keep the previous ones");
            }
        }
    }

    /// What is due at `now`.
    pub fn due(&self, now: Instant) -> Due {
        self.pacer.due(now, self.proxier.needs_sync())
    }

    /// Runs the sync that is due for `reason`.
    pub async fn sync(&mut self, reason: Reason, now: Instant) {
        if reason == Reason::Full {
            self.proxier.force_full_sync();
        }
        if reason == Reason::Periodic && !chains::canary_present(&self.iptables).await {
            tracing::warn!(family = self.family, "canary chain gone: full resync");
            self.proxier.force_full_sync();
        }
        self.refresh_interface_addresses().await;
        let received = std::mem::take(&mut self.received);
        self.metrics.pending(None, 0, 0);
        let full = self.proxier.full_sync_pending();
        self.pacer.started(now, full);
        if !self.proxier.needs_sync() {
            // The kernel holds the current rules: a reconcile that failed is retried.
            self.conntrack.reconcile(&self.metrics).await;
            return;
        }
        let started = Instant::now();
        let mut result = Ok(());
        if full {
            result = chains::ensure_jumps(&self.iptables).await;
        }
        let generated = self.proxier.sync_changes().clone();
        for rejected in &generated.rejected {
            tracing::warn!(family = self.family, %rejected, "Service skipped");
        }
        if result.is_ok() {
            result = self.iptables.restore(&generated.text).await;
        }
        let took = started.elapsed();
        match result {
            Ok(()) => {
                self.proxier.restored();
                let written = self.tally.apply(&generated.text, generated.full);
                let now = SystemTime::now();
                let rules = Some((written.as_slice(), &self.tally));
                self.metrics
                    .synced(self.family, took, generated.full, rules, now);
                self.metrics.programmed(&received.triggers, now);
                tracing::info!(
                    family = self.family,
                    full = generated.full,
                    bytes = generated.text.len(),
                    took_ms = took.as_secs_f64() * 1000.0,
                    "rules synced"
                );
                if !self.proxier.needs_sync() {
                    self.health.updated(SystemTime::now());
                }
                // The rules that send new flows to the current endpoints (or REJECT them) are
                // in place: the flows still on a gone endpoint can go.
                self.conntrack.reconcile(&self.metrics).await;
            }
            Err(error) => {
                // The kernel keeps its previous rules; the next sync rewrites everything.
                self.proxier.restore_failed();
                self.metrics
                    .synced(self.family, took, generated.full, None, SystemTime::now());
                tracing::error!(family = self.family, %error, "restore failed: the previous rules stay; full resync next");
            }
        }
    }

    /// The restore input of the next sync, planned and dropped (for `--dry-run`: the first
    /// sync is full).
    pub fn dry_run(&mut self) -> String {
        let text = self.proxier.sync_changes().text.clone();
        self.proxier.restore_failed();
        text
    }

    /// Removes every rule and chain this proxy installs.
    pub async fn cleanup(&self) -> Result<(), ExecError> {
        chains::cleanup(&self.iptables).await
    }
}
