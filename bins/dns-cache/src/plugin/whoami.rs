//! `whoami`: answers every query with the client's address and port in the additional
//! section (an A or AAAA record for the query name and an `_udp.`/`_tcp.` SRV record), TTL 0,
//! authoritative, empty answer section.

use std::net::IpAddr;

use dns_wire::{Class, Name, OwnedMessage, OwnedRecord, Rcode, Type};

use crate::query::reply::reply_to;
use crate::query::request::Request;

/// The whoami reply to `req`.
pub fn answer(req: &Request<'_>) -> OwnedMessage {
    let mut msg = reply_to(req, Rcode::NOERROR);
    msg.header.aa = true;
    let qname = req.question.name.to_name();
    let class = req.question.qclass;
    let (rtype, address) = match req.client.ip().to_canonical() {
        IpAddr::V4(v4) => (Type::A, v4.octets().to_vec()),
        IpAddr::V6(v6) => (Type::AAAA, v6.octets().to_vec()),
    };
    msg.additional.push(record(qname, rtype, class, address));
    let proto = format!("_{}", req.proto.as_str());
    let owner =
        Name::from_labels(std::iter::once(proto.as_bytes()).chain(qname.labels())).unwrap_or(qname);
    let mut srv = vec![0, 0, 0, 0];
    srv.extend_from_slice(&req.client.port().to_be_bytes());
    srv.push(0);
    msg.additional.push(record(owner, Type::SRV, class, srv));
    msg
}

fn record(name: Name, rtype: Type, class: Class, rdata: Vec<u8>) -> OwnedRecord {
    OwnedRecord {
        name,
        rtype,
        class,
        ttl: 0,
        rdata: rdata.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::request::tests::query;
    use crate::query::request::{Admission, Proto, admit};
    use dns_wire::{Message, RData};

    fn whoami(name: &str, client: &str, proto: Proto) -> Vec<u8> {
        let q = query(name, Type::A, None);
        let Admission::Query(req) = admit(&q, proto, client.parse().unwrap()) else {
            panic!()
        };
        answer(&req).to_vec().unwrap()
    }

    #[test]
    fn ipv4_client_gets_a_and_udp_srv() {
        let wire = whoami("Example.org.", "10.1.2.3:4242", Proto::Udp);
        let m = Message::parse(&wire).unwrap();
        assert!(m.header().aa && m.header().qr);
        assert_eq!(m.counts().answers, 0);
        let extra: Vec<_> = m.additional().collect();
        assert_eq!(extra[0].name().to_string(), "Example.org.");
        assert_eq!(
            extra[0].data().unwrap(),
            RData::A("10.1.2.3".parse().unwrap())
        );
        assert_eq!(extra[1].name().to_string(), "_udp.Example.org.");
        assert_eq!(extra[1].ttl(), 0);
        let RData::Srv(srv) = extra[1].data().unwrap() else {
            panic!()
        };
        assert_eq!(srv.port, 4242);
        assert!(srv.target.is_root());
    }

    #[test]
    fn ipv6_client_and_root_name_over_tcp() {
        let wire = whoami(".", "[2001:db8::1]:53", Proto::Tcp);
        let m = Message::parse(&wire).unwrap();
        let extra: Vec<_> = m.additional().collect();
        assert_eq!(extra[0].rtype(), Type::AAAA);
        assert_eq!(extra[1].name().to_string(), "_tcp.");
    }

    #[test]
    fn mapped_ipv4_clients_are_ipv4() {
        let wire = whoami("a.", "[::ffff:127.0.0.1]:53", Proto::Udp);
        let m = Message::parse(&wire).unwrap();
        assert_eq!(m.additional().next().unwrap().rtype(), Type::A);
    }
}
