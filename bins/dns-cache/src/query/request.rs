//! Admission of a received packet (miekg/dns's accept rules and CoreDNS's server checks)
//! and the parsed view of a query that the plugins read.

use std::net::SocketAddr;

use dns_wire::{Class, Header, Message, Opcode, Question, Rcode};

use crate::query::names::LowerName;

/// The transport a query came over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proto {
    /// UDP.
    Udp,
    /// TCP.
    Tcp,
}

impl Proto {
    /// `udp` or `tcp`, as CoreDNS logs and labels it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Udp => "udp",
            Self::Tcp => "tcp",
        }
    }
}

/// The EDNS fields of a query that replies depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryEdns {
    /// The advertised UDP payload size, as sent.
    pub udp_size: u16,
    /// The DO bit.
    pub dnssec_ok: bool,
}

/// A query that passed admission.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The validated message.
    pub msg: Message<'a>,
    /// Its one question.
    pub question: Question<'a>,
    /// The question's name lower-cased, for routing, zone matching and cache keys.
    pub name: LowerName,
    /// Its header.
    pub header: Header,
    /// Its OPT record's fields, if it had one.
    pub edns: Option<QueryEdns>,
    /// The transport.
    pub proto: Proto,
    /// The client.
    pub client: SocketAddr,
}

impl Request<'_> {
    /// The wire bytes of the query.
    pub fn bytes(&self) -> &[u8] {
        self.msg.as_bytes()
    }

    /// The largest reply the client takes: 65,535 over TCP; else the EDNS size (at least
    /// 512), or 512 without EDNS.
    pub fn max_reply(&self) -> usize {
        match self.proto {
            Proto::Tcp => usize::from(u16::MAX),
            Proto::Udp => self.edns.map_or(512, |e| usize::from(e.udp_size.max(512))),
        }
    }

    /// The DO bit (false without EDNS).
    pub fn dnssec_ok(&self) -> bool {
        self.edns.is_some_and(|e| e.dnssec_ok)
    }

    /// The client's address family as CoreDNS labels it: 1 for IPv4, 2 for IPv6.
    pub fn family(&self) -> u8 {
        if self.client.ip().to_canonical().is_ipv4() {
            1
        } else {
            2
        }
    }
}

