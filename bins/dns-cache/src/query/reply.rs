//! CoreDNS's reply rules (`request/writer.go`, `request.go`): error replies the server writes
//! itself, the OPT record mirrored from the query (the client's UDP size and DO bit, other
//! flags cleared; no OPT when the query had none), truncation with TC to what the client
//! takes, and the in-place patching of a cached reply.

use dns_wire::cache::{copy_name_case, set_id};
use dns_wire::header::HEADER_LEN;
use dns_wire::{Header, Message, OwnedEdns, OwnedMessage, OwnedQuestion, Rcode};

use crate::query::request::Request;
use crate::query::stored::StoredReply;

/// A reply could not be written (the reply from upstream did not parse, or did not fit).
#[derive(Debug, thiserror::Error)]
#[error("malformed reply: {0}")]
pub struct ReplyError(#[from] dns_wire::Error);

/// The header of a reply to `query` (miekg/dns `SetReply`): ID and opcode copied, QR set,
/// and for standard queries RD and CD copied.
pub fn reply_header(query: &Header, rcode: Rcode) -> Header {
    let standard = query.opcode == dns_wire::Opcode::QUERY;
    Header {
        id: query.id,
        qr: true,
        opcode: query.opcode,
        rd: standard && query.rd,
        cd: standard && query.cd,
        rcode: (rcode.0 & 0xF) as u8,
        ..Header::default()
    }
}

/// The OPT record CoreDNS mirrors into replies: the client's size and DO bit, version 0,
/// no other flags.
fn mirrored_opt(req: &Request<'_>, ext_rcode: u8, options: Vec<u8>) -> Option<OwnedEdns> {
    req.edns.map(|e| OwnedEdns {
        udp_payload_size: e.udp_size,
        ext_rcode,
        dnssec_ok: e.dnssec_ok,
        options,
        ..OwnedEdns::default()
    })
}

/// A reply carrying only `rcode` and the question (CoreDNS `errorFunc`), with the mirrored
/// OPT record.
pub fn rcode_reply(req: &Request<'_>, rcode: Rcode, out: &mut Vec<u8>) {
    let mut msg = reply_to(req, rcode);
    msg.edns = mirrored_opt(req, (rcode.0 >> 4) as u8, Vec::new());
    encode(&msg, req.max_reply(), out);
}

/// BADVERS (CoreDNS `edns.Version`): an OPT record of version 0 with the extended rcode,
/// UDP size 0, written without scrubbing.
pub fn bad_version_reply(req: &Request<'_>, out: &mut Vec<u8>) {
    let mut msg = reply_to(req, Rcode::BADVERS);
    msg.edns = Some(OwnedEdns {
        ext_rcode: (Rcode::BADVERS.0 >> 4) as u8,
        ..OwnedEdns::default()
    });
    encode(&msg, req.max_reply(), out);
}

/// FORMERR or NOTIMP for a message that broke the accept rules: the header, the question
/// if one reads, nothing else (miekg/dns).
pub fn reject_reply(query: &[u8], header: &Header, rcode: Rcode, out: &mut Vec<u8>) {
    let mut reply = reply_header(header, rcode);
    if rcode == Rcode::NOTIMP {
        reply.opcode = header.opcode;
    }
    let mut msg = OwnedMessage {
        header: reply,
        ..OwnedMessage::default()
    };
    if let Some(q) = Message::parse(query).ok().and_then(|m| m.question()) {
        msg.questions.push(OwnedQuestion {
            name: q.name.to_name(),
            qtype: q.qtype,
            qclass: q.qclass,
        });
    }
    encode(&msg, 512, out);
}

/// An empty reply to `req` with `rcode` and the question as asked.
pub fn reply_to(req: &Request<'_>, rcode: Rcode) -> OwnedMessage {
    OwnedMessage {
        header: reply_header(&req.header, rcode),
        questions: vec![OwnedQuestion {
            name: req.question.name.to_name(),
            qtype: req.question.qtype,
            qclass: req.question.qclass,
        }],
        ..OwnedMessage::default()
    }
}

/// Encodes `msg` within `budget` into `out` (truncating with TC if needed).
fn encode(msg: &OwnedMessage, budget: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(budget.min(usize::from(u16::MAX)), 0);
    match msg.encode_truncated(out, budget) {
        Ok(len) => out.truncate(len),
        // Only a question longer than the budget gets here; a bare header is always valid.
        Err(_) => {
            let header = msg.header.to_bytes(dns_wire::Counts::default());
            out.clear();
            out.extend_from_slice(&header);
        }
    }
}

/// Writes `reply` (a complete reply from a plugin or upstream, ID already the client's) to
/// `out` as the client gets it: OPT mirrored or removed, truncated to the client's size.
pub fn scrub(reply: &[u8], req: &Request<'_>, out: &mut Vec<u8>) -> Result<(), ReplyError> {
    let msg = Message::parse(reply)?;
    if scrub_in_place(&msg, req, out) {
        return Ok(());
    }
    let mut owned = OwnedMessage::from_message(&msg)?;
    owned.header.id = req.header.id;
    let ext_rcode = (msg.rcode().0 >> 4) as u8;
    let options = owned.edns.take().map(|e| e.options).unwrap_or_default();
    owned.edns = mirrored_opt(req, ext_rcode, options);
    encode(&owned, req.max_reply(), out);
    Ok(())
}

/// The common cases without re-encoding: the reply fits and either both or neither
/// message has an OPT record (patched in place), or only the query has one (appended).
fn scrub_in_place(msg: &Message<'_>, req: &Request<'_>, out: &mut Vec<u8>) -> bool {
    let bytes = msg.as_bytes();
    match (req.edns, msg.opt()) {
        (None, None) if bytes.len() <= req.max_reply() => {
            out.clear();
            out.extend_from_slice(bytes);
            true
        }
        (Some(edns), Some(opt)) if bytes.len() <= req.max_reply() => {
            let ttl_at = opt.ttl_offset();
            let ext_rcode = (msg.rcode().0 >> 4) as u8;
            out.clear();
            out.extend_from_slice(bytes);
            write_opt_fields(out, ttl_at - 2, edns.udp_size, ext_rcode, edns.dnssec_ok)
        }
        (Some(edns), None) if bytes.len() + OPT_LEN <= req.max_reply() => {
            out.clear();
            out.extend_from_slice(bytes);
            append_opt(out, edns.udp_size, 0, edns.dnssec_ok)
        }
        _ => false,
    }
}

/// Length of an OPT record without options.
const OPT_LEN: usize = 11;

/// Sets an OPT record's CLASS (UDP size) and TTL (extended rcode, version 0, DO) at `at`.
fn write_opt_fields(msg: &mut [u8], at: usize, size: u16, ext_rcode: u8, dnssec_ok: bool) -> bool {
    let flags: u16 = if dnssec_ok { 0x8000 } else { 0 };
    let ttl = u32::from(ext_rcode) << 24 | u32::from(flags);
    let Some(dst) = msg.get_mut(at..at + 6) else {
        return false;
    };
    dst[..2].copy_from_slice(&size.to_be_bytes());
    dst[2..].copy_from_slice(&ttl.to_be_bytes());
    true
}

/// Appends an option-less OPT record and counts it in ARCOUNT.
fn append_opt(msg: &mut Vec<u8>, size: u16, ext_rcode: u8, dnssec_ok: bool) -> bool {
    let Some(arcount) = msg.get(10..12).map(|c| u16::from_be_bytes([c[0], c[1]])) else {
        return false;
    };
    let Some(next) = arcount.checked_add(1) else {
        return false;
    };
    let at = msg.len() + 3;
    msg.extend_from_slice(&[0, 0, 41, 0, 0, 0, 0, 0, 0, 0, 0]);
    msg[10..12].copy_from_slice(&next.to_be_bytes());
    write_opt_fields(msg, at, size, ext_rcode, dnssec_ok)
}

/// Header flag bits (RFC 1035 §4.1.1, RFC 4035 §3.2 for AD and CD).
const FLAG_QR: u16 = 0x8000;
const OPCODE: u16 = 0x7800;
const FLAG_AA: u16 = 0x0400;
const FLAG_TC: u16 = 0x0200;
const FLAG_RD: u16 = 0x0100;
const FLAG_RA: u16 = 0x0080;
const FLAG_Z: u16 = 0x0040;
const FLAG_AD: u16 = 0x0020;
const FLAG_CD: u16 = 0x0010;
const RCODE: u16 = 0x000F;

/// How a cached reply is replayed.
#[derive(Clone, Copy, Debug)]
pub struct Replay {
    /// Seconds to subtract from every TTL (0 with `keepttl`).
    pub age: u32,
    /// Whether the entry is served stale: every TTL becomes this value.
    pub stale_ttl: Option<u32>,
    /// Served from the cache (CoreDNS `toMsg`: a new header, AA set) rather than passed on
    /// as it came from upstream (the upstream's AA, TC and Z kept).
    pub hit: bool,
}

/// Writes a stored reply (no OPT record, uncompressed question) for `req` into `out`
/// without parsing it, and without allocating once `out` has grown: ID, flags, question
/// case, TTLs and the mirrored OPT are patched in place. Falls back to [`scrub`] when the
/// reply does not fit. Returns `false` if `stored` does not answer `req`'s question.
pub fn replay(stored: &StoredReply, req: &Request<'_>, how: Replay, out: &mut Vec<u8>) -> bool {
    out.clear();
    out.extend_from_slice(stored.message());
    if set_id(out, req.header.id).is_err() || copy_name_case(out, &req.question.name).is_err() {
        return false;
    }
    // QTYPE and QCLASS follow the question name, which has the query's length.
    let qtail = HEADER_LEN + req.question.name.wire_len();
    if out.get(qtail..qtail + 4) != req.bytes().get(qtail..qtail + 4) {
        return false;
    }
    // CoreDNS v1.14.7's cache: opcode, RD and CD from the query (SetReply); RA and rcode
    // stored; AD only when the query had DO or AD (RFC 6840 §5.7-5.8). A hit sets AA
    // (item.go `toMsgWithTTL`: `m1.Authoritative = true`, for stub resolvers that drop
    // non-authoritative answers); a reply on its way from upstream keeps its AA, TC and Z
    // (cache.go `WriteMsg` writes the upstream's message).
    let stored_flags = u16::from_be_bytes([out[2], out[3]]);
    let ad = if req.dnssec_ok() || req.header.ad {
        FLAG_AD
    } else {
        0
    };
    let (set, keep) = if how.hit {
        (FLAG_AA, FLAG_RA | RCODE | ad)
    } else {
        (0, FLAG_AA | FLAG_TC | FLAG_Z | FLAG_RA | RCODE | ad)
    };
    let query = req.header.flags();
    let flags = FLAG_QR | (query & (OPCODE | FLAG_RD | FLAG_CD)) | set | (stored_flags & keep);
    out[2..4].copy_from_slice(&flags.to_be_bytes());
    match how.stale_ttl {
        Some(ttl) => stored.rewrite_ttls(out, |_| ttl),
        None if how.age > 0 => stored.rewrite_ttls(out, |ttl| ttl.saturating_sub(how.age)),
        None => {}
    }
    if let Some(edns) = req.edns {
        if out.len() + OPT_LEN <= req.max_reply() {
            return append_opt(out, edns.udp_size, 0, edns.dnssec_ok);
        }
    } else if out.len() <= req.max_reply() {
        return true;
    }
    let whole = std::mem::take(out);
    scrub(&whole, req, out).is_ok()
}

/// The rcode, flags and length of a written reply, for logs and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyInfo {
    /// The rcode with EDNS's extended bits.
    pub rcode: Rcode,
    /// The header.
    pub header: Header,
    /// Bytes written.
    pub len: usize,
}

