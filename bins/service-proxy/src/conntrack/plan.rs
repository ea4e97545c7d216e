//! Which conntrack flows of UDP Services are stale, from the Services and EndpointSlices the
//! kernel's rules were just written from and a listing of the flows. Pure.
//!
//! kube-proxy's reconciler (`pkg/proxy/conntrack/cleanup.go`, `CleanStaleEntries`): every
//! frontend of a UDP service port (its ClusterIP, external IPs and load-balancer IPs with the
//! port, and its NodePort on any address) maps to the `ip:port` of the endpoints that are
//! serving; a UDP flow sent to a frontend whose reply does not come from one of those
//! endpoints is stale: it was DNATed to an endpoint that is gone, has changed its port or no
//! longer serves, or it was never DNATed (the Service had no endpoint when it started). Traffic
//! policies, topology and termination are not looked at, so that an existing UDP flow lives as
//! long as a TCP connection would.
//!
//! A service port with no serving endpoint maps to the empty set, so every flow to it is stale
//! and its next packet meets the REJECT rule. kube-proxy skipped such ports from 1.33 until
//! kubernetes/kubernetes#139629 (issue #139628), which restored the clean-up: the REJECT rule
//! only sees new flows, and a client that keeps sending kept its flow to the dead endpoint.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};

use iptables_model::addr::parse_ip_lenient;
use iptables_model::kube::{EndpointSlice, Protocol, Service, ServicePort, ServiceType};

/// One conntrack flow, reduced to what the reconciler reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    /// The L4 protocol.
    pub protocol: Protocol,
    /// The destination the client sent to (`--orig-dst`).
    pub orig_dst: IpAddr,
    /// Its port (`--orig-port-dst`).
    pub orig_port_dst: u16,
    /// Where the replies come from (`--reply-src`): the endpoint the flow was DNATed to, or
    /// `orig_dst` itself when it was not.
    pub reply_src: IpAddr,
    /// Their port (`--reply-port-src`).
    pub reply_port_src: u16,
}

/// A set of UDP flows to delete: one `conntrack -D`, as kube-proxy's `filterForIPPortNAT` and
/// `filterForPortNAT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Filter {
    /// Flows sent to the Service address `frontend` whose replies come from `reply`.
    ServiceIp {
        /// `--orig-dst` and `--orig-port-dst`.
        frontend: SocketAddr,
        /// `--reply-src` and `--reply-port-src`.
        reply: SocketAddr,
    },
    /// Flows sent to the NodePort `node_port` of any address whose replies come from `reply`.
    NodePort {
        /// `--orig-port-dst`.
        node_port: u16,
        /// `--reply-src` and `--reply-port-src`.
        reply: SocketAddr,
    },
}

/// The UDP frontends of one IP family's Services, each with its serving endpoints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frontends {
    addresses: BTreeMap<SocketAddr, BTreeSet<SocketAddr>>,
    node_ports: BTreeMap<u16, BTreeSet<SocketAddr>>,
}

/// The `ip:port` of the serving endpoints of `port` in `slices`, of the family (`ipv6`): the
/// slice ports with the Service port's name and protocol, the first address of each endpoint,
/// serving as the generator reads it (`serving`, else `ready`, else true).
fn serving_endpoints(
    slices: &[EndpointSlice],
    port: &ServicePort,
    ipv6: bool,
) -> BTreeSet<SocketAddr> {
    let mut serving = BTreeSet::new();
    for slice in slices {
        let ports = slice
            .ports
            .iter()
            .filter(|p| p.name == port.name && p.protocol == port.protocol);
        for slice_port in ports {
            for endpoint in &slice.endpoints {
                let Some(ip) = endpoint.addresses.first().and_then(|a| parse_ip_lenient(a)) else {
                    continue;
                };
                let is_serving = endpoint.serving.unwrap_or(endpoint.ready.unwrap_or(true));
                if ip.is_ipv6() == ipv6 && is_serving {
                    serving.insert(SocketAddr::new(ip, slice_port.port));
                }
            }
        }
    }
    serving
}

