//! The DNS corpus (`testdata/dns/`) against dnspython's presentation of each message
//! (`NAME.txt`), and round trips: decode then encode gives a message that decodes equal and is
//! no larger than the (compressed) input.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

mod common;

use std::collections::BTreeMap;

use dns_wire::{Message, OwnedMessage, Section};

/// Lower case, and no white space inside the RDATA (dnspython splits base64 and prints hex in
/// lower case; dig's layout does neither).
fn normalize(owner: &str, ttl: &str, class: &str, rtype: &str, rdata: &str) -> String {
    let rdata: String = rdata.split_whitespace().collect();
    format!("{owner} {ttl} {class} {rtype} {rdata}").to_lowercase()
}

/// The header fields and per-section record lines of a dnspython `to_text()` rendering.
fn read_expected(text: &str) -> (BTreeMap<String, String>, BTreeMap<String, Vec<String>>) {
    let mut fields = BTreeMap::new();
    let mut sections: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut section = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix(';') {
            section = Some(name.to_owned());
            sections.entry(name.to_owned()).or_default();
            continue;
        }
        match &section {
            None => {
                let (key, value) = line.split_once(' ').unwrap_or((line, ""));
                fields
                    .entry(key.to_owned())
                    .and_modify(|v: &mut String| {
                        v.push('|');
                        v.push_str(value);
                    })
                    .or_insert_with(|| value.to_owned());
            }
            Some(s) if s == "QUESTION" => sections.get_mut(s).unwrap().push(line.to_lowercase()),
            Some(s) => {
                let parts: Vec<&str> = line.splitn(5, ' ').collect();
                let line = normalize(parts[0], parts[1], parts[2], parts[3], parts[4]);
                sections.get_mut(s).unwrap().push(line);
            }
        }
    }
    (fields, sections)
}

