//! Shared helpers of the integration tests: corpus access and proptest strategies that build
//! messages of every supported type through the typed RDATA API.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    dead_code,
    unreachable_pub
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use dns_wire::rdata::{
    Caa, CharacterStrings, Dnskey, Ds, Hinfo, Mx, Naptr, Nsec, Nsec3, Nsec3param, Rrsig, Soa, Srv,
    SvcParams, Svcb, Tlsa, TypeBitmap,
};
use dns_wire::{
    Class, Header, Name, OwnedEdns, OwnedMessage, OwnedQuestion, OwnedRecord, RData, Type,
};
use proptest::prelude::*;

/// Every `.bin` message of the DNS corpus (`testdata/dns/` and its `public/`) with its path,
/// sorted.
pub fn corpus_messages() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = ["dns", "dns/public"]
        .into_iter()
        .flat_map(|dir| testdata::files(dir, "bin"))
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    out.sort();
    assert!(
        out.len() >= 10,
        "expected the 10 corpus messages, found {}",
        out.len()
    );
    out
}

/// Names from a few shared suffixes in mixed case, so compression has work to do.
pub fn name() -> impl Strategy<Value = Name> {
    let label = prop_oneof![
        4 => "[a-zA-Z0-9-]{1,12}".prop_map(String::into_bytes),
        1 => proptest::collection::vec(any::<u8>(), 1..6),
    ];
    let suffix = prop_oneof![
        Just(vec![&b"example"[..], b"com"]),
        Just(vec![&b"Example"[..], b"NET"]),
        Just(vec![&b"cdn"[..], b"example", b"com"]),
        Just(vec![]),
    ];
    (proptest::collection::vec(label, 0..3), suffix).prop_map(|(head, tail)| {
        let labels: Vec<&[u8]> = head.iter().map(Vec::as_slice).chain(tail).collect();
        Name::from_labels(labels).unwrap()
    })
}

fn build(data: RData<'_>) -> (Type, Vec<u8>) {
    let mut out = Vec::new();
    data.write_to(&mut out);
    (data.rtype(), out)
}

fn strings_wire(strings: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in strings {
        out.push(s.len() as u8);
        out.extend_from_slice(s);
    }
    out
}

fn bitmap_wire(types: &BTreeSet<u16>) -> Vec<u8> {
    let mut windows: BTreeMap<u8, [u8; 32]> = BTreeMap::new();
    for t in types {
        let bits = windows.entry((t >> 8) as u8).or_insert([0; 32]);
        bits[usize::from((t & 0xFF) >> 3)] |= 0x80 >> (t & 7);
    }
    let mut out = Vec::new();
    for (window, bits) in windows {
        let len = 32 - bits.iter().rev().take_while(|&&b| b == 0).count();
        out.extend_from_slice(&[window, len as u8]);
        out.extend_from_slice(&bits[..len]);
    }
    out
}

fn bitmap() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::btree_set(prop_oneof![1u16..300, 1000u16..1100, Just(65280u16)], 0..6)
        .prop_map(|t| bitmap_wire(&t))
}

fn svc_params() -> impl Strategy<Value = Vec<u8>> {
    let alpn = proptest::collection::vec("[a-z0-9]{1,5}".prop_map(String::into_bytes), 1..3);
    (
        proptest::option::of(alpn),
        proptest::option::of(any::<u16>()),
        proptest::option::of(proptest::collection::vec(any::<[u8; 4]>(), 1..3)),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 4..20)),
        proptest::option::of(proptest::collection::vec(any::<[u8; 16]>(), 1..2)),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..8)),
    )
        .prop_map(|(alpn, port, v4, ech, v6, unknown)| {
            let mut out = Vec::new();
            let mut put = |key: u16, value: Vec<u8>| {
                out.extend_from_slice(&key.to_be_bytes());
                out.extend_from_slice(&(value.len() as u16).to_be_bytes());
                out.extend_from_slice(&value);
            };
            if let Some(alpn) = alpn {
                put(1, strings_wire(&alpn));
            }
            if let Some(port) = port {
                put(3, port.to_be_bytes().to_vec());
            }
            if let Some(v4) = v4 {
                put(4, v4.concat());
            }
            if let Some(ech) = ech {
                // An ECHConfigList is itself length-prefixed (RFC 9460 §7.3, dnspython checks).
                put(5, [&(ech.len() as u16).to_be_bytes()[..], &ech].concat());
            }
            if let Some(v6) = v6 {
                put(6, v6.concat());
            }
            if let Some(unknown) = unknown {
                put(65001, unknown);
            }
            out
        })
}

