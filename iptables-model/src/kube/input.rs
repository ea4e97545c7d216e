//! The inputs of the generator: Services, EndpointSlices and proxier options, with the
//! Kubernetes API's field names and spellings (addresses are API strings, parsed leniently).

use alloc::string::String;
use alloc::vec::Vec;
use core::net::{IpAddr, Ipv4Addr};

use crate::addr::Cidr;
use crate::error::{EmitError, Field, check_value};
use crate::kube::LocalDetector;

/// A Service's `type`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ServiceType {
    /// `ClusterIP`.
    #[default]
    ClusterIp,
    /// `NodePort`.
    NodePort,
    /// `LoadBalancer`.
    LoadBalancer,
    /// `ExternalName`: no rules.
    ExternalName,
}

/// A port's L4 protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    /// `TCP`.
    #[default]
    Tcp,
    /// `UDP`.
    Udp,
    /// `SCTP`.
    Sctp,
}

impl Protocol {
    /// The lower-case name iptables uses (`-p tcp`, `-m tcp`), also hashed into chain names.
    pub const fn lower(self) -> &'static str {
        match self {
            Self::Tcp => "tcp",
            Self::Udp => "udp",
            Self::Sctp => "sctp",
        }
    }
}

/// `externalTrafficPolicy` / `internalTrafficPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TrafficPolicy {
    /// `Cluster`: any ready endpoint.
    #[default]
    Cluster,
    /// `Local`: only endpoints on this node.
    Local,
}

/// One entry of `spec.ports`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ServicePort {
    /// `name` (empty for an unnamed port).
    pub name: String,
    /// `port`.
    pub port: u16,
    /// `protocol`.
    pub protocol: Protocol,
    /// `nodePort` (0 when none).
    pub node_port: u16,
}

/// A Service, reduced to the fields kube-proxy reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Service {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.type`.
    pub service_type: ServiceType,
    /// `spec.clusterIP` as in the API (`None` or empty for headless services).
    pub cluster_ip: String,
    /// `spec.ports`.
    pub ports: Vec<ServicePort>,
    /// `spec.externalIPs`.
    pub external_ips: Vec<String>,
    /// `status.loadBalancer.ingress[].ip`.
    pub load_balancer_ips: Vec<String>,
    /// `spec.loadBalancerSourceRanges` (may carry spaces and leading zeros).
    pub load_balancer_source_ranges: Vec<String>,
    /// `spec.externalTrafficPolicy`.
    pub external_traffic_policy: TrafficPolicy,
    /// `spec.internalTrafficPolicy`.
    pub internal_traffic_policy: TrafficPolicy,
    /// `spec.healthCheckNodePort` (0 when none).
    pub health_check_node_port: u16,
    /// `spec.sessionAffinityConfig.clientIP.timeoutSeconds` when `sessionAffinity` is
    /// `ClientIP` (default 10800), `None` without affinity.
    pub client_ip_affinity: Option<u32>,
}

impl Service {
    /// Checks the values of the Service that kube-proxy's rules carry as text: its namespace,
    /// name and port names, written into comments (`ns/name:port`). Its addresses are parsed
    /// and its ports and protocols are numbers or names of this crate, so nothing else of it
    /// reaches the text.
    ///
    /// # Errors
    ///
    /// [`EmitError`] naming the first of them that has a control character (a line break in
    /// a port name would otherwise start a rule of its own).
    pub fn check_text(&self) -> Result<(), EmitError> {
        check_value(Field::ServiceNamespace, &self.namespace)?;
        check_value(Field::ServiceName, &self.name)?;
        self.ports
            .iter()
            .try_for_each(|port| check_value(Field::ServicePortName, &port.name))
    }
}

/// One entry of an EndpointSlice's `ports`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EndpointPort {
    /// `name` (matches the Service port's name).
    pub name: String,
    /// `port` (the target port).
    pub port: u16,
    /// `protocol`.
    pub protocol: Protocol,
}