impl ReplyInfo {
    /// Reads the reply's header (and OPT record for the extended rcode).
    pub fn of(reply: &[u8]) -> Option<Self> {
        let (header, _) = Header::parse(reply).ok()?;
        let rcode = Message::parse(reply)
            .map(|m| m.rcode())
            .unwrap_or(header.rcode());
        Some(Self {
            rcode,
            header,
            len: reply.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::{client, query};
    use crate::query::request::{Admission, Proto, admit};
    use dns_wire::cache::TtlCursor;
    use dns_wire::{Class, Name, OwnedRecord, Section, Type};

    fn req(bytes: &[u8], proto: Proto) -> Request<'_> {
        match admit(bytes, proto, client()) {
            Admission::Query(r) | Admission::BadVersion(r) | Admission::Refused(r) => r,
            other => panic!("{other:?}"),
        }
    }

    /// `m` as the cache keeps it, its TTLs (all 300) unchanged.
    fn stored_reply(m: &OwnedMessage) -> StoredReply {
        let bytes = m.to_vec().unwrap();
        let ttls = TtlCursor::new(&bytes).unwrap();
        StoredReply::new(bytes, ttls, 300).unwrap()
    }

    fn big_answer(name: &str, n: usize) -> OwnedMessage {
        let q = query(name, Type::TXT, None);
        let r = req(&q, Proto::Udp);
        let mut m = reply_to(&r, Rcode::NOERROR);
        for i in 0..n {
            m.answers.push(OwnedRecord {
                name: name.parse::<Name>().unwrap(),
                rtype: Type::TXT,
                class: Class::IN,
                ttl: 300,
                rdata: {
                    let mut d = vec![60u8];
                    d.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, 60));
                    d.into()
                },
            });
        }
        m
    }

