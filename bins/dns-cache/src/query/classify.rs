//! What kind of reply a message is (CoreDNS `plugin/pkg/response` `Typify` and `Classify`):
//! the cache decides what to store by it, the log plugin filters on it.

use std::time::{SystemTime, UNIX_EPOCH};

use dns_wire::rdata::Rrsig;
use dns_wire::{Message, Opcode, RData, Rcode, Type};

/// The type of a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyType {
    /// NOERROR with answers (or without answers, SOA or NS).
    NoError,
    /// NXDOMAIN without answers.
    NameError,
    /// NOERROR, no answers, an SOA record.
    NoData,
    /// NOERROR, no answers, NS records in the authority section.
    Delegation,
    /// SERVFAIL or NOTIMP.
    ServerError,
    /// Any other rcode, or NXDOMAIN with answers.
    OtherError,
    /// NOTIFY, AXFR or IXFR.
    Meta,
    /// UPDATE.
    Update,
}

impl ReplyType {
    /// Types `msg` now.
    pub fn of(msg: &Message<'_>) -> Self {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        Self::at(msg, now)
    }

    /// Types `msg` at `now`, in seconds since the Unix epoch (what RRSIG validity is
    /// checked against).
    pub fn at(msg: &Message<'_>, now: i64) -> Self {
        let header = msg.header();
        if header.opcode == Opcode::UPDATE {
            return Self::Update;
        }
        if header.opcode == Opcode::NOTIFY
            || msg
                .question()
                .is_some_and(|q| q.qtype == Type::AXFR || q.qtype == Type(251))
        {
            return Self::Meta;
        }
        // With DO in the reply, a signature outside its validity period makes it an error.
        let dnssec_ok = msg.opt().is_some_and(|opt| opt.ttl() & 0x8000 != 0);
        if dnssec_ok && has_expired_signature(msg, now) {
            return Self::OtherError;
        }
        let rcode = msg.rcode();
        if msg.counts().answers > 0 {
            return match rcode {
                Rcode::NOERROR => Self::NoError,
                _ => Self::OtherError,
            };
        }
        let soa = msg.authority().any(|r| r.rtype() == Type::SOA);
        let ns = msg.authority().any(|r| r.rtype() == Type::NS);
        // Typify's order: NXDOMAIN is a name error with or without an SOA record (the
        // cache refuses to store one without), and NOTIMP counts as a server error.
        match rcode {
            Rcode::NOERROR if soa => Self::NoData,
            Rcode::NXDOMAIN => Self::NameError,
            Rcode::SERVFAIL | Rcode::NOTIMP => Self::ServerError,
            Rcode::NOERROR if ns => Self::Delegation,
            Rcode::NOERROR => Self::NoError,
            _ => Self::OtherError,
        }
    }

    /// The log plugin's class: `success`, `denial` or `error`.
    pub fn class(self) -> &'static str {
        match self {
            Self::NoError | Self::Delegation => "success",
            Self::NameError | Self::NoData => "denial",
            _ => "error",
        }
    }
}

/// An RRSIG in any section outside its validity period at `now` (CoreDNS
/// `typifyExpired`).
fn has_expired_signature(msg: &Message<'_>, now: i64) -> bool {
    msg.records()
        .filter(|(_, r)| r.rtype() == Type::RRSIG)
        .any(|(_, r)| matches!(r.data(), Ok(RData::Rrsig(sig)) if !valid_at(&sig, now)))
}

