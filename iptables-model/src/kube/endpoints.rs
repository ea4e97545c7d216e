//! Which endpoints a service port uses (`pkg/proxy/topology.go` `CategorizeEndpoints`,
//! topology hints aside; `docs/iptables.md` §5).

use alloc::string::String;
use alloc::vec::Vec;
use core::net::IpAddr;

use super::input::{EndpointSlice, ProxyOptions, ServicePort};
use super::naming::join_host_port;
use crate::addr::parse_ip_lenient;

/// One endpoint of a service port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ep {
    pub(crate) ip: IpAddr,
    /// `ip:port`, the sort key and the DNAT destination.
    pub(crate) host_port: String,
    pub(crate) local: bool,
    pub(crate) ready: bool,
    pub(crate) serving_terminating: bool,
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
                    host_port: join_host_port(ip, slice_port.port),
                    local: endpoint.node_name.as_deref() == Some(options.hostname.as_str()),
                    ready,
                    serving_terminating: serving && endpoint.terminating.unwrap_or(false),
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

/// The endpoint lists of one service port.
#[derive(Debug, Default)]
pub(crate) struct Categorized<'a> {
    /// Endpoints for cluster-wide traffic.
    pub(crate) cluster: Vec<&'a Ep>,
    /// Endpoints for node-local traffic.
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

pub(crate) fn categorize(eps: &[Ep], uses_cluster: bool, uses_local: bool) -> Categorized<'_> {
    let any = eps.iter().any(|e| e.ready || e.serving_terminating);
    let cluster = if uses_cluster {
        usable(eps.iter()).0
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
    let all = if !uses_cluster {
        local.clone()
    } else if !fell_back || local.is_empty() {
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
