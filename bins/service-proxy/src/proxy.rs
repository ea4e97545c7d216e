//! One IP family's proxy: translated objects in, rules out, paced, with a full resync after
//! any failure and the stale UDP conntrack flows deleted once the rules are in place. The rules
//! are [`Rules`]: kube-proxy's iptables mode (`iptables-restore` runs, with the canary check
//! and the jumps installed before full syncs) or its nftables mode ([`NftRules`]: `nft -f -`
//! runs).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use cluster_state::ObjectRef;
use iptables_exec::{ExecError, Iptables};
use iptables_model::kube::{EndpointSlice, Proxier, Service};

use crate::addresses;
use crate::chains;
use crate::conntrack::Reconciler;
use crate::feed::Update;
use crate::health::ProxyHealth;
use crate::metrics::Metrics;
use crate::nftables::NftRules;
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

/// The rules of one family, in the proxy mode chosen.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per family, made once and never moved after
pub enum Rules {
    /// kube-proxy's iptables mode.
    Iptables {
        /// The rules and their changes.
        proxier: Proxier,
        /// The programs that apply them.
        iptables: Iptables,
    },
    /// kube-proxy's nftables mode.
    Nftables(NftRules),
}

/// The outcome of writing a sync: whether it was full, and its size in bytes with the rules
/// it wrote per table (iptables mode), or its failure.
type Outcome = (bool, Result<(usize, Vec<(String, usize)>), String>);

impl Rules {
    fn ipv6(&self) -> bool {
        match self {
            Self::Iptables { proxier, .. } => proxier.options().ipv6,
            Self::Nftables(rules) => rules.ipv6(),
        }
    }

    fn update_service(&mut self, service: Service) {
        match self {
            Self::Iptables { proxier, .. } => proxier.update_service(service),
            Self::Nftables(rules) => rules.update_service(service),
        }
    }

    fn remove_service(&mut self, namespace: &str, name: &str) {
        match self {
            Self::Iptables { proxier, .. } => proxier.remove_service(namespace, name),
            Self::Nftables(rules) => rules.remove_service(namespace, name),
        }
    }

    fn update_endpoint_slices(&mut self, namespace: &str, name: &str, slices: Vec<EndpointSlice>) {
        match self {
            Self::Iptables { proxier, .. } => {
                proxier.update_endpoint_slices(namespace, name, slices);
            }
            Self::Nftables(rules) => rules.update_endpoint_slices(namespace, name, slices),
        }
    }

    fn pending_changes(&self) -> usize {
        match self {
            Self::Iptables { proxier, .. } => proxier.pending_changes(),
            Self::Nftables(rules) => rules.pending_changes(),
        }
    }

    fn needs_sync(&self) -> bool {
        match self {
            Self::Iptables { proxier, .. } => proxier.needs_sync(),
            Self::Nftables(rules) => rules.needs_sync(),
        }
    }

    fn full_sync_pending(&self) -> bool {
        match self {
            Self::Iptables { proxier, .. } => proxier.full_sync_pending(),
            Self::Nftables(rules) => rules.full_sync_pending(),
        }
    }

    fn force_full_sync(&mut self) {
        match self {
            Self::Iptables { proxier, .. } => proxier.force_full_sync(),
            Self::Nftables(rules) => rules.force_full_sync(),
        }
    }

    fn set_zone(&mut self, zone: &str) -> bool {
        match self {
            Self::Iptables { proxier, .. } => proxier.set_zone(zone),
            Self::Nftables(rules) => rules.set_zone(zone),
        }
    }

    fn uses_interface_addresses(&self) -> bool {
        match self {
            Self::Iptables { proxier, .. } => proxier.options().node_port_addresses.is_some(),
            Self::Nftables(rules) => rules.uses_interface_addresses(),
        }
    }

    fn set_interface_addresses(&mut self, found: Vec<std::net::IpAddr>) -> bool {
        match self {
            Self::Iptables { proxier, .. } => proxier.set_interface_addresses(found),
            Self::Nftables(rules) => rules.set_interface_addresses(found),
        }
    }

    /// Whether the rules were not flushed by someone else: the mangle canary chain of the
    /// iptables mode. The nftables mode has no canary (kube-proxy's has none either).
    async fn intact(&self) -> bool {
        match self {
            Self::Iptables { iptables, .. } => chains::canary_present(iptables).await,
            Self::Nftables(_) => true,
        }
    }