/// Uncompressed RDATA of every supported type, built through the typed API.
pub fn rdata() -> impl Strategy<Value = (Type, Vec<u8>)> {
    let bytes = |n: std::ops::Range<usize>| proptest::collection::vec(any::<u8>(), n);
    let cs = || proptest::collection::vec(any::<u8>(), 0..20);
    prop_oneof![
        any::<[u8; 4]>().prop_map(|a| build(RData::A(a.into()))),
        any::<[u8; 16]>().prop_map(|a| build(RData::Aaaa(a.into()))),
        name().prop_map(|n| build(RData::Ns(n.as_ref()))),
        name().prop_map(|n| build(RData::Cname(n.as_ref()))),
        name().prop_map(|n| build(RData::Ptr(n.as_ref()))),
        name().prop_map(|n| build(RData::Dname(n.as_ref()))),
        (name(), name(), any::<[u32; 5]>()).prop_map(|(m, r, v)| build(RData::Soa(Soa {
            mname: m.as_ref(),
            rname: r.as_ref(),
            serial: v[0],
            refresh: v[1],
            retry: v[2],
            expire: v[3],
            minimum: v[4],
        }))),
        (any::<u16>(), name()).prop_map(|(p, n)| build(RData::Mx(Mx {
            preference: p,
            exchange: n.as_ref(),
        }))),
        proptest::collection::vec(cs(), 1..4).prop_map(|s| {
            let wire = strings_wire(&s);
            build(RData::Txt(CharacterStrings::new(&wire).unwrap()))
        }),
        (cs(), cs()).prop_map(|(c, o)| build(RData::Hinfo(Hinfo { cpu: &c, os: &o }))),
        (any::<[u16; 3]>(), name()).prop_map(|(v, n)| build(RData::Srv(Srv {
            priority: v[0],
            weight: v[1],
            port: v[2],
            target: n.as_ref(),
        }))),
        (any::<[u16; 2]>(), cs(), cs(), cs(), name()).prop_map(|(v, fl, s, re, n)| build(
            RData::Naptr(Naptr {
                order: v[0],
                preference: v[1],
                flags: &fl,
                services: &s,
                regexp: &re,
                replacement: n.as_ref(),
            })
        )),
        (any::<u8>(), "[a-z0-9]{1,15}", bytes(0..40)).prop_map(|(f, t, v)| build(RData::Caa(
            Caa {
                flags: f,
                tag: t.as_bytes(),
                value: &v,
            }
        ))),
        (
            any::<u16>(),
            any::<u8>(),
            prop_oneof![Just((1u8, 20usize)), Just((2, 32)), Just((4, 48))]
        )
            .prop_flat_map(move |(tag, alg, (dt, len))| (Just((tag, alg, dt)), bytes(len..len + 1)))
            .prop_map(|((tag, alg, dt), d)| build(RData::Ds(Ds {
                key_tag: tag,
                algorithm: alg,
                digest_type: dt,
                digest: &d,
            }))),
        (any::<u16>(), any::<u8>(), bytes(1..64)).prop_map(|(fl, alg, k)| build(RData::Dnskey(
            Dnskey {
                flags: fl,
                protocol: 3,
                algorithm: alg,
                public_key: &k,
            }
        ))),
        (
            any::<(u16, u8, u8, u32, u32, u32, u16)>(),
            name(),
            bytes(1..64)
        )
            .prop_map(
                |((tc, alg, labels, ttl, exp, inc, tag), signer, sig)| build(RData::Rrsig(Rrsig {
                    type_covered: Type(tc),
                    algorithm: alg,
                    labels,
                    original_ttl: ttl,
                    expiration: exp,
                    inception: inc,
                    key_tag: tag,
                    signer: signer.as_ref(),
                    signature: &sig,
                }))
            ),
        (name(), bitmap()).prop_map(|(n, b)| build(RData::Nsec(Nsec {
            next: n.as_ref(),
            types: TypeBitmap::new(&b).unwrap(),
        }))),
        (any::<(u8, u8, u16)>(), bytes(0..8), bytes(1..32), bitmap()).prop_map(
            |((alg, fl, it), salt, next, b)| build(RData::Nsec3(Nsec3 {
                hash_algorithm: alg,
                flags: fl,
                iterations: it,
                salt: &salt,
                next_hashed_owner: &next,
                types: TypeBitmap::new(&b).unwrap(),
            }))
        ),
        (any::<(u8, u8, u16)>(), bytes(0..8)).prop_map(|((alg, fl, it), salt)| build(
            RData::Nsec3param(Nsec3param {
                hash_algorithm: alg,
                flags: fl,
                iterations: it,
                salt: &salt,
            })
        )),
        // dnspython checks the data length of matching types 1 (SHA-256) and 2 (SHA-512).
        (
            any::<[u8; 2]>(),
            prop_oneof![
                Just((0u8, 1usize, 40usize)),
                Just((1, 32, 33)),
                Just((2, 64, 65))
            ]
        )
            .prop_flat_map(move |(v, (mt, lo, hi))| (Just((v, mt)), bytes(lo..hi)))
            .prop_map(|((v, mt), d)| build(RData::Tlsa(Tlsa {
                usage: v[0],
                selector: v[1],
                matching_type: mt,
                data: &d,
            }))),
        (1u16..100, name(), svc_params(), any::<bool>()).prop_map(|(p, n, params, https)| {
            let svcb = Svcb {
                priority: p,
                target: n.as_ref(),
                params: SvcParams::new(&params).unwrap(),
            };
            build(if https {
                RData::Https(svcb)
            } else {
                RData::Svcb(svcb)
            })
        }),
        (name()).prop_map(|n| build(RData::Svcb(Svcb {
            priority: 0,
            target: n.as_ref(),
            params: SvcParams::new(&[]).unwrap(),
        }))),
        (0xFF00u16..0xFFFF, bytes(0..40)).prop_map(|(t, d)| build(RData::Unknown(Type(t), &d))),
    ]
}

