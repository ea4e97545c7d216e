//! Corefile parsing throughput on a large generated Corefile (thousands of server blocks with
//! the directives seen in the corpus). No Rust peer parses CoreDNS's Corefile dialect, so
//! each group has only `ours`.

use std::fmt::Write as _;
use std::hint::black_box;

use benches::OURS;
use corefile::import::NoFiles;
use corefile::parser::{self, ParseOptions};
use corefile::plugin_order::V1_14_7;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// One server block per zone, with the directives a cluster DNS and a node cache use.
fn large_corefile(blocks: usize) -> String {
    let mut out =
        String::from("(common) {\n    errors\n    log . \"{remote} {type} {name}\"\n}\n\n");
    for i in 0..blocks {
        let _ = write!(
            out,
            "zone{i}.example.org:53 10.{}.{}.0/24 {{\n\
             \x20   import common\n\
             \x20   bind 169.254.20.10 10.96.0.10\n\
             \x20   cache 30 {{\n\
             \x20       success 9984 30\n\
             \x20       denial 9984 5\n\
             \x20   }}\n\
             \x20   reload\n\
             \x20   loop\n\
             \x20   health 169.254.20.10:8080 # liveness\n\
             \x20   prometheus :9253\n\
             \x20   hosts /etc/hosts zone{i}.example.org {{\n\
             \x20       10.0.0.{} db.zone{i}.example.org\n\
             \x20       fallthrough\n\
             \x20   }}\n\
             \x20   forward . 10.0.0.10 tls://9.9.9.9 {{\n\
             \x20       force_tcp\n\
             \x20       max_fails 3\n\
             \x20       expire 10s\n\
             \x20       policy sequential\n\
             \x20   }}\n\
             }}\n\n",
            i / 256,
            i % 256,
            i % 250
        );
    }
    out
}

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
