//! Reloads that must not be applied: a Corefile truncated under `reload` and a new
//! configuration whose ports cannot all be bound. The running configuration keeps serving
//! on its port through both.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use dns_wire::{Message, Type};
use support::DnsCache;

/// Answers `kept.example` from `hosts`, polls the Corefile every 2-3 s.
const KEPT: &str = ".:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        192.0.2.1 kept.example\n    }\n    reload 2s 1s\n}\n";

/// The number of answers to `name`/A.
fn answers(server: &DnsCache, name: &str) -> u16 {
    Message::parse(&server.ask(name, Type::A))
        .unwrap()
        .counts()
        .answers
}

/// How many stdout lines so far report a refused polled reload.
fn refusals(server: &DnsCache) -> usize {
    server
        .lines()
        .iter()
        .filter(|l| l.starts_with("[ERROR] Restart failed: "))
        .count()
}

/// Waits for two more refusals than `before`: the second one comes from a check that
/// started after the file was written, so it read what the test wrote.
fn refused_twice_after(server: &DnsCache, before: usize, what: &str) {
    support::eventually(what, || refusals(server) >= before + 2);
}

#[test]
fn a_truncated_corefile_under_reload_is_refused_and_the_old_one_serves() {
    let server = DnsCache::start(KEPT);
    assert_eq!(answers(&server, "kept.example."), 1);

    // An editor truncates the file before writing it again.
    let before = refusals(&server);
    server.rewrite("");
    refused_twice_after(&server, before, "the empty Corefile to be refused");
    let line = server.wait_line("the refusal", |l| l.starts_with("[ERROR] Restart failed: "));
    let expected = format!(
        "[ERROR] Restart failed: {}: no server block (empty, or only comments or snippets); keeping the running configuration",
        server.corefile().display()
    );
    assert_eq!(line, expected);
    assert_eq!(answers(&server, "kept.example."), 1, "the old hosts answer");

    let before = refusals(&server);
    server.rewrite("# nothing here yet\n   \n\t# still nothing\n");
    refused_twice_after(&server, before, "the comment-only Corefile to be refused");
    assert_eq!(answers(&server, "kept.example."), 1, "the old hosts answer");
    assert!(
        !server
            .lines()
            .iter()
            .any(|l| l == "[INFO] Reloading complete"),
        "nothing was applied"
    );

    // `reload` of the old configuration still runs: the finished file is applied.
    server.rewrite(
        ".:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        192.0.2.2 written.example\n    }\n    reload 2s 1s\n}\n",
    );
    server.wait_line("the finished Corefile", |l| {
        l == "[INFO] Reloading complete"
    });
    support::eventually("the finished configuration", || {
        answers(&server, "written.example.") == 1
    });
    assert_eq!(answers(&server, "kept.example."), 0);
}

#[test]
fn sigusr1_refuses_a_corefile_without_server_blocks() {
    let server = DnsCache::start(KEPT);
    server.rewrite("(snippet) {\n    whoami\n}\n");
    server.signal("USR1");
    let line = server.wait_line("the refusal", |l| l.starts_with("[ERROR] SIGUSR1: "));
    assert!(line.ends_with("no server block (empty, or only comments or snippets); keeping the running configuration"), "{line}");
    assert_eq!(answers(&server, "kept.example."), 1, "the old hosts answer");
}
