//! The `kubernetes` plugin in the binary, over real UDP and TCP (`dig`): every record form
//! of the Kubernetes DNS specification (kubernetes/dns `docs/specification.md`, schema
//! 1.1.0) from a folder of manifests (`-manifests DIR`), a change answered without a
//! restart, `/ready` until the objects are in; and kubeadm's default Corefile.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::{Duration, Instant};

use support::{DnsCache, dig, eventually, have, http_get};

const COREFILE: &str = "cluster.local:{PORT} in-addr.arpa:{PORT} ip6.arpa:{PORT} {
    bind 127.0.0.1
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    ready 127.0.0.1:{HTTP}
}
.:{PORT} {
    bind 127.0.0.1
    hosts {
        192.0.2.7 example.test
    }
}
";

/// What `dig` saw: the status, the flags, and the answer and authority records (TTL,
/// class and type kept, whitespace collapsed), sorted.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    status: String,
    aa: bool,
    answer: Vec<String>,
    authority_types: Vec<String>,
    additional: Vec<String>,
}

fn ask(port: u16, name: &str, qtype: &str, tcp: bool) -> Seen {
    let mut args = vec![
        name,
        qtype,
        "+noall",
        "+comments",
        "+answer",
        "+authority",
        "+additional",
        "+nocookie",
        "+noedns",
    ];
    if tcp {
        args.push("+tcp");
    }
    let out = dig(port, &args);
    let mut seen = Seen {
        status: String::new(),
        aa: false,
        answer: Vec::new(),
        authority_types: Vec::new(),
        additional: Vec::new(),
    };
    let mut section = "";
    for line in out.lines() {
        if let Some(rest) = line.split("status: ").nth(1) {
            seen.status = rest.split(',').next().unwrap_or_default().to_owned();
        } else if let Some(flags) = line.strip_prefix(";; flags: ") {
            seen.aa = flags
                .split(';')
                .next()
                .unwrap()
                .split(' ')
                .any(|f| f == "aa");
        } else if line.starts_with(";; ANSWER SECTION") {
            section = "answer";
        } else if line.starts_with(";; AUTHORITY SECTION") {
            section = "authority";
        } else if line.starts_with(";; ADDITIONAL SECTION") {
            section = "additional";
        } else if !line.is_empty() && !line.starts_with(';') {
            let words: Vec<&str> = line.split_whitespace().collect();
            match section {
                "answer" => seen.answer.push(words.join(" ")),
                "authority" => seen.authority_types.push(words[3].to_owned()),
                "additional" => seen.additional.push(words.join(" ")),
                _ => {}
            }
        }
    }
    seen.answer.sort();
    seen.additional.sort();
    seen
}

/// The same question over UDP and TCP gives the same answer; that answer.
fn both(port: u16, name: &str, qtype: &str) -> Seen {
    let udp = ask(port, name, qtype, false);
    let tcp = ask(port, name, qtype, true);
    assert_eq!(udp, tcp, "{name} {qtype}: UDP and TCP differ");
    udp
}

fn answer(port: u16, name: &str, qtype: &str, want: &[&str]) {
    let seen = both(port, name, qtype);
    let mut want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
    want.sort();
    assert_eq!(
        (seen.status.as_str(), seen.aa, &seen.answer),
        ("NOERROR", true, &want),
        "{name} {qtype}: {seen:?}"
    );
}

fn denial(port: u16, name: &str, qtype: &str, status: &str) {
    let seen = both(port, name, qtype);
    assert_eq!(
        (
            seen.status.as_str(),
            seen.aa,
            seen.answer.len(),
            seen.authority_types.as_slice()
        ),
        (status, true, 0, ["SOA".to_owned()].as_slice()),
        "{name} {qtype}: {seen:?}"
    );
}

fn manifests() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cluster.yaml"),
        include_str!("kubernetes/cluster.yaml"),
    )
    .unwrap();
    dir
}

