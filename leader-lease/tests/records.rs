//! The record codecs against the examples of `docs/leader-lease.md` (testdata/PROVENANCE.md).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use leader_lease::{MicroTime, Record, Text};

fn time(text: &str) -> Option<MicroTime> {
    Some(MicroTime::parse(text).unwrap())
}

fn lease_spec_example() -> Record {
    Record {
        holder_identity: Text::try_from("ingress-7d9f-abcde").unwrap(),
        lease_duration_seconds: 15,
        acquire_time: time("2026-11-30T10:00:00.123456Z"),
        renew_time: time("2026-11-30T10:04:58.654321Z"),
        leader_transitions: 3,
        strategy: None,
        preferred_holder: None,
    }
}

/// `docs/leader-lease.md` §1.2: the Lease `spec` reads into the record and writes back byte for
/// byte.
#[test]
fn lease_spec_example_round_trips() {
    let text = include_str!("../testdata/lease-spec.json");
    let record = Record::decode_lease_spec(text).unwrap();
    assert_eq!(record, lease_spec_example());
    assert_eq!(record.encode_lease_spec(), text);
}

/// `docs/leader-lease.md` §1.2: the whole Lease object's `spec` member, pretty-printed, reads the
/// same.
#[test]
fn lease_object_spec_reads_the_same() {
    let object = include_str!("../testdata/lease.json");
    let start = object.find("\"spec\":").unwrap() + "\"spec\":".len();
    let end = object.rfind('}').unwrap();
    let record = Record::decode_lease_spec(&object[start..end]).unwrap();
    assert_eq!(record, lease_spec_example());
}

/// `docs/leader-lease.md` §1.3: the annotation example (kubernetes/kubernetes#41956) round-trips
/// byte for byte.
#[test]
fn annotation_example_round_trips() {
    let text = include_str!("../testdata/annotation.json");
    let record = Record::decode_annotation(text).unwrap();
    assert_eq!(
        record,
        Record {
            holder_identity: Text::try_from("node-a").unwrap(),
            lease_duration_seconds: 15,
            acquire_time: time("2017-02-22T07:09:59Z"),
            renew_time: time("2017-02-22T07:11:01Z"),
            leader_transitions: 0,
            strategy: None,
            preferred_holder: None,
        }
    );
    assert_eq!(record.encode_annotation(), text);
}

/// A Lease record converts to the annotation form and back, up to the annotation's seconds.
#[test]
fn lease_converts_to_annotation_and_back() {
    let annotation = lease_spec_example().encode_annotation();
    assert_eq!(
        annotation,
        r#"{"holderIdentity":"ingress-7d9f-abcde","leaseDurationSeconds":15,"acquireTime":"2026-11-30T10:00:00Z","renewTime":"2026-11-30T10:04:58Z","leaderTransitions":3}"#
    );
    let back = Record::decode_annotation(&annotation).unwrap();
    assert_eq!(back.renew_time, time("2026-11-30T10:04:58Z"));
}
