//! Adversarial inputs (`docs/dns-wire.md` §7.4): each must be a clean error (or a correct
//! result), never a panic or a hang.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

mod common;

use dns_wire::{
    Class, ErrorKind, Header, Message, Name, OwnedMessage, OwnedQuestion, OwnedRecord, Type,
};

/// A header with the given counts.
fn header(qd: u16, an: u16, ns: u16, ar: u16) -> Vec<u8> {
    let mut h = vec![0x12, 0x34, 0x81, 0x80];
    for c in [qd, an, ns, ar] {
        h.extend_from_slice(&c.to_be_bytes());
    }
    h
}

/// One question `a. IN A` at offset 12.
fn with_question(an: u16, ns: u16, ar: u16) -> Vec<u8> {
    let mut m = header(1, an, ns, ar);
    m.extend_from_slice(&[1, b'a', 0, 0, 1, 0, 1]);
    m
}

fn kind(bytes: &[u8]) -> ErrorKind {
    Message::parse(bytes).unwrap_err().kind()
}

#[test]
fn rfc1035_s4_1_1_shorter_than_a_header() {
    assert!(matches!(
        kind(&[0; 11]),
        ErrorKind::UnexpectedEnd { what: "header" }
    ));
    assert!(matches!(kind(&[]), ErrorKind::UnexpectedEnd { .. }));
}

#[test]
fn rfc1035_s4_1_4_self_pointer_c00c() {
    let mut m = header(1, 0, 0, 0);
    m.extend_from_slice(&[0xC0, 0x0C, 0, 1, 0, 1]);
    assert_eq!(kind(&m), ErrorKind::BadPointer { target: 12 });
}

#[test]
fn rfc1035_s4_1_4_forward_pointer() {
    let mut m = header(1, 0, 0, 0);
    m.extend_from_slice(&[0xC0, 0x12, 0, 1, 0, 1, 1, b'a', 0]);
    assert_eq!(kind(&m), ErrorKind::BadPointer { target: 0x12 });
}

#[test]
fn rfc1035_s4_1_4_pointer_loop_between_two_names() {
    // Record owner at 19: "b" then a pointer to 23; at 23 the RDATA of... itself points to 19.
    let mut m = with_question(1, 0, 0);
    m.extend_from_slice(&[1, b'b', 0xC0, 23, 1, b'c', 0xC0, 19]);
    assert!(matches!(kind(&m), ErrorKind::BadPointer { .. }));
}

/// A message whose second record's owner follows a chain of `hops` pointers.
fn pointer_chain(hops: usize) -> Vec<u8> {
    let mut m = with_question(2, 0, 0);
    // Record 1: owner root, private type, RDATA = the chain nodes, each pointing back.
    let rdata_at = m.len() + 11;
    let mut nodes = vec![0xC0, 12];
    for i in 1..hops {
        let previous = (rdata_at + 2 * (i - 1)) as u16;
        nodes.extend_from_slice(&(0xC000 | previous).to_be_bytes());
    }
    m.extend_from_slice(&[0, 0xFF, 0x00, 0, 1, 0, 0, 0, 60]);
    m.extend_from_slice(&(nodes.len() as u16).to_be_bytes());
    m.extend_from_slice(&nodes);
    // Record 2: owner = pointer to the last node, type A.
    let last = (rdata_at + nodes.len() - 2) as u16;
    m.extend_from_slice(&(0xC000 | last).to_be_bytes());
    m.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
    m
}

#[test]
fn pointer_chain_of_200_hops_is_capped() {
    assert_eq!(kind(&pointer_chain(200)), ErrorKind::TooManyPointers);
    let chain = pointer_chain(100);
    let ok = Message::parse(&chain).unwrap();
    assert_eq!(ok.answers().nth(1).unwrap().name().to_string(), "a.");
}

#[test]
fn rfc1035_s2_3_4_label_over_63_is_a_reserved_label_type() {
    let mut m = header(1, 0, 0, 0);
    m.push(64);
    m.extend_from_slice(&[b'x'; 64]);
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    assert_eq!(kind(&m), ErrorKind::ReservedLabelType(64));
}

#[test]
fn rfc1035_s2_3_4_name_over_255_through_pointers() {
    // Four names of 63-byte labels, each extending the previous through a pointer.
    let mut m = header(0, 4, 0, 0);
    let mut previous: Option<u16> = None;
    for _ in 0..4 {
        let start = m.len() as u16;
        m.push(63);
        m.extend_from_slice(&[b'x'; 63]);
        match previous {
            None => m.push(0),
            Some(p) => m.extend_from_slice(&(0xC000u16 | p).to_be_bytes()),
        }
        m.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4]);
        previous = Some(start);
    }
    assert_eq!(kind(&m), ErrorKind::NameTooLong);
}

