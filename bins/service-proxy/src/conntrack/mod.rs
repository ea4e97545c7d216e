//! Stale UDP conntrack flows, deleted after the rules that stop new ones are in place.
//!
//! A UDP flow keeps the endpoint its first packet was DNATed to for as long as packets keep
//! coming (the kernel's conntrack entry outlives the rule that made it). When an endpoint of a
//! UDP Service goes away, kube-proxy deletes the flows still DNATed to it, so that the next
//! packet is a new flow that the new rules send to a remaining endpoint, or REJECT when none is
//! left. Its iptables proxier does so after a successful `iptables-restore`
//! (`pkg/proxy/iptables/proxier.go`, `conntrack.CleanStaleEntries` at the end of
//! `syncProxyRules`, when `endpointUpdateResult.ConntrackCleanupRequired`): [`Reconciler`] does
//! the same. [`plan`] decides which flows are stale, [`tool`] lists and deletes them.
//!
//! kube-proxy reconciles when a Service that had UDP endpoints before the change had its
//! endpoints changed; here, also when a UDP Service changed or gained its first endpoints, and
//! at the first sync (flows left over from before a restart): a listing more, and only flows
//! that kube-proxy's own reconcile would also find stale. When `conntrack` is missing or fails,
//! the rules stay as written, the failure is logged and counted, and the next sync tries again.

pub mod plan;
pub mod tool;

use std::collections::BTreeMap;
use std::time::Instant;

use iptables_model::kube::{EndpointSlice, Protocol, Service};

use crate::metrics::Metrics;
use plan::Frontends;
use tool::{Conntrack, ToolError};

/// A Service's `(namespace, name)`.
type ServiceKey = (String, String);

/// The UDP Services of one family and their EndpointSlices, and whether the flows must be
/// reconciled after the next successful restore.
#[derive(Debug)]
pub struct Reconciler {
    tool: Conntrack,
    ipv6: bool,
    family: &'static str,
    /// Services with a UDP port.
    services: BTreeMap<ServiceKey, Service>,
    /// EndpointSlices with a UDP port, per Service.
    slices: BTreeMap<ServiceKey, Vec<EndpointSlice>>,
    /// A change calls for a reconcile, or the last one failed.
    pending: bool,
    /// The last reconcile failed (its failure was logged as a warning).
    failing: bool,
}

impl Reconciler {
    /// A reconciler for the family `ipv6` (`family` names it in logs and metrics).
    pub const fn new(ipv6: bool, family: &'static str) -> Self {
        Self {
            tool: Conntrack::new(ipv6),
            ipv6,
            family,
            services: BTreeMap::new(),
            slices: BTreeMap::new(),
            pending: false,
            failing: false,
        }
    }

    /// The Service `key` is now `service` (`None`: gone or skipped as invalid).
    pub fn service_changed(&mut self, key: ServiceKey, service: Option<&Service>) {
        let udp = service.filter(|s| s.ports.iter().any(|p| p.protocol == Protocol::Udp));
        let had = self.services.remove(&key).is_some();
        if let Some(service) = udp {
            self.services.insert(key, service.clone());
        }
        self.pending |= had || udp.is_some();
    }

    /// The EndpointSlices of the Service `key` are now `slices`.
    pub fn slices_changed(&mut self, key: ServiceKey, slices: &[EndpointSlice]) {
        let udp: Vec<EndpointSlice> = slices
            .iter()
            .filter(|s| s.ports.iter().any(|p| p.protocol == Protocol::Udp))
            .cloned()
            .collect();
        let had = self.slices.remove(&key).is_some();
        let has = !udp.is_empty();
        if has {
            self.slices.insert(key, udp);
        }
        self.pending |= had || has;
    }

    /// Whether the flows must be reconciled.
    pub const fn pending(&self) -> bool {
        self.pending
    }

    /// The frontends of the UDP Services as they are now.
    fn frontends(&self) -> Frontends {
        let services = self.services.iter().map(|(key, service)| {
            let slices = self.slices.get(key).map_or(&[][..], Vec::as_slice);
            (service, slices)
        });
        Frontends::new(services, self.ipv6)
    }

