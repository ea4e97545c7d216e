//! Fuzz targets for the `dns-wire` crate.

use std::fmt::Write as _;

use arbitrary::{Result, Unstructured};
use dns_wire::tcp::FrameDecoder;
use dns_wire::{
    Class, Header, Message, Name, Opcode, OwnedEdns, OwnedMessage, OwnedQuestion, OwnedRecord,
    Type, cache,
};

use crate::Target;

/// The `dns-wire` targets.
pub const TARGETS: &[Target] = &[
    Target {
        name: "dns_decode",
        run: dns_decode,
    },
    Target {
        name: "dns_roundtrip",
        run: dns_roundtrip,
    },
    Target {
        name: "dns_encode_structured",
        run: dns_encode_structured,
    },
];

/// Every read path on arbitrary bytes: the view, typed RDATA, text, the owned copy, the
/// in-place cache helpers and TCP reassembly. Errors are fine; panics and hangs are bugs.
pub fn dns_decode(data: &[u8]) {
    let mut framed = FrameDecoder::new();
    for chunk in data.chunks(7) {
        framed.push(chunk);
        while framed.next_message().is_some() {}
    }
    let Ok(msg) = Message::parse(data) else {
        return;
    };
    let mut text = String::new();
    let _ = write!(text, "{msg}");
    for (_, record) in msg.records() {
        let _ = record.data();
        let _ = write!(text, "{record}");
    }
    if let Some(question) = msg.question() {
        let _ = cache::CacheKey::new(&question);
    }
    let _ = OwnedMessage::from_message(&msg);
    let mut ttls = cache::TtlCursor::new(data).expect("a parsed message has TTL offsets");
    let mut of_parsed = cache::TtlCursor::of(&msg);
    while let Some(at) = ttls.next(data) {
        assert!(
            data.get(at..at + 4).is_some(),
            "TTL offset {at} past the end"
        );
        assert_eq!(of_parsed.next(data), Some(at), "the two cursors disagree");
    }
    assert_eq!(
        of_parsed.next(data),
        None,
        "the two cursors disagree at the end"
    );
    let mut copy = data.to_vec();
    cache::age_ttls(&mut copy, 17).expect("a parsed message can be aged");
    // A pointer may aim into the header or a TTL field (any earlier offset is legal), so the
    // rewrites below may change names: they must not panic, nothing more.
    let _ = cache::set_id(&mut copy, 0xFFFF);
    let _ = cache::copy_question_case(&mut copy, data);
    let _ = Message::parse(&copy);
}

/// Decode, encode, decode: the two owned models must be equal, and a truncated encoding
/// must parse and fit its budget.
pub fn dns_roundtrip(data: &[u8]) {
    let Ok(owned) = OwnedMessage::parse(data) else {
        return;
    };
    let mut buf = vec![0u8; 65_535];
    match owned.encode(&mut buf) {
        Ok(len) => {
            let again = OwnedMessage::parse(&buf[..len]).expect("our encoding parses");
            assert_eq!(again, owned, "decode(encode(m)) != m");
        }
        Err(e) => assert_eq!(e.kind(), dns_wire::ErrorKind::NoSpace, "{e}"),
    }
    let mut small = [0u8; 512];
    if let Ok(len) = owned.encode_truncated(&mut small, 512) {
        let cut = Message::parse(&small[..len]).expect("a truncated encoding parses");
        assert!(len <= 512);
        assert!(cut.counts().answers <= u16::try_from(owned.answers.len()).unwrap_or(u16::MAX));
    }
}

fn name(u: &mut Unstructured<'_>) -> Result<Name> {
    // Few distinct labels, so that suffixes repeat and compression has work to do.
    const LABELS: [&[u8]; 6] = [b"www", b"Example", b"com", b"a\x00.b", b"xn--ls8h", b"ns1"];
    let count = u.int_in_range(0..=5)?;
    let mut labels = Vec::with_capacity(count);
    for _ in 0..count {
        labels.push(*u.choose(&LABELS)?);
    }
    Ok(Name::from_labels(labels).unwrap_or_default())
}

