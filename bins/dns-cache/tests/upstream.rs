//! Forwarding and caching against an upstream no one here wrote: Debian's `unbound`,
//! authoritative for `test.` on 127.0.0.1. Forwarding, caching, TTL decrement, denial
//! caching, TC and the TCP retry, upstream failure and health recovery.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dns_wire::{Message, Rcode, Type};
use support::{DnsCache, Unbound, eventually, free_port, http_get, query, tcp_exchange};

fn forwarding(upstream_port: u16, options: &str) -> DnsCache {
    DnsCache::start(&format!(
        ".:{{PORT}} {{\n    bind 127.0.0.1\n    errors\n    prometheus 127.0.0.1:{{HTTP}}\n    cache 30\n    forward . 127.0.0.1:{upstream_port} {{\n{options}    }}\n}}\n"
    ))
}

fn answers(reply: &[u8]) -> Vec<(Vec<u8>, u32)> {
    Message::parse(reply)
        .unwrap()
        .answers()
        .map(|r| (r.rdata().to_vec(), r.ttl()))
        .collect()
}

fn metric(server: &DnsCache, prefix: &str) -> f64 {
    let (_, text) = http_get(server.http[0], "/metrics").unwrap();
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn forwards_caches_and_ages_ttls() {
    let Some(unbound) = Unbound::start(&["a.test. 300 IN A 10.0.0.1", "b.test. 2 IN A 10.0.0.2"])
    else {
        return;
    };
    let server = forwarding(unbound.port, "");
    let first = answers(&server.ask("a.test.", Type::A));
    assert_eq!(
        first,
        [(vec![10, 0, 0, 1], 30)],
        "TTL capped at 30 by `cache 30`"
    );
    // A short TTL is raised to the 5 s minimum.
    assert_eq!(
        answers(&server.ask("b.test.", Type::A)),
        [(vec![10, 0, 0, 2], 5)]
    );
    // Cached: the upstream can go away.
    drop(unbound);
    eventually("the TTL to decrease", || {
        let now = answers(&server.ask("A.Test.", Type::A));
        now.len() == 1 && now[0].1 < 30
    });
    let reply = server.ask("A.TEST.", Type::A);
    let m = Message::parse(&reply).unwrap();
    assert_eq!(
        m.question().unwrap().name.to_string(),
        "A.TEST.",
        "0x20 case kept"
    );
    // A hit is authoritative: CoreDNS v1.14.7 plugin/cache/item.go sets
    // `m1.Authoritative = true` for stub resolvers that drop other answers.
    assert!(m.header().ra && m.header().aa);
    assert!(metric(&server, "coredns_cache_hits_total{") >= 2.0);
    assert!(metric(&server, "coredns_cache_entries{") >= 1.0);
}

#[test]
fn denial_is_cached_with_its_soa() {
    let Some(unbound) = Unbound::start(&["there.test. 300 IN A 10.0.0.3"]) else {
        return;
    };
    let server = forwarding(unbound.port, "");
    let nx = server.ask("missing.test.", Type::A);
    let m = Message::parse(&nx).unwrap();
    assert_eq!(m.rcode(), Rcode::NXDOMAIN);
    assert_eq!(m.authority().next().unwrap().rtype(), Type::SOA);
    let nodata = server.ask("there.test.", Type::MX);
    let m = Message::parse(&nodata).unwrap();
    assert_eq!((m.rcode(), m.counts().answers), (Rcode::NOERROR, 0));
    drop(unbound);
    let m = server.ask("missing.test.", Type::A);
    assert_eq!(Message::parse(&m).unwrap().rcode(), Rcode::NXDOMAIN);
    let m = server.ask("there.test.", Type::MX);
    assert_eq!(Message::parse(&m).unwrap().authority().count(), 1);
    assert!(metric(&server, "coredns_cache_hits_total{server=\"dns://127.0.0.1") >= 2.0);
}

/// Twenty 200-byte TXT records: over 512 bytes, so UDP without EDNS is truncated.
fn big_records() -> Vec<String> {
    ["big.test.", "big2.test."]
        .iter()
        .flat_map(|name| {
            (0..20).map(move |i| format!("{name} 300 IN TXT \"{}\"", format!("{i:02}").repeat(100)))
        })
        .collect()
}

/// A UDP client with an 8192-byte EDNS buffer gets all 20 TXT records of `name`, untruncated.
fn assert_all_twenty_over_udp(server: &DnsCache, name: &str) {
    let udp = server
        .udp(&query(name, Type::TXT, Some((8192, false)), 14))
        .unwrap();
    let m = Message::parse(&udp).unwrap();
    assert!(!m.header().tc);
    assert_eq!(m.counts().answers, 20);
}

#[test]
fn truncation_and_tcp_retry() {
    let records = big_records();
    let refs: Vec<&str> = records.iter().map(String::as_str).collect();
    let Some(unbound) = Unbound::start(&refs) else {
        return;
    };
    let server = forwarding(unbound.port, "");
    // UDP client without EDNS: TC, and the truncated reply is not cached.
    let udp = server
        .udp(&query("big.test.", Type::TXT, None, 11))
        .unwrap();
    let m = Message::parse(&udp).unwrap();
    assert!(m.header().tc && udp.len() <= 512);
    // The client retries over TCP: forwarded over TCP, complete.
    let tcp = tcp_exchange(server.port, &query("big.test.", Type::TXT, None, 12)).unwrap();
    let m = Message::parse(&tcp).unwrap();
    assert!(!m.header().tc);
    assert_eq!(m.counts().answers, 20);
    assert!(
        metric(
            &server,
            "coredns_proxy_conn_cache_misses_total{proxy_name=\"forward\",to=\"127.0.0.1"
        ) >= 1.0
    );

    // prefer_udp: a TCP client is forwarded over UDP, truncated, retried over TCP.
    let prefer = forwarding(unbound.port, "        prefer_udp\n");
    let tcp = tcp_exchange(prefer.port, &query("big.test.", Type::TXT, None, 13)).unwrap();
    assert_eq!(Message::parse(&tcp).unwrap().counts().answers, 20);
    // prefer_udp, UDP client: the first attempt waits in the upstream socket's reader,
    // comes back truncated and goes on over TCP; a large EDNS buffer takes it all.
    assert_all_twenty_over_udp(&prefer, "big2.test.");

    // force_tcp: a UDP client with a large EDNS buffer gets everything from a TCP upstream.
    let force = forwarding(unbound.port, "        force_tcp\n");
    assert_all_twenty_over_udp(&force, "big.test.");
    let (_, text) = http_get(force.http[0], "/metrics").unwrap();
    assert!(
        text.contains(&format!(
            "coredns_proxy_conn_cache_misses_total{{proxy_name=\"forward\",to=\"127.0.0.1:{}\",proto=\"tcp\"}} 1",
            unbound.port
        )),
        "{text}"
    );
}

#[test]
fn upstream_failure_then_health_recovery() {
    let port = free_port();
    let server = forwarding(port, "        max_fails 1\n        health_check 100ms\n");
    let reply = server.ask("a.test.", Type::A);
    assert_eq!(Message::parse(&reply).unwrap().rcode(), Rcode::SERVFAIL);
    server.wait_line("the forward error", |l| {
        l.starts_with("[ERROR] plugin/errors: 2 a.test. A: read udp 127.0.0.1:")
    });
    eventually("failed health checks to be counted", || {
        metric(&server, "coredns_proxy_healthcheck_failures_total{") >= 1.0
    });
    let Some(_unbound) = Unbound::start_on(port, &["a.test. 300 IN A 10.0.0.9"]) else {
        return;
    };
    eventually("the upstream to be used again", || {
        answers(&server.ask("a.test.", Type::A)) == [(vec![10, 0, 0, 9], 30)]
    });
}

#[test]
fn serve_stale_answers_when_the_upstream_is_gone() {
    let Some(unbound) = Unbound::start(&["s.test. 1 IN A 10.0.0.5"]) else {
        return;
    };
    let server = DnsCache::start(&format!(
        ".:{{PORT}} {{\n    bind 127.0.0.1\n    cache {{\n        success 9984 2 1\n        serve_stale\n    }}\n    forward . 127.0.0.1:{}\n}}\n",
        unbound.port
    ));
    assert_eq!(
        answers(&server.ask("s.test.", Type::A)),
        [(vec![10, 0, 0, 5], 1)]
    );
    drop(unbound);
    eventually("a stale answer with TTL 0", || {
        answers(&server.ask("s.test.", Type::A)) == [(vec![10, 0, 0, 5], 0)]
    });
}

/// A fake upstream that answers every query with an empty NOERROR, except those for
/// `name`, which it ignores and counts.
fn silent_for(name: &'static str) -> (u16, Arc<AtomicUsize>) {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let ignored = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ignored);
    let silent: dns_wire::Name = name.parse().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, peer)) = socket.recv_from(&mut buf) {
            let query = &mut buf[..n];
            let for_silent = Message::parse(query)
                .ok()
                .and_then(|m| m.question())
                .is_some_and(|q| q.name.eq_ignore_case(&silent.as_ref()));
            if for_silent {
                counter.fetch_add(1, Ordering::SeqCst);
            } else {
                query[2] |= 0x80; // QR
                let _ = socket.send_to(query, peer);
            }
        }
    });
    (port, ignored)
}

