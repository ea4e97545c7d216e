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

/// Waits for one more refusal than `before`. The running Corefile is valid, so any refusal
/// after the write read what the test wrote (or a part of it, just as invalid).
fn refused_after(server: &DnsCache, before: usize, what: &str) {
    support::eventually(what, || refusals(server) > before);
}

#[test]
fn a_truncated_corefile_under_reload_is_refused_and_the_old_one_serves() {
    let server = DnsCache::start(KEPT);
    assert_eq!(answers(&server, "kept.example."), 1);

    // An editor truncates the file before writing it again.
    let before = refusals(&server);
    server.rewrite("");
    refused_after(&server, before, "the empty Corefile to be refused");
    let line = server.wait_line("the refusal", |l| l.starts_with("[ERROR] Restart failed: "));
    let expected = format!(
        "[ERROR] Restart failed: {}: no server block (empty, or only comments or snippets); keeping the running configuration",
        server.corefile().display()
    );
    assert_eq!(line, expected);
    assert_eq!(answers(&server, "kept.example."), 1, "the old hosts answer");

    let before = refusals(&server);
    server.rewrite("# nothing here yet\n   \n\t# still nothing\n");
    refused_after(&server, before, "the comment-only Corefile to be refused");
    assert_eq!(answers(&server, "kept.example."), 1, "the old hosts answer");
    // The same bad file is refused once, not at every poll (CoreDNS logs once per change):
    // over three more polls (every 2-3 s) nothing new is logged.
    let refused = refusals(&server);
    std::thread::sleep(std::time::Duration::from_secs(7));
    assert_eq!(
        refusals(&server),
        refused,
        "a bad Corefile is reported once"
    );
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

/// The error of a refused reload is printed once: `run.rs` logs `{:#}`, which adds each
/// source of the error after its text, and the parse error's text already held its source
/// (`SIGUSR1: FILE:3 - Error during parsing: Unexpected EOF: FILE:3 - Error during parsing:
/// Unexpected EOF`).
#[test]
fn a_refused_reload_prints_its_error_once() {
    let server = DnsCache::start(KEPT);
    server.rewrite(".:{PORT} {\n    bind 127.0.0.1\n    hosts {\n");
    server.signal("USR1");
    let line = server.wait_line("the refusal", |l| l.starts_with("[ERROR] SIGUSR1: "));
    let file = server.corefile().display().to_string();
    assert_eq!(line.matches(&file).count(), 1, "{line}");
    assert_eq!(answers(&server, "kept.example."), 1, "the old hosts answer");
}

/// Whether `port` on 127.0.0.1 can be bound for UDP and TCP, that is, nothing holds it.
fn released(port: u16) -> bool {
    std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok()
        && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
}

#[test]
fn a_reload_whose_health_port_is_taken_is_rolled_back() {
    let server = DnsCache::start(
        ".:{PORT} {\n    bind 127.0.0.1\n    whoami\n    health 127.0.0.1:{HTTP}\n}\n",
    );
    let health = |port| support::http_get(port, "/health");
    assert_eq!(health(server.http[0]), Some((200, "OK".into())));

    // Another socket holds the port the new `health` wants. The new configuration also
    // adds a DNS server block and a `prometheus` endpoint on free ports: both are bound
    // before the health port fails, and both must be released again.
    let taken = std::net::TcpListener::bind(("127.0.0.1", server.http[1])).unwrap();
    let new_dns = support::free_port();
    let new_metrics = support::free_port();
    let moved = format!(
        ".:{{PORT}} {{\n    bind 127.0.0.1\n    hosts {{\n        192.0.2.7 moved.example\n    }}\n    health 127.0.0.1:{{HTTP2}}\n    prometheus 127.0.0.1:{new_metrics}\n}}\nextra.example:{new_dns} {{\n    bind 127.0.0.1\n    whoami\n}}\n"
    );
    server.rewrite(&moved);
    server.signal("USR1");
    let line = server.wait_line("the refused reload", |l| l.starts_with("[ERROR] SIGUSR1: "));
    assert!(
        line.starts_with(&format!(
            "[ERROR] SIGUSR1: listen tcp 127.0.0.1:{}: ",
            server.http[1]
        )),
        "{line}"
    );
    // The old configuration serves: whoami on the DNS port, health on its old port.
    assert_eq!(health(server.http[0]), Some((200, "OK".into())));
    let bytes = server.ask("moved.example.", Type::A);
    let reply = Message::parse(&bytes).unwrap();
    assert_eq!(
        reply.counts().answers,
        0,
        "hosts of the new plan do not answer"
    );
    assert_eq!(reply.counts().additional, 2, "whoami answers");
    support::eventually("the new DNS port to be released", || released(new_dns));
    support::eventually("the new metrics port to be released", || {
        std::net::TcpListener::bind(("127.0.0.1", new_metrics)).is_ok()
    });
    assert!(
        !server.lines().iter().any(|l| l.contains("Failed to start")),
        "nothing is reported as half-applied"
    );

    // Once the port is free, the same Corefile is applied.
    drop(taken);
    server.signal("USR1");
    support::eventually("the moved configuration", || {
        answers(&server, "moved.example.") == 1
    });
    assert_eq!(health(server.http[1]), Some((200, "OK".into())));
    support::eventually("the old health port to be released", || {
        std::net::TcpListener::bind(("127.0.0.1", server.http[0])).is_ok()
    });
    assert_eq!(
        support::http_get(new_metrics, "/metrics").map(|(status, _)| status),
        Some(200)
    );
}

#[test]
fn an_http_address_that_gains_endpoints_keeps_its_socket() {
    let server = DnsCache::start(
        ".:{PORT} {\n    bind 127.0.0.1\n    whoami\n    health 127.0.0.1:{HTTP}\n}\n",
    );
    assert_eq!(
        support::http_get(server.http[0], "/metrics").map(|(status, _)| status),
        Some(404)
    );
    // `prometheus` joins `health` on its address: the server restarts with both
    // endpoints on the socket it already holds (binding the port again would fail).
    server.rewrite(
        ".:{PORT} {\n    bind 127.0.0.1\n    whoami\n    health 127.0.0.1:{HTTP}\n    prometheus 127.0.0.1:{HTTP}\n}\n",
    );
    server.signal("USR1");
    support::eventually("/metrics beside /health", || {
        support::http_get(server.http[0], "/metrics").map(|(status, _)| status) == Some(200)
    });
    assert_eq!(
        support::http_get(server.http[0], "/health"),
        Some((200, "OK".into()))
    );
    assert!(
        !server.lines().iter().any(|l| l.starts_with("[ERROR]")),
        "{:?}",
        server.lines()
    );
}

#[test]
fn a_health_port_taken_at_start_up_is_fatal_as_in_coredns() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let health = taken.local_addr().unwrap();
    let corefile = dir.path().join("Corefile");
    std::fs::write(
        &corefile,
        format!(
            ".:{} {{\n    bind 127.0.0.1\n    whoami\n    health {health}\n}}\n",
            support::free_port()
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dns-cache"))
        .arg("-conf")
        .arg(&corefile)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.starts_with(&format!("[FATAL] listen tcp {health}: ")),
        "{stdout}"
    );
}