#[test]
fn every_record_form_of_the_specification_over_udp_and_tcp() {
    if !have("dig") {
        return;
    }
    let objects = manifests();
    let dir = objects.path().to_str().unwrap();
    let server = DnsCache::start_with_args(COREFILE, &["-manifests", dir]);
    let port = server.port;
    eventually("/ready", || {
        http_get(server.http[0], "/ready").is_some_and(|(status, _)| status == 200)
    });
    // 2.2: the schema version.
    answer(
        port,
        "dns-version.cluster.local.",
        "TXT",
        &["dns-version.cluster.local. 28800 IN TXT \"1.1.0\""],
    );
    // 2.3.1: A and AAAA of a ClusterIP Service; dual-stack from clusterIPs.
    answer(
        port,
        "web.shop.svc.cluster.local.",
        "A",
        &["web.shop.svc.cluster.local. 30 IN A 10.96.0.10"],
    );
    answer(
        port,
        "dual.shop.svc.cluster.local.",
        "A",
        &["dual.shop.svc.cluster.local. 30 IN A 10.96.0.11"],
    );
    answer(
        port,
        "dual.shop.svc.cluster.local.",
        "AAAA",
        &["dual.shop.svc.cluster.local. 30 IN AAAA fd00::11"],
    );
    // A name that exists without the type asked: NODATA with the SOA.
    denial(port, "web.shop.svc.cluster.local.", "AAAA", "NOERROR");
    // 2.3.2: SRV for each named port, the target's address as an additional.
    let srv = both(port, "_http._tcp.web.shop.svc.cluster.local.", "SRV");
    assert_eq!(
        srv.answer,
        ["_http._tcp.web.shop.svc.cluster.local. 30 IN SRV 0 100 80 web.shop.svc.cluster.local."]
    );
    assert_eq!(
        srv.additional,
        ["web.shop.svc.cluster.local. 30 IN A 10.96.0.10"]
    );
    answer(
        port,
        "_metrics._udp.web.shop.svc.cluster.local.",
        "SRV",
        &[
            "_metrics._udp.web.shop.svc.cluster.local. 30 IN SRV 0 100 9090 web.shop.svc.cluster.local.",
        ],
    );
    denial(
        port,
        "_http._udp.web.shop.svc.cluster.local.",
        "SRV",
        "NXDOMAIN",
    );
    // 2.3.3: PTR of a cluster IP.
    answer(
        port,
        "10.0.96.10.in-addr.arpa.",
        "PTR",
        &["10.0.96.10.in-addr.arpa. 30 IN PTR web.shop.svc.cluster.local."],
    );
    answer(
        port,
        "1.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.",
        "PTR",
        &[
            "1.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 30 IN PTR dual.shop.svc.cluster.local.",
        ],
    );
    // 2.4.1: a headless Service: one A per ready endpoint (not the unready one).
    answer(
        port,
        "db.shop.svc.cluster.local.",
        "A",
        &[
            "db.shop.svc.cluster.local. 30 IN A 10.1.0.5",
            "db.shop.svc.cluster.local. 30 IN A 10.1.0.6",
        ],
    );
    // Per endpoint: its hostname, else its dashed address.
    answer(
        port,
        "db-0.db.shop.svc.cluster.local.",
        "A",
        &["db-0.db.shop.svc.cluster.local. 30 IN A 10.1.0.5"],
    );
    answer(
        port,
        "10-1-0-6.db.shop.svc.cluster.local.",
        "A",
        &["10-1-0-6.db.shop.svc.cluster.local. 30 IN A 10.1.0.6"],
    );
    denial(port, "10-1-0-7.db.shop.svc.cluster.local.", "A", "NXDOMAIN");
    // 2.4.2: SRV per ready endpoint and named port.
    let srv = both(port, "_pg._tcp.db.shop.svc.cluster.local.", "SRV");
    assert_eq!(
        srv.answer,
        [
            "_pg._tcp.db.shop.svc.cluster.local. 30 IN SRV 0 50 5432 10-1-0-6.db.shop.svc.cluster.local.",
            "_pg._tcp.db.shop.svc.cluster.local. 30 IN SRV 0 50 5432 db-0.db.shop.svc.cluster.local.",
        ]
    );
    assert_eq!(
        srv.additional,
        [
            "10-1-0-6.db.shop.svc.cluster.local. 30 IN A 10.1.0.6",
            "db-0.db.shop.svc.cluster.local. 30 IN A 10.1.0.5",
        ]
    );
    // 2.4.3: PTR of a ready endpoint.
    answer(
        port,
        "5.0.1.10.in-addr.arpa.",
        "PTR",
        &["5.0.1.10.in-addr.arpa. 30 IN PTR db-0.db.shop.svc.cluster.local."],
    );
    // 2.5: ExternalName as a CNAME.
    answer(
        port,
        "ext.shop.svc.cluster.local.",
        "CNAME",
        &["ext.shop.svc.cluster.local. 30 IN CNAME example.test."],
    );
    // Its addresses: the target is outside the zone, so it is asked of the server (here the
    // `hosts` of the root block) and its records follow the CNAME, as CoreDNS's upstream
    // lookup does; a stub resolver gets an address without following the CNAME itself.
    answer(
        port,
        "ext.shop.svc.cluster.local.",
        "A",
        &[
            "example.test. 3600 IN A 192.0.2.7",
            "ext.shop.svc.cluster.local. 30 IN CNAME example.test.",
        ],
    );
    // Pods (`pods insecure`).
    answer(
        port,
        "10-1-0-9.shop.pod.cluster.local.",
        "A",
        &["10-1-0-9.shop.pod.cluster.local. 30 IN A 10.1.0.9"],
    );
    // Names that do not exist: NXDOMAIN with the SOA; below them as well.
    denial(port, "nope.shop.svc.cluster.local.", "A", "NXDOMAIN");
    denial(port, "web.nons.svc.cluster.local.", "A", "NXDOMAIN");
    denial(port, "shop.svc.cluster.local.", "A", "NOERROR");
    // Case does not matter, and the answer keeps the question's.
    answer(
        port,
        "WEB.Shop.SVC.cluster.local.",
        "A",
        &["WEB.Shop.SVC.cluster.local. 30 IN A 10.96.0.10"],
    );
    let soa = both(port, "cluster.local.", "SOA");
    assert_eq!(soa.answer.len(), 1);
    assert!(
        soa.answer[0].starts_with(
            "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. "
        ),
        "{soa:?}"
    );
    // A reverse name nobody has falls through, to no next plugin (SERVFAIL).
    assert_eq!(
        both(port, "9.9.9.9.in-addr.arpa.", "PTR").status,
        "SERVFAIL"
    );
}