#[test]
fn every_corpus_message_reads_as_dnspython_printed_it() {
    for (path, wire) in common::corpus_messages() {
        let text = std::fs::read_to_string(path.with_extension("txt")).unwrap();
        let (fields, mut expected) = read_expected(&text);
        let msg = Message::parse(&wire).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let h = msg.header();
        let ctx = path.display().to_string();
        assert_eq!(fields["id"], h.id.to_string(), "{ctx}");
        assert_eq!(fields["opcode"], h.opcode.to_string(), "{ctx}");
        assert_eq!(fields["rcode"], msg.rcode().to_string(), "{ctx}");
        let flags: Vec<&str> = [
            (h.qr, "QR"),
            (h.aa, "AA"),
            (h.tc, "TC"),
            (h.rd, "RD"),
            (h.ra, "RA"),
            (h.ad, "AD"),
            (h.cd, "CD"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        assert_eq!(fields["flags"], flags.join(" "), "{ctx}");
        match msg.edns() {
            None => assert!(!fields.contains_key("edns"), "{ctx}"),
            Some(edns) => {
                assert_eq!(fields["edns"], edns.version.to_string(), "{ctx}");
                assert_eq!(
                    fields["payload"],
                    edns.udp_payload_size.to_string(),
                    "{ctx}"
                );
                assert_eq!(
                    fields.get("eflags").is_some_and(|f| f == "DO"),
                    edns.dnssec_ok,
                    "{ctx}"
                );
                let options: Vec<String> = edns.options.iter().map(|o| o.to_string()).collect();
                let theirs: Vec<&str> = fields
                    .get("option")
                    .map_or(vec![], |o| o.split('|').collect());
                assert_eq!(options.len(), theirs.len(), "{ctx}");
                for (ours, theirs) in options.iter().zip(theirs) {
                    // dnspython: "COOKIE 0102..." / "ECS 127.0.0.1/32 scope/0";
                    // dig: "COOKIE: 0102..." / "CLIENT-SUBNET: 127.0.0.1/32/0".
                    let ours = ours.replace("CLIENT-SUBNET: ", "ECS ").replace(": ", " ");
                    let theirs = theirs.replace(" scope/", "/");
                    assert_eq!(ours.to_lowercase(), theirs.to_lowercase(), "{ctx}");
                }
            }
        }
        let questions: Vec<String> = msg
            .questions()
            .map(|q| format!("{} {} {}", q.name, q.qclass, q.qtype).to_lowercase())
            .collect();
        assert_eq!(questions, expected.remove("QUESTION").unwrap(), "{ctx}");
        for (section, title) in [
            (Section::Answer, "ANSWER"),
            (Section::Authority, "AUTHORITY"),
            (Section::Additional, "ADDITIONAL"),
        ] {
            let mut ours: Vec<String> = msg
                .section(section)
                .filter(|r| r.rtype() != dns_wire::Type::OPT)
                .map(|r| {
                    let data = r.data().unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    let (owner, ttl) = (r.name().to_string(), r.ttl().to_string());
                    normalize(
                        &owner,
                        &ttl,
                        &r.class().to_string(),
                        &r.rtype().to_string(),
                        &data.to_string(),
                    )
                })
                .collect();
            let mut theirs = expected.remove(title).unwrap();
            ours.sort();
            theirs.sort();
            assert_eq!(ours, theirs, "{ctx} {title}");
        }
    }
}

#[test]
fn corpus_round_trips_equal_and_no_larger() {
    for (path, wire) in common::corpus_messages() {
        let owned = OwnedMessage::parse(&wire).unwrap();
        let encoded = owned.to_vec().unwrap();
        assert_eq!(
            OwnedMessage::parse(&encoded).unwrap(),
            owned,
            "{}",
            path.display()
        );
        assert!(
            encoded.len() <= wire.len(),
            "{}: {} > {}",
            path.display(),
            encoded.len(),
            wire.len()
        );
    }
}

#[test]
fn the_single_pass_walk_sees_what_parse_sees() {
    for (path, wire) in common::corpus_messages() {
        let msg = Message::parse(&wire).unwrap();
        let walk = Message::walk(&wire).unwrap();
        assert_eq!(walk.questions().count(), msg.questions().count());
        let walked: Vec<String> = walk
            .map(|r| r.unwrap())
            .map(|(s, r)| format!("{s:?} {r}"))
            .collect();
        let parsed: Vec<String> = msg.records().map(|(s, r)| format!("{s:?} {r}")).collect();
        assert_eq!(walked, parsed, "{}", path.display());
    }
}

#[test]
fn the_do_bit_survives_parse_and_encode() {
    let wire = testdata::read("dns", "query_do.bin");
    let encoded = OwnedMessage::parse(&wire).unwrap().to_vec().unwrap();
    assert_eq!(encoded, wire);
    assert!(Message::parse(&encoded).unwrap().edns().unwrap().dnssec_ok);
}

/// The README's example reads `dns-wire/testdata/response.bin`, which therefore ships with the
/// crate; it must stay a copy of the corpus message.
#[test]
fn the_readme_fixture_is_the_corpus_response() {
    assert_eq!(
        &include_bytes!("../testdata/response.bin")[..],
        testdata::read("dns", "response.bin")
    );
}

#[test]
fn dnsdump_layout_of_the_readme_fixture() {
    let wire = include_bytes!("../testdata/response.bin");
    let text = Message::parse(wire).unwrap().to_string();
    let expected = "\
;; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 4660
;; flags: qr rd ra; QUERY: 1, ANSWER: 6, AUTHORITY: 2, ADDITIONAL: 5

;; OPT PSEUDOSECTION:
; EDNS: version: 0, flags:; udp: 8192
;; QUESTION SECTION:
;www.example.com.\t\tIN\tA

;; ANSWER SECTION:
www.example.com.\t300\tIN\tCNAME\twww.example.com.cdn.example.net.
";
    assert!(text.starts_with(expected), "{text}");
    assert!(text.contains(
        "\n;; AUTHORITY SECTION:\ncdn.example.net.\t3600\tIN\tNS\tns1.cdn.example.net.\n"
    ));
    assert!(
        text.contains(
            "\n;; ADDITIONAL SECTION:\nns1.cdn.example.net.\t3600\tIN\tA\t198.51.100.1\n"
        )
    );
}