#[test]
fn a_silent_upstream_times_out_then_the_query_is_tried_again_and_fails() {
    // The first query opens the upstream's socket; the second goes out without a task
    // waiting for it (completed by the socket's reader). Its 2 s read timeout comes from
    // the reader's sweep, then the second attempt (CoreDNS: 2 × the upstreams) times out
    // too, and the client gets SERVFAIL with Go's timeout error in the log.
    let (port, ignored) = silent_for("silent.test.");
    let server = forwarding(port, "");
    let first = server.ask("first.test.", Type::A);
    assert_eq!(Message::parse(&first).unwrap().rcode(), Rcode::NOERROR);
    let reply = server.ask("silent.test.", Type::A);
    assert_eq!(Message::parse(&reply).unwrap().rcode(), Rcode::SERVFAIL);
    assert_eq!(ignored.load(Ordering::SeqCst), 2);
    server.wait_line("the timeout error", |l| {
        l.starts_with("[ERROR] plugin/errors: 2 silent.test. A: read udp 127.0.0.1:")
            && l.ends_with(&format!("->127.0.0.1:{port}: i/o timeout"))
    });
}

/// A TCP upstream that answers one query per connection with an empty NOERROR, then
/// closes its side and reports (on the channel) whether this server closed the
/// connection too within `wait`; also counts the connections.
fn closing_tcp_upstream(
    wait: Duration,
) -> (u16, Arc<AtomicUsize>, std::sync::mpsc::Receiver<bool>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    let (report, reports) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            counter.fetch_add(1, Ordering::SeqCst);
            let report = report.clone();
            std::thread::spawn(move || {
                let Some(mut query) = support::read_frame(&mut stream) else {
                    let _ = report.send(false);
                    return;
                };
                query[2] |= 0x80; // QR
                let mut framed = (query.len() as u16).to_be_bytes().to_vec();
                framed.extend_from_slice(&query);
                stream.write_all(&framed).unwrap();
                stream.shutdown(std::net::Shutdown::Write).unwrap();
                stream.set_read_timeout(Some(wait)).unwrap();
                let mut buf = [0u8; 64];
                let closed = matches!(stream.read(&mut buf), Ok(0));
                let _ = report.send(closed);
            });
        }
    });
    (port, accepted, reports)
}