/// A record of any supported type (class IN: dnspython reads some types per class).
pub fn record() -> impl Strategy<Value = OwnedRecord> {
    (name(), rdata(), 0u32..1_000_000).prop_map(|(name, (rtype, rdata), ttl)| OwnedRecord {
        name,
        rtype,
        class: Class::IN,
        ttl,
        rdata: rdata.into(),
    })
}

fn edns() -> impl Strategy<Value = OwnedEdns> {
    let option = prop_oneof![
        proptest::collection::vec(any::<u8>(), 8..9).prop_map(|c| (10u16, c)),
        proptest::collection::vec(any::<u8>(), 16..17).prop_map(|c| (10u16, c)),
        proptest::collection::vec(any::<u8>(), 0..12).prop_map(|n| (3u16, n)),
        (0usize..16).prop_map(|n| (12u16, vec![0; n])),
        (any::<[u8; 3]>()).prop_map(|a| (8u16, [&[0, 1, 24, 0][..], &a].concat())),
        proptest::collection::vec(any::<u8>(), 0..12).prop_map(|d| (65001u16, d)),
    ];
    (
        512u16..4097,
        any::<u8>(),
        any::<bool>(),
        proptest::collection::vec(option, 0..3),
    )
        .prop_map(|(size, ext, dnssec_ok, options)| {
            let mut e = OwnedEdns {
                udp_payload_size: size,
                ext_rcode: ext,
                dnssec_ok,
                ..OwnedEdns::default()
            };
            for (code, data) in options {
                e.push_option(code, &data).unwrap();
            }
            e
        })
}

