//! The transaction written as text while it is built (`Proxier::sync_text`,
//! `Proxier::sync_changed_text`) is the text of the operations `Proxier::sync` and
//! `Proxier::sync_changed` build, byte for byte, through full syncs (a new proxier's, a
//! restarted one's, after a failure), partial ones, stale chains and their deletion; and
//! `Synced::flushes_stale` says when a transaction flushes a chain it does not add.
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

use common::{fake_options_v4, fake_options_v6, many, overall};
use iptables_model::kube::{EndpointSlice, Service};
use nftables_model::kube::names::ELEMENT_CONTAINERS;
use nftables_model::kube::{NftOptions, Proxier, Synced};
use nftables_model::{Name, Op, Ruleset, Script, Transaction};

/// Whether `tx` flushes a chain it does not add (a chain no Service uses any more).
fn flushes_unadded_chain(tx: &Transaction) -> bool {
    let added: BTreeSet<&Name> = tx
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::AddChain(chain) => Some(&chain.name),
            _ => None,
        })
        .collect();
    tx.ops
        .iter()
        .any(|op| matches!(op, Op::FlushChain(name) if !added.contains(name)))
}

/// The two results are the same sync.
fn same(what: &str, ops: &Synced, text: &Synced<Script>) {
    assert_eq!(
        ops.transaction.to_text(),
        text.transaction.as_str(),
        "{what}"
    );
    assert_eq!(ops.transaction.len(), text.transaction.len(), "{what}");
    assert_eq!(ops.transaction.family, text.transaction.family(), "{what}");
    assert_eq!(ops.transaction.table, *text.transaction.table(), "{what}");
    assert_eq!(ops.cleanup, text.cleanup, "{what}");
    assert_eq!(ops.full, text.full, "{what}");
    assert_eq!(ops.rejected, text.rejected, "{what}");
    assert_eq!(ops.flushes_stale, text.flushes_stale, "{what}");
    assert_eq!(
        ops.flushes_stale,
        flushes_unadded_chain(&ops.transaction),
        "{what}"
    );
    assert_eq!(
        Script::from(&ops.transaction).as_str(),
        text.transaction.as_str()
    );
}

type Keyed<T> = BTreeMap<(String, String), T>;

fn keyed(
    services: &[Service],
    slices: &[EndpointSlice],
) -> (Keyed<Service>, Keyed<Vec<EndpointSlice>>) {
    let by_key = services
        .iter()
        .map(|s| ((s.namespace.clone(), s.name.clone()), s.clone()))
        .collect();
    let mut slices_by_key: Keyed<Vec<EndpointSlice>> = BTreeMap::new();
    for e in slices {
        slices_by_key
            .entry((e.namespace.clone(), e.service.clone()))
            .or_default()
            .push(e.clone());
    }
    (by_key, slices_by_key)
}

/// Runs the same syncs on two proxiers, one building operations and one text.
fn lockstep(options: &NftOptions, services: &[Service], slices: &[EndpointSlice]) {
    let mut ops = Proxier::new(options.clone()).unwrap();
    let mut text = Proxier::new(options.clone()).unwrap();
    let mut table = Ruleset::new();
    let mut now = Duration::ZERO;
    let mut step = |what: &str,
                    ops: &mut Proxier,
                    text: &mut Proxier,
                    services: &[Service],
                    slices: &[EndpointSlice],
                    now: Duration,
                    ok: bool|
     -> bool {
        let (a, b) = (
            ops.sync(services, slices, now),
            text.sync_text(services, slices, now),
        );
        same(what, &a, &b);
        if ok {
            if let Some(cleanup) = &a.cleanup {
                table.apply(cleanup).unwrap();
            }
            table.apply(&a.transaction).unwrap();
        }
        ops.applied(ok);
        text.applied(ok);
        b.flushes_stale
    };
    assert!(!step(
        "first", &mut ops, &mut text, services, slices, now, true
    ));
    // Without the first Service and with the endpoints of the second moved.
    let mut moved = slices.to_vec();
    moved.retain(|e| e.service != services[0].name || e.namespace != services[0].namespace);
    if let Some(e) = moved.first_mut() {
        e.endpoints.truncate(1);
    }
    now += Duration::from_millis(100);
    // (An IPv6 proxier writes none of these IPv4 Services.)
    let stale = step(
        "partial",
        &mut ops,
        &mut text,
        &services[1..],
        &moved,
        now,
        true,
    );
    assert_eq!(stale, !options.proxy.ipv6);
    // A failure, then the full sync after it; stale chains deleted more than a second later.
    now += Duration::from_millis(100);
    step("failed", &mut ops, &mut text, services, slices, now, false);
    now += Duration::from_millis(100);
    step(
        "after failure",
        &mut ops,
        &mut text,
        services,
        slices,
        now,
        true,
    );
    now += Duration::from_secs(2);
    step(
        "later",
        &mut ops,
        &mut text,
        &services[1..],
        &moved,
        now,
        true,
    );
    now += Duration::from_secs(2);
    step(
        "cleanup",
        &mut ops,
        &mut text,
        &services[1..],
        &moved,
        now,
        true,
    );

    // Told which Services changed.
    let (by_key, slices_by_key) = keyed(services, slices);
    let changed: BTreeSet<(String, String)> = by_key.keys().take(2).cloned().collect();
    let (a, b) = (
        ops.sync_changed(&by_key, &slices_by_key, &changed, now),
        text.sync_changed_text(&by_key, &slices_by_key, &changed, now),
    );
    same("told", &a, &b);
    table.apply(&a.transaction).unwrap();
    ops.applied(true);
    text.applied(true);

    // A restart on the table: new proxiers told its chains, sets and elements.
    let mut restarted = [ops, text].map(|_| Proxier::new(options.clone()).unwrap());
    for proxier in &mut restarted {
        proxier.note_existing(table.chains.keys().chain(table.containers.keys()).cloned());
        for name in ELEMENT_CONTAINERS {
            let name = Name::new(name).unwrap();
            let state = table.containers.get(&name).unwrap();
            proxier.note_elements(
                &name,
                state.elements.iter().map(|e| (e.key, e.value.clone())),
            );
        }
    }
    let [mut ops, mut text] = restarted;
    let (a, b) = (
        ops.sync_changed(&by_key, &slices_by_key, &BTreeSet::new(), now),
        text.sync_changed_text(&by_key, &slices_by_key, &BTreeSet::new(), now),
    );
    same("restart", &a, &b);
}

#[test]
fn the_text_is_the_text_of_the_operations() {
    let (services, slices) = overall();
    lockstep(&fake_options_v4(), &services, &slices);
    lockstep(&fake_options_v6(), &services, &slices);
    let (services, slices) = many(60);
    lockstep(&fake_options_v4(), &services, &slices);
}
