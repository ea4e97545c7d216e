//! nginx-conf: lossless parsing and emitting of large generated configs, beside
//! nginx-lint-parser (lossless rowan CST, in process) and crossplane 0.5.8 (Python, timed in
//! its own process so that interpreter start-up is not counted).
//!
//! Inputs are generated (`docs/nginx-conf.md` §10, `benches::nginx_inputs`): `plain-10k` (10,000
//! servers × 3 locations, regex locations, `if`, `map`, TLS, comments, 1,000 upstreams, about
//! 15.3 MB), `ingress-2k` (2,000 ingress-style servers × 2 locations, 18,000 Lua blocks, SSL,
//! about 9.3 MB), and the one-tenth versions `plain-1k` / `ingress-200` used for crossplane,
//! which needs seconds per megabyte.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use benches::OURS;
use benches::nginx_inputs::{ingress, plain};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

struct Input {
    name: &'static str,
    text: String,
}

fn inputs() -> Vec<Input> {
    vec![
        Input {
            name: "plain-10k",
            text: plain(10_000),
        },
        Input {
            name: "ingress-2k",
            text: ingress(2_000),
        },
    ]
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("nginx_conf_parse");
    group.sample_size(10);
    for input in inputs() {
        let bytes = input.text.as_bytes();
        assert_eq!(nginx_conf::parse(bytes).unwrap().to_bytes().unwrap(), bytes);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new(OURS, input.name), bytes, |b, bytes| {
            b.iter(|| nginx_conf::parse(black_box(bytes)).unwrap());
        });
        group.bench_with_input(
            BenchmarkId::new("nginx-lint-parser", input.name),
            &input.text,
            |b, text| b.iter(|| nginx_lint_parser::parse_string_rowan(black_box(text))),
        );
    }
    group.finish();
}

fn emit(c: &mut Criterion) {
    let mut group = c.benchmark_group("nginx_conf_emit");
    group.sample_size(10);
    for input in inputs() {
        let bytes = input.text.as_bytes();
        let config = nginx_conf::parse(bytes).unwrap();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new(OURS, format!("lossless/{}", input.name)),
            &config,
            |b, config| {
                b.iter(|| black_box(config).to_bytes().unwrap());
            },
        );
        group.bench_with_input(
            BenchmarkId::new(OURS, format!("format/{}", input.name)),
            &config,
            |b, config| {
                b.iter(|| black_box(config).format());
            },
        );
    }
    group.finish();
}

/// Times `crossplane.parse(path, single=True)` inside one Python process, `iters` times.
const CROSSPLANE: &str = "import sys, time, crossplane
path, iters = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
for _ in range(iters):
    payload = crossplane.parse(path, single=True)
    assert payload['config'][0]['parsed'], payload['errors']
print(time.perf_counter() - start)";

fn crossplane_available() -> bool {
    Command::new("python3")
        .args(["-c", "import crossplane"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn versus_crossplane(c: &mut Criterion) {
    if !crossplane_available() {
        eprintln!(
            "skipping nginx_conf_vs_crossplane: `pip install crossplane==0.5.8` to measure it"
        );
        return;
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("nginx-conf-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("nginx_conf_vs_crossplane");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    for (name, text) in [("plain-1k", plain(1_000)), ("ingress-200", ingress(200))] {
        let path = dir.join(format!("{name}.conf"));
        std::fs::write(&path, &text).unwrap();
        let bytes = text.as_bytes();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new(OURS, name), bytes, |b, bytes| {
            b.iter(|| nginx_conf::parse(black_box(bytes)).unwrap());
        });
        group.bench_with_input(BenchmarkId::new("crossplane", name), &path, |b, path| {
            b.iter_custom(|iters| {
                let output = Command::new("python3")
                    .args(["-c", CROSSPLANE])
                    .arg(path)
                    .arg(iters.to_string())
                    .output()
                    .unwrap();
                assert!(
                    output.status.success(),
                    "{}",
                    String::from_utf8_lossy(&output.stderr)
                );
                let seconds: f64 = String::from_utf8_lossy(&output.stdout)
                    .trim()
                    .parse()
                    .unwrap();
                Duration::from_secs_f64(seconds)
            });
        });
    }
    group.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, parse, emit, versus_crossplane);
criterion_main!(benches);
