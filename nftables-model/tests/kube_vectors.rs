//! kube-proxy's whole-ruleset unit tests (`pkg/proxy/nftables/proxier_test.go`): the table
//! after our sync, dumped as knftables' fake dumps it, equals their expected text after the
//! sorting their helper applies (`canonical_order`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use core::time::Duration;

use common::fake_options_v4;
use nftables_model::canonical::canonical_order;
use nftables_model::kube::Proxier;
use nftables_model::{Ruleset, Transaction};

fn assert_same(what: &str, expected: &str, ours: &str) {
    let (e, o) = (canonical_order(expected), canonical_order(ours));
    if e != o {
        let el: Vec<&str> = e.lines().collect();
        let ol: Vec<&str> = o.lines().collect();
        let missing: Vec<&&str> = el.iter().filter(|l| !ol.contains(l)).collect();
        let extra: Vec<&&str> = ol.iter().filter(|l| !el.contains(l)).collect();
        panic!("{what}: dumps differ\nmissing: {missing:#?}\nextra: {extra:#?}\nours:\n{o}");
    }
}

/// Applies `tx` to `table` and returns the dump.
fn apply(table: &mut Ruleset, tx: &Transaction) -> String {
    table.apply(tx).unwrap();
    table.dump(tx.family, &tx.table)
}

/// `TestOverallNFTablesRules` (proxier_test.go, commit 030880a5dc54): six Services, IPv4.
#[test]
fn test_overall_nftables_rules() {
    let (services, slices) = common::overall();
    let mut proxier = Proxier::new(fake_options_v4()).unwrap();
    let synced = proxier.sync(&services, &slices, Duration::ZERO);
    assert!(synced.full && synced.rejected.is_empty());
    let mut table = Ruleset::new();
    let dump = apply(&mut table, &synced.transaction);
    let expected = [BASE, include_str!("data/overall_nftables_rules.nft")].concat();
    assert_same("TestOverallNFTablesRules", &expected, &dump);

    // kube-proxy's test syncs again unchanged: a partial sync writes nothing and the table
    // stays the same.
    proxier.applied(true);
    let again = proxier.sync(&services, &slices, Duration::from_secs(5));
    assert!(!again.full);
    assert!(again.transaction.is_empty(), "{}", again.transaction);
    assert!(again.cleanup.is_none());
}

const BASE: &str = include_str!("data/base_rules.nft");

/// The Services both `TestSyncProxyRulesRepeated` and `TestSyncProxyRulesStartup` start with:
/// `ns1/svc1` (172.30.0.41, p80 at 10.0.1.1) and `ns2/svc2` (172.30.0.42, p8080 at
/// 10.0.2.1).
fn two_services() -> (
    Vec<iptables_model::kube::Service>,
    Vec<iptables_model::kube::EndpointSlice>,
) {
    use common::{ep_port, port, service, slice};
    let tcp = iptables_model::kube::Protocol::Tcp;
    let services = vec![
        service("ns1", "svc1", "172.30.0.41", vec![port("p80", 80, tcp, 0)]),
        service(
            "ns2",
            "svc2",
            "172.30.0.42",
            vec![port("p8080", 8080, tcp, 0)],
        ),
    ];
    let slices = vec![
        slice(
            "ns1",
            "svc1",
            ep_port("p80", 80, tcp),
            &[("10.0.1.1", None)],
        ),
        slice(
            "ns2",
            "svc2",
            ep_port("p8080", 8080, tcp),
            &[("10.0.2.1", None)],
        ),
    ];
    (services, slices)
}

/// The steps of a data file: (name, operations checked, expected text after `BASE`).
fn steps(text: &str) -> Vec<(String, Option<usize>, String)> {
    let mut out: Vec<(String, Option<usize>, String)> = Vec::new();
    for line in text.lines() {
        if let Some(ops) = line.strip_prefix("## ops ") {
            out.last_mut().unwrap().1 = ops.parse().ok();
        } else if let Some(name) = line.strip_prefix("## ") {
            out.push((name.into(), None, String::new()));
        } else if let Some(step) = out.last_mut() {
            step.2.push_str(line);
            step.2.push('\n');
        }
    }
    out
}

