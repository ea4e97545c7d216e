//! The server with real clients (`dig`, dnspython and raw packets) on 127.0.0.1: reply
//! rules, whoami, log lines, errors, hosts, metrics, health and ready, reload and signals.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use dns_wire::{Message, Rcode, Type};
use support::{DnsCache, dig, eventually, have, have_dnspython, http_get, python, query};

const WHOAMI: &str = ".:{PORT} {\n    bind 127.0.0.1\n    whoami\n    log\n}\n";

#[test]
fn whoami_answers_dig_over_udp_and_tcp() {
    if !have("dig") {
        return;
    }
    let server = DnsCache::start(WHOAMI);
    let out = dig(server.port, &["whoami.example", "A"]);
    assert!(out.contains("flags: qr aa rd;"), "{out}");
    assert!(
        out.contains("ANSWER: 0, AUTHORITY: 0, ADDITIONAL: 3"),
        "{out}"
    );
    assert!(
        out.contains("whoami.example.\t\t0\tIN\tA\t127.0.0.1"),
        "{out}"
    );
    assert!(
        out.contains("_udp.whoami.example.\t0\tIN\tSRV\t0 0 "),
        "{out}"
    );
    let out = dig(server.port, &["+tcp", "WhoAmI.Example", "MX"]);
    assert!(
        out.contains("_tcp.WhoAmI.Example.\t0\tIN\tSRV\t0 0 "),
        "{out}"
    );
    assert!(
        out.contains("WhoAmI.Example.\t\t0\tIN\tA\t127.0.0.1"),
        "{out}"
    );
}

/// `[INFO] 127.0.0.1:PORT - ID "TYPE IN NAME PROTO SIZE DO BUFSIZE" RCODE FLAGS RSIZE Ds`.
fn assert_log_line(line: &str, expected_prefix: &str) {
    let rest = line
        .strip_prefix(expected_prefix)
        .unwrap_or_else(|| panic!("{line:?} does not start with {expected_prefix:?}"));
    let seconds = rest.strip_suffix('s').expect("duration ends with s");
    assert!(
        !seconds.is_empty()
            && seconds
                .chars()
                .all(|c| c.is_ascii_digit() || ".e-".contains(c)),
        "duration {seconds:?}"
    );
    assert!(seconds.parse::<f64>().unwrap() < 10.0);
}

#[test]
fn log_lines_are_coredns_format() {
    let server = DnsCache::start(WHOAMI);
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let client_port = socket.local_addr().unwrap().port();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let q = query("Log.Example.", Type::AAAA, Some((4096, true)), 32124);
    socket.send_to(&q, ("127.0.0.1", server.port)).unwrap();
    let mut buf = [0; 1500];
    let (n, _) = socket.recv_from(&mut buf).unwrap();
    let reply = Message::parse(&buf[..n]).unwrap();
    assert_eq!(reply.edns().unwrap().udp_payload_size, 4096);
    let line = server.wait_line("the query log line", |l| l.contains(" - 32124 "));
    assert_log_line(
        &line,
        &format!(
            "[INFO] 127.0.0.1:{client_port} - 32124 \"AAAA IN log.example. udp {} true 4096\" NOERROR qr,aa,rd {n} ",
            q.len()
        ),
    );
    let tcp = support::tcp_exchange(server.port, &query("t.example.", Type::A, None, 777)).unwrap();
    let line = server.wait_line("the tcp log line", |l| l.contains(" - 777 "));
    assert!(
        line.contains(&format!(
            "\"A IN t.example. tcp {} false 65535\" NOERROR qr,aa,rd {} ",
            query("t.example.", Type::A, None, 777).len(),
            tcp.len()
        )),
        "{line}"
    );
}

