//! CoreDNS v1.14.7's own handler tests of `plugin/kubernetes`, transcribed: the tables of
//! `handler_test.go` (`commonDnsTestCases`, `dnsTestCases`, `nsTestCases`,
//! `notSyncedTestCases`), `handler_pod_insecure_test.go`, `handler_pod_disabled_test.go`,
//! `handler_pod_verified_test.go`, `handler_case_test.go` and
//! `handler_ignore_emptyservice_test.go`, each run with the settings of its Go test against
//! the objects of `testdata/handler.yaml` (its `APIConnServeTest`). Records are compared
//! as CoreDNS's `test.SortAndCheck` compares them: sorted, by owner, TTL, type and data,
//! the SOA's serial excepted (it is the time of the last change). Where dns-cache answers
//! differently, the case says why.
//!
//! At the end, the memo's own tests: a replayed reply is the one built afresh, and a new
//! snapshot is never answered from the memo of the old one.

use std::path::Path;
use std::sync::Arc;

use cluster_state::{Snapshot, parse_manifest};
use dns_wire::{Class, Message, OwnedMessage, OwnedRecord, Rcode, Section, Type};

use super::index::{Index, Selection};
use super::lookup::Settings;
use super::memo::CAPACITY;
use super::objects::Shared;
use super::options::PodMode;
use super::{Answered, Kubernetes, Served};
use crate::metrics::Metrics;
use crate::plugin::SubQuery;
use crate::query::names::Zone;
use crate::query::reply::scrub;
use crate::query::request::tests::{client, query};
use crate::query::request::{Admission, Proto, admit};

/// One transcribed case: the question, the rcode, and each section's records.
struct Case {
    qname: &'static str,
    qtype: Type,
    rcode: Rcode,
    answer: &'static [&'static str],
    ns: &'static [&'static str],
    extra: &'static [&'static str],
}

const SOA: &str = "cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1499347823 7200 1800 86400 5";

const fn case(
    qname: &'static str,
    qtype: Type,
    rcode: Rcode,
    answer: &'static [&'static str],
) -> Case {
    Case {
        qname,
        qtype,
        rcode,
        answer,
        ns: &[],
        extra: &[],
    }
}

/// NODATA or a name error: no answer, the SOA in the authority section.
const fn denial(qname: &'static str, qtype: Type, rcode: Rcode) -> Case {
    Case {
        qname,
        qtype,
        rcode,
        answer: &[],
        ns: &[SOA],
        extra: &[],
    }
}

const fn srv(
    qname: &'static str,
    answer: &'static [&'static str],
    extra: &'static [&'static str],
) -> Case {
    Case {
        qname,
        qtype: Type::SRV,
        rcode: Rcode::NOERROR,
        answer,
        ns: &[],
        extra,
    }
}

const OK: Rcode = Rcode::NOERROR;
const NX: Rcode = Rcode::NXDOMAIN;