    /// Deletes the stale flows, when a change calls for it; to be called once the rules of
    /// the current Services are in the kernel. A failure is logged (a warning the first time
    /// in a row), counted, and leaves the reconcile pending.
    pub async fn reconcile(&mut self, metrics: &Metrics) {
        if !self.pending {
            return;
        }
        let started = Instant::now();
        let (deleted, result) = self.run().await;
        let took = started.elapsed();
        metrics.conntrack_reconciled(self.family, took, deleted, result.is_err());
        match result {
            Ok(()) => {
                self.pending = false;
                self.failing = false;
                tracing::debug!(
                    family = self.family,
                    deleted,
                    took_ms = took.as_secs_f64() * 1000.0,
                    "UDP conntrack flows reconciled"
                );
            }
            Err(error) if !self.failing => {
                self.failing = true;
                tracing::warn!(family = self.family, %error, deleted, "stale UDP conntrack flows not deleted: clients of a removed endpoint keep sending to it until their flow times out; the next sync tries again");
            }
            Err(error) => {
                tracing::debug!(family = self.family, %error, deleted, "stale UDP conntrack flows still not deleted");
            }
        }
    }

    /// Lists the flows and deletes the stale ones: how many were deleted, and the first error.
    async fn run(&self) -> (u64, Result<(), ToolError>) {
        let frontends = self.frontends();
        if frontends.is_empty() {
            return (0, Ok(()));
        }
        let flows = match self.tool.list().await {
            Ok(flows) => flows,
            Err(error) => return (0, Err(error)),
        };
        let mut deleted = 0;
        for filter in frontends.stale(&flows) {
            match self.tool.delete(&filter).await {
                Ok(n) => deleted += n,
                Err(error) => return (deleted, Err(error)),
            }
        }
        (deleted, Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iptables_model::kube::{EndpointPort, ServicePort};

    fn key(name: &str) -> ServiceKey {
        ("ns".into(), name.into())
    }

    fn service(protocol: Protocol) -> Service {
        Service {
            namespace: "ns".into(),
            name: "dns".into(),
            cluster_ip: "172.30.0.10".into(),
            ports: vec![ServicePort {
                name: "dns".into(),
                port: 53,
                protocol,
                node_port: 0,
            }],
            ..Service::default()
        }
    }

    fn slice(protocol: Protocol) -> EndpointSlice {
        EndpointSlice {
            namespace: "ns".into(),
            service: "dns".into(),
            ports: vec![EndpointPort {
                name: "dns".into(),
                port: 5353,
                protocol,
            }],
            endpoints: Vec::new(),
        }
    }

    #[test]
    fn changes_to_udp_services_call_for_a_reconcile() {
        let mut reconciler = Reconciler::new(false, "IPv4");
        // TCP only: nothing to do.
        reconciler.service_changed(key("web"), Some(&service(Protocol::Tcp)));
        reconciler.slices_changed(key("web"), &[slice(Protocol::Tcp)]);
        assert!(!reconciler.pending());
        // A UDP Service appears (the first sync), then its endpoints.
        reconciler.service_changed(key("dns"), Some(&service(Protocol::Udp)));
        assert!(reconciler.pending());
        reconciler.pending = false;
        reconciler.slices_changed(key("dns"), &[slice(Protocol::Udp)]);
        assert!(reconciler.pending());
        assert!(!reconciler.frontends().is_empty());
        // The endpoints go away (no slice left): the flows to them are stale.
        reconciler.pending = false;
        reconciler.slices_changed(key("dns"), &[]);
        assert!(reconciler.pending());
        // The Service goes: nothing is left to reconcile against.
        reconciler.pending = false;
        reconciler.service_changed(key("dns"), None);
        assert!(reconciler.pending());
        assert!(reconciler.frontends().is_empty());
        // A Service that turns from UDP to TCP: its UDP flows changed too.
        reconciler.service_changed(key("dns"), Some(&service(Protocol::Udp)));
        reconciler.pending = false;
        reconciler.service_changed(key("dns"), Some(&service(Protocol::Tcp)));
        assert!(reconciler.pending());
    }

    #[tokio::test]
    async fn nothing_runs_without_a_udp_frontend() {
        let metrics = Metrics::new();
        let mut reconciler = Reconciler::new(false, "IPv4");
        reconciler.pending = true;
        reconciler.reconcile(&metrics).await;
        assert!(!reconciler.pending());
        let text = metrics.encode();
        assert!(
            text.contains(
                "kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family=\"IPv4\"} 0"
            ),
            "{text}"
        );
    }
}