impl Frontends {
    /// The frontends of `services` (each with its EndpointSlices) in the family `ipv6`. A
    /// Service without a ClusterIP of the family (headless, ExternalName, or of the other
    /// family) has none, as it has no rules in this family.
    pub fn new<'a>(
        services: impl IntoIterator<Item = (&'a Service, &'a [EndpointSlice])>,
        ipv6: bool,
    ) -> Self {
        let mut frontends = Self::default();
        let of_family = |text: &String| parse_ip_lenient(text).filter(|ip| ip.is_ipv6() == ipv6);
        for (service, slices) in services {
            if service.service_type == ServiceType::ExternalName {
                continue;
            }
            let Some(cluster_ip) = of_family(&service.cluster_ip) else {
                continue;
            };
            let others = service
                .external_ips
                .iter()
                .chain(&service.load_balancer_ips);
            let addresses: Vec<IpAddr> = std::iter::once(cluster_ip)
                .chain(others.filter_map(of_family))
                .collect();
            for port in service.ports.iter().filter(|p| p.protocol == Protocol::Udp) {
                let endpoints = serving_endpoints(slices, port, ipv6);
                for &ip in &addresses {
                    let frontend = SocketAddr::new(ip, port.port);
                    frontends.addresses.insert(frontend, endpoints.clone());
                }
                if port.node_port != 0 {
                    frontends.node_ports.insert(port.node_port, endpoints);
                }
            }
        }
        frontends
    }

    /// Whether there is no UDP frontend at all (nothing to reconcile).
    pub fn is_empty(&self) -> bool {
        self.addresses.is_empty() && self.node_ports.is_empty()
    }

    /// The filters that delete the stale UDP flows of `flows`, each once.
    pub fn stale(&self, flows: &[Flow]) -> BTreeSet<Filter> {
        let mut filters = BTreeSet::new();
        for flow in flows.iter().filter(|f| f.protocol == Protocol::Udp) {
            let reply = SocketAddr::new(flow.reply_src, flow.reply_port_src);
            let frontend = SocketAddr::new(flow.orig_dst, flow.orig_port_dst);
            if let Some(serving) = self.addresses.get(&frontend)
                && !serving.contains(&reply)
            {
                filters.insert(Filter::ServiceIp { frontend, reply });
            }
            if let Some(serving) = self.node_ports.get(&flow.orig_port_dst)
                && !serving.contains(&reply)
            {
                filters.insert(Filter::NodePort {
                    node_port: flow.orig_port_dst,
                    reply,
                });
            }
        }
        filters
    }
}

#[cfg(test)]
mod tests {
    //! The vectors of kube-proxy's `pkg/proxy/conntrack/cleanup_test.go` (kubernetes/kubernetes,
    //! `TestCleanStaleEntries` and `TestServiceWithoutEndpoints` as of the endpoint-port check),
    //! transcribed: the same Service, endpoints and flows, and the same expected survivors;
    //! `TestServiceWithoutEndpoints` expects what kubernetes/kubernetes#139629 made kube-proxy
    //! do (every flow to a port without serving endpoints is stale).

    use super::*;
    use iptables_model::kube::{Endpoint, EndpointPort};

    const CLUSTER_IP: &str = "172.30.1.1";
    const EXTERNAL_IP: &str = "192.168.99.100";
    const LOAD_BALANCER_IP: &str = "1.2.3.4";
    const SERVING: &str = "10.240.0.4";
    const NOT_SERVING: &str = "10.240.1.5";
    const DELETED: &str = "10.240.2.6";
    /// The endpoints' port before they changed it (their IP stays).
    const OLD_ENDPOINT_PORT: u16 = 8080;
    const ENDPOINT_PORT: u16 = 9090;
    const SERVICE_PORT: u16 = 8000;
    const NODE_PORT: u16 = 32000;
    /// A port no Service uses: flows to it are none of the reconciler's business.
    const OTHER_PORT: u16 = 3000;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    /// `cleanup-test` in `test`: TCP, UDP (NodePort) and SCTP (NodePort) ports named after
    /// their protocol, all on 8000, with an external IP and a load-balancer IP.
    fn service() -> Service {
        let port = |name: &str, protocol, node_port| ServicePort {
            name: name.into(),
            port: SERVICE_PORT,
            protocol,
            node_port,
        };
        Service {
            namespace: "test".into(),
            name: "cleanup-test".into(),
            service_type: ServiceType::LoadBalancer,
            cluster_ip: CLUSTER_IP.into(),
            ports: vec![
                port("test-tcp", Protocol::Tcp, 0),
                port("test-udp", Protocol::Udp, NODE_PORT),
                port("test-sctp", Protocol::Sctp, NODE_PORT),
            ],
            external_ips: vec![EXTERNAL_IP.into()],
            load_balancer_ips: vec![LOAD_BALANCER_IP.into()],
            ..Service::default()
        }
    }