/// `commonDnsTestCases`.
const COMMON: &[Case] = &[
    case(
        "svc1.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
    ),
    case(
        "svcempty.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["svcempty.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
    ),
    srv(
        "svc1.testns.svc.cluster.local.",
        &["svc1.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.testns.svc.cluster.local."],
        &["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
    ),
    srv(
        "svcempty.testns.svc.cluster.local.",
        &[
            "svcempty.testns.svc.cluster.local. 5 IN SRV 0 100 80 svcempty.testns.svc.cluster.local.",
        ],
        &["svcempty.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
    ),
    srv(
        "svc6.testns.svc.cluster.local.",
        &["svc6.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc6.testns.svc.cluster.local."],
        &["svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1"],
    ),
    srv(
        "_http._tcp.svc1.testns.svc.cluster.local.",
        &[
            "_http._tcp.svc1.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.testns.svc.cluster.local.",
        ],
        &["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
    ),
    srv(
        "_http._tcp.svcempty.testns.svc.cluster.local.",
        &[
            "_http._tcp.svcempty.testns.svc.cluster.local. 5 IN SRV 0 100 80 svcempty.testns.svc.cluster.local.",
        ],
        &["svcempty.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
    ),
    case(
        "hdls1.testns.svc.cluster.local.",
        Type::A,
        OK,
        &[
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.2",
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.3",
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.4",
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.5",
        ],
    ),
    case(
        "hdlsprtls.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["hdlsprtls.testns.svc.cluster.local. 5 IN A 172.0.0.20"],
    ),
    denial("svc1.testns.svc.cluster.local.", Type::AAAA, OK),
    denial("svc0.testns.svc.cluster.local.", Type::AAAA, NX),
    denial("svc0.testns.svc.cluster.local.", Type::A, NX),
    denial("svc0.svc-nons.svc.cluster.local.", Type::A, NX),
    case(
        "dns-version.cluster.local.",
        Type::TXT,
        OK,
        &["dns-version.cluster.local. 28800 IN TXT 1.1.0"],
    ),
    denial("svc1.testns.svc.cluster.local.", Type::TXT, OK),
    denial("svc0.svc-nons.svc.cluster.local.", Type::TXT, NX),
    denial("bogusendpoint.hdls1.testns.svc.cluster.local.", Type::A, NX),
    denial("bogusendpoint.svc0.testns.svc.cluster.local.", Type::A, NX),
    case(
        "svc6.testns.svc.cluster.local.",
        Type::AAAA,
        OK,
        &["svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1"],
    ),
    srv(
        "_http._tcp.svc6.testns.svc.cluster.local.",
        &[
            "_http._tcp.svc6.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc6.testns.svc.cluster.local.",
        ],
        &["svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1"],
    ),
    case(
        "hdls1.testns.svc.cluster.local.",
        Type::AAAA,
        OK,
        &[
            "hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::1",
            "hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::2",
        ],
    ),
    denial("svc.cluster.local.", Type::A, OK),
    denial("pod.cluster.local.", Type::A, OK),
    denial("testns.svc.cluster.local.", Type::A, OK),
    denial("svc.cluster.local.", Type::NS, OK),
    denial("testns.svc.cluster.local.", Type::NS, OK),
    denial("foo.cluster.local.", Type::NS, NX),
    denial("foo.svc.cluster.local.", Type::NS, NX),
    case(
        "svc-dual-stack.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["svc-dual-stack.testns.svc.cluster.local. 5 IN A 10.0.0.3"],
    ),
    case(
        "svc-dual-stack.testns.svc.cluster.local.",
        Type::AAAA,
        OK,
        &["svc-dual-stack.testns.svc.cluster.local. 5 IN AAAA 10::3"],
    ),
    srv(
        "svc-dual-stack.testns.svc.cluster.local.",
        &[
            "svc-dual-stack.testns.svc.cluster.local. 5 IN SRV 0 50 80 svc-dual-stack.testns.svc.cluster.local.",
        ],
        &[
            "svc-dual-stack.testns.svc.cluster.local. 5 IN A 10.0.0.3",
            "svc-dual-stack.testns.svc.cluster.local. 5 IN AAAA 10::3",
        ],
    ),
    denial("svc1.testns.svc.cluster.local.", Type::SOA, OK),
    denial(
        "endpoint.external.testns.svc.cluster.local.",
        Type::CNAME,
        NX,
    ),
    denial(
        "subdomain.subdomain.external.testns.svc.cluster.local.",
        Type::CNAME,
        NX,
    ),
];

/// `dnsTestCases` (the non-multicluster half), but "CNAME External Truncated Lookup".
const SERVE: &[Case] = &[
    srv(
        "_http._tcp.hdls1.testns.svc.cluster.local.",
        &[
            "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 172-0-0-2.hdls1.testns.svc.cluster.local.",
            "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 172-0-0-3.hdls1.testns.svc.cluster.local.",
            "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 5678-abcd--1.hdls1.testns.svc.cluster.local.",
            "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 5678-abcd--2.hdls1.testns.svc.cluster.local.",
            "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 dup-name.hdls1.testns.svc.cluster.local.",
        ],
        &[
            "172-0-0-2.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.2",
            "172-0-0-3.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.3",
            "5678-abcd--1.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::1",
            "5678-abcd--2.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::2",
            "dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.4",
            "dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.5",
        ],
    ),
    case(
        "hdls1.testns.svc.cluster.local.",
        Type::A,
        OK,
        &[
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.2",
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.3",
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.4",
            "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.5",
        ],
    ),
    case(
        "5678-abcd--2.hdls1.testns.svc.cluster.local",
        Type::AAAA,
        OK,
        &["5678-abcd--2.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::2"],
    ),
    case(
        "5678-abcd--1.hdls1.testns.svc.cluster.local.",
        Type::AAAA,
        OK,
        &["5678-abcd--1.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::1"],
    ),
    case(
        "172-0-0-20.hdlsprtls.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["172-0-0-20.hdlsprtls.testns.svc.cluster.local. 5 IN A 172.0.0.20"],
    ),
    case(
        "172-0-0-2.hdls1.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["172-0-0-2.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.2"],
    ),
    case(
        "172-0-0-3.hdls1.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["172-0-0-3.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.3"],
    ),
    case(
        "dup-name.hdls1.testns.svc.cluster.local.",
        Type::A,
        OK,
        &[
            "dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.4",
            "dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.5",
        ],
    ),
    case(
        "external.testns.svc.cluster.local.",
        Type::CNAME,
        OK,
        &["external.testns.svc.cluster.local. 5 IN CNAME ext.interwebs.test."],
    ),
    case(
        "external-to-service.testns.svc.cluster.local",
        Type::A,
        OK,
        &[
            "external-to-service.testns.svc.cluster.local. 5 IN CNAME svc1.testns.svc.cluster.local.",
            "svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1",
        ],
    ),
];

/// `nsTestCases`: every namespace exposed, one that does not exist.
const NAMESPACES: &[Case] = &[
    case(
        "svc1.testns.svc.cluster.local.",
        Type::A,
        OK,
        &["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
    ),
    denial("svc1.nsnoexist.svc.cluster.local.", Type::A, NX),
];

/// `podModeInsecureCases`.
const PODS_INSECURE: &[Case] = &[
    case(
        "10-240-0-1.podns.pod.cluster.local.",
        Type::A,
        OK,
        &["10-240-0-1.podns.pod.cluster.local. 5 IN A 10.240.0.1"],
    ),
    case(
        "172-0-0-2.podns.pod.cluster.local.",
        Type::A,
        OK,
        &["172-0-0-2.podns.pod.cluster.local. 5 IN A 172.0.0.2"],
    ),
    denial("blah.podns.pod.cluster.local.", Type::A, NX),
    denial("blah.podns.pod.cluster.local.", Type::AAAA, NX),
    denial("blah.podns.pod.cluster.local.", Type::HINFO, NX),
    denial("blah.pod-nons.pod.cluster.local.", Type::A, NX),
    denial("podns.pod.cluster.local.", Type::A, OK),
];

/// `podModeDisabledCases`.
const PODS_DISABLED: &[Case] = &[
    denial("10-240-0-1.podns.pod.cluster.local.", Type::A, NX),
    denial("172-0-0-2.podns.pod.cluster.local.", Type::A, NX),
];

/// `podModeVerifiedCases`.
const PODS_VERIFIED: &[Case] = &[
    case(
        "10-240-0-1.podns.pod.cluster.local.",
        Type::A,
        OK,
        &["10-240-0-1.podns.pod.cluster.local. 5 IN A 10.240.0.1"],
    ),
    denial("podns.pod.cluster.local.", Type::A, OK),
    denial("svcns.svc.cluster.local.", Type::A, NX),
    denial("pod-nons.pod.cluster.local.", Type::A, NX),
    denial("172-0-0-2.podns.pod.cluster.local.", Type::A, NX),
];

/// `dnsPreserveCaseCases`.
const PRESERVE_CASE: &[Case] = &[
    Case {
        qname: "not-a-service.testns.svc.ClUsTeR.lOcAl.",
        qtype: Type::A,
        rcode: NX,
        answer: &[],
        ns: &[
            "ClUsTeR.lOcAl. 5 IN SOA ns.dns.ClUsTeR.lOcAl. hostmaster.ClUsTeR.lOcAl. 1499347823 7200 1800 86400 5",
        ],
        extra: &[],
    },
    case(
        "SvC1.TeStNs.SvC.cLuStEr.LoCaL.",
        Type::A,
        OK,
        &["SvC1.TeStNs.SvC.cLuStEr.LoCaL. 5 IN A 10.0.0.1"],
    ),
    srv(
        "_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL.",
        &[
            "_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL. 5 IN SRV 0 100 80 svc1.testns.svc.cLuStEr.LoCaL.",
        ],
        &["svc1.testns.svc.cLuStEr.LoCaL. 5 IN A 10.0.0.1"],
    ),
    case(
        "Cluster.local.",
        Type::SOA,
        OK,
        &[
            "Cluster.local. 5 IN SOA ns.dns.Cluster.local. hostmaster.Cluster.local. 1499347823 7200 1800 86400 5",
        ],
    ),
];

/// `dnsEmptyServiceTestCases`.
const EMPTY_SERVICE: &[Case] = &[
    denial("svcempty.testns.svc.cluster.local.", Type::A, NX),
    case(
        "external.testns.svc.cluster.local.",
        Type::CNAME,
        OK,
        &["external.testns.svc.cluster.local. 5 IN CNAME ext.interwebs.test."],
    ),
];

/// `notSyncedTestCases`: before the first snapshot a name error is SERVFAIL.
const NOT_SYNCED: &[Case] = &[denial(
    "svc0.testns.svc.cluster.local.",
    Type::A,
    Rcode::SERVFAIL,
)];

/// The objects of the Go tests.
fn snapshot() -> Snapshot {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/plugin/kubernetes/testdata/handler.yaml"
    ));
    let text = std::fs::read_to_string(path).unwrap();
    let mut snapshot = Snapshot {
        revision: 1,
        ..Snapshot::default()
    };
    for object in parse_manifest(path, &text).unwrap() {
        snapshot.insert(object);
    }
    snapshot
}

/// The plugin for `cluster.local.` as the Go tests set it up (`New` then fields).
fn plugin(namespaces: &[&str], pods: PodMode, ignore_empty: bool, synced: bool) -> Kubernetes {
    let shared = Arc::new(Shared::default());
    let selection = Selection {
        endpoints: true,
        pods: pods == PodMode::Verified,
        ..Selection::default()
    };
    if synced {
        shared.publish(Index::build(&snapshot(), &selection));
    }
    Kubernetes {
        zones: vec![Zone::parse("cluster.local.").unwrap()],
        fallthrough: None,
        settings: Settings {
            ttl: 5,
            namespaces: namespaces.iter().map(|n| (*n).to_owned()).collect(),
            pods,
            ignore_empty_service: ignore_empty,
            primary_zone: vec![b"cluster".to_vec(), b"local".to_vec()],
            local_ips: Vec::new(),
        },
        startup_timeout: std::time::Duration::ZERO,
        shared,
        _watch: tokio::sync::oneshot::channel().0,
    }
}

/// A record in the cases' layout: whitespace-separated, TXT unquoted, the SOA's serial
/// replaced by `*`.
fn normalized(text: &str) -> String {
    let mut words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if words.get(3).is_some_and(|t| t == "SOA")
        && let Some(serial) = words.get_mut(6)
    {
        *serial = "*".to_owned();
    }
    if words.get(3).is_some_and(|t| t == "TXT")
        && let Some(text) = words.get_mut(4)
    {
        *text = text.trim_matches('"').to_owned();
    }
    words.join(" ")
}

fn sorted(records: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut records: Vec<String> = records.into_iter().map(|r| normalized(&r)).collect();
    records.sort();
    records
}

/// Asks `k` the case's question; the differences, if any.
fn check(k: &Kubernetes, case: &Case) -> Result<(), String> {
    let bytes = query(case.qname, case.qtype, None);
    let Admission::Query(req) = admit(&bytes, Proto::Udp, client()) else {
        return Err("not admitted".into());
    };
    let Served::Reply(wire) = k.serve(&req) else {
        return Err("passed to the next plugin".into());
    };
    let msg = Message::parse(&wire).map_err(|e| e.to_string())?;
    let section = |s: Section| {
        sorted(
            msg.records()
                .filter(|(sec, _)| *sec == s)
                .map(|(_, rec)| rec.to_string()),
        )
    };
    let expected = |list: &[&str]| sorted(list.iter().map(|s| (*s).to_owned()));
    let got = (
        msg.rcode(),
        msg.header().aa,
        section(Section::Answer),
        section(Section::Authority),
        section(Section::Additional),
    );
    let want = (
        case.rcode,
        true,
        expected(case.answer),
        expected(case.ns),
        expected(case.extra),
    );
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got:#?}\nwant {want:#?}"))
    }
}

fn run(k: &Kubernetes, cases: &[Case]) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            check(k, c)
                .err()
                .map(|e| format!("{} {}: {e}", c.qname, c.qtype))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn serve_dns() {
    let k = plugin(&["testns"], PodMode::Disabled, false, true);
    run(&k, COMMON);
    run(&k, SERVE);
}

/// "CNAME External Truncated Lookup" of `dnsTestCases`: the target of an ExternalName
/// outside the zone is asked of the server, and the records of its reply follow the CNAME,
/// with the reply's TC bit (CoreDNS's `Upstub` answers `ext.interwebs.test. 5 IN A 1.2.3.4`,
/// truncated). A lookup that gives no reply leaves the CNAME out, as CoreDNS's `continue`
/// does when `b.Lookup` fails: NODATA with the SOA.
#[test]
fn an_external_name_outside_the_zone_is_looked_up() {
    let k = plugin(&["testns"], PodMode::Disabled, false, true);
    let bytes = query("external.testns.svc.cluster.local.", Type::A, None);
    let Admission::Query(req) = admit(&bytes, Proto::Udp, client()) else {
        panic!("not admitted");
    };
    let Served::Lookup(lookups) = k.serve(&req) else {
        panic!("the target must be looked up");
    };
    let target: dns_wire::Name = "ext.interwebs.test.".parse().unwrap();
    assert_eq!(
        lookups,
        [SubQuery {
            name: target,
            qtype: Type::A
        }]
    );
    let mut upstream = OwnedMessage::parse(&query("ext.interwebs.test.", Type::A, None)).unwrap();
    upstream.header.qr = true;
    upstream.header.tc = true;
    upstream.answers.push(OwnedRecord {
        name: target,
        rtype: Type::A,
        class: Class::IN,
        ttl: 5,
        rdata: vec![1, 2, 3, 4].into(),
    });
    let mut out = Vec::new();
    let answered = k.resume(&req, &[Some(upstream.to_vec().unwrap())], &mut out);
    assert!(matches!(answered, Answered::Written), "{answered:?}");
    let msg = Message::parse(&out).unwrap();
    assert!(msg.header().tc && msg.header().aa);
    let answers: Vec<String> = msg
        .records()
        .map(|(_, r)| normalized(&r.to_string()))
        .collect();
    assert_eq!(
        answers,
        [
            normalized("external.testns.svc.cluster.local. 5 IN CNAME ext.interwebs.test."),
            normalized("ext.interwebs.test. 5 IN A 1.2.3.4"),
        ]
    );

    // No reply to the lookup, or a reply to another question: NODATA.
    let other = OwnedMessage::parse(&query("other.test.", Type::A, None)).unwrap();
    for looked_up in [None, Some(other.to_vec().unwrap())] {
        out.clear();
        let answered = k.resume(&req, &[looked_up], &mut out);
        assert!(matches!(answered, Answered::Written), "{answered:?}");
        let msg = Message::parse(&out).unwrap();
        assert_eq!((msg.rcode(), msg.counts().answers), (OK, 0));
        let authority: Vec<String> = msg
            .records()
            .map(|(_, r)| normalized(&r.to_string()))
            .collect();
        assert_eq!(authority, [normalized(SOA)]);
    }
}

#[test]
fn serve_namespace_dns() {
    run(&plugin(&[], PodMode::Disabled, false, true), NAMESPACES);
}

#[test]
fn not_synced_serve_dns() {
    run(
        &plugin(&["testns"], PodMode::Disabled, false, false),
        NOT_SYNCED,
    );
}

#[test]
fn pod_modes() {
    run(&plugin(&[], PodMode::Insecure, false, true), PODS_INSECURE);
    run(&plugin(&[], PodMode::Disabled, false, true), PODS_DISABLED);
    run(&plugin(&[], PodMode::Verified, false, true), PODS_VERIFIED);
}

#[test]
fn preserve_case() {
    run(&plugin(&[], PodMode::Disabled, true, true), PRESERVE_CASE);
}

#[test]
fn ignore_empty_service() {
    run(&plugin(&[], PodMode::Disabled, true, true), EMPTY_SERVICE);
}

/// A headless Service of `count` ready endpoints, in slices of at most 1000 (the API
/// server's limit).
fn big_headless(count: usize) -> Kubernetes {
    let mut text = String::from(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: big}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: many, namespace: big}\nspec: {clusterIP: None}\n",
    );
    for slice in 0..count.div_ceil(1000) {
        text.push_str(&format!(
            "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: many-{slice}, namespace: big, labels: {{kubernetes.io/service-name: many}}}}\naddressType: IPv4\nendpoints:\n"
        ));
        for n in slice * 1000..count.min((slice + 1) * 1000) {
            text.push_str(&format!("- addresses: [10.2.{}.{}]\n", n / 256, n % 256));
        }
    }
    let mut snapshot = Snapshot {
        revision: 1,
        ..Snapshot::default()
    };
    for object in parse_manifest(Path::new("big.yaml"), &text).unwrap() {
        snapshot.insert(object);
    }
    let k = plugin(&[], PodMode::Disabled, false, false);
    let selection = Selection {
        endpoints: true,
        ..Selection::default()
    };
    k.shared.publish(Index::build(&snapshot, &selection));
    k
}