#[test]
fn refused_formerr_notimp_badvers_and_drops() {
    let server = DnsCache::start("example.org:{PORT} {\n    bind 127.0.0.1\n    whoami\n}\n");
    let rcode = |bytes: &[u8]| Message::parse(&server.udp(bytes).unwrap()).unwrap().rcode();
    assert_eq!(
        rcode(&query("www.example.org.", Type::A, None, 1)),
        Rcode::NOERROR
    );
    assert_eq!(
        rcode(&query("www.example.com.", Type::A, None, 2)),
        Rcode::REFUSED
    );
    let mut chaos = query("www.example.org.", Type::TXT, None, 3);
    let len = chaos.len();
    chaos[len - 1] = 3;
    assert_eq!(rcode(&chaos), Rcode::REFUSED);
    let mut v1 = query("www.example.org.", Type::A, Some((1232, false)), 4);
    let len = v1.len();
    v1[len - 5] = 1;
    let reply = server.udp(&v1).unwrap();
    let reply = Message::parse(&reply).unwrap();
    assert_eq!(reply.rcode(), Rcode::BADVERS);
    assert_eq!(reply.edns().unwrap().version, 0);
    let mut two = query("www.example.org.", Type::A, None, 5);
    two[5] = 2;
    assert_eq!(rcode(&two), Rcode::FORMERR);
    let mut update = query("www.example.org.", Type::A, None, 6);
    update[2] = 0x28;
    assert_eq!(rcode(&update), Rcode::NOTIMP);
    // Too short, or a response: no reply at all; the server keeps serving.
    assert!(support::udp_exchange(server.port, &[1, 2, 3], Duration::from_millis(300)).is_none());
    let mut response = query("www.example.org.", Type::A, None, 7);
    response[2] |= 0x80;
    assert!(support::udp_exchange(server.port, &response, Duration::from_millis(300)).is_none());
    assert_eq!(
        rcode(&query("www.example.org.", Type::A, None, 8)),
        Rcode::NOERROR
    );
}

#[test]
fn opt_mirroring_and_truncation_with_dnspython() {
    if !have_dnspython() {
        return;
    }
    let mut hosts = String::new();
    for i in 0..60 {
        hosts.push_str(&format!("10.0.{}.{} big.example\n", i / 250, i % 250 + 1));
    }
    let server = DnsCache::start(".:{PORT} {\n    bind 127.0.0.1\n    hosts {DIR}/hosts\n}\n");
    std::fs::write(server.dir.path().join("hosts"), hosts).unwrap();
    // hosts reads its file at start; restart the chain by reloading.
    server.signal("USR1");
    eventually("hosts to load", || {
        Message::parse(&server.ask("big.example.", Type::A))
            .unwrap()
            .rcode()
            == Rcode::NOERROR
    });
    let out = python(
        server.port,
        r#"
import os, dns.message, dns.query, dns.flags, dns.rcode
port = int(os.environ["PORT"])
q = dns.message.make_query("big.example.", "A", use_edns=False)
r = dns.query.udp(q, "127.0.0.1", port=port, timeout=5, ignore_trailing=True, raise_on_truncation=False)
assert r.flags & dns.flags.TC, "no TC without EDNS"
assert r.edns == -1, "OPT without EDNS in the query"
assert len(r.to_wire()) <= 512
r = dns.query.tcp(q, "127.0.0.1", port=port, timeout=5)
assert not r.flags & dns.flags.TC and len(r.answer[0]) == 60, r
q = dns.message.make_query("big.example.", "A", use_edns=0, payload=4000, want_dnssec=True)
r = dns.query.udp(q, "127.0.0.1", port=port, timeout=5)
assert not r.flags & dns.flags.TC
assert r.edns == 0 and r.payload == 4000, (r.edns, r.payload)
assert r.ednsflags & dns.flags.DO
assert r.flags & dns.flags.AA and r.id == q.id
q = dns.message.make_query("nothing.example.", "A")
r = dns.query.udp(q, "127.0.0.1", port=port, timeout=5)
assert r.rcode() == dns.rcode.NXDOMAIN
print("ok")
"#,
    );
    assert_eq!(out.trim(), "ok");
}