/// One entry of an EndpointSlice's `endpoints`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// `addresses` (only the first is used).
    pub addresses: Vec<String>,
    /// `nodeName`.
    pub node_name: Option<String>,
    /// `conditions.ready` (absent means true).
    pub ready: Option<bool>,
    /// `conditions.serving` (absent means the same as `ready`).
    pub serving: Option<bool>,
    /// `conditions.terminating` (absent means false).
    pub terminating: Option<bool>,
    /// `hints.forZones[].name`: the zones whose nodes should use this endpoint (set by the
    /// EndpointSlice controller for `trafficDistribution: PreferClose`/`PreferSameZone` and
    /// topology-aware routing).
    pub zone_hints: Vec<String>,
    /// `hints.forNodes[].name`: the nodes that should use this endpoint (set for
    /// `trafficDistribution: PreferSameNode`).
    pub node_hints: Vec<String>,
}

/// An EndpointSlice of a Service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EndpointSlice {
    /// `metadata.namespace`.
    pub namespace: String,
    /// The `kubernetes.io/service-name` label.
    pub service: String,
    /// `ports`.
    pub ports: Vec<EndpointPort>,
    /// `endpoints`.
    pub endpoints: Vec<Endpoint>,
}

/// The proxier's configuration (kube-proxy flags and what it detects on the node).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProxyOptions {
    /// This node's name: endpoints with this `nodeName` are local, and those hinted for it
    /// are preferred (`hints.forNodes`).
    pub hostname: String,
    /// This node's zone, its Node's `topology.kubernetes.io/zone` label (empty when the label
    /// or the Node is missing): endpoints hinted for it are preferred (`hints.forZones`).
    pub zone: String,
    /// The node's primary IP (checked against `loadBalancerSourceRanges`).
    pub node_ip: IpAddr,
    /// How traffic from this node's pods is told apart (`--detect-local-mode`).
    pub local_detector: LocalDetector,
    /// The masquerade mark, `1 << masqueradeBit` (0x4000 by default).
    pub masquerade_mark: u32,
    /// `--masquerade-all`.
    pub masquerade_all: bool,
    /// `--iptables-localhost-nodeports` (IPv4 only).
    pub localhost_node_ports: bool,
    /// Whether the nfacct counters exist (adds `-m nfacct` rules).
    pub nfacct: bool,
    /// `nf_conntrack_tcp_be_liberal` is 1 (omits the INVALID drop).
    pub conntrack_tcp_liberal: bool,
    /// MASQUERADE with `--random-fully`.
    pub random_fully: bool,
    /// The proxier's family: IPv6 when true.
    pub ipv6: bool,
    /// `--nodeport-addresses`; `None` accepts NodePorts on every local address.
    pub node_port_addresses: Option<Vec<Cidr>>,
    /// The node's interface addresses, in interface order (for `node_port_addresses`).
    pub interface_addresses: Vec<IpAddr>,
    /// More endpoints than this in total switches to large-cluster mode (1000).
    pub large_cluster_endpoints: usize,
}

impl ProxyOptions {
    /// kube-proxy's defaults for a node called `hostname` with address `node_ip`: no zone, mark
    /// 0x4000, localhost NodePorts on, no nfacct counters, no local-traffic detector.
    pub fn new(hostname: impl Into<String>, node_ip: IpAddr) -> Self {
        Self {
            hostname: hostname.into(),
            zone: String::new(),
            node_ip,
            local_detector: LocalDetector::None,
            masquerade_mark: 0x4000,
            masquerade_all: false,
            localhost_node_ports: true,
            nfacct: false,
            conntrack_tcp_liberal: false,
            random_fully: false,
            ipv6: node_ip.is_ipv6(),
            node_port_addresses: None,
            interface_addresses: alloc::vec![IpAddr::V4(Ipv4Addr::LOCALHOST), node_ip],
            large_cluster_endpoints: 1000,
        }
    }
}