/// Replies are encoded in a 4 KiB buffer first; a larger one is encoded whole (the server
/// truncates it for UDP clients), and one over 65,535 bytes is SERVFAIL.
#[test]
fn replies_past_4_kib_and_past_64_kib() {
    let bytes = query("many.big.svc.cluster.local.", Type::A, None);
    let Admission::Query(req) = admit(&bytes, Proto::Tcp, client()) else {
        panic!("not admitted");
    };
    let Served::Reply(wire) = big_headless(400).serve(&req) else {
        panic!("no reply");
    };
    assert!(wire.len() > 4096);
    assert_eq!(Message::parse(&wire).unwrap().counts().answers, 400);
    let Served::Failed(error) = big_headless(5000).serve(&req) else {
        panic!("a reply over 64 KiB");
    };
    assert!(error.starts_with("plugin/kubernetes: "), "{error}");
}

/// setup.go's refusal of a plugin with reverse zones only (`ParseStanza`).
#[test]
fn a_non_reverse_zone_is_required() {
    let config = super::options::KubernetesConfig {
        zones: vec!["in-addr.arpa".into(), "ip6.arpa.".into()],
        ..Default::default()
    };
    let listen = "127.0.0.1:53".parse().unwrap();
    let Err(error) = Kubernetes::new(&config, &[], listen, &Arc::new(Metrics::new())) else {
        panic!("accepted reverse zones only");
    };
    assert_eq!(
        error.to_string(),
        "plugin/kubernetes: non-reverse zone name must be used"
    );
}

