//! Partial syncs, as kube-proxy's: after a full sync only what changed is written, and stale
//! chains are flushed at once and deleted by a sync at least a second later.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

extern crate alloc;

use alloc::collections::{BTreeMap, BTreeSet};
use core::time::Duration;

use common::{fake_options_v4, many};
use iptables_model::kube::{EndpointSlice, Service};
use nftables_model::kube::Proxier;
use nftables_model::{Op, Ruleset};

/// The transaction that moves one endpoint of one Service among `n`, after a full sync.
fn one_change(n: usize) -> (usize, usize) {
    let (services, mut slices) = many(n);
    let mut proxier = Proxier::new(fake_options_v4()).unwrap();
    let mut table = Ruleset::new();
    let full = proxier.sync(&services, &slices, Duration::ZERO);
    table.apply(&full.transaction).unwrap();
    proxier.applied(true);
    // A ClusterIP Service (odd index) from the middle.
    let victim: &mut EndpointSlice = &mut slices[(n / 2) | 1];
    victim.endpoints[0].addresses = vec!["10.99.0.1".into()];
    let partial = proxier.sync(&services, &slices, Duration::from_millis(10));
    assert!(!partial.full);
    table.apply(&partial.transaction).unwrap();
    proxier.applied(true);
    (
        partial.transaction.len(),
        partial.transaction.to_text().len(),
    )
}

#[test]
fn one_changed_service_costs_the_same_among_10_or_2000() {
    let small = one_change(10);
    let large = one_change(2000);
    assert_eq!(small.0, large.0, "operations");
    // The text differs only by the digits of the Service's name and addresses.
    assert!(large.1.abs_diff(small.1) < 200, "{small:?} {large:?}");
    assert!(small.0 < 20, "{small:?}");
}

#[test]
fn stale_chains_are_flushed_then_deleted_a_second_later() {
    let (services, slices) = many(3);
    let mut proxier = Proxier::new(fake_options_v4()).unwrap();
    let mut table = Ruleset::new();
    let full = proxier.sync(&services, &slices, Duration::ZERO);
    table.apply(&full.transaction).unwrap();
    proxier.applied(true);
    let before = table.chains.len();

    // svc1 goes away: its chains are flushed, its elements deleted, the chains kept.
    let t1 = Duration::from_secs(10);
    let gone = proxier.sync(&services[..1], &slices[..1], t1);
    let text = gone.transaction.to_text();
    assert!(gone.cleanup.is_none());
    assert!(
        text.contains("flush chain ip kube-proxy service-"),
        "{text}"
    );
    assert!(text.contains("delete element ip kube-proxy service-ips { 172.30.0.1 . tcp . 80 }"));
    assert!(!text.contains("delete chain"), "{text}");
    table.apply(&gone.transaction).unwrap();
    proxier.applied(true);
    assert_eq!(table.chains.len(), before);

    // Less than a second later nothing is deleted; after, a separate transaction deletes them.
    let soon = proxier.sync(
        &services[..1],
        &slices[..1],
        t1 + Duration::from_millis(500),
    );
    assert!(soon.cleanup.is_none());
    table.apply(&soon.transaction).unwrap();
    proxier.applied(true);
    let later = proxier.sync(&services[..1], &slices[..1], t1 + Duration::from_secs(3));
    let cleanup = later.cleanup.expect("stale chains deleted");
    assert!(
        cleanup
            .ops
            .iter()
            .all(|op| matches!(op, Op::DeleteChain(_)))
    );
    table.apply(&cleanup).unwrap();
    table.apply(&later.transaction).unwrap();
    proxier.applied(true);
    assert!(table.chains.len() < before);
    // Nothing of svc1 or svc2 remains.
    let dump = table.dump(later.transaction.family, &later.transaction.table);
    assert!(
        !dump.contains("ns/svc1/") && !dump.contains("ns/svc2/"),
        "{dump}"
    );
}

#[test]
fn a_failed_transaction_makes_the_next_sync_full() {
    let (services, slices) = many(2);
    let mut proxier = Proxier::new(fake_options_v4()).unwrap();
    let first = proxier.sync(&services, &slices, Duration::ZERO);
    assert!(first.full);
    proxier.applied(false);
    let second = proxier.sync(&services, &slices, Duration::ZERO);
    assert!(second.full);
    // Not the first sync any more: the base chains are not recreated.
    assert!(!second.transaction.to_text().contains("delete chain"));
}

