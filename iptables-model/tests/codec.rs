//! The save/restore codec against every text file of the shared corpus.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests use std freely
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use iptables_model::codec::{ParseOptions, Style, Styled, parse_with};
use iptables_model::parse;

#[test]
fn every_corpus_text_round_trips_byte_for_byte() {
    let mut seen = 0;
    for (name, text) in common::corpus_texts() {
        let options = if name.starts_with("04_") {
            ParseOptions::kube_proxy_tests()
        } else {
            ParseOptions::default()
        };
        let file = parse_with(&text, options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let style = if name.contains("-save") {
            Style::Save
        } else {
            Style::Restore
        };
        let emitted = Styled(&file, style).to_string();
        if name.starts_with("04_") {
            // Unquoted multi-word comments are written back quoted; the model is unchanged.
            assert_eq!(parse(&emitted).unwrap(), file, "{name}");
        } else {
            common::assert_text_eq(&name, &emitted, &text);
        }
        seen += 1;
    }
    assert!(seen >= 14, "only {seen} corpus texts found");
}
