//! Inputs shared by the tests: kube-proxy's fake proxier (`NewFakeProxier` in
//! `pkg/proxy/nftables/proxier_test.go`) and its test objects.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::std_instead_of_alloc,
    clippy::std_instead_of_core
)] // each test uses a part

use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, LocalDetector, Protocol, ProxyOptions, Service,
    ServicePort, ServiceType, TrafficPolicy,
};
use nftables_model::kube::NftOptions;

/// `NewFakeProxier(v1.IPv4Protocol)`: node `test-node` at 192.168.0.2, pods in 10.0.0.0/8,
/// ServiceCIDR 172.30.0.0/16, NodePorts on 192.168.0.2/32 (and 2001:db8::1/128), mark 0x4000.
pub fn fake_options_v4() -> NftOptions {
    let mut proxy = ProxyOptions::new("test-node", "192.168.0.2".parse().unwrap());
    proxy.local_detector = LocalDetector::Cidr("10.0.0.0/8".parse().unwrap());
    proxy.node_port_addresses = Some(vec![
        "192.168.0.2/32".parse().unwrap(),
        "2001:db8::1/128".parse().unwrap(),
    ]);
    proxy.interface_addresses = [
        "127.0.0.1",
        "::1",
        "192.168.0.2",
        "192.168.1.2",
        "192.168.99.11",
        "2001:db8::1",
        "2001:db8:1::2",
    ]
    .iter()
    .map(|a| a.parse().unwrap())
    .collect();
    let mut options = NftOptions::new(proxy);
    options.service_cidrs = vec!["172.30.0.0/16".parse().unwrap()];
    options.mark_digits = 4;
    options
}

/// The same for IPv6: node 2001:db8::1, pods in fd00:10::/64, ServiceCIDR fd00:10:96::/112.
pub fn fake_options_v6() -> NftOptions {
    let mut options = fake_options_v4();
    options.proxy.node_ip = "2001:db8::1".parse().unwrap();
    options.proxy.ipv6 = true;
    options.proxy.local_detector = LocalDetector::Cidr("fd00:10::/64".parse().unwrap());
    options.service_cidrs = vec!["fd00:10:96::/112".parse().unwrap()];
    options
}

/// A Service port.
pub fn port(name: &str, port: u16, protocol: Protocol, node_port: u16) -> ServicePort {
    ServicePort {
        name: name.into(),
        port,
        protocol,
        node_port,
    }
}

/// A ClusterIP Service `ns/name` at `ip` with `ports`.
pub fn service(ns: &str, name: &str, ip: &str, ports: Vec<ServicePort>) -> Service {
    Service {
        namespace: ns.into(),
        name: name.into(),
        cluster_ip: ip.into(),
        ports,
        ..Service::default()
    }
}

/// An EndpointSlice of `ns/name` with one port and endpoints `(address, node)`.
pub fn slice(
    ns: &str,
    name: &str,
    port: EndpointPort,
    eps: &[(&str, Option<&str>)],
) -> EndpointSlice {
    EndpointSlice {
        namespace: ns.into(),
        service: name.into(),
        ports: vec![port],
        endpoints: eps
            .iter()
            .map(|(ip, node)| Endpoint {
                addresses: vec![(*ip).into()],
                node_name: node.map(Into::into),
                ..Endpoint::default()
            })
            .collect(),
    }
}

/// An endpoint port.
pub fn ep_port(name: &str, port: u16, protocol: Protocol) -> EndpointPort {
    EndpointPort {
        name: name.into(),
        port,
        protocol,
    }
}