#[test]
fn a_service_change_reaches_the_answers_without_a_restart() {
    if !have("dig") {
        return;
    }
    let objects = manifests();
    let dir = objects.path().to_str().unwrap();
    let server = DnsCache::start_with_args(COREFILE, &["-manifests", dir]);
    let port = server.port;
    eventually("the objects", || {
        ask(port, "web.shop.svc.cluster.local.", "A", false).status == "NOERROR"
    });
    let added = "apiVersion: v1\nkind: Service\nmetadata: {name: new, namespace: shop}\nspec:\n  clusterIP: 10.96.0.99\n  ports: [{port: 80}]\n";
    let start = Instant::now();
    std::fs::write(objects.path().join("new.yaml"), added).unwrap();
    eventually("the new Service", || {
        ask(port, "new.shop.svc.cluster.local.", "A", false).answer
            == ["new.shop.svc.cluster.local. 30 IN A 10.96.0.99"]
    });
    // The folder is read once it has been quiet for 200 ms.
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    std::fs::remove_file(objects.path().join("new.yaml")).unwrap();
    eventually("the Service gone", || {
        ask(port, "new.shop.svc.cluster.local.", "A", false).status == "NXDOMAIN"
    });
}

#[test]
fn a_reload_answers_from_the_old_objects_until_the_new_plugin_has_its_own() {
    if !have("dig") {
        return;
    }
    let objects = manifests();
    let dir = objects.path().to_str().unwrap();
    let server = DnsCache::start_with_args(COREFILE, &["-manifests", dir]);
    let port = server.port;
    let name = "web.shop.svc.cluster.local.";
    eventually("the objects", || {
        ask(port, name, "A", false).status == "NOERROR"
    });
    server.rewrite(&COREFILE.replace("ttl 30", "ttl 10"));
    server.signal("USR1");
    // Every answer on the way is the old plugin's or the new one's, never a SERVFAIL of a
    // plugin still reading its objects.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let seen = ask(port, name, "A", false);
        assert_eq!(seen.status, "NOERROR", "{seen:?}");
        if seen.answer == ["web.shop.svc.cluster.local. 10 IN A 10.96.0.10"] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the reload was not applied: {seen:?}"
        );
    }
}

