//! Runs one `iptables-model` workload on a generated cluster, for instruction counts under
//! `valgrind --tool=callgrind`:
//!
//! `cargo run --release -p benches --example iptables_probe -- gen|parse|partial [SERVICES]`
//! (`partial`: one full sync, then 10 partial syncs that each change one service).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use benches::iptables_inputs::{cluster, full_sync, options};
use iptables_model::kube::Proxier;
use iptables_model::parse;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(2)
        .map_or(10_000, |s| s.parse().expect("a service count"));
    let (services, slices) = cluster(n, 3, 0);
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            black_box(full_sync(&services, &slices).restore.to_string());
        }
        Some("parse") => {
            let text = full_sync(&services, &slices).restore.to_string();
            let t = std::time::Instant::now();
            black_box(parse(&text).expect("generated text parses"));
            eprintln!("parse {} bytes in {:?}", text.len(), t.elapsed());
        }
        Some("partial") => {
            let mut changed = slices.clone();
            if let Some(slot) = changed.get_mut(n / 2) {
                *slot = cluster(n, 3, 1).1.swap_remove(n / 2);
            }
            let mut proxier = Proxier::new(options());
            proxier.sync(&services, &slices);
            proxier.restored();
            let t = std::time::Instant::now();
            for i in 0..10 {
                let next = if i % 2 == 0 { &changed } else { &slices };
                black_box(proxier.sync(&services, next).restore.to_string());
                proxier.restored();
            }
            eprintln!("10 partial syncs in {:?}", t.elapsed());
        }
        _ => eprintln!("usage: iptables_probe gen|parse|partial [SERVICES]"),
    }
}