#[test]
fn truncated_rdata_and_label() {
    let mut m = with_question(1, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0]);
    assert!(matches!(
        kind(&m),
        ErrorKind::UnexpectedEnd { what: "RDATA" }
    ));
    let mut m = header(1, 0, 0, 0);
    m.extend_from_slice(&[5, b'a', b'b']);
    assert!(matches!(
        kind(&m),
        ErrorKind::UnexpectedEnd { what: "label" }
    ));
}

#[test]
fn rfc1035_s3_4_1_typed_rdata_of_the_wrong_length() {
    let mut m = with_question(1, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 5, 192, 0, 2, 1, 9]);
    let msg = Message::parse(&m).unwrap();
    let err = msg.answers().next().unwrap().data().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RdataLengthMismatch);
    assert_eq!(err.offset(), m.len() - 1);
}

#[test]
fn counts_that_lie() {
    // More records promised than present.
    let mut m = with_question(5, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
    assert!(matches!(kind(&m), ErrorKind::UnexpectedEnd { .. }));
    // Fewer promised than present: the rest is reported, not ignored.
    let mut m = with_question(0, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
    assert_eq!(kind(&m), ErrorKind::TrailingBytes);
    // 65,535 questions in a tiny message.
    let mut m = header(0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF);
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    assert!(matches!(kind(&m), ErrorKind::UnexpectedEnd { .. }));
}

#[test]
fn rfc6891_s6_1_1_two_opt_records_or_opt_elsewhere() {
    let opt = [0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0];
    let mut m = with_question(0, 0, 2);
    m.extend_from_slice(&opt);
    m.extend_from_slice(&opt);
    assert_eq!(kind(&m), ErrorKind::DuplicateOpt);
    let mut m = with_question(1, 0, 0);
    m.extend_from_slice(&opt);
    assert_eq!(kind(&m), ErrorKind::MisplacedOpt);
    let mut m = with_question(0, 0, 1);
    m.extend_from_slice(&[0xC0, 12]);
    m.extend_from_slice(&opt[1..]);
    assert_eq!(kind(&m), ErrorKind::MisplacedOpt);
}

#[test]
fn opt_option_overrunning_its_rdata() {
    let mut m = with_question(0, 0, 1);
    m.extend_from_slice(&[0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 4, 0, 10, 0, 8]);
    assert_eq!(kind(&m), ErrorKind::BadEdnsOption);
}

fn a_record(name: Name, last: u8) -> OwnedRecord {
    OwnedRecord {
        name,
        rtype: Type::A,
        class: Class::IN,
        ttl: 60,
        rdata: [192, 0, 2, last][..].into(),
    }
}

/// A response with `n` A records under distinct names `hNNNN.example.com.`.
fn many_names(n: usize) -> OwnedMessage {
    let mut msg = OwnedMessage {
        header: Header::from_id_flags(1, 0x8180),
        ..OwnedMessage::default()
    };
    msg.questions.push(OwnedQuestion {
        name: "example.com.".parse().unwrap(),
        qtype: Type::A,
        qclass: Class::IN,
    });
    for i in 0..n {
        let name = format!("h{i:04}.Example.com.").parse().unwrap();
        msg.answers.push(a_record(name, i as u8));
    }
    msg
}

#[test]
fn tcp_sized_message_past_0x3fff_compresses_only_to_reachable_offsets() {
    // 4,000 distinct names: about 76 KB uncompressed; what fits 65,535 bytes must decode equal,
    // so no pointer may have been aimed at an offset of 0x4000 or more.
    let msg = many_names(4000);
    assert_eq!(msg.to_vec().unwrap_err().kind(), ErrorKind::NoSpace);
    let mut buf = vec![0u8; 65_535];
    let len = msg.encode_truncated(&mut buf, 65_535).unwrap();
    assert!(len > 0x4000 && len <= 65_535);
    let back = OwnedMessage::parse(&buf[..len]).unwrap();
    assert!(back.header.tc);
    assert!(back.answers.len() > 2000);
    assert_eq!(back.answers[..], msg.answers[..back.answers.len()]);
    for r in &back.answers {
        assert!(
            r.name.to_string().contains(".Example.com."),
            "case kept: {}",
            r.name
        );
    }
}

#[test]
fn a_64_kib_message_parses() {
    // One record with 65,000 bytes of opaque RDATA: the biggest a TCP frame carries.
    let mut m = with_question(1, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0xFF, 0x00, 0, 1, 0, 0, 0, 60]);
    let len = 65_535 - m.len() - 2;
    m.extend_from_slice(&(len as u16).to_be_bytes());
    m.resize(65_535, 0xAB);
    let msg = Message::parse(&m).unwrap();
    assert_eq!(msg.answers().next().unwrap().rdata().len(), len);
    let owned = OwnedMessage::from_message(&msg).unwrap();
    assert_eq!(owned.to_vec().unwrap(), m);
}

#[test]
fn a_message_over_65535_bytes_is_rejected() {
    let mut m = with_question(0, 0, 0);
    m.resize(65_536, 0);
    assert_eq!(kind(&m), ErrorKind::MessageTooLong);
}

#[test]
fn names_stored_past_0x3fff_may_point_back_below_it() {
    let mut m = with_question(2, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0xFF, 0x00, 0, 1, 0, 0, 0, 60]);
    let len = 0x4100 - m.len() - 2;
    m.extend_from_slice(&(len as u16).to_be_bytes());
    m.resize(0x4100, 0);
    m.extend_from_slice(&[1, b'z', 0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 2, 3, 4]);
    let msg = Message::parse(&m).unwrap();
    assert_eq!(msg.answers().nth(1).unwrap().name().to_string(), "z.a.");
}

