//! The DNS walk workloads, shared by `benches/dns_wire.rs` and `examples/dns_count.rs`.

use std::hint::black_box;

use dns_wire::Message;

/// The three benchmark messages, `testdata/dns/{query,response,large}.bin` at the repository
/// root.
pub const INPUTS: [(&str, &[u8]); 3] = [
    ("query", include_bytes!("../../testdata/dns/query.bin")),
    (
        "response",
        include_bytes!("../../testdata/dns/response.bin"),
    ),
    ("large", include_bytes!("../../testdata/dns/large.bin")),
];

/// Our walk: validate the message (one pass), then every question and record, typed RDATA
/// for each.
pub fn walk_ours(wire: &[u8]) -> usize {
    let msg = Message::parse(wire).expect("valid");
    let mut n = 0;
    for q in msg.questions() {
        n += usize::from(q.qtype.0);
    }
    for (_, r) in msg.records() {
        let data = r.data().expect("valid RDATA");
        n += usize::from(r.rtype().0) + r.ttl() as usize;
        black_box(&data);
    }
    n
}

/// domain's zero-copy walk: every question and record with typed RDATA in place.
pub fn walk_domain(wire: &[u8]) -> usize {
    use domain::base::ParsedName;
    use domain::rdata::AllRecordData;
    type Data<'a> = AllRecordData<&'a [u8], ParsedName<&'a [u8]>>;
    let msg = domain::base::Message::from_octets(wire).expect("valid");
    let (questions, answer, authority, additional) = msg.sections().expect("valid");
    let mut n = 0;
    for q in questions {
        n += usize::from(q.expect("valid").qtype().to_int());
    }
    for section in [answer, authority, additional] {
        for r in section.into_records::<Data<'_>>() {
            let r = r.expect("valid");
            n += usize::from(r.rtype().to_int()) + r.ttl().as_secs() as usize;
            black_box(r.data());
        }
    }
    n
}