/// `TestSyncProxyRulesStartup` (proxier_test.go, commit 81810de635aa): a new proxier (a
/// restart) finds part of what it wants in the kernel, lists it (chains, sets, the elements
/// of the sets and maps it fills) and writes only the rest: existing elements and endpoint
/// chains are kept, the Service chains rewritten.
#[test]
fn test_sync_proxy_rules_startup() {
    use common::{ep_port, port, service, slice};
    use iptables_model::kube::Protocol;
    use nftables_model::Name;
    use nftables_model::kube::names::ELEMENT_CONTAINERS;
    let tcp = Protocol::Tcp;
    let data = steps(include_str!("data/sync_proxy_rules_startup.nft"));
    let [(_, _, preloaded), (_, Some(extra_ops), expected)] = data.as_slice() else {
        panic!("sync_proxy_rules_startup.nft: two steps expected");
    };
    // A new proxier told what the kernel holds: its chains and sets, and the elements of
    // the sets and maps (as `nft list` gives them after an earlier run).
    let lister = |table: &Ruleset| {
        let mut proxier = Proxier::new(fake_options_v4()).unwrap();
        proxier.note_existing(table.chains.keys().chain(table.containers.keys()).cloned());
        // A set or map the table does not have is listed as empty (kube-proxy's
        // `readOrReset` on a not-found error).
        for name in ELEMENT_CONTAINERS {
            let name = Name::new(name).unwrap();
            let elements = table
                .containers
                .get(&name)
                .into_iter()
                .flat_map(|state| state.elements.iter().map(|e| (e.key, e.value.clone())));
            assert!(proxier.note_elements(&name, elements));
        }
        proxier
    };
    // setupOps: a first sync without Services into a table that has nothing yet.
    let setup_ops = lister(&Ruleset::new())
        .sync(&[], &[], Duration::ZERO)
        .transaction
        .len();

    // The table an earlier run left: svc1 and svc2 with one endpoint each (the test's
    // ParseDump, checked line for line).
    let mut table = Ruleset::new();
    let (mut services, mut slices) = two_services();
    let mut earlier = Proxier::new(fake_options_v4()).unwrap();
    let dump = apply(
        &mut table,
        &earlier.sync(&services, &slices, Duration::ZERO).transaction,
    );
    assert_same("preloaded", &[BASE, preloaded].concat(), &dump);

    // svc1 gains a second endpoint and svc3, without endpoints, is added.
    services.push(service(
        "ns3",
        "svc3",
        "172.30.0.43",
        vec![port("p80", 80, tcp, 0)],
    ));
    slices[0] = slice(
        "ns1",
        "svc1",
        ep_port("p80", 80, tcp),
        &[("10.0.1.1", None), ("10.0.1.2", None)],
    );
    let mut proxier = lister(&table);
    let synced = proxier.sync(&services, &slices, Duration::ZERO);
    assert!(synced.full);
    let dump = apply(&mut table, &synced.transaction);
    assert_same("startup", &[BASE, expected].concat(), &dump);
    assert_eq!(
        synced.transaction.len(),
        setup_ops + extra_ops,
        "setupOps {setup_ops}:\n{}",
        synced.transaction
    );

    // A proxier told nothing about the kernel flushes the sets and maps instead, and reaches
    // the same table.
    let mut blind = Proxier::new(fake_options_v4()).unwrap();
    let blind_tx = blind.sync(&services, &slices, Duration::ZERO).transaction;
    let dump = apply(&mut table, &blind_tx);
    assert_same("told nothing", &[BASE, expected].concat(), &dump);
    assert!(blind_tx.len() > synced.transaction.len());
}