#[test]
fn errors_plugin_logs_failures_and_metrics_use_coredns_names() {
    let dead = support::free_port();
    let server = DnsCache::start(&format!(
        ".:{{PORT}} {{\n    bind 127.0.0.1\n    errors\n    prometheus 127.0.0.1:{{HTTP}}\n    forward . 127.0.0.1:{dead}\n}}\nwho.example:{{PORT}} {{\n    bind 127.0.0.1\n    prometheus 127.0.0.1:{{HTTP}}\n    whoami\n}}\n"
    ));
    let reply = server.ask("down.example.", Type::A);
    assert_eq!(Message::parse(&reply).unwrap().rcode(), Rcode::SERVFAIL);
    let line = server.wait_line("the error line", |l| l.contains(" down.example. "));
    let expected = "[ERROR] plugin/errors: 2 down.example. A: read udp 127.0.0.1:";
    assert!(line.starts_with(expected), "{line}");
    assert!(
        line.ends_with(&format!("->127.0.0.1:{dead}: read: connection refused")),
        "{line}"
    );
    server.ask("a.who.example.", Type::A);
    let (status, text) = http_get(server.http[0], "/metrics").unwrap();
    assert_eq!(status, 200);
    for series in [
        &format!(
            "coredns_dns_requests_total{{server=\"dns://127.0.0.1:{}\",zone=\"who.example.\",view=\"\",proto=\"udp\",family=\"1\",type=\"A\"}} 1",
            server.port
        ) as &str,
        &format!(
            "coredns_dns_responses_total{{server=\"dns://127.0.0.1:{}\",zone=\"who.example.\",view=\"\",rcode=\"NOERROR\",plugin=\"whoami\"}} 1",
            server.port
        ),
        &format!(
            "coredns_dns_responses_total{{server=\"dns://127.0.0.1:{}\",zone=\".\",view=\"\",rcode=\"SERVFAIL\",plugin=\"\"}} ",
            server.port
        ),
        "coredns_dns_request_duration_seconds_bucket{",
        "coredns_dns_request_size_bytes_bucket{",
        "coredns_dns_response_size_bytes_bucket{",
        "coredns_plugin_enabled{server=",
        "coredns_build_info{version=",
        "coredns_proxy_conn_cache_misses_total{proxy_name=\"forward\",to=\"127.0.0.1:",
        "coredns_reload_version_info{hash=\"sha512\",value=\"",
        "coredns_forward_healthcheck_broken_total",
        "coredns_panics_total",
    ] {
        assert!(text.contains(series), "{series} missing in\n{text}");
    }
}

#[test]
fn hosts_plugin_file_inline_ptr_and_reload() {
    let server = DnsCache::start(
        ".:{PORT} {\n    bind 127.0.0.1\n    hosts {DIR}/hosts {\n        192.0.2.9 inline.example\n        reload 100ms\n        ttl 60\n        fallthrough other.example\n    }\n    whoami\n}\n",
    );
    std::fs::write(server.dir.path().join("hosts"), "10.1.1.1 db.example\n").unwrap();
    let a = |name: &str| {
        let reply = server.ask(name, Type::A);
        let m = Message::parse(&reply).unwrap();
        (
            m.rcode(),
            m.answers().map(|r| r.rdata().to_vec()).collect::<Vec<_>>(),
        )
    };
    eventually("the hosts file to be read", || {
        a("db.example.").1 == [vec![10, 1, 1, 1]]
    });
    assert_eq!(a("inline.example.").1, [vec![192, 0, 2, 9]]);
    let reply = server.ask("1.1.1.10.in-addr.arpa.", Type::PTR);
    let m = Message::parse(&reply).unwrap();
    assert_eq!(
        m.answers().next().unwrap().data().unwrap().to_string(),
        "db.example."
    );
    assert_eq!(m.answers().next().unwrap().ttl(), 60);
    assert_eq!(a("unknown.example.").0, Rcode::NXDOMAIN);
    // fallthrough zone: whoami answers (no answer records, NOERROR, additional section).
    let reply = server.ask("x.other.example.", Type::A);
    assert_eq!(Message::parse(&reply).unwrap().counts().additional, 2);
    std::fs::write(server.dir.path().join("hosts"), "10.2.2.2 db.example\n").unwrap();
    eventually("the hosts file to be re-read", || {
        a("db.example.").1 == [vec![10, 2, 2, 2]]
    });
}

