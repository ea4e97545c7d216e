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
    let expected = include_str!("data/overall_nftables_rules.nft");
    assert_same("TestOverallNFTablesRules", expected, &dump);

    // kube-proxy's test syncs again unchanged: a partial sync writes nothing and the table
    // stays the same.
    proxier.applied(true);
    let again = proxier.sync(&services, &slices, Duration::from_secs(5));
    assert!(!again.full);
    assert!(again.transaction.is_empty(), "{}", again.transaction);
    assert!(again.cleanup.is_none());
}
