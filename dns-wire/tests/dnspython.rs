//! Differential test against dnspython (spec §8): the DNS corpus (`testdata/dns/`) and a few
//! thousand generated messages of every supported type must read the same in dns-wire and
//! dnspython, and dnspython must read back what dns-wire encodes.
//!
//! Skips (with a message) when python3 or dnspython is missing; `scripts/test` installs
//! `dnspython==2.9.2` from PyPI.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use dns_wire::{Message, OwnedMessage};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const GENERATED: usize = 3000;

/// dnspython's canonical lines for `messages`, or `None` when it is not installed.
fn dnspython(messages: &[Vec<u8>]) -> Option<Vec<String>> {
    let probe = Command::new("python3")
        .args(["-c", "import dns.message"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: python3 with dnspython not found (pip install dnspython==2.9.2)");
        return None;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/dnspython_canon.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for m in messages {
        input.push_str(&common::hex_line(m));
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "dnspython_canon.py failed");
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), messages.len());
    Some(lines)
}

/// Splits dnspython's line into the canonical part and its re-encoded length.
fn split_len(line: &str) -> (&str, usize) {
    let (canon, len) = line.rsplit_once(";len=").unwrap_or((line, "0"));
    (canon, len.parse().unwrap_or(0))
}

#[test]
fn corpus_reads_the_same_as_dnspython_and_encodes_no_larger() {
    let corpus = common::corpus_messages();
    let wires: Vec<Vec<u8>> = corpus.iter().map(|(_, b)| b.clone()).collect();
    let Some(theirs) = dnspython(&wires) else {
        return;
    };
    for ((path, wire), line) in corpus.iter().zip(&theirs) {
        let ours = OwnedMessage::parse(wire).unwrap();
        let (canon, their_len) = split_len(line);
        assert_eq!(common::canonical(&ours), canon, "{}", path.display());
        let encoded = ours.to_vec().unwrap();
        assert!(
            encoded.len() <= their_len && encoded.len() <= wire.len(),
            "{}: ours {} bytes, dnspython {their_len}, input {}",
            path.display(),
            encoded.len(),
            wire.len()
        );
    }
}

#[test]
fn generated_messages_of_every_type_read_back_equal_in_dnspython() {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = common::message();
    let models: Vec<OwnedMessage> = (0..GENERATED)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    let wires: Vec<Vec<u8>> = models.iter().map(|m| m.to_vec().unwrap()).collect();
    let Some(theirs) = dnspython(&wires) else {
        return;
    };
    let mut failures = Vec::new();
    for ((model, wire), line) in models.iter().zip(&wires).zip(&theirs) {
        let (canon, _) = split_len(line);
        let ours = common::canonical(&OwnedMessage::parse(wire).unwrap());
        assert_eq!(ours, common::canonical(model));
        if ours != canon {
            failures.push(format!(
                "ours:      {ours}\ndnspython: {canon}\nwire: {}\n{}",
                common::hex_line(wire),
                Message::parse(wire).unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {GENERATED} messages differ; first:\n{}\nall dnspython errors:\n{}",
        failures.len(),
        failures[0],
        failures
            .iter()
            .filter_map(|f| f.lines().nth(1).filter(|l| l.contains("error=")))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
