//! The normaliser and the restore model against what a real `iptables-save` printed (vector 18),
//! and the kernel checks of `docs/iptables.md` §8.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use iptables_model::codec::{Style, Styled};
use iptables_model::{RestoreError, Ruleset, Table, parse};

fn table_text(file: &iptables_model::RestoreFile, table: Table) -> String {
    Styled(file.table(table).unwrap(), Style::Save).to_string()
}

#[test]
fn restored_and_saved_equals_observed_iptables_save_on_both_backends() {
    let input = common::read("18_save_normalization.input.txt");
    let input = parse(&input).unwrap();
    let mut ruleset = Ruleset::new();
    ruleset.restore(&input, true).unwrap();
    let saved = ruleset.save(false);
    for backend in ["nft", "legacy"] {
        let observed = common::read(&format!(
            "18_save_normalization.iptables-{backend}-1.8.9-save.txt"
        ));
        let observed = parse(&observed).unwrap();
        for table in [Table::Filter, Table::Nat] {
            common::assert_text_eq(
                &format!("{backend} {}", table.name()),
                &table_text(&saved, table),
                &table_text(&observed, table),
            );
        }
    }
}

fn restore(text: &str) -> Result<(), RestoreError> {
    Ruleset::new().restore(&parse(text).unwrap(), true)
}

#[test]
fn kernel_checks_that_restore_test_misses_spec_8() {
    assert!(matches!(
        restore("*nat\n:A - [0:0]\n-A A -j B\nCOMMIT\n"),
        Err(RestoreError::MissingJumpTarget { .. })
    ));
    assert!(matches!(
        restore("*nat\n-A A -j ACCEPT\nCOMMIT\n"),
        Err(RestoreError::NoSuchChain { line: 2, .. })
    ));
    assert!(matches!(
        restore("*nat\n:A - [0:0]\n:B - [0:0]\n-A B -j A\n-X A\nCOMMIT\n"),
        Err(RestoreError::ChainBusy { .. })
    ));
    assert!(matches!(
        restore("*nat\n-X MISSING\nCOMMIT\n"),
        Err(RestoreError::NoSuchChain { .. })
    ));
    assert!(matches!(
        restore("*filter\n:A - [0:0]\n-A A -j DNAT --to-destination 1.2.3.4\nCOMMIT\n"),
        Err(RestoreError::TargetNotAllowed { .. })
    ));
    assert!(matches!(
        restore("*nat\n:A - [0:0]\n-A A -j REJECT\nCOMMIT\n"),
        Err(RestoreError::TargetNotAllowed { .. })
    ));
    assert!(matches!(
        restore("*nat\n:A - [0:0]\n:B - [0:0]\n-A A -j B\n-A B -j A\nCOMMIT\n"),
        Err(RestoreError::Loop { .. })
    ));
    assert!(matches!(
        restore("*nat\n:A ACCEPT [0:0]\nCOMMIT\n"),
        Err(RestoreError::BadPolicy { .. })
    ));
    restore("*nat\n:A - [0:0]\n:B - [0:0]\n-A A -j B\n-A B -j RETURN\nCOMMIT\n").unwrap();
}

#[test]
fn generated_corpus_rulesets_pass_the_kernel_checks() {
    for name in [
        "01_overall_rules.expected.txt",
        "03_bad_ips.expected.txt",
        "02_sync_repeated.step1_initial_full_sync.expected.txt",
    ] {
        restore(&common::read(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
