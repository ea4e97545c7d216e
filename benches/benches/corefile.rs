//! Corefile parsing throughput on a large generated Corefile (thousands of server blocks with
//! the directives seen in the corpus). No Rust peer parses CoreDNS's Corefile dialect, so
//! each group has only `ours`.

use std::hint::black_box;

use benches::{OURS, large_corefile};
use corefile::import::NoFiles;
use corefile::parser::{self, ParseOptions};
use corefile::plugin_order::V1_14_7;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn parse(c: &mut Criterion) {
    let input = large_corefile(4000);
    assert!(
        corefile::load(input.as_bytes()).is_ok(),
        "the generated Corefile is valid"
    );
    let mut group = c.benchmark_group("corefile_parse");
    group.throughput(Throughput::Bytes(input.len() as u64));
    let label = format!("{}KiB", input.len() / 1024);
    group.bench_with_input(BenchmarkId::new(OURS, &label), &input, |b, input| {
        b.iter(|| {
            parser::parse(
                black_box(input.as_bytes()),
                ParseOptions {
                    filename: "Corefile",
                    directives: Some(V1_14_7.names),
                    env: &corefile::env::NoEnv,
                    resolver: &mut NoFiles,
                },
            )
        })
    });
    group.finish();

    let mut group = c.benchmark_group("corefile_load");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_with_input(BenchmarkId::new(OURS, &label), &input, |b, input| {
        b.iter(|| corefile::load(black_box(input.as_bytes())))
    });
    group.finish();

    let mut group = c.benchmark_group("corefile_format");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_with_input(BenchmarkId::new(OURS, &label), &input, |b, input| {
        b.iter(|| corefile::emit::format(black_box(input.as_bytes())))
    });
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