    /// One slice of Service `of`: a serving endpoint and one that is not, each protocol's port
    /// at 9090 (the UDP one only when `udp_only`).
    fn slice(of: &str, udp_only: bool) -> EndpointSlice {
        let endpoint = |address: &str, serving| Endpoint {
            addresses: vec![address.into()],
            serving: Some(serving),
            ..Endpoint::default()
        };
        let port = |name: &str, protocol| EndpointPort {
            name: name.into(),
            port: ENDPOINT_PORT,
            protocol,
        };
        let mut ports = vec![port("test-udp", Protocol::Udp)];
        if !udp_only {
            ports.insert(0, port("test-tcp", Protocol::Tcp));
            ports.push(port("test-sctp", Protocol::Sctp));
        }
        EndpointSlice {
            namespace: "test".into(),
            service: of.into(),
            ports,
            endpoints: vec![endpoint(SERVING, true), endpoint(NOT_SERVING, false)],
        }
    }

    /// `generateConntrackEntry`; `orig_dst` `None` for a NodePort flow (any address).
    fn flow(
        orig_dst: Option<&str>,
        orig_port_dst: u16,
        reply_src: &str,
        reply_port_src: u16,
        protocol: Protocol,
    ) -> Flow {
        Flow {
            protocol,
            orig_dst: orig_dst.map_or(ip("0.0.0.0"), ip),
            orig_port_dst,
            reply_src: ip(reply_src),
            reply_port_src,
        }
    }

    /// The flows `filters` delete, as the kernel would match them.
    fn deleted_by(filters: &BTreeSet<Filter>, flows: &[Flow]) -> Vec<Flow> {
        let matches = |flow: &Flow| {
            let reply = SocketAddr::new(flow.reply_src, flow.reply_port_src);
            flow.protocol == Protocol::Udp
                && filters.iter().any(|filter| match *filter {
                    Filter::ServiceIp { frontend, reply: r } => {
                        frontend == SocketAddr::new(flow.orig_dst, flow.orig_port_dst) && r == reply
                    }
                    Filter::NodePort {
                        node_port,
                        reply: r,
                    } => node_port == flow.orig_port_dst && r == reply,
                })
        };
        flows.iter().copied().filter(matches).collect()
    }

    #[test]
    fn kube_proxys_clean_stale_entries_vectors() {
        let service = service();
        let slices = [slice("cleanup-test", false)];
        let frontends = Frontends::new([(&service, &slices[..])], false);
        let protocols = [Protocol::Tcp, Protocol::Udp, Protocol::Sctp];
        let mut before = Vec::new();
        let mut after = Vec::new();
        // The endpoint changed its port, not its IP: stale.
        for orig_dst in [CLUSTER_IP, LOAD_BALANCER_IP, EXTERNAL_IP] {
            before.push(flow(
                Some(orig_dst),
                SERVICE_PORT,
                SERVING,
                OLD_ENDPOINT_PORT,
                Protocol::Udp,
            ));
        }
        // 3 endpoints × 3 protocols × (3 addresses × 2 ports + the NodePort) = 63 flows.
        for reply_src in [SERVING, NOT_SERVING, DELETED] {
            for protocol in protocols {
                for orig_dst in [CLUSTER_IP, LOAD_BALANCER_IP, EXTERNAL_IP] {
                    for port in [SERVICE_PORT, OTHER_PORT] {
                        let entry = flow(Some(orig_dst), port, reply_src, ENDPOINT_PORT, protocol);
                        before.push(entry);
                        let stale = protocol == Protocol::Udp
                            && port == SERVICE_PORT
                            && reply_src != SERVING;
                        if !stale {
                            after.push(entry);
                        }
                    }
                }
                let entry = flow(None, NODE_PORT, reply_src, ENDPOINT_PORT, protocol);
                before.push(entry);
                if !(protocol == Protocol::Udp && reply_src != SERVING) {
                    after.push(entry);
                }
            }
        }
        // Never DNATed (the Service had no endpoint when they started): the reply comes from
        // the address itself. Stale on the Service port only.
        for address in [CLUSTER_IP, LOAD_BALANCER_IP, EXTERNAL_IP] {
            for port in [SERVICE_PORT, OTHER_PORT] {
                let entry = flow(Some(address), port, address, port, Protocol::Udp);
                before.push(entry);
                if port != SERVICE_PORT {
                    after.push(entry);
                }
            }
        }
        let filters = frontends.stale(&before);
        let deleted = deleted_by(&filters, &before);
        let survivors: Vec<Flow> = before
            .iter()
            .copied()
            .filter(|f| !deleted.contains(f))
            .collect();
        assert_eq!(survivors, after);
        assert_eq!(deleted.len(), before.len() - after.len());
        // 3 (old port) + 2 endpoints × 3 addresses + 2 endpoints' NodePort flows + 3 never
        // DNATed; each stale flow needs a filter of its own here.
        assert_eq!(deleted.len(), 3 + 6 + 2 + 3);
        assert_eq!(filters.len(), deleted.len());
    }