/// `TestSyncProxyRulesRepeated` (proxier_test.go, commit 030880a5dc54): a full sync, then
/// partial ones as Services and endpoints come and go; after each, the table and the number
/// of operations of the transaction (stale chains are deleted by a transaction of their own).
#[test]
fn test_sync_proxy_rules_repeated() {
    use common::{ep_port, port, service, slice};
    use iptables_model::kube::Protocol;
    let tcp = Protocol::Tcp;
    let expected = steps(include_str!("data/sync_proxy_rules_repeated.nft"));
    let mut step = expected.iter();
    let mut proxier = Proxier::new(fake_options_v4()).unwrap();
    let mut table = Ruleset::new();
    let mut now = Duration::ZERO;
    let mut check = |proxier: &mut Proxier, services: &[_], slices: &[_], now: Duration| {
        let (name, ops, text) = step.next().unwrap();
        let synced = proxier.sync(services, slices, now);
        if let Some(cleanup) = &synced.cleanup {
            table.apply(cleanup).unwrap();
        }
        let dump = apply(&mut table, &synced.transaction);
        proxier.applied(true);
        assert_same(name, &[BASE, text].concat(), &dump);
        if let Some(ops) = ops {
            assert_eq!(
                synced.transaction.len(),
                *ops,
                "{name}:\n{}",
                synced.transaction
            );
        }
    };
    let (mut services, mut slices) = two_services();
    let tick = |now: &mut Duration| {
        *now += Duration::from_millis(100);
        *now
    };
    check(&mut proxier, &services, &slices, tick(&mut now));

    services.push(service(
        "ns3",
        "svc3",
        "172.30.0.43",
        vec![port("p80", 80, tcp, 0)],
    ));
    slices.push(slice(
        "ns3",
        "svc3",
        ep_port("p80", 80, tcp),
        &[("10.0.3.1", None)],
    ));
    check(&mut proxier, &services, &slices, tick(&mut now));

    services.retain(|s| s.name != "svc2");
    check(&mut proxier, &services, &slices, tick(&mut now));

    now += Duration::from_secs(2); // ageStaleChains
    check(&mut proxier, &services, &slices, tick(&mut now));

    services.push(service(
        "ns4",
        "svc4",
        "172.30.0.44",
        vec![port("p80", 80, tcp, 0)],
    ));
    check(&mut proxier, &services, &slices, tick(&mut now));

    slices.push(slice(
        "ns4",
        "svc4",
        ep_port("p80", 80, tcp),
        &[("10.0.4.1", None)],
    ));
    check(&mut proxier, &services, &slices, tick(&mut now));

    let set_svc3 = |slices: &mut Vec<iptables_model::kube::EndpointSlice>, ips: &[&str]| {
        let e = slices.iter_mut().find(|e| e.service == "svc3").unwrap();
        e.endpoints = slice(
            "ns3",
            "svc3",
            ep_port("p80", 80, tcp),
            &ips.iter().map(|ip| (*ip, None)).collect::<Vec<_>>(),
        )
        .endpoints;
    };
    set_svc3(&mut slices, &["10.0.3.2"]);
    check(&mut proxier, &services, &slices, tick(&mut now));

    now += Duration::from_secs(2); // ageStaleChains
    set_svc3(&mut slices, &["10.0.3.2", "10.0.3.3"]);
    check(&mut proxier, &services, &slices, tick(&mut now));

    set_svc3(&mut slices, &[]);
    check(&mut proxier, &services, &slices, tick(&mut now));

    set_svc3(&mut slices, &["10.0.3.2", "10.0.3.3"]);
    check(&mut proxier, &services, &slices, tick(&mut now));
    assert!(step.next().is_none());

    // Empty svc3 and restore it after its chains aged: they are deleted (in the cleanup
    // transaction) and created again; then a sync without changes writes nothing.
    set_svc3(&mut slices, &[]);
    let emptied = proxier.sync(&services, &slices, tick(&mut now));
    table.apply(&emptied.transaction).unwrap();
    proxier.applied(true);
    now += Duration::from_secs(2);
    set_svc3(&mut slices, &["10.0.3.2", "10.0.3.3"]);
    let restored = proxier.sync(&services, &slices, tick(&mut now));
    let cleanup = restored.cleanup.as_ref().expect("aged chains deleted");
    assert_eq!(cleanup.len(), 3, "{cleanup}");
    table.apply(cleanup).unwrap();
    let dump = apply(&mut table, &restored.transaction);
    proxier.applied(true);
    let last = &expected.last().unwrap().2;
    assert_same("restore after aging", &[BASE, last].concat(), &dump);
    let idle = proxier.sync(&services, &slices, tick(&mut now));
    assert!(idle.transaction.is_empty() && idle.cleanup.is_none());
}