#[test]
fn rfc1035_s4_2_1_truncation_at_512_and_1232_keeps_whole_records() {
    let wire = testdata::read("dns", "large.bin");
    let msg = OwnedMessage::parse(&wire).unwrap();
    for budget in [512, 1232] {
        let mut buf = [0u8; 1500];
        let len = msg.encode_truncated(&mut buf, budget).unwrap();
        assert!(len <= budget);
        let cut = OwnedMessage::parse(&buf[..len]).unwrap();
        assert!(cut.edns.is_some(), "RFC 6891 §7: OPT kept when truncating");
        let kept = cut.answers.len() + cut.authority.len() + cut.additional.len();
        assert!(kept < msg.answers.len() + msg.additional.len());
        assert_eq!(cut.answers[..], msg.answers[..cut.answers.len()]);
        // RFC 2181 §9: TC only when answer or authority records were dropped.
        assert_eq!(
            cut.header.tc,
            cut.answers.len() < msg.answers.len(),
            "budget {budget}"
        );
    }
    // Without EDNS the budget is 512.
    let mut plain = msg.clone();
    plain.edns = None;
    let query = Message::parse(&wire).unwrap();
    assert_eq!(dns_wire::udp_budget(&query), 8192);
    let mut buf = [0u8; 600];
    let len = plain.encode_truncated(&mut buf, 512).unwrap();
    assert!(len <= 512 && Message::parse(&buf[..len]).unwrap().header().tc);
}

#[test]
fn budget_too_small_for_header_and_question_is_an_error() {
    let msg = many_names(1);
    let mut buf = [0u8; 20];
    assert_eq!(
        msg.encode_truncated(&mut buf, 20).unwrap_err().kind(),
        ErrorKind::NoSpace
    );
}

#[test]
fn mutated_corpus_messages_never_panic() {
    // Single-byte changes of every corpus message: parse, type and print everything, and
    // round-trip whatever still parses.
    let mut buf = vec![0u8; 65_535];
    for (_, wire) in common::corpus_messages() {
        for i in 0..wire.len() {
            for value in [0x00, 0xC0, wire[i] ^ 0x01] {
                let mut m = wire.clone();
                m[i] = value;
                let Ok(msg) = Message::parse(&m) else {
                    continue;
                };
                for (_, r) in msg.records() {
                    let _ = r.data().map(|d| d.to_string());
                }
                if let Ok(owned) = OwnedMessage::from_message(&msg) {
                    let len = owned.encode(&mut buf).unwrap();
                    assert_eq!(OwnedMessage::parse(&buf[..len]).unwrap(), owned);
                }
            }
        }
    }
}

#[test]
fn rfc3597_s5_generic_form_of_compressed_untyped_rdata_is_uncompressed() {
    // An MB record (RFC 1035 type 7, untyped here) whose RDATA is a pointer to "a.".
    let mut m = with_question(1, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0, 7, 0, 1, 0, 0, 0, 60, 0, 2, 0xC0, 12]);
    let msg = Message::parse(&m).unwrap();
    let text = msg.answers().next().unwrap().to_string();
    assert_eq!(text, "a.\t60\tIN\tMB\t\\# 3 016100");
    let owned = OwnedMessage::from_message(&msg).unwrap();
    assert_eq!(&owned.answers[0].rdata[..], b"\x01a\x00");
}

#[test]
fn walk_stops_for_good_after_the_first_error() {
    // NLnetLabs/domain PR #573: reading on after a malformed record must not panic or resume.
    let mut m = with_question(3, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1]);
    m.extend_from_slice(&[0xC0, 0x7F, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 2]);
    m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 3]);
    let mut walk = Message::walk(&m).unwrap();
    assert!(walk.next().unwrap().is_ok());
    let err = walk.next().unwrap().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::BadPointer { target: 0x7F }));
    assert!(walk.next().is_none());
    assert!(walk.next().is_none());
}

#[test]
fn walk_reports_trailing_bytes_at_the_end() {
    let mut m = with_question(1, 0, 0);
    m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1, 0xAA]);
    let results: Vec<_> = Message::walk(&m).unwrap().collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_ok());
    assert_eq!(
        results[1].as_ref().unwrap_err().kind(),
        ErrorKind::TrailingBytes
    );
}
