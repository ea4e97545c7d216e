//! One IP family's proxy: translated objects in, `iptables-restore` runs out, paced, with the
//! canary check, the jumps installed before full syncs, and a full resync after any failure.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use iptables_model::kube::{EndpointSlice, Proxier, Service, ServiceType, TrafficPolicy};

use crate::health::{ProxyHealth, ServiceHealth};
use crate::iptables::Iptables;
use crate::manifests::Objects;
use crate::metrics::Metrics;
use crate::pacing::{Due, Pacer, Reason};
use crate::translate;

/// The inputs of the generator, translated; invalid objects were logged and skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// The Services.
    pub services: Vec<Service>,
    /// The EndpointSlices.
    pub slices: Vec<EndpointSlice>,
}

impl State {
    /// Translates `objects` for the IPv6 family when `ipv6`, logging what is skipped.
    pub fn translate(objects: &Objects, ipv6: bool) -> Self {
        let mut state = Self::default();
        for object in &objects.services {
            match translate::service(object, ipv6) {
                Ok(service) => state.services.push(service),
                Err(reason) => tracing::warn!(
                    namespace = object.metadata.namespace.as_deref().unwrap_or(""),
                    name = object.metadata.name.as_deref().unwrap_or(""),
                    %reason,
                    "Service skipped"
                ),
            }
        }
        for object in &objects.slices {
            match translate::endpoint_slice(object) {
                Ok(slice) => state.slices.push(slice),
                Err(reason) => tracing::warn!(
                    namespace = object.metadata.namespace.as_deref().unwrap_or(""),
                    name = object.metadata.name.as_deref().unwrap_or(""),
                    %reason,
                    "EndpointSlice skipped"
                ),
            }
        }
        state
    }

    /// The health-check node ports: LoadBalancer Services with `externalTrafficPolicy: Local`
    /// and a `healthCheckNodePort`, with their ready endpoints on node `hostname`.
    pub fn health_checks(&self, hostname: &str) -> BTreeMap<u16, ServiceHealth> {
        let mut slices: BTreeMap<(&str, &str), Vec<EndpointSlice>> = BTreeMap::new();
        for slice in &self.slices {
            slices
                .entry((&slice.namespace, &slice.service))
                .or_default()
                .push(slice.clone());
        }
        self.services
            .iter()
            .filter(|s| {
                s.service_type == ServiceType::LoadBalancer
                    && s.external_traffic_policy == TrafficPolicy::Local
                    && s.health_check_node_port != 0
            })
            .map(|s| {
                let local = slices
                    .get(&(s.namespace.as_str(), s.name.as_str()))
                    .map_or(0, |sl| translate::local_endpoints(sl, hostname));
                let health = ServiceHealth {
                    namespace: s.namespace.clone(),
                    name: s.name.clone(),
                    local_endpoints: local,
                };
                (s.health_check_node_port, health)
            })
            .collect()
    }
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
        let family = if proxier.options().ipv6 {
            "IPv6"
        } else {
            "IPv4"
        };
        Self {
            proxier,
            iptables,
            pacer,
            metrics,
            health,
            family,
        }
    }

    /// Takes a new view of the objects.
    pub fn update(&mut self, state: &State, now: Instant) {
        self.proxier.replace_all(&state.services, &state.slices);
        if self.proxier.pending_changes() > 0 {
            self.health.queued(now);
            self.metrics
                .queued(SystemTime::now(), self.proxier.pending_changes());
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
        if reason == Reason::Periodic && !self.iptables.canary_present().await {
            tracing::warn!(family = self.family, "canary chain gone: full resync");
            self.proxier.force_full_sync();
        }
        let full = self.proxier.full_sync_pending();
        self.pacer.started(now, full);
        if !self.proxier.needs_sync() {
            return;
        }
        let started = Instant::now();
        let mut result = Ok(());
        if full {
            result = self.iptables.ensure_jumps().await;
        }
        let generated = self.proxier.sync_changes().clone();
        if result.is_ok() {
            result = self.iptables.restore(&generated.text).await;
        }
        let took = started.elapsed();
        let ok = result.is_ok();
        self.metrics
            .synced(took, generated.full, ok, &generated.text, SystemTime::now());
        match result {
            Ok(()) => {
                self.proxier.restored();
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
            }
            Err(error) => {
                // The kernel keeps its previous rules; the next sync rewrites everything.
                self.proxier.restore_failed();
                tracing::error!(family = self.family, %error, "restore failed: the previous rules stay; full resync next");
            }
        }
        self.metrics.pending(self.proxier.pending_changes());
    }

    /// The restore input of a full sync of `state` (for `--dry-run`).
    pub fn dry_run(&mut self, state: &State) -> String {
        self.proxier
            .sync(&state.services, &state.slices)
            .text
            .clone()
    }

    /// Removes every rule and chain this proxy installs.
    pub async fn cleanup(&self) -> Result<(), crate::iptables::ExecError> {
        self.iptables.cleanup().await
    }
}
