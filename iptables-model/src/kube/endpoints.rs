//! Which endpoints a service port uses (`pkg/proxy/topology.go` `CategorizeEndpoints`;
//! `docs/iptables.md` §5), with the topology hints of [`super::topology`].

use alloc::string::String;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::input::{EndpointSlice, ProxyOptions, ServicePort};
use super::naming::join_host_port;
use super::topology::{Place, Preference};
use crate::addr::parse_ip_lenient;

/// One endpoint of a service port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ep {
    pub(crate) ip: IpAddr,
    /// The target port.
    pub(crate) port: u16,
    /// `ip:port`, the sort key and the DNAT destination.
    pub(crate) host_port: String,
    pub(crate) local: bool,
    pub(crate) ready: bool,
    pub(crate) serving_terminating: bool,
    /// `hints.forZones[].name`.
    pub(crate) zone_hints: Vec<String>,
    /// `hints.forNodes[].name`.
    pub(crate) node_hints: Vec<String>,
}

/// The endpoints of `port` from `slices`, de-duplicated by `ip:port` (a local copy wins) and
/// sorted byte-wise by `ip:port` (`docs/iptables.md` §1.2). Only the first address of an endpoint
/// is used, and only addresses of the proxier's family.
pub(crate) fn collect(
    slices: &[&EndpointSlice],
    port: &ServicePort,
    options: &ProxyOptions,
) -> Vec<Ep> {
    let mut eps: Vec<Ep> = Vec::new();
    for slice in slices {
        for slice_port in slice
            .ports
            .iter()
            .filter(|p| p.name == port.name && p.protocol == port.protocol)
        {
            for endpoint in &slice.endpoints {
                let Some(ip) = endpoint.addresses.first().and_then(|a| parse_ip_lenient(a)) else {
                    continue;
                };
                if ip.is_ipv6() != options.ipv6 {
                    continue;
                }
                let ready = endpoint.ready.unwrap_or(true);
                let serving = endpoint.serving.unwrap_or(ready);
                let ep = Ep {
                    ip,
                    port: slice_port.port,
                    host_port: join_host_port(ip, slice_port.port),
                    local: endpoint.node_name.as_deref() == Some(options.hostname.as_str()),
                    ready,
                    serving_terminating: serving && endpoint.terminating.unwrap_or(false),
                    zone_hints: endpoint.zone_hints.clone(),
                    node_hints: endpoint.node_hints.clone(),
                };
                match eps.iter_mut().find(|e| e.host_port == ep.host_port) {
                    Some(existing) if ep.local => *existing = ep,
                    Some(_) => {}
                    None => eps.push(ep),
                }
            }
        }
    }
    eps.sort_by(|a, b| a.host_port.cmp(&b.host_port));
    eps
}

/// Which endpoint lists a service port uses: `(cluster, local)` (kube-proxy's
/// `UsesClusterEndpoints` and `UsesLocalEndpoints`). `etp_local` is eTP=Local on a Service
/// that can be reached from outside (NodePort, LoadBalancer or external IPs);
/// `externally_accessible` says this port is (a node port, an external IP or an LB IP).
pub(crate) const fn uses_endpoints(
    itp_local: bool,
    etp_local: bool,
    externally_accessible: bool,
) -> (bool, bool) {
    // Even with eTP=Local, an externally reachable port needs the cluster chain for the
    // short-circuit rules of KUBE-EXT.
    let cluster = !itp_local || externally_accessible;
    let local = itp_local || (externally_accessible && etp_local);
    (cluster, local)
}

/// The endpoint lists of one service port.
#[derive(Debug, Default)]
pub(crate) struct Categorized<'a> {
    /// Endpoints for cluster-wide traffic (the ones the topology hints prefer, if any).
    pub(crate) cluster: Vec<&'a Ep>,
    /// Endpoints for node-local traffic (topology hints do not apply).
    pub(crate) local: Vec<&'a Ep>,
    /// Endpoints that get a SEP chain.
    pub(crate) all: Vec<&'a Ep>,
    /// Whether any endpoint is ready or serving-and-terminating, anywhere.
    pub(crate) any: bool,
}

/// Ready endpoints, or failing that the serving-and-terminating ones.
fn usable<'a>(eps: impl Iterator<Item = &'a Ep> + Clone) -> (Vec<&'a Ep>, bool) {
    let ready: Vec<&Ep> = eps.clone().filter(|e| e.ready).collect();
    if ready.is_empty() {
        (eps.filter(|e| e.serving_terminating).collect(), true)
    } else {
        (ready, false)
    }
}

/// The lists of a port whose endpoints are `eps`, on a node at `place`. Cluster endpoints are
/// the ready ones the hints prefer for `place` ([`Preference`]; all ready ones without a
/// preference), else every serving-and-terminating one; local endpoints ignore the hints.
pub(crate) fn categorize<'a>(
    eps: &'a [Ep],
    uses_cluster: bool,
    uses_local: bool,
    place: Place<'_>,
) -> Categorized<'a> {
    let any = eps.iter().any(|e| e.ready || e.serving_terminating);
    // kube-proxy looks at the hints only for ports that use cluster endpoints.
    let preference = if uses_cluster {
        Preference::of(eps, place)
    } else {
        None
    };
    let cluster = if uses_cluster {
        let admitted = |e: &&Ep| preference.is_none_or(|p| p.admits(e, place));
        let preferred: Vec<&Ep> = eps.iter().filter(|e| e.ready).filter(admitted).collect();
        if preferred.is_empty() {
            // Only possible without a preference: no endpoint is ready anywhere.
            eps.iter().filter(|e| e.serving_terminating).collect()
        } else {
            preferred
        }
    } else {
        Vec::new()
    };
    if !uses_local {
        return Categorized {
            all: cluster.clone(),
            cluster,
            local: Vec::new(),
            any,
        };
    }
    let (local, fell_back) = usable(eps.iter().filter(|e| e.local));
    // The cluster list holds every local endpoint of the local list unless the hints left
    // some out or the local list fell back to terminating endpoints: then both are merged.
    let all = if !uses_cluster {
        local.clone()
    } else if local.is_empty() || (preference.is_none() && !fell_back) {
        cluster.clone()
    } else {
        let mut all = cluster.clone();
        all.extend(
            local
                .iter()
                .filter(|l| !cluster.iter().any(|c| c.host_port == l.host_port)),
        );
        all
    };
    Categorized {
        cluster,
        local,
        all,
        any,
    }
}
