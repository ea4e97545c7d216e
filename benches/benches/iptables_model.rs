//! iptables-model: kube-proxy generation, save-format parsing, partial syncs and evaluation.
//! No Rust crate models these (`docs/iptables.md` §15), so every group has only `ours`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use benches::OURS;
use benches::iptables_inputs::{cluster, cluster_ip, full_sync, options};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use iptables_model::eval::{Host, Packet, Path, evaluate};
use iptables_model::kube::{EndpointSlice, PartialSync, Proxier, Service, jump_rules};
use iptables_model::{Ruleset, parse};

fn bench(c: &mut Criterion) {
    let (services, slices) = cluster(10_000, 3, 0);
    let full = |s: &[Service], e: &[EndpointSlice]| full_sync(s, e);
    let text = full(&services, &slices).text;
    eprintln!(
        "10k x 3: {} lines, {} bytes",
        text.lines().count(),
        text.len()
    );

    let mut group = c.benchmark_group("iptables_generate");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    group.bench_function(BenchmarkId::new(OURS, "10k_services_x3"), |b| {
        b.iter(|| black_box(full(&services, &slices).text))
    });
    group.finish();

    let mut group = c.benchmark_group("iptables_parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    group.bench_function(BenchmarkId::new(OURS, "150k_lines"), |b| {
        b.iter(|| black_box(parse(&text).unwrap()))
    });
    group.finish();

    // One Service's endpoints change; the proxier is told which one (as the binary is).
    let mut group = c.benchmark_group("iptables_partial_sync");
    for (mode, label) in [
        (PartialSync::KubeProxy, "kube_proxy"),
        (PartialSync::Minimal, "minimal"),
    ] {
        for size in [1_000, 10_000] {
            let (services, slices) = cluster(size, 3, 0);
            let before = slices[size / 2].clone();
            let after = cluster(size, 3, 1).1.swap_remove(size / 2);
            let mut proxier = Proxier::new(options()).with_partial_sync(mode);
            proxier.sync(&services, &slices);
            proxier.restored();
            let (namespace, name) = (before.namespace.clone(), before.service.clone());
            proxier.update_endpoint_slices(&namespace, &name, vec![after.clone()]);
            let bytes = proxier.sync_changes().text.len();
            proxier.restored();
            eprintln!("{label} partial sync of 1 of {size}: {bytes} bytes");
            group.throughput(Throughput::Bytes(bytes as u64));
            let mut flip = false;
            group.bench_function(
                BenchmarkId::new(OURS, format!("{label}/1_changed_of_{size}")),
                |b| {
                    b.iter(|| {
                        flip = !flip;
                        let slice = if flip { &before } else { &after };
                        proxier.update_endpoint_slices(&namespace, &name, vec![slice.clone()]);
                        let out = proxier.sync_changes().text.len();
                        proxier.restored();
                        black_box(out)
                    })
                },
            );
        }
    }
    group.finish();

    let (services, slices) = cluster(1_000, 3, 0);
    let mut ruleset = Ruleset::new();
    ruleset.restore(&jump_rules(), true).unwrap();
    ruleset
        .restore(&full(&services, &slices).restore().unwrap(), true)
        .unwrap();
    let packet = Packet::tcp(
        "10.0.0.2".parse().unwrap(),
        cluster_ip(999).parse().unwrap(),
        80,
    );
    let mut group = c.benchmark_group("iptables_evaluate");
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new(OURS, "last_of_1k_services"), |b| {
        b.iter(|| black_box(evaluate(&ruleset, &Host::default(), &packet, Path::Incoming).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