/// miekg/dns `RRSIG.ValidityPeriod`: inception and expiration are 32-bit times compared
/// in serial number arithmetic (RFC 4034 §3.1.5, RFC 1982), placed within 68 years of
/// `now`.
fn valid_at(sig: &Rrsig<'_>, now: i64) -> bool {
    const YEAR68: i64 = 1 << 31;
    let near = |t: u32| i64::from(t) + (i64::from(t) - now) / YEAR68 * YEAR68;
    near(sig.inception) <= now && now <= near(sig.expiration)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dns_wire::{Class, Name, OwnedMessage, OwnedQuestion, OwnedRecord};

    fn reply(rcode: Rcode, answers: usize, authority: Option<Type>) -> Vec<u8> {
        let name: Name = "a.example.".parse().unwrap();
        let mut m = OwnedMessage::default();
        m.header.qr = true;
        m.header.rcode = rcode.0 as u8;
        m.questions.push(OwnedQuestion {
            name,
            qtype: Type::A,
            qclass: Class::IN,
        });
        for _ in 0..answers {
            m.answers.push(OwnedRecord {
                name,
                rtype: Type::A,
                class: Class::IN,
                ttl: 60,
                rdata: vec![1, 2, 3, 4].into(),
            });
        }
        if let Some(t) = authority {
            let rdata = if t == Type::SOA {
                let mut d = vec![0, 0];
                d.extend_from_slice(&[0; 20]);
                d
            } else {
                vec![0]
            };
            m.authority.push(OwnedRecord {
                name,
                rtype: t,
                class: Class::IN,
                ttl: 60,
                rdata: rdata.into(),
            });
        }
        m.to_vec().unwrap()
    }

    fn ty(bytes: &[u8]) -> ReplyType {
        ReplyType::of(&Message::parse(bytes).unwrap())
    }

    #[test]
    fn typify_like_coredns() {
        assert_eq!(ty(&reply(Rcode::NOERROR, 1, None)), ReplyType::NoError);
        assert_eq!(
            ty(&reply(Rcode::NOERROR, 0, Some(Type::SOA))),
            ReplyType::NoData
        );
        assert_eq!(
            ty(&reply(Rcode::NXDOMAIN, 0, Some(Type::SOA))),
            ReplyType::NameError
        );
        assert_eq!(ty(&reply(Rcode::NXDOMAIN, 0, None)), ReplyType::NameError);
        assert_eq!(ty(&reply(Rcode::SERVFAIL, 0, None)), ReplyType::ServerError);
        assert_eq!(
            ty(&reply(Rcode::NOERROR, 0, Some(Type::NS))),
            ReplyType::Delegation
        );
        assert_eq!(ty(&reply(Rcode::REFUSED, 0, None)).class(), "error");
        assert_eq!(ReplyType::NoData.class(), "denial");
    }

    /// CoreDNS v1.14.7 plugin/pkg/response/typify.go `Typify`: an NXDOMAIN carrying answers
    /// is `OtherError`, an NXDOMAIN without SOA is still `NameError`, and NOTIMP is a
    /// `ServerError` (so the cache keeps it as long as a SERVFAIL).
    #[test]
    fn typify_name_errors_and_notimp_as_coredns_v1_14_7() {
        assert_eq!(ty(&reply(Rcode::NXDOMAIN, 1, None)), ReplyType::OtherError);
        assert_eq!(
            ty(&reply(Rcode::NXDOMAIN, 1, Some(Type::SOA))),
            ReplyType::OtherError
        );
        assert_eq!(ty(&reply(Rcode::NXDOMAIN, 0, None)).class(), "denial");
        assert_eq!(ty(&reply(Rcode::NOTIMP, 0, None)), ReplyType::ServerError);
        assert_eq!(ty(&reply(Rcode::REFUSED, 1, None)), ReplyType::OtherError);
    }

    /// A NOERROR answer signed from `inception` to `expiration`, with `dnssec_ok` in its OPT.
    fn signed(inception: u32, expiration: u32, dnssec_ok: bool) -> Vec<u8> {
        let mut m =
            OwnedMessage::from_message(&Message::parse(&reply(Rcode::NOERROR, 1, None)).unwrap())
                .unwrap();
        let mut rdata = vec![0, 1, 8, 2, 0, 0, 0, 60];
        rdata.extend_from_slice(&expiration.to_be_bytes());
        rdata.extend_from_slice(&inception.to_be_bytes());
        rdata.extend_from_slice(&[0x12, 0x34, 0, 1, 2, 3]);
        m.answers.push(OwnedRecord {
            name: "a.example.".parse().unwrap(),
            rtype: Type::RRSIG,
            class: Class::IN,
            ttl: 60,
            rdata: rdata.into(),
        });
        m.edns = Some(dns_wire::OwnedEdns {
            dnssec_ok,
            ..dns_wire::OwnedEdns::default()
        });
        m.to_vec().unwrap()
    }

    /// CoreDNS v1.14.7 plugin/pkg/response/typify.go `typifyExpired`: with DO in the reply,
    /// an RRSIG outside its validity period (miekg/dns `ValidityPeriod`) makes the reply an
    /// `OtherError`, which the cache does not store.
    #[test]
    fn an_expired_signature_with_do_is_an_error() {
        let now: i64 = 1_700_000_000;
        let at = |bytes: &[u8]| ReplyType::at(&Message::parse(bytes).unwrap(), now);
        let t = |offset: i64| u32::try_from(now + offset).unwrap();
        assert_eq!(at(&signed(t(-100), t(100), true)), ReplyType::NoError);
        assert_eq!(at(&signed(t(-200), t(-100), true)), ReplyType::OtherError);
        assert_eq!(at(&signed(t(100), t(200), true)), ReplyType::OtherError);
        assert_eq!(at(&signed(t(-200), t(-100), false)), ReplyType::NoError);
    }
}