/// The Services and EndpointSlices of `TestOverallNFTablesRules` (proxier_test.go, commit
/// 030880a5dc54): a ClusterIP Service; a LoadBalancer with `externalTrafficPolicy: Local`, an
/// external IP and a remote endpoint; a NodePort; a NodePort with an external IP and a local
/// endpoint; a LoadBalancer with a source range (with a leading space) and ClientIP affinity;
/// a Service without endpoints.
pub fn overall() -> (Vec<Service>, Vec<EndpointSlice>) {
    let tcp = Protocol::Tcp;
    let svc1 = service("ns1", "svc1", "172.30.0.41", vec![port("p80", 80, tcp, 0)]);
    let mut svc2 = service(
        "ns2",
        "svc2",
        "172.30.0.42",
        vec![port("p80", 80, tcp, 3001)],
    );
    svc2.service_type = ServiceType::LoadBalancer;
    svc2.external_traffic_policy = TrafficPolicy::Local;
    svc2.load_balancer_ips = vec!["1.2.3.4".into()];
    svc2.external_ips = vec!["192.168.99.22".into()];
    svc2.health_check_node_port = 30000;
    let mut svc3 = service(
        "ns3",
        "svc3",
        "172.30.0.43",
        vec![port("p80", 80, tcp, 3003)],
    );
    svc3.service_type = ServiceType::NodePort;
    let mut svc4 = service("ns4", "svc4", "172.30.0.44", vec![port("p80", 80, tcp, 0)]);
    svc4.service_type = ServiceType::NodePort;
    svc4.external_ips = vec!["192.168.99.33".into()];
    let mut svc5 = service(
        "ns5",
        "svc5",
        "172.30.0.45",
        vec![port("p80", 80, tcp, 3002)],
    );
    svc5.service_type = ServiceType::LoadBalancer;
    svc5.load_balancer_ips = vec!["5.6.7.8".into()];
    svc5.health_check_node_port = 30000;
    svc5.load_balancer_source_ranges = vec![" 203.0.113.0/25".into()];
    svc5.client_ip_affinity = Some(10800);
    let svc6 = service("ns6", "svc6", "172.30.0.46", vec![port("p80", 80, tcp, 0)]);
    let p80 = || ep_port("p80", 80, tcp);
    let slices = vec![
        slice("ns1", "svc1", p80(), &[("10.180.0.1", None)]),
        slice("ns2", "svc2", p80(), &[("10.180.0.2", None)]),
        slice("ns3", "svc3", p80(), &[("10.180.0.3", None)]),
        slice(
            "ns4",
            "svc4",
            p80(),
            &[("10.180.0.4", None), ("10.180.0.5", Some("test-node"))],
        ),
        slice("ns5", "svc5", p80(), &[("10.180.0.3", None)]),
    ];
    (vec![svc1, svc2, svc3, svc4, svc5, svc6], slices)
}

/// `n` Services `ns/svcI` with three endpoints each; those of even index are NodePorts.
pub fn many(n: usize) -> (Vec<Service>, Vec<EndpointSlice>) {
    let tcp = Protocol::Tcp;
    let mut services = Vec::with_capacity(n);
    let mut slices = Vec::with_capacity(n);
    for i in 0..n {
        let (hi, lo) = (i / 250, i % 250);
        let name = format!("svc{i}");
        let mut s = service(
            "ns",
            &name,
            &format!("172.30.{hi}.{lo}"),
            vec![port("p80", 80, tcp, 0)],
        );
        if i % 2 == 0 {
            s.service_type = ServiceType::NodePort;
            // One node port each (n is at most 35535).
            s.ports[0].node_port = 30000 + u16::try_from(i).unwrap();
        }
        services.push(s);
        let ips: Vec<String> = (1..=3).map(|k| format!("10.{k}.{hi}.{lo}")).collect();
        let eps: Vec<(&str, Option<&str>)> = ips.iter().map(|ip| (ip.as_str(), None)).collect();
        slices.push(slice("ns", &name, ep_port("p80", 8080, tcp), &eps));
    }
    (services, slices)
}

/// The iptables mode's ruleset for the same Services, options and node (iptables-model's
/// generation, after kube-proxy's jump rules), for comparing the two modes.
pub fn iptables_ruleset(services: &[Service], slices: &[EndpointSlice]) -> iptables_model::Ruleset {
    let options = fake_options_v4().proxy;
    let generated = iptables_model::kube::generate(
        &options,
        services,
        slices,
        iptables_model::kube::SyncRequest {
            existing_chains: &std::collections::BTreeSet::new(),
            changed: None,
        },
    );
    let mut ruleset = iptables_model::Ruleset::new();
    ruleset
        .restore(&iptables_model::kube::jump_rules(), true)
        .unwrap();
    ruleset
        .restore(&generated.restore().unwrap(), true)
        .unwrap();
    ruleset
}
