//! kube-proxy's nftables mode at scale: generation of the full and of a one-service
//! transaction (`nftables_model::kube::Proxier`), and the real `nft -f -` applying them, in a
//! throwaway network namespace (needs root):
//!
//! `cargo run --release -p benches --example nftables_timing -- 1000 5000 10000`
//!
//! The clusters are the iptables benchmark's (`benches::iptables_inputs`), so the rows sit
//! beside `iptables_restore_timing`'s. Per size: generation time (best of 10: the first
//! runs of a process also grow its heap; the transaction
//! written as text, `Proxier::sync_text`, as service-proxy asks for it), `nft` wall time
//! and CPU time (user + sys of the `nft` process, from `/proc/self/stat`'s children times),
//! transaction size; for the full sync (a new proxier's first, and the same proxier's again,
//! as after a failure), for a restart (a new proxier on the table found, one sync), for one service whose endpoints all change (given every Service, and
//! told which changed), and `nft`'s own floor at that table size (a transaction that only
//! re-adds the table).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use benches::iptables_inputs::{cluster, options};
use benches::netns_timing::{best_of, run_with_input};
use iptables_model::kube::{EndpointSlice, Service};
use netns::Namespace;
use nftables_model::kube::names::ELEMENT_CONTAINERS;
use nftables_model::kube::{NftOptions, Proxier};
use nftables_model::{Name, Ruleset};

/// `nft -f -` with `text` in `ns`; returns (wall, CPU).
fn apply(ns: &Namespace, text: &str) -> (Duration, f64) {
    run_with_input(ns, "nft", &["-f", "-"], text)
}

/// The slices of each Service, by (namespace, name).
fn by_service(slices: &[EndpointSlice]) -> BTreeMap<(String, String), Vec<EndpointSlice>> {
    let mut map: BTreeMap<(String, String), Vec<EndpointSlice>> = BTreeMap::new();
    for e in slices {
        map.entry((e.namespace.clone(), e.service.clone()))
            .or_default()
            .push(e.clone());
    }
    map
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let new_proxier = || Proxier::new(NftOptions::new(options())).unwrap();
    println!("| services | sync | generation | transaction | nft -f wall | nft -f CPU |");
    println!("|---|---|---|---|---|---|");
    for size in sizes {
        let ns = Namespace::add(format!("bench-nft-{size}-{}", std::process::id()))
            .expect("ip netns add (root is needed)");
        let (services, slices) = cluster(size, 3, 0);
        let before = slices[size / 2].clone();
        let after = cluster(size, 3, 1).1.swap_remove(size / 2);
        let changed = |slice: &_| {
            let mut all = slices.clone();
            all[size / 2] = std::clone::Clone::clone(slice);
            all
        };
        let (with_after, with_before) = (changed(&after), changed(&before));
        let row = |sync: &str, generation: Duration, bytes: usize, (wall, cpu): (Duration, f64)| {
            println!(
                "| {size} | {sync} | {:.3} ms | {:.1} KB | {:.3} s | {cpu:.2} s |",
                generation.as_secs_f64() * 1000.0,
                bytes as f64 / 1000.0,
                wall.as_secs_f64(),
            );
        };

        // The proxier and its transaction are returned, so they are dropped after the clock
        // stops (a proxier lives on after its sync).
        let (generation, _) = best_of(10, || {
            let mut proxier = new_proxier();
            let synced = proxier.sync_text(&services, &slices, Duration::ZERO);
            (proxier, synced)
        });
        let mut proxier = new_proxier();
        // As operations this once: the in-memory kernel of the restart below applies them.
        let full = proxier.sync(&services, &slices, Duration::ZERO).transaction;
        let text = full.to_text();
        row("full", generation, text.len(), apply(&ns, &text));
        proxier.applied(true);
        // A restart: a new proxier told what the kernel holds (chains, sets, the elements of
        // the six sets and maps, as service-proxy lists them) keeps the elements and endpoint
        // chains and writes the Service chains again.
        let mut kernel = Ruleset::new();
        kernel.apply(&full).unwrap();
        let mut restarted = new_proxier();
        restarted.note_existing(
            kernel
                .chains
                .keys()
                .chain(kernel.containers.keys())
                .cloned(),
        );
        for name in ELEMENT_CONTAINERS {
            let name = Name::new(name).unwrap();
            let state = kernel.containers.get(&name).unwrap();
            restarted.note_elements(
                &name,
                state.elements.iter().map(|e| (e.key, e.value.clone())),
            );
        }
        let started = Instant::now();
        let restart = restarted
            .sync_text(&services, &slices, Duration::ZERO)
            .transaction;
        let took = started.elapsed();
        let restart_text = restart.into_text();
        row(
            "restart (new proxier, table found)",
            took,
            restart_text.len(),
            apply(&ns, &restart_text),
        );
        // A full sync again by the same proxier after a failure (the kernel's elements not
        // listed again): what the iptables rows' full syncs measure.
        let (again, _) = best_of(10, || {
            proxier.applied(false);
            proxier.sync_text(&services, &slices, Duration::ZERO)
        });
        proxier.applied(true);
        println!(
            "| {size} | full, same proxier again | {:.3} ms | | | |",
            again.as_secs_f64() * 1000.0
        );

        // One service's endpoints change back and forth; an even number of runs leaves the
        // proxier where the kernel is (`before`). The transaction's text is part of the cost.
        let mut flip = false;
        let mut now = Duration::ZERO;
        let (generation, _) = best_of(6, || {
            flip = !flip;
            let all = if flip { &with_after } else { &with_before };
            now += Duration::from_millis(10);
            let n = proxier
                .sync_text(&services, all, now)
                .transaction
                .as_str()
                .len();
            proxier.applied(true);
            n
        });
        // The same, the proxier told which Service changed (`sync_changed`, as service-proxy
        // does): it reads that Service alone.
        let service_map: BTreeMap<(String, String), Service> = services
            .iter()
            .map(|s| ((s.namespace.clone(), s.name.clone()), s.clone()))
            .collect();
        let (map_after, map_before) = (by_service(&with_after), by_service(&with_before));
        let told = BTreeSet::from([(after.namespace.clone(), after.service.clone())]);
        let (told_generation, _) = best_of(6, || {
            flip = !flip;
            let all = if flip { &map_after } else { &map_before };
            now += Duration::from_millis(10);
            let n = proxier
                .sync_changed_text(&service_map, all, &told, now)
                .transaction
                .as_str()
                .len();
            proxier.applied(true);
            n
        });
        // The kernel holds `before`; apply the change to `after` for real. (The chains the
        // runs above flushed are stale in the proxier's eyes, not yet due for deletion.)
        now += Duration::from_millis(10);
        let text = proxier
            .sync_text(&services, &with_after, now)
            .transaction
            .into_text();
        row("one service", generation, text.len(), apply(&ns, &text));
        println!(
            "| {size} | one service, told (`sync_changed`) | {:.3} ms | | | |",
            told_generation.as_secs_f64() * 1000.0
        );
        proxier.applied(true);
        // What nft costs whatever the change, at this table size: a transaction that only
        // re-adds the table.
        let noop = "add table ip kube-proxy\n";
        row(
            "nothing (`add table`)",
            Duration::ZERO,
            noop.len(),
            apply(&ns, noop),
        );
    }
}