    /// Writes the changes; the iptables mode counts the rules written in `tally`.
    async fn write(&mut self, family: &'static str, tally: &mut RuleTally) -> Outcome {
        match self {
            Self::Iptables { proxier, iptables } => {
                let mut result = Ok(());
                if proxier.full_sync_pending() {
                    result = chains::ensure_jumps(iptables).await;
                }
                let generated = proxier.sync_changes().clone();
                for rejected in &generated.rejected {
                    tracing::warn!(family, %rejected, "Service skipped");
                }
                if result.is_ok() {
                    result = iptables.restore(&generated.text).await;
                }
                match result {
                    Ok(()) => {
                        proxier.restored();
                        let written = tally.apply(&generated.text, generated.full);
                        (generated.full, Ok((generated.text.len(), written)))
                    }
                    Err(error) => {
                        proxier.restore_failed();
                        (generated.full, Err(error.to_string()))
                    }
                }
            }
            Self::Nftables(rules) => match rules.sync(family).await {
                Ok(written) => (written.full, Ok((written.bytes, Vec::new()))),
                Err(failed) => (failed.full, Err(failed.error.to_string())),
            },
        }
    }
}

/// The proxy of one family.
#[derive(Debug)]
pub struct FamilyProxy {
    rules: Rules,
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
        rules: Rules,
        pacer: Pacer,
        metrics: Arc<Metrics>,
        health: Arc<ProxyHealth>,
    ) -> Self {
        let ipv6 = rules.ipv6();
        let family = if ipv6 { "IPv6" } else { "IPv4" };
        Self {
            rules,
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
        let ipv6 = self.rules.ipv6();
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
                        Some(service) => self.rules.update_service(service),
                        None => self.rules.remove_service(&key.namespace, &key.name),
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
                    self.rules
                        .update_endpoint_slices(&key.namespace, &key.name, slices);
                }
            }
        }
        let queued = self.rules.pending_changes() > 0;
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
        if self.rules.set_zone(zone) {
            tracing::info!(family = self.family, zone, "node zone changed: full resync");
        }
    }

    /// Re-reads the node's interface addresses when `--nodeport-addresses` is matched
    /// against them (a change makes the next sync full).
    pub async fn refresh_interface_addresses(&mut self) {
        if !self.rules.uses_interface_addresses() {
            return;
        }
        match addresses::interface_addresses().await {
            Ok(found) => {
                if self.rules.set_interface_addresses(found) {
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
        self.pacer.due(now, self.rules.needs_sync())
    }

    /// Runs the sync that is due for `reason`.
    pub async fn sync(&mut self, reason: Reason, now: Instant) {
        if reason == Reason::Full {
            self.rules.force_full_sync();
        }
        if reason == Reason::Periodic && !self.rules.intact().await {
            tracing::warn!(family = self.family, "canary chain gone: full resync");
            self.rules.force_full_sync();
        }
        self.refresh_interface_addresses().await;
        let received = std::mem::take(&mut self.received);
        self.metrics.pending(None, 0, 0);
        let full = self.rules.full_sync_pending();
        self.pacer.started(now, full);
        if !self.rules.needs_sync() {
            // The kernel holds the current rules: a reconcile that failed is retried.
            self.conntrack.reconcile(&self.metrics).await;
            return;
        }
        let started = Instant::now();
        let (full, result) = self.rules.write(self.family, &mut self.tally).await;
        let took = started.elapsed();
        match result {
            Ok((bytes, written)) => {
                let now = SystemTime::now();
                let rules = Some((written.as_slice(), &self.tally));
                self.metrics.synced(self.family, took, full, rules, now);
                self.metrics.programmed(&received.triggers, now);
                tracing::info!(
                    family = self.family,
                    full,
                    bytes,
                    took_ms = took.as_secs_f64() * 1000.0,
                    "rules synced"
                );
                if !self.rules.needs_sync() {
                    self.health.updated(SystemTime::now());
                }
                // The rules that send new flows to the current endpoints (or REJECT them) are
                // in place: the flows still on a gone endpoint can go.
                self.conntrack.reconcile(&self.metrics).await;
            }
            Err(error) => {
                // The kernel keeps its previous rules; the next sync rewrites everything.
                self.metrics
                    .synced(self.family, took, full, None, SystemTime::now());
                let what = match self.rules {
                    Rules::Iptables { .. } => "restore",
                    Rules::Nftables(_) => "nft -f",
                };
                tracing::error!(family = self.family, %error, "{what} failed: the previous rules stay; full resync next");
            }
        }
    }

    /// The input of the next sync (`iptables-restore`'s or `nft -f`'s), planned and dropped
    /// (for `--dry-run`: the first sync is full).
    pub fn dry_run(&mut self) -> String {
        match &mut self.rules {
            Rules::Iptables { proxier, .. } => {
                let text = proxier.sync_changes().text.clone();
                proxier.restore_failed();
                text
            }
            Rules::Nftables(rules) => rules.dry_run(),
        }
    }

    /// Lists what an earlier run left in the kernel, for the first sync to clean up what is
    /// no longer used (nftables mode; the iptables mode's restore finds it itself).
    ///
    /// # Errors
    ///
    /// `nft` could not list the table.
    pub async fn note_existing(&mut self) -> Result<(), ExecError> {
        match &mut self.rules {
            Rules::Iptables { .. } => Ok(()),
            Rules::Nftables(rules) => rules.note_existing().await,
        }
    }
}