fn record(u: &mut Unstructured<'_>) -> Result<OwnedRecord> {
    let owner = name(u)?;
    let target = name(u)?;
    let mut rdata = Vec::new();
    let rtype = match u.int_in_range(0..=6)? {
        0 => {
            rdata.extend_from_slice(&u.arbitrary::<[u8; 4]>()?);
            Type::A
        }
        1 => {
            rdata.extend_from_slice(target.as_wire());
            *u.choose(&[Type::NS, Type::CNAME, Type::PTR, Type::DNAME])?
        }
        2 => {
            rdata.extend_from_slice(&u.arbitrary::<u16>()?.to_be_bytes());
            rdata.extend_from_slice(target.as_wire());
            Type::MX
        }
        3 => {
            rdata.extend_from_slice(target.as_wire());
            rdata.extend_from_slice(name(u)?.as_wire());
            rdata.extend_from_slice(&u.arbitrary::<[u8; 20]>()?);
            Type::SOA
        }
        4 => {
            rdata.extend_from_slice(&u.arbitrary::<[u8; 6]>()?);
            rdata.extend_from_slice(target.as_wire());
            Type::SRV
        }
        5 => {
            let text: &[u8] = u.arbitrary()?;
            let text = &text[..text.len().min(255)];
            rdata.push(text.len() as u8);
            rdata.extend_from_slice(text);
            Type::TXT
        }
        _ => {
            let opaque: &[u8] = u.arbitrary()?;
            rdata.extend_from_slice(&opaque[..opaque.len().min(300)]);
            Type(u.int_in_range(0xFF00..=0xFFFE)?)
        }
    };
    Ok(OwnedRecord {
        name: owner,
        rtype,
        class: Class(u.arbitrary()?),
        ttl: u.arbitrary()?,
        rdata: rdata.into(),
    })
}

fn message(u: &mut Unstructured<'_>) -> Result<OwnedMessage> {
    let mut header = Header::from_id_flags(u.arbitrary()?, u.arbitrary()?);
    header.opcode = Opcode(header.opcode.0 & 0xF);
    let mut msg = OwnedMessage {
        header,
        ..OwnedMessage::default()
    };
    for _ in 0..u.int_in_range(0..=2)? {
        msg.questions.push(OwnedQuestion {
            name: name(u)?,
            qtype: Type(u.arbitrary()?),
            qclass: Class(u.arbitrary()?),
        });
    }
    for section in [&mut msg.answers, &mut msg.authority, &mut msg.additional] {
        for _ in 0..u.int_in_range(0..=12)? {
            let r = record(u)?;
            if r.rtype != Type::OPT {
                section.push(r);
            }
        }
    }
    if u.arbitrary()? {
        let mut edns = OwnedEdns {
            udp_payload_size: u.arbitrary()?,
            ext_rcode: u.arbitrary()?,
            dnssec_ok: u.arbitrary()?,
            ..OwnedEdns::default()
        };
        let option: &[u8] = u.arbitrary()?;
        edns.push_option(u.arbitrary()?, &option[..option.len().min(64)])
            .expect("short option");
        msg.edns = Some(edns);
    }
    Ok(msg)
}

/// A structured message (names, typed and opaque RDATA, EDNS) encoded then decoded must come
/// back equal, with names exactly as written (case kept through compression).
pub fn dns_encode_structured(data: &[u8]) {
    let Ok(msg) = message(&mut Unstructured::new(data)) else {
        return;
    };
    let wire = msg.to_vec().expect("a small message encodes");
    let back = OwnedMessage::parse(&wire).expect("our encoding parses");
    assert_eq!(back, msg);
    for (a, b) in back.answers.iter().zip(&msg.answers) {
        assert_eq!(a.name.as_wire(), b.name.as_wire(), "case changed");
    }
}
