//! Record codecs of `leader-lease` beside `serde_json` with a derived struct, the choice of a
//! Kubernetes client (k8s-openapi's `LeaseSpec` is such a struct). The peer keeps the times as
//! strings; ours parses and checks them as RFC 3339.
#![allow(missing_docs)]

use std::hint::black_box;

use benches::OURS;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use leader_lease::Record;
use serde::{Deserialize, Serialize};

const LEASE_SPEC: &str = include_str!("../../leader-lease/testdata/lease-spec.json");
const ANNOTATION: &str = include_str!("../../leader-lease/testdata/annotation.json");

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeaseSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    holder_identity: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lease_duration_seconds: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    acquire_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    renew_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lease_transitions: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strategy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preferred_holder: Option<String>,
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("lease_record_decode");
    group.throughput(Throughput::Bytes(LEASE_SPEC.len() as u64));
    group.bench_function(BenchmarkId::new(OURS, "lease-spec"), |b| {
        b.iter(|| Record::decode_lease_spec(black_box(LEASE_SPEC)).unwrap())
    });
    group.bench_function(BenchmarkId::new("serde_json", "lease-spec"), |b| {
        b.iter(|| serde_json::from_str::<LeaseSpec>(black_box(LEASE_SPEC)).unwrap())
    });
    group.throughput(Throughput::Bytes(ANNOTATION.len() as u64));
    group.bench_function(BenchmarkId::new(OURS, "annotation"), |b| {
        b.iter(|| Record::decode_annotation(black_box(ANNOTATION)).unwrap())
    });
    group.finish();
}

fn encode(c: &mut Criterion) {
    let record = Record::decode_lease_spec(LEASE_SPEC).unwrap();
    let spec: LeaseSpec = serde_json::from_str(LEASE_SPEC).unwrap();
    let mut group = c.benchmark_group("lease_record_encode");
    group.throughput(Throughput::Bytes(LEASE_SPEC.len() as u64));
    group.bench_function(BenchmarkId::new(OURS, "lease-spec"), |b| {
        b.iter(|| black_box(&record).encode_lease_spec())
    });
    group.bench_function(BenchmarkId::new("serde_json", "lease-spec"), |b| {
        b.iter(|| serde_json::to_string(black_box(&spec)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, decode, encode);
criterion_main!(benches);