    #[test]
    fn error_replies_mirror_the_opt_record() {
        let q = query("x.example.", Type::A, Some((1232, true)));
        let r = req(&q, Proto::Udp);
        let mut out = Vec::new();
        rcode_reply(&r, Rcode::REFUSED, &mut out);
        let m = Message::parse(&out).unwrap();
        assert_eq!(m.rcode(), Rcode::REFUSED);
        assert_eq!(m.header().id, 0x1234);
        assert!(m.header().qr && m.header().rd);
        let e = m.edns().unwrap();
        assert_eq!(
            (e.udp_payload_size, e.dnssec_ok, e.version),
            (1232, true, 0)
        );
        let q = query("x.example.", Type::A, None);
        rcode_reply(&req(&q, Proto::Udp), Rcode::SERVFAIL, &mut out);
        assert!(Message::parse(&out).unwrap().opt().is_none());
    }

    #[test]
    fn bad_version_carries_the_extended_rcode() {
        let mut q = query("x.", Type::A, Some((1232, false)));
        let len = q.len();
        q[len - 5] = 1;
        let mut out = Vec::new();
        bad_version_reply(&req(&q, Proto::Udp), &mut out);
        let m = Message::parse(&out).unwrap();
        assert_eq!(m.rcode(), Rcode::BADVERS);
        assert_eq!(m.edns().unwrap().version, 0);
    }