#[test]
fn a_failed_cleanup_is_retried() {
    let (services, slices) = many(2);
    let mut proxier = Proxier::new(fake_options_v4()).unwrap();
    let full = proxier.sync(&services, &slices, Duration::ZERO);
    proxier.applied(true);
    assert!(full.cleanup.is_none());
    let gone = proxier.sync(&services[..1], &slices[..1], Duration::from_secs(1));
    proxier.applied(true);
    let flushed = gone
        .transaction
        .ops
        .iter()
        .filter(|op| matches!(op, Op::FlushChain(_)))
        .count();
    assert!(flushed > 0);
    let later = proxier.sync(&services[..1], &slices[..1], Duration::from_secs(5));
    let cleanup = later.cleanup.unwrap();
    assert_eq!(cleanup.len(), flushed);
    proxier.applied(true);
    proxier.cleanup_failed(&cleanup);
    // The chains are flushed again, then deleted by a later sync.
    let again = proxier.sync(&services[..1], &slices[..1], Duration::from_secs(6));
    assert!(again.cleanup.is_none());
    let reflushed = again
        .transaction
        .ops
        .iter()
        .filter(|op| matches!(op, Op::FlushChain(_)))
        .count();
    assert_eq!(reflushed, flushed);
    proxier.applied(true);
    let retry = proxier.sync(&services[..1], &slices[..1], Duration::from_secs(8));
    assert_eq!(retry.cleanup.map(|c| c.len()), Some(flushed));
}

/// The inputs of `sync_changed`: Services and their slices by (namespace, name).
type Keyed = (
    BTreeMap<(String, String), Service>,
    BTreeMap<(String, String), Vec<EndpointSlice>>,
);

fn keyed(services: &[Service], slices: &[EndpointSlice]) -> Keyed {
    let mut by_slice: BTreeMap<(String, String), Vec<EndpointSlice>> = BTreeMap::new();
    for e in slices {
        by_slice
            .entry((e.namespace.clone(), e.service.clone()))
            .or_default()
            .push(e.clone());
    }
    let by_service = services
        .iter()
        .map(|s| ((s.namespace.clone(), s.name.clone()), s.clone()))
        .collect();
    (by_service, by_slice)
}

#[test]
fn a_told_sync_reads_only_the_services_named() {
    let (services, mut slices) = many(20);
    let mut proxier = Proxier::new(fake_options_v4()).unwrap();
    let (by_service, by_slice) = keyed(&services, &slices);
    // The first sync is full whatever is named.
    let full = proxier.sync_changed(&by_service, &by_slice, &BTreeSet::new(), Duration::ZERO);
    assert!(full.full);
    proxier.applied(true);

    let victim = (slices[11].namespace.clone(), slices[11].service.clone());
    slices[11].endpoints[0].addresses = vec!["10.99.0.1".into()];
    let (by_service, by_slice) = keyed(&services, &slices);
    // Not named: not read, nothing written.
    let silent = proxier.sync_changed(
        &by_service,
        &by_slice,
        &BTreeSet::new(),
        Duration::from_millis(10),
    );
    assert!(silent.transaction.is_empty(), "{}", silent.transaction);
    proxier.applied(true);
    // Named: only that Service's objects are written.
    let told = proxier.sync_changed(
        &by_service,
        &by_slice,
        &BTreeSet::from([victim.clone()]),
        Duration::from_millis(20),
    );
    assert!(!told.full);
    let text = told.transaction.to_text();
    assert!(text.contains("10.99.0.1"), "{text}");
    let others = services
        .iter()
        .filter(|s| s.name != victim.1)
        .any(|s| text.contains(&format!("/{}/", s.name)));
    assert!(!others, "{text}");
    proxier.applied(true);
    // Named again with nothing new: nothing written but the stale endpoint chain, flushed
    // again as every sync does until it is deleted.
    let again = proxier.sync_changed(
        &by_service,
        &by_slice,
        &BTreeSet::from([victim]),
        Duration::from_millis(30),
    );
    assert!(
        again
            .transaction
            .ops
            .iter()
            .all(|op| matches!(op, Op::FlushChain(_))),
        "{}",
        again.transaction
    );
}
