//! Runs one `nftables-model` workload on a generated cluster (the iptables benchmark's, 10,000
//! Services x 3 endpoints by default), for profiles and instruction counts under
//! `valgrind --tool=cachegrind` or `perf record`, without `nft` or a network namespace:
//!
//! `cargo run --release -p benches --example nftables_probe -- new|again [SERVICES] [RUNS]`
//!
//! `new`: a new proxier's first sync (full), `RUNS` times (default 5); `again`: one proxier's
//! full sync after a reported failure, `RUNS` times after a first one applied (as
//! `nftables_timing`'s "same proxier again"). Each run writes the
//! transaction as text (`Proxier::sync_text`), as a caller does before `nft -f`; the
//! result and a new proxier are dropped after the clock stops. Prints the best run's wall
//! and CPU time (with `PROBE_VERBOSE` set: every run's).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use benches::iptables_inputs::{cluster, options};
use nftables_model::kube::{NftOptions, Proxier};

/// The time this thread has run on a CPU, from `/proc/thread-self/schedstat` (nanoseconds;
/// less inflated than the wall clock on a busy host).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns: f64 = stat
        .split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .unwrap_or(0.0);
    ns / 1e9
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(2)
        .map_or(10_000, |s| s.parse().expect("a service count"));
    let runs: usize = args.get(3).map_or(5, |s| s.parse().expect("a run count"));
    let (services, slices) = cluster(n, 3, 0);
    let new_proxier = || Proxier::new(NftOptions::new(options())).unwrap();
    let mut living = new_proxier();
    let again = match args.get(1).map(String::as_str) {
        Some("new") => false,
        Some("again") => {
            // Its first sync applied: the kernel holds its chains, which a full sync checks.
            black_box(living.sync_text(&services, &slices, Duration::ZERO));
            living.applied(true);
            true
        }
        _ => panic!("usage: nftables_probe new|again [SERVICES] [RUNS]"),
    };
    let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
    let mut bytes = 0;
    for _ in 0..runs {
        // A new proxier is made before the clock starts; it and the sync's result are dropped
        // after it stops (a proxier lives on after its sync).
        let mut proxier = if again { None } else { Some(new_proxier()) };
        let (t, c) = (Instant::now(), cpu_seconds());
        let synced = match &mut proxier {
            Some(proxier) => proxier.sync_text(&services, &slices, Duration::ZERO),
            None => {
                living.applied(false);
                living.sync_text(&services, &slices, Duration::ZERO)
            }
        };
        let (w, c) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
        bytes = black_box(synced).transaction.as_str().len();
        if std::env::var_os("PROBE_VERBOSE").is_some() {
            eprintln!("{:.1} ms wall, {:.1} ms CPU", w * 1e3, c * 1e3);
        }
        wall = wall.min(w);
        cpu = cpu.min(c);
        drop(proxier);
    }
    eprintln!(
        "full sync {bytes} bytes: best {:.1} ms wall, {:.1} ms CPU",
        wall * 1e3,
        cpu * 1e3
    );
}