    #[test]
    fn scrub_truncates_to_512_without_edns_and_keeps_everything_over_tcp() {
        let reply = big_answer("big.example.", 20).to_vec().unwrap();
        let q = query("big.example.", Type::TXT, None);
        let mut out = Vec::new();
        scrub(&reply, &req(&q, Proto::Udp), &mut out).unwrap();
        assert!(out.len() <= 512);
        assert!(Message::parse(&out).unwrap().header().tc);
        scrub(&reply, &req(&q, Proto::Tcp), &mut out).unwrap();
        let m = Message::parse(&out).unwrap();
        assert!(!m.header().tc);
        assert_eq!(m.counts().answers, 20);
    }

    #[test]
    fn scrub_sets_the_clients_size_and_do_bit_and_removes_unasked_opt() {
        let mut upstream = big_answer("a.example.", 1);
        upstream.edns = Some(OwnedEdns {
            udp_payload_size: 4096,
            dnssec_ok: false,
            z: 0x1234,
            ..OwnedEdns::default()
        });
        let reply = upstream.to_vec().unwrap();
        let q = query("a.example.", Type::TXT, Some((1400, true)));
        let mut out = Vec::new();
        scrub(&reply, &req(&q, Proto::Udp), &mut out).unwrap();
        let e = Message::parse(&out).unwrap().edns().unwrap();
        assert_eq!((e.udp_payload_size, e.dnssec_ok, e.z), (1400, true, 0));
        let q = query("a.example.", Type::TXT, None);
        scrub(&reply, &req(&q, Proto::Udp), &mut out).unwrap();
        assert!(Message::parse(&out).unwrap().opt().is_none());
        upstream.edns = None;
        let reply = upstream.to_vec().unwrap();
        let q = query("a.example.", Type::TXT, Some((1400, false)));
        scrub(&reply, &req(&q, Proto::Udp), &mut out).unwrap();
        assert_eq!(
            Message::parse(&out)
                .unwrap()
                .edns()
                .unwrap()
                .udp_payload_size,
            1400
        );
    }

