//! Generated clusters for the `iptables-model` benchmarks and the `iptables_probe` example.

use std::collections::BTreeSet;

use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, Generated, LocalDetector, Protocol, ProxyOptions,
    Service, ServicePort, SyncRequest, generate,
};

/// The ClusterIP of service `i`: 172.16.0.0 onwards.
pub fn cluster_ip(i: usize) -> String {
    format!("172.{}.{}.{}", 16 + i / 65536, (i / 256) % 256, i % 256)
}

/// `services` ClusterIP services (port 80/TCP) with `endpoints` endpoints each (port 8080).
/// Endpoint addresses depend on `generation`, so two generations differ in every slice.
pub fn cluster(
    services: usize,
    endpoints: usize,
    generation: usize,
) -> (Vec<Service>, Vec<EndpointSlice>) {
    let svc = (0..services)
        .map(|i| Service {
            namespace: format!("ns{}", i % 50),
            name: format!("svc{i}"),
            cluster_ip: cluster_ip(i),
            ports: vec![ServicePort {
                name: "http".into(),
                port: 80,
                protocol: Protocol::Tcp,
                node_port: 0,
            }],
            ..Service::default()
        })
        .collect();
    let slices = (0..services)
        .map(|i| EndpointSlice {
            namespace: format!("ns{}", i % 50),
            service: format!("svc{i}"),
            ports: vec![EndpointPort {
                name: "http".into(),
                port: 8080,
                protocol: Protocol::Tcp,
            }],
            endpoints: (0..endpoints)
                .map(|e| Endpoint {
                    addresses: vec![format!(
                        "10.{}.{}.{}",
                        e + generation,
                        (i / 256) % 256,
                        i % 256
                    )],
                    ..Endpoint::default()
                })
                .collect(),
        })
        .collect();
    (svc, slices)
}

/// The proxy options of every benchmark: node `node-a`, pod CIDR 10.0.0.0/8, and the
/// large-cluster threshold off so the text keeps kube-proxy's comments.
pub fn options() -> ProxyOptions {
    let mut o = ProxyOptions::new("node-a", [192, 168, 0, 2].into());
    o.local_detector = "10.0.0.0/8"
        .parse()
        .map_or(LocalDetector::None, LocalDetector::Cidr);
    o.large_cluster_endpoints = usize::MAX;
    o
}

/// A full sync of `services` and `slices` with [`options`], on an empty kernel.
pub fn full_sync(services: &[Service], slices: &[EndpointSlice]) -> Generated {
    generate(
        &options(),
        services,
        slices,
        SyncRequest {
            existing_chains: &BTreeSet::new(),
            changed: None,
        },
    )
}