    #[test]
    fn a_port_without_serving_endpoints_has_every_flow_stale() {
        // kube-proxy's TestServiceWithoutEndpoints: the only slice belongs to another Service,
        // so this one has none.
        let mut service = service();
        service.ports.retain(|p| p.protocol == Protocol::Udp);
        service.ports[0].node_port = 0;
        let frontends = Frontends::new([(&service, &[][..])], false);
        let flows = [
            flow(
                Some(EXTERNAL_IP),
                SERVICE_PORT,
                SERVING,
                ENDPOINT_PORT,
                Protocol::Udp,
            ),
            flow(
                Some(EXTERNAL_IP),
                SERVICE_PORT,
                DELETED,
                ENDPOINT_PORT,
                Protocol::Udp,
            ),
        ];
        let filters = frontends.stale(&flows);
        assert_eq!(deleted_by(&filters, &flows), flows);
        // A Service whose endpoints all stopped serving: the same.
        let mut stopped = slice("cleanup-test", true);
        stopped.endpoints[0].serving = Some(false);
        let slices = [stopped];
        let frontends = Frontends::new([(&service, &slices[..])], false);
        assert_eq!(deleted_by(&frontends.stale(&flows), &flows), flows);
    }

    #[test]
    fn only_udp_ports_of_the_family_with_a_cluster_ip_have_frontends() {
        let mut tcp = service();
        tcp.ports.retain(|p| p.protocol == Protocol::Tcp);
        let slices = [slice("cleanup-test", false)];
        assert!(Frontends::new([(&tcp, &slices[..])], false).is_empty());
        let mut headless = service();
        headless.cluster_ip = "None".into();
        assert!(Frontends::new([(&headless, &slices[..])], false).is_empty());
        let mut external_name = service();
        external_name.service_type = ServiceType::ExternalName;
        assert!(Frontends::new([(&external_name, &slices[..])], false).is_empty());
        // The IPv4 Service has no frontend in the IPv6 family.
        let v4 = service();
        assert!(Frontends::new([(&v4, &slices[..])], true).is_empty());
        assert!(!Frontends::new([(&v4, &slices[..])], false).is_empty());
    }

    #[test]
    fn ready_stands_for_serving_and_endpoints_of_the_other_family_are_ignored() {
        let mut service = service();
        service.ports.retain(|p| p.protocol == Protocol::Udp);
        let mut slices = [slice("cleanup-test", true)];
        // No conditions: serving. Ready false with no serving condition: not serving.
        slices[0].endpoints[0].serving = None;
        slices[0].endpoints[1].serving = None;
        slices[0].endpoints[1].ready = Some(false);
        slices[0].endpoints.push(Endpoint {
            addresses: vec!["fd00::4".into()],
            ..Endpoint::default()
        });
        let frontends = Frontends::new([(&service, &slices[..])], false);
        let flows = [
            flow(
                Some(CLUSTER_IP),
                SERVICE_PORT,
                SERVING,
                ENDPOINT_PORT,
                Protocol::Udp,
            ),
            flow(
                Some(CLUSTER_IP),
                SERVICE_PORT,
                NOT_SERVING,
                ENDPOINT_PORT,
                Protocol::Udp,
            ),
        ];
        let frontend = SocketAddr::new(ip(CLUSTER_IP), SERVICE_PORT);
        let reply = SocketAddr::new(ip(NOT_SERVING), ENDPOINT_PORT);
        assert_eq!(
            frontends.stale(&flows),
            BTreeSet::from([Filter::ServiceIp { frontend, reply }])
        );
    }
}