    #[test]
    fn replay_patches_id_case_flags_ttl_and_opt() {
        let mut stored = big_answer("www.example.", 2);
        stored.header.ra = true;
        stored.header.ad = true;
        stored.header.aa = true;
        let stored = stored_reply(&stored);
        let q = query("WwW.eXample.", Type::TXT, Some((1232, false)));
        let r = req(&q, Proto::Udp);
        let mut out = Vec::with_capacity(4096);
        assert!(replay(
            &stored,
            &r,
            Replay {
                age: 100,
                stale_ttl: None,
                hit: true,
            },
            &mut out
        ));
        let m = Message::parse(&out).unwrap();
        let h = m.header();
        assert_eq!(h.id, 0x1234);
        // A hit is authoritative (CoreDNS v1.14.7 plugin/cache/item.go `toMsgWithTTL`).
        assert!(h.qr && h.rd && h.ra && h.aa && !h.ad);
        assert_eq!(m.question().unwrap().name.to_string(), "WwW.eXample.");
        assert!(m.answers().all(|a| a.ttl() == 200));
        assert_eq!(m.edns().unwrap().udp_payload_size, 1232);
        assert!(replay(
            &stored,
            &r,
            Replay {
                age: 0,
                stale_ttl: Some(0),
                hit: true,
            },
            &mut out
        ));
        assert!(
            Message::parse(&out)
                .unwrap()
                .answers()
                .all(|a| a.ttl() == 0)
        );
        let other = query("www.example.", Type::A, None);
        assert!(!replay(
            &stored,
            &req(&other, Proto::Udp),
            Replay {
                age: 0,
                stale_ttl: None,
                hit: true,
            },
            &mut out
        ));
    }

    #[test]
    fn replay_truncates_when_the_client_takes_less() {
        let stored = stored_reply(&big_answer("big.example.", 20));
        let q = query("big.example.", Type::TXT, None);
        let mut out = Vec::new();
        assert!(replay(
            &stored,
            &req(&q, Proto::Udp),
            Replay {
                age: 0,
                stale_ttl: None,
                hit: true,
            },
            &mut out
        ));
        assert!(out.len() <= 512);
        assert!(Message::parse(&out).unwrap().header().tc);
        let _ = Section::Answer;
    }

    #[test]
    fn reject_reply_keeps_the_question_when_it_reads() {
        let mut q = query("a.example.", Type::A, None);
        q[2] |= 0x28;
        let (h, _) = Header::parse(&q).unwrap();
        let mut out = Vec::new();
        reject_reply(&q, &h, Rcode::NOTIMP, &mut out);
        let m = Message::parse(&out).unwrap();
        assert_eq!(m.rcode(), Rcode::NOTIMP);
        assert_eq!(m.header().opcode, dns_wire::Opcode(5));
        assert_eq!(m.counts().questions, 1);
    }
}
