//! iptables-model: kube-proxy generation, save-format parsing, partial syncs and evaluation.
//! No Rust crate models these (spec §15), so every group has only `ours`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::hint::black_box;

use benches::OURS;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iptables_model::eval::{Host, Packet, Path, evaluate};
use iptables_model::kube::{
    Endpoint, EndpointPort, EndpointSlice, Protocol, Proxier, ProxyOptions, Service, ServicePort,
    SyncRequest, generate, jump_rules,
};
use iptables_model::{Ruleset, parse};

fn ip(i: usize) -> String {
    format!("172.{}.{}.{}", 16 + i / 65536, (i / 256) % 256, i % 256)
}

fn cluster(
    services: usize,
    endpoints: usize,
    generation: usize,
) -> (Vec<Service>, Vec<EndpointSlice>) {
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

fn options() -> ProxyOptions {
    let mut o = ProxyOptions::new("node-a", "192.168.0.2".parse().unwrap());
    o.pod_cidr = Some("10.0.0.0/8".parse().unwrap());
    o.large_cluster_endpoints = usize::MAX; // keep the comments: the larger, kube-proxy-like text
    o
}

fn bench(c: &mut Criterion) {
    let (services, slices) = cluster(10_000, 3, 0);
    let full = |s: &[Service], e: &[EndpointSlice]| {
        generate(
            &options(),
            s,
            e,
            SyncRequest {
                existing_chains: &BTreeSet::new(),
                changed: None,
            },
        )
    };
    let text = full(&services, &slices).restore.to_string();
    eprintln!(
        "10k x 3: {} lines, {} bytes",
        text.lines().count(),
        text.len()
    );

    let mut group = c.benchmark_group("iptables_generate");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    group.bench_function(BenchmarkId::new(OURS, "10k_services_x3"), |b| {
        b.iter(|| black_box(full(&services, &slices).restore.to_string()))
    });
    group.finish();

    let mut group = c.benchmark_group("iptables_parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    group.bench_function(BenchmarkId::new(OURS, "150k_lines"), |b| {
        b.iter(|| black_box(parse(&text).unwrap()))
    });
    group.finish();

    let mut group = c.benchmark_group("iptables_partial_sync");
    for size in [1_000, 10_000] {
        let (services, slices) = cluster(size, 3, 0);
        let mut changed = slices.clone();
        changed[size / 2] = cluster(size, 3, 1).1.swap_remove(size / 2);
        let mut proxier = Proxier::new(options());
        proxier.sync(&services, &slices);
        proxier.restored();
        let bytes = proxier.sync(&services, &changed).restore.to_string().len();
        proxier.restored();
        group.throughput(Throughput::Bytes(bytes as u64));
        let mut flip = false;
        group.bench_function(
            BenchmarkId::new(OURS, format!("1_changed_of_{size}")),
            |b| {
                b.iter(|| {
                    flip = !flip;
                    let out = proxier
                        .sync(&services, if flip { &slices } else { &changed })
                        .restore
                        .to_string();
                    proxier.restored();
                    black_box(out)
                })
            },
        );
    }
    group.finish();

    let (services, slices) = cluster(1_000, 3, 0);
    let mut ruleset = Ruleset::new();
    ruleset.restore(&jump_rules(), true).unwrap();
    ruleset
        .restore(&full(&services, &slices).restore, true)
        .unwrap();
    let packet = Packet::tcp("10.0.0.2".parse().unwrap(), ip(999).parse().unwrap(), 80);
    let mut group = c.benchmark_group("iptables_evaluate");
    group.throughput(Throughput::Bytes(1));
    group.bench_function(BenchmarkId::new(OURS, "last_of_1k_services"), |b| {
        b.iter(|| black_box(evaluate(&ruleset, &Host::default(), &packet, Path::Incoming).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