/// The reply the client gets to `bytes` (with ID `id`): through the memo, or built afresh.
fn fitted(k: &Kubernetes, bytes: &[u8], id: u16, memo: bool) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[..2].copy_from_slice(&id.to_be_bytes());
    let Admission::Query(req) = admit(&bytes, Proto::Udp, client()) else {
        panic!("not admitted");
    };
    let raw = if memo {
        let mut out = Vec::new();
        assert!(matches!(k.answer(&req, &mut out), Answered::Written));
        out
    } else {
        let Served::Reply(wire) = k.serve(&req) else {
            panic!("no reply");
        };
        wire
    };
    let mut out = Vec::new();
    scrub(&raw, &req, &mut out).unwrap();
    out
}

/// `name` with every other letter upper-case, or every letter.
fn recased(name: &str, all: bool) -> String {
    name.chars()
        .enumerate()
        .map(|(i, c)| {
            if all || i % 2 == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

/// Every record form of the handler cases (addresses, SRV with additionals, PTR, TXT,
/// NS, SOA, NODATA, NXDOMAIN), asked first in lower case, then in other cases with
/// another ID, with and without EDNS: the replayed reply is byte for byte the fresh one.
#[test]
fn a_memoized_reply_is_the_reply_built_afresh() {
    let k = plugin(&["testns"], PodMode::Disabled, false, true);
    for c in COMMON.iter().chain(SERVE) {
        for edns in [None, Some((1232, true)), Some((512, false))] {
            let first = query(c.qname, c.qtype, edns);
            let _ = fitted(&k, &first, 1, true);
            for (n, name) in [
                c.qname.to_owned(),
                recased(c.qname, false),
                recased(c.qname, true),
            ]
            .iter()
            .enumerate()
            {
                let bytes = query(name, c.qtype, edns);
                let id = 0x4000 + n as u16;
                assert_eq!(
                    fitted(&k, &bytes, id, true),
                    fitted(&k, &bytes, id, false),
                    "{name} {} {edns:?}",
                    c.qtype
                );
            }
        }
    }
    // The memo answered: all but the dns-version TXT (its TTL is not the others').
    let bytes = query("SVC1.TESTNS.SVC.CLUSTER.LOCAL.", Type::A, None);
    let Admission::Query(req) = admit(&bytes, Proto::Udp, client()) else {
        panic!("not admitted");
    };
    assert!(
        k.shared
            .memo
            .replay(&req, &k.shared.index(), &mut Vec::new())
    );
    let bytes = query("dns-version.cluster.local.", Type::TXT, None);
    let Admission::Query(req) = admit(&bytes, Proto::Udp, client()) else {
        panic!("not admitted");
    };
    assert!(
        !k.shared
            .memo
            .replay(&req, &k.shared.index(), &mut Vec::new())
    );
}

/// A snapshot without the Service: the next query gets the name error, not the address
/// memoized from the snapshot before.
#[test]
fn a_new_snapshot_is_not_answered_from_the_old_memo() {
    let k = plugin(&["testns"], PodMode::Disabled, false, true);
    let bytes = query("svc1.testns.svc.cluster.local.", Type::A, None);
    for _ in 0..2 {
        let reply = fitted(&k, &bytes, 7, true);
        let msg = Message::parse(&reply).unwrap();
        assert_eq!((msg.rcode(), msg.counts().answers), (Rcode::NOERROR, 1));
    }
    k.shared
        .publish(Index::build(&Snapshot::default(), &Selection::default()));
    let reply = fitted(&k, &bytes, 7, true);
    let msg = Message::parse(&reply).unwrap();
    assert_eq!((msg.rcode(), msg.counts().answers), (Rcode::NXDOMAIN, 0));
    assert_eq!(reply, fitted(&k, &bytes, 7, false));
}

/// Names that do not exist, more than the memo holds: it stays within its bound.
#[test]
fn hostile_names_do_not_grow_the_memo() {
    let k = plugin(&["testns"], PodMode::Disabled, false, true);
    for n in 0..CAPACITY + 10 {
        let bytes = query(&format!("x{n}.testns.svc.cluster.local."), Type::A, None);
        let reply = fitted(&k, &bytes, 1, true);
        assert_eq!(Message::parse(&reply).unwrap().rcode(), Rcode::NXDOMAIN);
        assert!(k.shared.memo.len() <= CAPACITY);
    }
}
