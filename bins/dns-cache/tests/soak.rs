//! A bounded soak: for a few seconds, UDP and TCP floods of valid and malformed packets
//! (garbage, truncated queries, bad compression pointers, oversized datagrams, TCP frames
//! that announce more than they send, idle connections) while the Corefile is reloaded with
//! good and bad versions. Every reply to a valid query must be correct, the server must
//! answer every valid query afterwards, and its memory must stay bounded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::Write as _;
use std::net::{TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dns_wire::{Message, Rcode, Type};
use support::{DnsCache, Unbound, query};

const NAMES: u16 = 200;
const FLOOD: Duration = Duration::from_secs(4);

fn corefile(upstream: u16, variant: u32) -> String {
    format!(
        ".:{{PORT}} {{\n    bind 127.0.0.1\n    errors\n    cache {ttl}\n    forward . 127.0.0.1:{upstream} {{\n        max_concurrent 5000\n    }}\n}}\n",
        ttl = 20 + variant % 10
    )
}

/// The answer `hN.test A 10.0.X.Y` must carry.
fn expected(n: u16) -> [u8; 4] {
    [10, 0, (n >> 8) as u8, n as u8]
}

/// Checks a reply to query ID `id`: a name `h{id}.test` resolves to its address.
fn check(reply: &[u8], bad: &AtomicU64) {
    let Ok(m) = Message::parse(reply) else {
        bad.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let id = m.header().id;
    if id >= NAMES || m.rcode() != Rcode::NOERROR {
        return;
    }
    let want = expected(id);
    if m.answers().any(|r| r.rdata() != want)
        || m.question().unwrap().name.to_string() != format!("h{id}.test.")
    {
        bad.fetch_add(1, Ordering::Relaxed);
    }
}

/// Malformed packets, deterministic but varied.
fn malformed(i: u64) -> Vec<u8> {
    let valid = query(
        &format!("h{}.test.", i % u64::from(NAMES)),
        Type::A,
        None,
        60_000,
    );
    match i % 6 {
        0 => (0..(i % 40) as u8).collect(),
        1 => valid[..valid.len() - 3].to_vec(),
        2 => {
            let mut q = valid.clone();
            q[12] = 0xC0;
            q[13] = 0xFF;
            q
        }
        3 => vec![0xAB; 4000],
        4 => {
            let mut q = valid.clone();
            q[7] = 9; // ANCOUNT 9 with nothing there
            q
        }
        _ => {
            let mut q = valid.clone();
            q.extend_from_slice(&[0; 17]);
            q
        }
    }
}

#[test]
fn flood_of_valid_and_malformed_packets_during_reloads() {
    let records: Vec<String> = (0..NAMES)
        .map(|n| {
            let [a, b, c, d] = expected(n);
            format!("h{n}.test. 300 IN A {a}.{b}.{c}.{d}")
        })
        .collect();
    let refs: Vec<&str> = records.iter().map(String::as_str).collect();
    let Some(unbound) = Unbound::start(&refs) else {
        return;
    };
    let server = DnsCache::start(&corefile(unbound.port, 0));
    let rss_start = server.rss_kib();
    let stop = Arc::new(AtomicBool::new(false));
    let bad = Arc::new(AtomicU64::new(0));
    let answered = Arc::new(AtomicU64::new(0));
    let port = server.port;
    let mut threads = Vec::new();
    for t in 0..3u64 {
        let (stop, bad, answered) = (Arc::clone(&stop), Arc::clone(&bad), Arc::clone(&answered));
        threads.push(std::thread::spawn(move || {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            socket.connect(("127.0.0.1", port)).unwrap();
            socket
                .set_read_timeout(Some(Duration::from_millis(5)))
                .unwrap();
            let mut buf = vec![0; 65535];
            let mut i = t * 1_000_003;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..32 {
                    i += 1;
                    let packet = if i % 3 == 0 {
                        malformed(i)
                    } else {
                        let n = (i % u64::from(NAMES)) as u16;
                        query(&format!("h{n}.test."), Type::A, None, n)
                    };
                    let _ = socket.send(&packet);
                }
                while let Ok(n) = socket.recv(&mut buf) {
                    answered.fetch_add(1, Ordering::Relaxed);
                    check(&buf[..n], &bad);
                }
            }
        }));
    }
    let tcp_stop = Arc::clone(&stop);
    threads.push(std::thread::spawn(move || {
        let mut i = 0u64;
        let mut idle = Vec::new();
        while !tcp_stop.load(Ordering::Relaxed) {
            i += 1;
            let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
                continue;
            };
            match i % 3 {
                0 => {
                    let _ = stream.write_all(&[0xFF, 0xFF, 1, 2, 3]);
                }
                1 => {
                    let garbage = malformed(i);
                    let mut framed = (garbage.len() as u16).to_be_bytes().to_vec();
                    framed.extend_from_slice(&garbage);
                    let _ = stream.write_all(&framed);
                }
                _ => {
                    if idle.len() < 50 {
                        idle.push(stream);
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }));
    let started = Instant::now();
    let mut variant = 0;
    while started.elapsed() < FLOOD {
        variant += 1;
        if variant % 3 == 0 {
            server.rewrite(".:{PORT} {\n    bind 127.0.0.1\n    forward . not-an-address.invalid\n    cache nonsense\n}\n");
        } else {
            server.rewrite(&corefile(unbound.port, variant));
        }
        server.signal("USR1");
        std::thread::sleep(Duration::from_millis(250));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        bad.load(Ordering::Relaxed),
        0,
        "wrong or unparsable replies"
    );
    assert!(
        answered.load(Ordering::Relaxed) > 100,
        "the flood got answers"
    );
    assert!(
        server
            .lines()
            .iter()
            .any(|l| l.starts_with("[ERROR] SIGUSR1: "))
    );
    // Afterwards: the last good Corefile serves every name correctly.
    server.rewrite(&corefile(unbound.port, 1));
    server.signal("USR1");
    for n in 0..NAMES {
        let reply = server
            .udp(&query(&format!("h{n}.test."), Type::A, None, n))
            .unwrap_or_else(|| panic!("no reply for h{n}.test"));
        let m = Message::parse(&reply).unwrap();
        assert_eq!(m.rcode(), Rcode::NOERROR, "h{n}.test");
        assert_eq!(m.answers().next().unwrap().rdata(), expected(n));
    }
    let rss_end = server.rss_kib();
    println!("RSS {rss_start} KiB before, {rss_end} KiB after the flood");
    assert!(rss_end < 96 * 1024, "RSS {rss_end} KiB after the flood");
}