#[test]
fn not_ready_and_servfail_until_the_objects_are_in() {
    if !have("dig") {
        return;
    }
    let corefile = COREFILE.replace(
        "ttl 30",
        "ttl 30\n        kubeconfig /nonexistent/kubeconfig\n        startup_timeout 1s",
    );
    // Serving waits for the objects up to `startup_timeout`, then starts anyway.
    let start = Instant::now();
    let server = DnsCache::start(&corefile);
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    eventually("/ready to name kubernetes", || {
        http_get(server.http[0], "/ready") == Some((503, "kubernetes".to_owned()))
    });
    let seen = ask(server.port, "web.shop.svc.cluster.local.", "A", false);
    assert_eq!(
        (seen.status.as_str(), seen.aa),
        ("SERVFAIL", true),
        "{seen:?}"
    );
}

/// kubeadm's default Corefile, byte for byte: `testdata/corefile/` holds it rendered from
/// kubernetes/kubernetes `cmd/kubeadm/app/phases/addons/dns/manifests.go` with
/// `DNSDomain=cluster.local` (see its `PROVENANCE.md`). It binds port 53 and forwards to
/// `/etc/resolv.conf`, so it runs in user, network and mount namespaces of its own
/// (`unshare`), where a bind-mounted resolv.conf names a local unbound on 127.0.0.2:53
/// (both servers set `SO_REUSEPORT`, so the wildcard and the specific address coexist)
/// that answers the names outside the cluster.
const KUBEADM_COREFILE: &str = include_str!(
    "../../../testdata/corefile/k8s-kubernetes-cmd-kubeadm-app-phases-addons-dns-manifests-go-rendered.Corefile"
);

