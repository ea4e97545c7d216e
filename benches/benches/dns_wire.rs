//! dns-wire against hickory-proto, domain and simple-dns on the three benchmark messages of the
//! DNS corpus (`testdata/dns/{query,response,large}.bin`).
//!
//! Groups: `dns_walk` (zero-copy validating walk with typed RDATA: our `Message::parse` then
//! its iterators, domain's lazy sections), `dns_parse_owned` (parse into an owned message),
//! `dns_encode` (encode with name compression).

use std::hint::black_box;

use benches::OURS;
use benches::dns::{INPUTS, walk_domain, walk_ours};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use dns_wire::OwnedMessage;

fn walk(c: &mut Criterion) {
    let mut group = c.benchmark_group("dns_walk");
    for (name, wire) in INPUTS {
        assert_eq!(walk_ours(wire), walk_domain(wire), "{name}: same walk");
        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_with_input(BenchmarkId::new(OURS, name), wire, |b, w| {
            b.iter(|| walk_ours(black_box(w)))
        });
        group.bench_with_input(BenchmarkId::new("domain", name), wire, |b, w| {
            b.iter(|| walk_domain(black_box(w)))
        });
    }
    group.finish();
}

fn parse_owned(c: &mut Criterion) {
    let mut group = c.benchmark_group("dns_parse_owned");
    for (name, wire) in INPUTS {
        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_with_input(BenchmarkId::new(OURS, name), wire, |b, w| {
            b.iter(|| OwnedMessage::parse(black_box(w)).expect("valid"))
        });
        group.bench_with_input(BenchmarkId::new("hickory-proto", name), wire, |b, w| {
            b.iter(|| hickory_proto::op::Message::from_vec(black_box(w)).expect("valid"))
        });
        group.bench_with_input(BenchmarkId::new("simple-dns", name), wire, |b, w| {
            b.iter(|| simple_dns::Packet::parse(black_box(w)).expect("valid"))
        });
    }
    group.finish();
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("dns_encode");
    for (name, wire) in INPUTS {
        let ours = OwnedMessage::parse(wire).expect("valid");
        let hickory = hickory_proto::op::Message::from_vec(wire).expect("valid");
        let simple = simple_dns::Packet::parse(wire).expect("valid");
        let mut buf = vec![0u8; 65_535];
        let len = ours.encode(&mut buf).expect("fits");
        assert!(
            len <= wire.len(),
            "{name}: ours {len} > input {}",
            wire.len()
        );
        group.throughput(Throughput::Bytes(wire.len() as u64));
        group.bench_function(BenchmarkId::new(OURS, name), |b| {
            b.iter(|| black_box(&ours).encode(black_box(&mut buf)).expect("fits"))
        });
        group.bench_function(BenchmarkId::new("hickory-proto", name), |b| {
            b.iter(|| black_box(&hickory).to_vec().expect("encodes"))
        });
        group.bench_function(BenchmarkId::new("simple-dns", name), |b| {
            b.iter(|| {
                black_box(&simple)
                    .build_bytes_vec_compressed()
                    .expect("encodes")
            })
        });
    }
    group.finish();
}

criterion_group!(dns_wire, walk, parse_owned, encode);
criterion_main!(dns_wire);
