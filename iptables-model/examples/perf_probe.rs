//! Workload for instruction-count profiling: `perf_probe gen|parse|partial N`.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

use std::collections::BTreeSet;
use std::hint::black_box;

use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, Protocol, Proxier, ProxyOptions, Service, ServicePort,
    SyncRequest, generate,
};
use iptables_model::parse;

fn ip(i: usize) -> String {
    format!("172.{}.{}.{}", 16 + i / 65536, (i / 256) % 256, i % 256)
}

fn cluster(services: usize, generation: usize) -> (Vec<Service>, Vec<EndpointSlice>) {
    let svc = (0..services)
        .map(|i| Service {
            namespace: format!("ns{}", i % 50),
            name: format!("svc{i}"),
            cluster_ip: ip(i),
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
            endpoints: (0..3)
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

fn options() -> ProxyOptions {
    let mut o = ProxyOptions::new("node-a", "192.168.0.2".parse().unwrap());
    o.pod_cidr = Some("10.0.0.0/8".parse().unwrap());
    o.large_cluster_endpoints = usize::MAX;
    o
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(2).map_or(10_000, |s| s.parse().unwrap());
    let (services, slices) = cluster(n, 0);
    let full = || {
        generate(
            &options(),
            &services,
            &slices,
            SyncRequest {
                existing_chains: &BTreeSet::new(),
                changed: None,
            },
        )
    };
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            black_box(full().restore.to_string());
        }
        Some("parse") => {
            let text = full().restore.to_string();
            let t = std::time::Instant::now();
            black_box(parse(&text).unwrap());
            eprintln!("parse {} bytes in {:?}", text.len(), t.elapsed());
        }
        Some("partial") => {
            let mut changed = slices.clone();
            changed[n / 2] = cluster(n, 1).1.swap_remove(n / 2);
            let mut proxier = Proxier::new(options());
            proxier.sync(&services, &slices);
            proxier.restored();
            let t = std::time::Instant::now();
            for i in 0..10 {
                let out = proxier
                    .sync(&services, if i % 2 == 0 { &changed } else { &slices })
                    .restore
                    .to_string();
                proxier.restored();
                black_box(out);
            }
            eprintln!("10 partial syncs in {:?}", t.elapsed());
        }
        _ => eprintln!("usage: perf_probe gen|parse|partial N"),
    }
}