#[test]
fn health_ready_and_sigterm_with_lameduck() {
    let mut server = DnsCache::start(
        ".:{PORT} {\n    bind 127.0.0.1\n    whoami\n    health 127.0.0.1:{HTTP} {\n        lameduck 1s\n    }\n    ready 127.0.0.1:{HTTP2}\n}\n",
    );
    assert_eq!(
        http_get(server.http[0], "/health").unwrap(),
        (200, "OK".into())
    );
    assert_eq!(
        http_get(server.http[1], "/ready").unwrap(),
        (200, "OK".into())
    );
    server.signal("TERM");
    server.wait_line("the SIGTERM line", |l| {
        l == "[INFO] SIGTERM: Shutting down servers then terminating"
    });
    server.wait_line("the lameduck line", |l| {
        l == "[INFO] plugin/health: Going into lameduck mode for 1s"
    });
    // During lameduck: still serving, healthy, not ready.
    assert_eq!(
        http_get(server.http[1], "/ready").unwrap(),
        (503, "Shutting down".into())
    );
    assert_eq!(
        http_get(server.http[0], "/health").unwrap(),
        (200, "OK".into())
    );
    assert_eq!(
        Message::parse(&server.ask("still.example.", Type::A))
            .unwrap()
            .rcode(),
        Rcode::NOERROR
    );
    assert_eq!(server.wait_exit(), Some(0));
}

#[test]
fn reload_keeps_the_old_config_when_the_new_one_is_bad() {
    let server = DnsCache::start(WHOAMI);
    server.rewrite(".:{PORT} {\n    bind 127.0.0.1\n    nonsense\n}\n");
    server.signal("USR1");
    let line = server.wait_line("the reload error", |l| l.starts_with("[ERROR] SIGUSR1: "));
    assert!(line.contains("Unknown directive 'nonsense'"), "{line}");
    let reply = server.ask("still.example.", Type::A);
    let m = Message::parse(&reply).unwrap();
    assert_eq!(m.counts().additional, 2, "whoami still answers");
    // A good Corefile with `reload`: applied on the next poll, no signal needed.
    server.rewrite(".:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        192.0.2.1 new.example\n    }\n    reload 2s 1s\n}\n");
    server.signal("USR1");
    eventually("the new config", || {
        Message::parse(&server.ask("new.example.", Type::A))
            .unwrap()
            .counts()
            .answers
            == 1
    });
    server.rewrite(".:{PORT} {\n    bind 127.0.0.1\n    hosts {\n        192.0.2.2 newer.example\n    }\n    reload 2s 1s\n}\n");
    server.wait_line("the polled reload", |l| l == "[INFO] Reloading complete");
    eventually("the polled config", || {
        Message::parse(&server.ask("newer.example.", Type::A))
            .unwrap()
            .counts()
            .answers
            == 1
    });
}

#[test]
fn version_plugins_and_pidfile() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dns-cache"))
        .arg("-version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("dns-cache-"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dns-cache"))
        .arg("-plugins")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("  dns.forward\n") && text.contains("  dns.whoami\n"),
        "{text}"
    );
    let server = DnsCache::start(WHOAMI);
    drop(server);
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let port = support::free_port();
    let conf = dir.path().join("Corefile");
    std::fs::write(
        &conf,
        format!(".:{port} {{\n    bind 127.0.0.1\n    whoami\n}}\n"),
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dns-cache"))
        .args(["-conf"])
        .arg(&conf)
        .arg("-pidfile")
        .arg(&pidfile)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    eventually("the pidfile", || {
        std::fs::read_to_string(&pidfile).is_ok_and(|t| t == format!("{}\n", child.id()))
    });
    let _ = std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    assert!(!pidfile.exists(), "pidfile removed at exit");
}

