//! A cache hit allocates nothing. The crate forbids `unsafe`, so no counting allocator can
//! be installed in a test; instead the server runs under valgrind (when installed), which
//! counts every allocation of the process: once answering a name from its cache a few
//! hundred times, once several thousand times more. The difference, divided by the extra
//! queries, is what a hit allocates (the start-up and the first miss are the same in both
//! runs); it must be near zero, where one allocation per hit would make it one.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::{Command, Stdio};
use std::time::Duration;

use dns_wire::{Message, Type};
use support::{eventually, free_port, have, query, udp_exchange};

/// `errors` above the cache (a wrapper on the way back), `hosts` below it.
const COREFILE: &str = ".:{PORT} {\n    bind 127.0.0.1\n    errors\n    cache 30\n    hosts {\n        192.0.2.1 hit.example\n        192.0.2.2 hit.example\n    }\n}\n";

/// The allocations valgrind counted over the whole life of a server that answered
/// `hit.example` `hits` times (after the first query, a miss).
fn allocations(hits: usize) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let conf = dir.path().join("Corefile");
    std::fs::write(&conf, COREFILE.replace("{PORT}", &port.to_string())).unwrap();
    let log = dir.path().join("valgrind.log");
    let mut child = Command::new("valgrind")
        .args([
            "--tool=memcheck",
            "--undef-value-errors=no",
            "--leak-check=no",
        ])
        .arg(format!("--log-file={}", log.display()))
        .arg(env!("CARGO_BIN_EXE_dns-cache"))
        .arg("-conf")
        .arg(&conf)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let q = query("hit.example.", Type::A, Some((1232, false)), 7);
    eventually("the server to answer under valgrind", || {
        udp_exchange(port, &q, Duration::from_millis(500)).is_some()
    });
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0; 1500];
    for _ in 0..hits {
        socket.send_to(&q, ("127.0.0.1", port)).unwrap();
        let (n, _) = socket.recv_from(&mut buf).unwrap();
        assert_eq!(Message::parse(&buf[..n]).unwrap().counts().answers, 2);
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    // `total heap usage: 1,234 allocs, 1,200 frees, 56,789 bytes allocated`
    let line = text
        .lines()
        .find(|l| l.contains("total heap usage:"))
        .unwrap_or_else(|| panic!("no heap summary in\n{text}"));
    let allocs = line
        .split("total heap usage:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap();
    allocs.replace(',', "").parse().unwrap()
}

#[test]
fn a_cache_hit_allocates_nothing() {
    if !have("valgrind") {
        return;
    }
    let (few, many) = (200, 3200);
    let base = allocations(few);
    let more = allocations(many);
    let per_hit = more.saturating_sub(base) as f64 / (many - few) as f64;
    println!("allocations: {base} for {few} hits, {more} for {many}: {per_hit:.3} per hit");
    // Timers and thread parking may allocate a little while the longer run lasts; one
    // allocation per hit would give 1.0.
    assert!(per_hit < 0.05, "{per_hit:.3} allocations per hit");
}