#[test]
fn kubeadm_default_corefile_answers_cluster_and_other_names() {
    if !have("dig") || !have("unshare") || !have("unbound") || !have("curl") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().display().to_string();
    std::fs::write(work.path().join("Corefile"), KUBEADM_COREFILE).unwrap();
    std::fs::create_dir(work.path().join("manifests")).unwrap();
    std::fs::write(
        work.path().join("manifests/cluster.yaml"),
        include_str!("kubernetes/cluster.yaml"),
    )
    .unwrap();
    std::fs::write(work.path().join("resolv.conf"), "nameserver 127.0.0.2\n").unwrap();
    std::fs::write(
        work.path().join("unbound.conf"),
        format!(
            "server:\n  interface: 127.0.0.2\n  port: 53\n  so-reuseport: yes\n  do-daemonize: no\n  chroot: \"\"\n  username: \"\"\n  directory: \"{dir}\"\n  pidfile: \"\"\n  use-syslog: no\n  do-ip6: no\n  module-config: \"iterator\"\n  local-zone: \"test.\" static\n  local-data: \"example.test. 60 IN A 192.0.2.80\"\nremote-control:\n  control-enable: no\n"
        ),
    )
    .unwrap();
    let binary = env!("CARGO_BIN_EXE_dns-cache");
    let script = format!(
        "cd {dir}\nip link set lo up\nmount --bind {dir}/resolv.conf /etc/resolv.conf\n\
         unbound -d -c {dir}/unbound.conf >unbound.log 2>&1 </dev/null & UNBOUND=$!\n\
         sleep 0.3\n\
         {binary} -conf {dir}/Corefile -manifests {dir}/manifests >server.log 2>&1 </dev/null & SERVER=$!\n\
         for i in $(seq 100); do dig @127.0.0.1 +time=1 +tries=1 dns-version.cluster.local TXT >/dev/null 2>&1 && break; sleep 0.1; done\n\
         dig @127.0.0.1 +short +time=2 +tries=1 web.shop.svc.cluster.local A\n\
         dig @127.0.0.1 +short +time=2 +tries=1 example.test A\n\
         dig @127.0.0.1 +short +time=2 +tries=1 10.0.96.10.in-addr.arpa PTR\n\
         dig @127.0.0.1 +short +time=2 +tries=1 ext.shop.svc.cluster.local A\n\
         curl -s -o /dev/null -w '%{{http_code}} health\\n' http://127.0.0.1:8080/health\n\
         curl -s -o /dev/null -w '%{{http_code}} ready\\n' http://127.0.0.1:8181/ready\n\
         curl -s http://127.0.0.1:9153/metrics | grep -q '^coredns_dns_requests_total' && echo metrics\n\
         kill $SERVER $UNBOUND\nwait\n"
    );
    let out = std::process::Command::new("timeout")
        .args([
            "120",
            "unshare",
            "--user",
            "--map-root-user",
            "--net",
            "--mount",
        ])
        .args(["sh", "-c", &script])
        .output()
        .unwrap();
    let log = std::fs::read_to_string(work.path().join("server.log")).unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .collect::<Vec<_>>(),
        [
            "10.96.0.10",
            "192.0.2.80",
            "web.shop.svc.cluster.local.",
            // An ExternalName outside the zone: its target resolved through `forward`.
            "example.test.",
            "192.0.2.80",
            // The ports kubeadm's Deployment probes and scrapes.
            "200 health",
            "200 ready",
            "metrics"
        ],
        "stderr: {}\nserver: {log}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two ExternalName Services that name each other across two zones served by two blocks
/// (`a` in cluster.local points into other.local, `b` there points back): each lookup asks
/// the other block, which asks back. The nesting is cut at 8 lookups, so the query is
/// answered (NOERROR, with the CNAMEs met) and the server goes on answering.
#[test]
fn external_names_that_point_at_each_other_across_zones_do_not_loop() {
    if !have("dig") {
        return;
    }
    let objects = tempfile::tempdir().unwrap();
    std::fs::write(
        objects.path().join("loop.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n\
         apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: shop}\n\
         spec: {type: ExternalName, externalName: b.shop.svc.other.local}\n---\n\
         apiVersion: v1\nkind: Service\nmetadata: {name: b, namespace: shop}\n\
         spec: {type: ExternalName, externalName: a.shop.svc.cluster.local}\n",
    )
    .unwrap();
    let corefile = "cluster.local:{PORT} {\n    bind 127.0.0.1\n    kubernetes\n    ready 127.0.0.1:{HTTP}\n}\n\
                    other.local:{PORT} {\n    bind 127.0.0.1\n    kubernetes\n}\n";
    let dir = objects.path().to_str().unwrap();
    let server = DnsCache::start_with_args(corefile, &["-manifests", dir]);
    eventually("/ready", || {
        http_get(server.http[0], "/ready").is_some_and(|(status, _)| status == 200)
    });
    let seen = ask(server.port, "a.shop.svc.cluster.local.", "A", false);
    assert_eq!(seen.status, "NOERROR", "{seen:?}");
    assert!(
        seen.answer
            .iter()
            .all(|r| r.contains(" IN CNAME ") && r.starts_with(['a', 'b'])),
        "{seen:?}"
    );
    assert!(seen.answer.len() <= 9, "{seen:?}");
    // Still serving.
    let seen = ask(server.port, "b.shop.svc.other.local.", "CNAME", true);
    assert_eq!(
        seen.answer,
        ["b.shop.svc.other.local. 5 IN CNAME a.shop.svc.cluster.local."]
    );
}