#[test]
fn health_self_check_feeds_its_metrics() {
    let server = DnsCache::start(
        ".:{PORT} {\n    bind 127.0.0.1\n    whoami\n    health 127.0.0.1:{HTTP}\n    prometheus 127.0.0.1:{HTTP2}\n}\n",
    );
    eventually("a health self-check", || {
        http_get(server.http[1], "/metrics").is_some_and(|(_, text)| {
            text.lines()
                .find_map(|l| l.strip_prefix("coredns_health_request_duration_seconds_count "))
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n >= 1)
        })
    });
}

#[test]
fn forwarding_to_itself_is_a_fatal_loop() {
    let dir = tempfile::tempdir().unwrap();
    let port = support::free_port();
    let conf = dir.path().join("Corefile");
    std::fs::write(
        &conf,
        format!(".:{port} {{\n    bind 127.0.0.1\n    loop\n    forward . 127.0.0.1:{port}\n}}\n"),
    )
    .unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_dns-cache"))
        .arg("-conf")
        .arg(&conf)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("[FATAL] plugin/loop: Loop (127.0.0.1:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!(
            " -> 127.0.0.1:{port}) detected for zone \".\", see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO "
        )),
        "{line}"
    );
}

#[test]
fn tcp_pipelining_and_byte_by_byte_framing() {
    use std::io::Write as _;
    let server = DnsCache::start(WHOAMI);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut burst = Vec::new();
    for id in [101u16, 102, 103] {
        let q = query(&format!("p{id}.example."), Type::A, None, id);
        burst.extend_from_slice(&(q.len() as u16).to_be_bytes());
        burst.extend_from_slice(&q);
    }
    stream.write_all(&burst).unwrap();
    let mut ids: Vec<u16> = (0..3)
        .map(|_| {
            Message::parse(&support::read_frame(&mut stream).unwrap())
                .unwrap()
                .header()
                .id
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [101, 102, 103]);
    let q = query("slow.example.", Type::A, None, 104);
    let mut framed = (q.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(&q);
    for byte in framed {
        stream.write_all(&[byte]).unwrap();
    }
    let reply = support::read_frame(&mut stream).unwrap();
    assert_eq!(Message::parse(&reply).unwrap().header().id, 104);
}

/// plugin/errors `consolidate`: errors matching the pattern are counted rather than printed one
/// by one, and each period ends with one summary line carrying its count, at the rule's level.
/// (The block serves `example.` only, so that the harness's readiness probe is refused rather
/// than forwarded and counted.)
#[test]
fn errors_consolidate_replaces_matching_lines_by_a_count() {
    let dead = support::free_port();
    let server = DnsCache::start(&format!(
        "example:{{PORT}} {{\n    bind 127.0.0.1\n    errors {{\n        consolidate 1s \"connection refused$\" warning\n    }}\n    forward . 127.0.0.1:{dead}\n}}\n"
    ));
    for _ in 0..3 {
        let reply = server.ask("down.example.", Type::A);
        assert_eq!(Message::parse(&reply).unwrap().rcode(), Rcode::SERVFAIL);
    }
    // On a slow machine the three errors may fall into two periods: the counts add up.
    eventually("summaries counting the three errors", || {
        let total: u32 = server
            .lines()
            .iter()
            .filter_map(|l| {
                l.strip_prefix("[WARNING] plugin/errors: ")?
                    .strip_suffix(" errors like 'connection refused$' occurred in last 1s")?
                    .parse::<u32>()
                    .ok()
            })
            .sum();
        total == 3
    });
    let lines = server.lines();
    assert!(
        !lines.iter().any(|l| l.contains(" down.example. ")),
        "a consolidated error was printed: {lines:?}"
    );
}

/// plugin/errors `consolidate ... show_first`: the first error of a period is printed in full at
/// the rule's level; the next ones are only counted.
#[test]
fn errors_consolidate_show_first_prints_the_first_error() {
    let dead = support::free_port();
    let server = DnsCache::start(&format!(
        "example:{{PORT}} {{\n    bind 127.0.0.1\n    errors {{\n        consolidate 10m \"connection refused$\" info show_first\n    }}\n    forward . 127.0.0.1:{dead}\n}}\n"
    ));
    server.ask("first.example.", Type::A);
    server.ask("second.example.", Type::A);
    let line = server.wait_line("the first error", |l| l.contains(" first.example. "));
    assert!(
        line.starts_with("[INFO] plugin/errors: 2 first.example. A: read udp 127.0.0.1:"),
        "{line}"
    );
    server.ask("third.example.", Type::A);
    let lines = server.lines();
    assert!(
        !lines
            .iter()
            .any(|l| l.contains(" second.example. ") || l.contains(" third.example. ")),
        "a repeat was printed: {lines:?}"
    );
}

#[test]
fn a_chain_without_an_answering_plugin_fails_with_servfail() {
    let server = DnsCache::start(".:{PORT} {\n    bind 127.0.0.1\n    errors\n    log\n}\n");
    let reply = server.ask("nobody.example.", Type::A);
    assert_eq!(Message::parse(&reply).unwrap().rcode(), Rcode::SERVFAIL);
    server.wait_line("the error line", |l| {
        l == "[ERROR] plugin/errors: 2 nobody.example. A: plugin/log: no next plugin found"
    });
    let line = server.wait_line("the log line", |l| {
        l.starts_with("[INFO]") && l.contains("nobody.example.")
    });
    assert!(line.contains("\" SERVFAIL qr,rd "), "{line}");
}

/// Many queries queued at once are read and answered in batches (`recvmmsg`/`sendmmsg`);
/// every reply must still reach the socket that asked, with its own ID, on an IPv4 and an
/// IPv6 listener served by the same worker threads. whoami echoes the client's address and
/// port, so a reply sent to the wrong client or with a mangled address shows.
#[test]
fn batched_replies_reach_every_client_over_ipv4_and_ipv6() {
    use std::collections::HashSet;
    use std::net::{IpAddr, SocketAddr, UdpSocket};

    let v6 = UdpSocket::bind("[::1]:0").is_ok();
    if !v6 {
        eprintln!("skipped the IPv6 half: no ::1 on this host");
    }
    let bind = if v6 { "127.0.0.1 ::1" } else { "127.0.0.1" };
    let server = DnsCache::start(&format!(".:{{PORT}} {{\n    bind {bind}\n    whoami\n}}\n"));
    let mut targets = vec![SocketAddr::from(([127, 0, 0, 1], server.port))];
    if v6 {
        targets.push(SocketAddr::from((
            std::net::Ipv6Addr::LOCALHOST,
            server.port,
        )));
    }
    // Wait until both listeners answer.
    for target in &targets {
        let client = UdpSocket::bind(SocketAddr::new(target.ip(), 0)).unwrap();
        client
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        eventually("the listener answers", || {
            client
                .send_to(&query("up.example.", Type::A, None, 1), target)
                .unwrap();
            client.recv(&mut [0; 512]).is_ok()
        });
    }
    const CLIENTS: u16 = 16;
    const EACH: u16 = 8;
    let mut clients = Vec::new();
    for target in &targets {
        for _ in 0..CLIENTS {
            let socket = UdpSocket::bind(SocketAddr::new(target.ip(), 0)).unwrap();
            socket
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            clients.push((socket, *target));
        }
    }
    // Send everything first, interleaving clients and families, so the server finds many
    // datagrams waiting on each socket.
    for round in 0..EACH {
        for (i, (socket, target)) in clients.iter().enumerate() {
            let id = u16::try_from(i).unwrap() * EACH + round;
            socket
                .send_to(&query("batch.example.", Type::A, None, id), target)
                .unwrap();
        }
    }
    for (i, (socket, _)) in clients.iter().enumerate() {
        let me = socket.local_addr().unwrap();
        let mut ids = HashSet::new();
        let mut buf = [0; 512];
        for _ in 0..EACH {
            let n = socket.recv(&mut buf).expect("every query is answered");
            let reply = Message::parse(&buf[..n]).unwrap();
            ids.insert(reply.header().id);
            let mut ip = None;
            let mut port = None;
            for record in reply.additional() {
                match (record.rtype(), record.rdata()) {
                    (Type::A, &[a, b, c, d]) => ip = Some(IpAddr::from([a, b, c, d])),
                    (Type::AAAA, rdata) => {
                        ip = Some(IpAddr::from(<[u8; 16]>::try_from(rdata).unwrap()))
                    }
                    (Type::SRV, rdata) => port = Some(u16::from_be_bytes([rdata[4], rdata[5]])),
                    _ => {}
                }
            }
            assert_eq!(ip, Some(me.ip()), "reply for client {me}");
            assert_eq!(port, Some(me.port()), "reply for client {me}");
        }
        let first = u16::try_from(i).unwrap() * EACH;
        assert_eq!(ids, (first..first + EACH).collect(), "IDs of client {me}");
    }
}

/// The `example` plugin (CoreDNS's github.com/coredns/example): it logs
/// `[INFO] plugin/example: example` for each reply and passes the query on, here to
/// `whoami`, which answers as it would without it.
#[test]
fn the_example_plugin_logs_and_passes_the_query_on() {
    let server = DnsCache::start(".:{PORT} {\n    bind 127.0.0.1\n    whoami\n    example\n}\n");
    let wire = server.ask("seen.example.", Type::A);
    let reply = Message::parse(&wire).unwrap();
    assert_eq!(reply.rcode(), Rcode::NOERROR);
    assert!(reply.header().aa);
    let extra: Vec<_> = reply.additional().collect();
    assert_eq!(extra[0].name().to_string(), "seen.example.");
    server.wait_line("the example line", |l| {
        l == "[INFO] plugin/example: example"
    });
    // Arguments are refused with Caddy's argument-count error, as its setup does.
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("Corefile");
    std::fs::write(&conf, ".:1 {\n    example more\n}\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dns-cache"))
        .arg("-conf")
        .arg(&conf)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("plugin/example: ")
            && text.contains("Wrong argument count or unexpected line ending after 'more'"),
        "{text}"
    );
}

/// `loadbalance` over a real socket: the four addresses `hosts` gives for one name come
/// back in more than one order, each time all of them; the cache's hits are shuffled too,
/// as `loadbalance` sits above `cache` in `plugin.cfg`.
#[test]
fn loadbalance_shuffles_the_addresses_of_answers_and_cache_hits() {
    let server = DnsCache::start(
        ".:{PORT} {\n    bind 127.0.0.1\n    loadbalance round_robin\n    cache 30\n    hosts {\n        192.0.2.1 lb.example\n        192.0.2.2 lb.example\n        192.0.2.3 lb.example\n        192.0.2.4 lb.example\n    }\n}\n",
    );
    let mut orders = std::collections::HashSet::new();
    for _ in 0..40 {
        let reply = server.ask("lb.example.", Type::A);
        let msg = Message::parse(&reply).unwrap();
        let order: Vec<String> = msg
            .answers()
            .map(|r| format!("{:?}", r.data().unwrap()))
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted.len(), 4, "{order:?}");
        sorted.dedup();
        assert_eq!(sorted.len(), 4, "{order:?}");
        orders.insert(order);
    }
    assert!(orders.len() > 1, "always the same order: {orders:?}");
}
