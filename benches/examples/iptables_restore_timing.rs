//! Full and one-service partial syncs of generated clusters, generation and the real
//! `iptables-restore`, in a throwaway network namespace (needs root):
//!
//! `cargo run --release -p benches --example iptables_restore_timing -- legacy|nft 1000 5000 10000`
//!
//! Per size: generation time (best of 5), restore wall time and CPU time (user + sys of the
//! restore process, from `/proc/self/stat`'s children times), input size; for the full sync,
//! a minimal partial sync (`PartialSync::Minimal`) and kube-proxy's partial sync (KEP-3453).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use benches::iptables_inputs::{cluster, options};
use benches::netns_timing::{best_of, run_with_input};
use iptables_model::kube::{PartialSync, Proxier, jump_rules_text};
use netns::Namespace;

/// Restores `text` in `ns`; returns (wall, CPU).
fn restore(ns: &Namespace, program: &str, text: &str) -> (Duration, f64) {
    let args = ["-w", "5", "-W", "100000", "--noflush", "--counters"];
    run_with_input(ns, program, &args, text)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let backend = args.first().expect("legacy or nft").clone();
    let program = format!("iptables-{backend}-restore");
    println!("| backend | services | sync | generation | input | restore wall | restore CPU |");
    println!("|---|---|---|---|---|---|---|");
    for size in args.iter().skip(1).map(|s| s.parse::<usize>().unwrap()) {
        let ns = Namespace::add(format!("bench-{backend}-{size}-{}", std::process::id()))
            .expect("ip netns add (root is needed)");
        let (services, slices) = cluster(size, 3, 0);
        let after = cluster(size, 3, 1).1.swap_remove(size / 2);
        let row = |sync: &str, generation: Duration, bytes: usize, (wall, cpu): (Duration, f64)| {
            println!(
                "| {backend} | {size} | {sync} | {:.3} ms | {:.1} KB | {:.3} s | {cpu:.2} s |",
                generation.as_secs_f64() * 1000.0,
                bytes as f64 / 1000.0,
                wall.as_secs_f64(),
            );
        };
        restore(&ns, &program, &jump_rules_text());
        let mut proxier = Proxier::new(options()).with_partial_sync(PartialSync::Minimal);
        proxier.sync(&services, &slices);
        // A full sync of the objects the proxier holds (a periodic resync, or the one after a
        // failed restore): what service-proxy runs, without feeding the objects in again.
        let (generation, _) = best_of(5, || {
            proxier.force_full_sync();
            proxier.sync_changes().text.len()
        });
        proxier.force_full_sync();
        let text = proxier.sync_changes().text.clone();
        row(
            "full",
            generation,
            text.len(),
            restore(&ns, &program, &text),
        );
        proxier.restored();
        let mut kube_proxy = Proxier::new(options());
        kube_proxy.sync(&services, &slices);
        kube_proxy.restored();
        for (label, p) in [
            ("partial (minimal)", &mut proxier),
            ("partial (KEP-3453)", &mut kube_proxy),
        ] {
            let before = slices[size / 2].clone();
            let mut flip = false;
            // An even number of runs: the proxier ends where the kernel is (`before`).
            let (generation, _) = best_of(6, || {
                flip = !flip;
                let slice = if flip { &after } else { &before };
                p.update_endpoint_slices(&slice.namespace, &slice.service, vec![slice.clone()]);
                let n = p.sync_changes().text.len();
                p.restored();
                n
            });
            // The kernel holds `before`; restore the change to `after` for real.
            p.update_endpoint_slices(&after.namespace, &after.service, vec![after.clone()]);
            let text = p.sync_changes().text.clone();
            row(label, generation, text.len(), restore(&ns, &program, &text));
            p.restored();
            p.update_endpoint_slices(&before.namespace, &before.service, vec![before.clone()]);
            let text = p.sync_changes().text.clone();
            restore(&ns, &program, &text);
            p.restored();
        }
    }
}