/// Drops repeated records of the types dnspython keeps one of per owner (its "singletons":
/// a second CNAME or SOA at a name replaces the first there, which is not a wire rule).
fn without_repeated_singletons(records: Vec<OwnedRecord>) -> Vec<OwnedRecord> {
    const SINGLETONS: [Type; 5] = [Type::SOA, Type::NXT, Type::DNAME, Type::NSEC, Type::CNAME];
    let mut seen = BTreeSet::new();
    records
        .into_iter()
        .filter(|r| !SINGLETONS.contains(&r.rtype) || seen.insert((r.name, r.rtype)))
        .collect()
}

/// A whole message of records of every supported type, opcode QUERY.
pub fn message() -> impl Strategy<Value = OwnedMessage> {
    let records =
        |n| proptest::collection::vec(record(), 0..n).prop_map(without_repeated_singletons);
    (
        any::<u16>(),
        any::<u16>(),
        name(),
        any::<u16>(),
        records(8),
        records(4),
        records(4),
        proptest::option::of(edns()),
    )
        .prop_map(
            |(id, flags, qname, qtype, answers, authority, additional, edns)| OwnedMessage {
                header: Header::from_id_flags(id, flags & 0x87FF),
                questions: vec![OwnedQuestion {
                    name: qname,
                    qtype: Type(qtype),
                    qclass: Class::IN,
                }],
                answers,
                authority,
                additional,
                edns,
            },
        )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn rr_lines(records: &[OwnedRecord]) -> String {
    // Group into RRsets as dnspython does: (name ignoring case, type, class, covered type).
    type RrsetKey = (Vec<u8>, u16, u16, u16);
    let mut sets: BTreeMap<RrsetKey, (u32, BTreeSet<Vec<u8>>)> = BTreeMap::new();
    for r in records {
        let covers = if r.rtype == Type::RRSIG {
            u16::from_be_bytes([r.rdata[0], r.rdata[1]])
        } else {
            0
        };
        let key = (
            r.name.to_lowercase().as_wire().to_vec(),
            r.rtype.0,
            r.class.0,
            covers,
        );
        let set = sets.entry(key).or_insert((u32::MAX, BTreeSet::new()));
        set.0 = set.0.min(r.ttl);
        set.1.insert(r.rdata.to_vec());
    }
    let mut lines = BTreeSet::new();
    for ((name, t, c, _), (ttl, rdatas)) in sets {
        for rd in rdatas {
            lines.insert(format!("{}/{t}/{c}/{ttl}/{}", hex(&name), hex(&rd)));
        }
    }
    lines.into_iter().collect::<Vec<_>>().join(",")
}

/// The canonical line `tests/dnspython_canon.py` prints, from our owned model, without the
/// `len=` field.
pub fn canonical(msg: &OwnedMessage) -> String {
    let qs: Vec<String> = msg
        .questions
        .iter()
        .map(|q| format!("{}/{}/{}", hex(q.name.as_wire()), q.qtype.0, q.qclass.0))
        .collect();
    let edns = match &msg.edns {
        None => "-".to_owned(),
        Some(e) => {
            let view = e.view().unwrap();
            let opts: String = view
                .options
                .raw()
                .map(|(code, data)| format!("{code}:{}.", hex(data)))
                .collect();
            format!("{}/{}/{opts}", e.udp_payload_size, view.ttl())
        }
    };
    format!(
        "h={},{};q={};an={};ns={};ar={};e={edns}",
        msg.header.id,
        msg.header.flags(),
        qs.join(","),
        rr_lines(&msg.answers),
        rr_lines(&msg.authority),
        rr_lines(&msg.additional),
    )
}

/// Hex of a whole message, one line for the Python side.
pub fn hex_line(bytes: &[u8]) -> String {
    hex(bytes)
}