#[test]
fn pooled_tcp_connections_the_upstream_closed_are_closed_here() {
    // Each connection is closed by the upstream after one answer. The next query must not
    // be written into it, and the last one, which no query takes, must be closed well
    // before `expire` (10 s by default). Issue #28: they stayed in CLOSE-WAIT.
    let (port, accepted, reports) = closing_tcp_upstream(Duration::from_secs(5));
    let server = forwarding(port, "        force_tcp\n");
    let reply = server.ask("closing.test.", Type::A);
    assert_eq!(Message::parse(&reply).unwrap().rcode(), Rcode::NOERROR);
    let mut received = 0;
    while received < accepted.load(Ordering::SeqCst) {
        let closed = reports.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(
            closed,
            "a pooled connection was still open (or reused) 5 s after the upstream closed it"
        );
        received += 1;
    }
    assert!(received >= 1);
}

/// CoreDNS v1.14.7 plugin/cache/handler.go `authenticatedRefreshState`: the cache passes the
/// queries it handles on with AD set, so that an entry filled for a client that asked
/// without AD still has the upstream's AD for a later client asking with AD. The fake
/// upstream echoes the query's flags: its reply's AD is the AD it was asked with.
#[test]
fn the_cache_asks_upstream_with_ad() {
    let (port, _) = silent_for("nothing.test.");
    let server = forwarding(port, "");
    // The first query goes out on the waiting path, the second without a task waiting.
    for (id, name) in [(1, "first.test."), (2, "second.test.")] {
        let plain = query(name, Type::A, None, id);
        let reply = server.udp(&plain).unwrap();
        let h = Message::parse(&reply).unwrap().header();
        assert!(!h.ad, "{name}: AD not asked for, so cleared");
        let mut with_ad = query(name, Type::A, None, id + 10);
        with_ad[3] |= 0x20;
        let reply = server.udp(&with_ad).unwrap();
        let h = Message::parse(&reply).unwrap().header();
        assert!(h.aa && h.ad, "{name}: a hit carrying the upstream's AD");
    }
}
