//! Runs one `iptables-model` workload on a generated cluster, for instruction counts under
//! `valgrind --tool=callgrind`:
//!
//! `cargo run --release -p benches --example iptables_probe -- gen|parse|partial|minimal [SERVICES]`
//! (`gen`, `parse`: best of 5; `partial`, `minimal`: one full sync, then 10 partial syncs of
//! that kind that each change one service's endpoints).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use benches::iptables_inputs::{cluster, full_sync, options};
use iptables_model::kube::{PartialSync, Proxier};
use iptables_model::parse;

/// This process's user + system CPU time, from `/proc/self/stat` (clock ticks of 10 ms).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<f64> = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    // After the command name and the state letter: utime and stime are the 12th and 13th numbers.
    (fields.get(10).copied().unwrap_or(0.0) + fields.get(11).copied().unwrap_or(0.0)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(2)
        .map_or(10_000, |s| s.parse().expect("a service count"));
    let (services, slices) = cluster(n, 3, 0);
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            // Best of 5, wall clock and this process's CPU time (less inflated on a busy host).
            let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
            let mut bytes = 0;
            for _ in 0..5 {
                let (t, c) = (std::time::Instant::now(), cpu_seconds());
                bytes = black_box(full_sync(&services, &slices).text).len();
                wall = wall.min(t.elapsed().as_secs_f64());
                cpu = cpu.min(cpu_seconds() - c);
            }
            eprintln!(
                "generate {bytes} bytes: best {:.1} ms wall, {:.1} ms CPU",
                wall * 1e3,
                cpu * 1e3
            );
        }
        Some("parse") => {
            // Best of 5, each parse with the drop of its document (as the benchmark times it).
            let text = full_sync(&services, &slices).text;
            let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
            for _ in 0..5 {
                let (t, c) = (std::time::Instant::now(), cpu_seconds());
                drop(black_box(parse(&text).expect("generated text parses")));
                wall = wall.min(t.elapsed().as_secs_f64());
                cpu = cpu.min(cpu_seconds() - c);
            }
            eprintln!(
                "parse {} bytes: best {:.1} ms wall, {:.1} ms CPU",
                text.len(),
                wall * 1e3,
                cpu * 1e3
            );
        }
        Some(mode @ ("partial" | "minimal")) => {
            let after = cluster(n, 3, 1).1.swap_remove(n / 2);
            let before = slices.get(n / 2).cloned().expect("a service in the middle");
            let partial = if mode == "minimal" {
                PartialSync::Minimal
            } else {
                PartialSync::KubeProxy
            };
            let mut proxier = Proxier::new(options()).with_partial_sync(partial);
            proxier.sync(&services, &slices);
            proxier.restored();
            let t = std::time::Instant::now();
            for i in 0..10 {
                let slice = if i % 2 == 0 { &after } else { &before };
                proxier.update_endpoint_slices(
                    &slice.namespace,
                    &slice.service,
                    vec![slice.clone()],
                );
                black_box(proxier.sync_changes().text.len());
                proxier.restored();
            }
            eprintln!("10 partial syncs in {:?}", t.elapsed());
        }
        _ => eprintln!("usage: iptables_probe gen|parse|partial|minimal [SERVICES]"),
    }
}