/// What to do with a received packet.
#[derive(Clone, Copy, Debug)]
pub enum Admission<'a> {
    /// Not a query we answer (too short for a header, or a response): drop it silently.
    Drop,
    /// Answer with only this rcode (FORMERR, NOTIMP) and the header (and question, if
    /// readable): the message broke miekg/dns's accept rules or did not parse.
    Reject {
        /// The query's header.
        header: Header,
        /// FORMERR or NOTIMP.
        rcode: Rcode,
    },
    /// The query uses an EDNS version above 0: answer BADVERS.
    BadVersion(Request<'a>),
    /// Class other than IN: answer REFUSED.
    Refused(Request<'a>),
    /// A query to route to a server block.
    Query(Request<'a>),
}

/// Applies miekg/dns's `DefaultMsgAcceptFunc`, parses, then CoreDNS's class and EDNS
/// version checks.
pub fn admit(bytes: &[u8], proto: Proto, client: SocketAddr) -> Admission<'_> {
    let Ok((header, counts)) = Header::parse(bytes) else {
        return Admission::Drop;
    };
    if header.qr {
        return Admission::Drop;
    }
    if header.opcode != Opcode::QUERY && header.opcode != Opcode::NOTIFY {
        return Admission::Reject {
            header,
            rcode: Rcode::NOTIMP,
        };
    }
    let formerr = Admission::Reject {
        header,
        rcode: Rcode::FORMERR,
    };
    if counts.questions != 1 || counts.answers > 1 || counts.authority > 1 || counts.additional > 2
    {
        return formerr;
    }
    let Ok(msg) = Message::parse(bytes) else {
        return formerr;
    };
    let Some(question) = msg.question() else {
        return formerr;
    };
    let edns = msg.edns();
    let request = Request {
        msg,
        question,
        name: LowerName::new(&question.name),
        header,
        edns: edns.map(|e| QueryEdns {
            udp_size: e.udp_payload_size,
            dnssec_ok: e.dnssec_ok,
        }),
        proto,
        client,
    };
    if question.qclass != Class::IN {
        return Admission::Refused(request);
    }
    if edns.is_some_and(|e| e.version > 0) {
        return Admission::BadVersion(request);
    }
    Admission::Query(request)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use dns_wire::{Name, OwnedEdns, OwnedMessage, OwnedQuestion, Type};

    /// A query for `name`/`qtype`, optionally with EDNS (size, DO).
    pub(crate) fn query(name: &str, qtype: Type, edns: Option<(u16, bool)>) -> Vec<u8> {
        let mut msg = OwnedMessage::default();
        msg.header.id = 0x1234;
        msg.header.rd = true;
        msg.questions.push(OwnedQuestion {
            name: name.parse::<Name>().unwrap(),
            qtype,
            qclass: Class::IN,
        });
        msg.edns = edns.map(|(size, dnssec_ok)| OwnedEdns {
            udp_payload_size: size,
            dnssec_ok,
            ..OwnedEdns::default()
        });
        msg.to_vec().unwrap()
    }

    pub(crate) fn client() -> SocketAddr {
        "127.0.0.1:5555".parse().unwrap()
    }

    #[test]
    fn a_plain_query_is_admitted() {
        let q = query("Example.COM.", Type::A, Some((4096, true)));
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!("not admitted");
        };
        assert_eq!(req.max_reply(), 4096);
        assert!(req.dnssec_ok());
        assert_eq!(req.family(), 1);
    }

    #[test]
    fn miekg_accept_rules() {
        assert!(matches!(
            admit(&[0; 11], Proto::Udp, client()),
            Admission::Drop
        ));
        let mut q = query("a.", Type::A, None);
        q[2] |= 0x80; // QR
        assert!(matches!(admit(&q, Proto::Udp, client()), Admission::Drop));
        let mut q = query("a.", Type::A, None);
        q[2] |= 0x28; // opcode 5 (UPDATE)
        assert!(matches!(
            admit(&q, Proto::Udp, client()),
            Admission::Reject {
                rcode: Rcode::NOTIMP,
                ..
            }
        ));
        let mut q = query("a.", Type::A, None);
        q[5] = 2; // QDCOUNT 2
        assert!(matches!(
            admit(&q, Proto::Udp, client()),
            Admission::Reject {
                rcode: Rcode::FORMERR,
                ..
            }
        ));
        let mut q = query("a.", Type::A, None);
        q.push(0); // trailing garbage
        assert!(matches!(
            admit(&q, Proto::Udp, client()),
            Admission::Reject {
                rcode: Rcode::FORMERR,
                ..
            }
        ));
    }

    #[test]
    fn class_and_edns_version_checks() {
        let mut q = query("a.", Type::A, None);
        let len = q.len();
        q[len - 1] = 3; // class CH
        assert!(matches!(
            admit(&q, Proto::Udp, client()),
            Admission::Refused(_)
        ));
        let mut q = query("a.", Type::A, Some((1232, false)));
        let len = q.len();
        q[len - 5] = 1; // EDNS version 1
        assert!(matches!(
            admit(&q, Proto::Udp, client()),
            Admission::BadVersion(_)
        ));
    }

    #[test]
    fn tcp_and_small_edns_sizes() {
        let q = query("a.", Type::A, Some((100, false)));
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!()
        };
        assert_eq!(req.max_reply(), 512);
        let Admission::Query(req) = admit(&q, Proto::Tcp, client()) else {
            panic!()
        };
        assert_eq!(req.max_reply(), 65535);
    }
}
