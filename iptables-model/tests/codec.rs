//! The save/restore codec against every text file of the iptables corpus (`testdata/iptables/`).
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

#[test]
fn every_command_and_option_kind_round_trips() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/corpus/iptables_parse/odd_options.txt"
    ))
    .unwrap();
    let file = parse(&text).unwrap();
    assert_eq!(file.tables.len(), 2);
    assert_eq!(parse(&file.to_string()).unwrap(), file);
    assert_eq!(
        file.to_string().lines().nth(2).unwrap(),
        r#"[1:2] -A INPUT -i eth+ ! -s 10.0.0.0/8 -p udp -m multiport --dports 53,8000:8080 -m foo --bar "x y" -j LOG --log-prefix "p: ""#
    );
}

#[test]
fn errors_carry_line_and_column() {
    use iptables_model::ParseErrorKind;
    let err = parse("*filter\n-A INPUT -p tcp --dport http -j ACCEPT\nCOMMIT\n").unwrap_err();
    assert_eq!((err.position.line, err.position.column), (2, 25));
    assert!(matches!(err.kind, ParseErrorKind::InvalidValue { .. }));
    assert_eq!(err.to_string(), "2:25: invalid value `http` for `--dport`");
    assert!(matches!(
        parse("*filter\n-A INPUT -j ACCEPT\n").unwrap_err().kind,
        ParseErrorKind::MissingCommit
    ));
    assert!(matches!(
        parse("-A INPUT -j ACCEPT\n").unwrap_err().kind,
        ParseErrorKind::OutsideTable
    ));
    assert!(matches!(
        parse("*nat\n-A X --dport 80\nCOMMIT\n").unwrap_err().kind,
        ParseErrorKind::UnknownOption(_)
    ));
    assert!(matches!(
        parse("*nat\n-A X -m comment --comment \"open\nCOMMIT\n")
            .unwrap_err()
            .kind,
        ParseErrorKind::UnterminatedQuote
    ));
    assert!(matches!(
        parse("*nat\n:THIS-CHAIN-NAME-IS-FAR-TOO-LONG - [0:0]\nCOMMIT\n")
            .unwrap_err()
            .kind,
        ParseErrorKind::InvalidChainName(_)
    ));
    assert!(matches!(
        parse("*nat\n-A X -j MARK\nCOMMIT\n").unwrap_err().kind,
        ParseErrorKind::MissingValue(_)
    ));
}
