//! One service port resolved for a proxier, for other rule writers than this crate's own
//! (the nftables mode): its addresses of the proxier's family, its traffic policies and its
//! endpoint lists, decided exactly as the iptables rules decide them (`pkg/proxy`'s
//! `BaseServicePortInfo` and `CategorizeEndpoints`).

use alloc::vec::Vec;
use core::net::IpAddr;

use super::endpoints::{Ep, categorize, collect, uses_endpoints};
use super::input::{EndpointSlice, ProxyOptions, Service, ServicePort, ServiceType, TrafficPolicy};
use super::port::family_ip;
use super::topology::Place;
use crate::addr::Cidr;

/// One endpoint of a service port: where its traffic is DNATed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EndpointAddr {
    /// The endpoint's address (of the proxier's family).
    pub ip: IpAddr,
    /// Its target port.
    pub port: u16,
}

/// A service port with everything a proxier's rules depend on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPort<'a> {
    /// The Service.
    pub service: &'a Service,
    /// The port.
    pub port: &'a ServicePort,
    /// The ClusterIP of the proxier's family.
    pub cluster_ip: IpAddr,
    /// The node port (0 when none, or when the Service type has none).
    pub node_port: u16,
    /// `spec.externalIPs` of the proxier's family.
    pub external_ips: Vec<IpAddr>,
    /// The load-balancer ingress IPs of the proxier's family (LoadBalancer Services only).
    pub load_balancer_ips: Vec<IpAddr>,
    /// `spec.loadBalancerSourceRanges` of the proxier's family, parsed leniently.
    pub source_ranges: Vec<Cidr>,
    /// `internalTrafficPolicy: Local`.
    pub internal_local: bool,
    /// `externalTrafficPolicy: Local` on an externally reachable Service.
    pub external_local: bool,
    /// Whether the port is reachable from outside (a node port, an external or LB IP).
    pub externally_accessible: bool,
    /// Whether the port uses the cluster-wide endpoint list (kube-proxy's
    /// `UsesClusterEndpoints`).
    pub uses_cluster: bool,
    /// Whether it uses the node-local list (`UsesLocalEndpoints`).
    pub uses_local: bool,
    /// Endpoints for cluster-wide traffic, after topology hints, sorted by `ip:port`.
    pub cluster: Vec<EndpointAddr>,
    /// Endpoints on this node.
    pub local: Vec<EndpointAddr>,
    /// Every endpoint this node can route to under the port's policies.
    pub all: Vec<EndpointAddr>,
    /// Whether any endpoint is usable anywhere (kube-proxy's `hasEndpoints`).
    pub any: bool,
}

fn addrs(eps: &[&Ep]) -> Vec<EndpointAddr> {
    eps.iter()
        .map(|e| EndpointAddr {
            ip: e.ip,
            port: e.port,
        })
        .collect()
}

/// The ports of `service` with the endpoints of `slices` (the Service's own), sorted by port
/// name; empty when the Service has no rules (ExternalName, no ClusterIP of the proxier's
/// family). The Service's text values are not checked here (see [`Service::check_text`]).
pub fn resolve_ports<'a>(
    options: &ProxyOptions,
    service: &'a Service,
    slices: &[&EndpointSlice],
) -> Vec<ResolvedPort<'a>> {
    if service.service_type == ServiceType::ExternalName {
        return Vec::new();
    }
    let Some(cluster_ip) = family_ip(&service.cluster_ip, options) else {
        return Vec::new();
    };
    let mut ports: Vec<&ServicePort> = service.ports.iter().collect();
    ports.sort_by(|a, b| a.name.cmp(&b.name));
    ports
        .into_iter()
        .map(|port| resolve(options, service, cluster_ip, port, slices))
        .collect()
}

/// What a port's rules depend on besides its endpoints.
pub(crate) struct Facts {
    /// A LoadBalancer Service.
    pub(crate) load_balancer: bool,
    pub(crate) node_port: u16,
    pub(crate) external_ips: Vec<IpAddr>,
    pub(crate) load_balancer_ips: Vec<IpAddr>,
    pub(crate) source_ranges: Vec<Cidr>,
    pub(crate) internal_local: bool,
    pub(crate) external_local: bool,
    pub(crate) externally_accessible: bool,
    pub(crate) uses_cluster: bool,
    pub(crate) uses_local: bool,
}

/// The [`Facts`] of `port` of `service` for the proxier of `options`.
pub(crate) fn facts(options: &ProxyOptions, service: &Service, port: &ServicePort) -> Facts {
    let load_balancer = service.service_type == ServiceType::LoadBalancer;
    let has_node_ports = load_balancer || service.service_type == ServiceType::NodePort;
    let node_port = if has_node_ports { port.node_port } else { 0 };
    let external_ips: Vec<IpAddr> = service
        .external_ips
        .iter()
        .filter_map(|ip| family_ip(ip, options))
        .collect();
    let load_balancer_ips: Vec<IpAddr> = if load_balancer {
        service
            .load_balancer_ips
            .iter()
            .filter_map(|ip| family_ip(ip, options))
            .collect()
    } else {
        Vec::new()
    };
    let source_ranges: Vec<Cidr> = service
        .load_balancer_source_ranges
        .iter()
        .filter_map(|r| Cidr::parse_lenient(r))
        .filter(|c| c.addr.is_ipv6() == options.ipv6)
        .collect();
    let external_local = service.external_traffic_policy == TrafficPolicy::Local
        && (has_node_ports || !external_ips.is_empty());
    let internal_local = service.internal_traffic_policy == TrafficPolicy::Local;
    let externally_accessible =
        node_port != 0 || !external_ips.is_empty() || !load_balancer_ips.is_empty();
    let (uses_cluster, uses_local) =
        uses_endpoints(internal_local, external_local, externally_accessible);
    Facts {
        load_balancer,
        node_port,
        external_ips,
        load_balancer_ips,
        source_ranges,
        internal_local,
        external_local,
        externally_accessible,
        uses_cluster,
        uses_local,
    }
}

fn resolve<'a>(
    options: &ProxyOptions,
    service: &'a Service,
    cluster_ip: IpAddr,
    port: &'a ServicePort,
    slices: &[&EndpointSlice],
) -> ResolvedPort<'a> {
    let f = facts(options, service, port);
    let eps = collect(slices, port, options);
    let place = Place {
        node: &options.hostname,
        zone: &options.zone,
    };
    let cat = categorize(&eps, f.uses_cluster, f.uses_local, place);
    ResolvedPort {
        service,
        port,
        cluster_ip,
        node_port: f.node_port,
        external_ips: f.external_ips,
        load_balancer_ips: f.load_balancer_ips,
        source_ranges: f.source_ranges,
        internal_local: f.internal_local,
        external_local: f.external_local,
        externally_accessible: f.externally_accessible,
        uses_cluster: f.uses_cluster,
        uses_local: f.uses_local,
        cluster: addrs(&cat.cluster),
        local: addrs(&cat.local),
        all: addrs(&cat.all),
        any: cat.any,
    }
}
