//! Property tests: every supported type round-trips through the encoder, names keep their
//! case, compression never grows a message, and truncation always yields a valid message
//! within budget whose records are a prefix of the original.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::std_instead_of_core,
    clippy::std_instead_of_alloc
)]

mod common;

use dns_wire::{Message, Name, OwnedMessage, RData, Section};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn decode_of_encode_is_the_identity(msg in common::message()) {
        let wire = msg.to_vec().unwrap();
        let back = OwnedMessage::parse(&wire).unwrap();
        prop_assert_eq!(&back, &msg);
        for section in Section::ALL {
            for (a, b) in back.section(section).iter().zip(msg.section(section)) {
                prop_assert_eq!(a.name.as_wire(), b.name.as_wire(), "case kept");
                prop_assert_eq!(&a.rdata, &b.rdata);
            }
        }
        // Encoding again what we decoded gives the same bytes.
        prop_assert_eq!(back.to_vec().unwrap(), wire);
    }

    #[test]
    fn compression_never_grows_a_message(msg in common::message()) {
        let wire = msg.to_vec().unwrap();
        let names = msg.questions.iter().map(|q| q.name.wire_len()).sum::<usize>();
        let records: usize = Section::ALL
            .iter()
            .flat_map(|s| msg.section(*s))
            .map(|r| r.name.wire_len() + 10 + r.rdata.len())
            .sum();
        let opt = msg.edns.as_ref().map_or(0, |e| 11 + e.options.len());
        prop_assert!(wire.len() <= 12 + names + 4 * msg.questions.len() + records + opt);
    }

    #[test]
    fn typed_rdata_reencodes_to_the_same_bytes(msg in common::message()) {
        for r in Section::ALL.iter().flat_map(|s| msg.section(*s)) {
            let data = r.data().unwrap();
            let mut again = Vec::new();
            data.write_to(&mut again);
            prop_assert_eq!(&again[..], &r.rdata[..]);
            prop_assert_eq!(data.rtype(), r.rtype);
            let _ = data.to_string();
        }
    }

    #[test]
    fn truncation_stays_within_budget_and_keeps_a_prefix(msg in common::message(), budget in 12usize..1500) {
        let mut buf = vec![0u8; 1500];
        let Ok(len) = msg.encode_truncated(&mut buf, budget) else {
            return Ok(());
        };
        prop_assert!(len <= budget);
        let cut = OwnedMessage::parse(&buf[..len]).unwrap();
        prop_assert_eq!(&cut.questions, &msg.questions);
        prop_assert_eq!(&cut.edns, &msg.edns);
        for section in Section::ALL {
            let kept = cut.section(section);
            prop_assert_eq!(kept, &msg.section(section)[..kept.len()]);
        }
        let dropped_required = cut.answers.len() < msg.answers.len()
            || cut.authority.len() < msg.authority.len();
        prop_assert_eq!(cut.header.tc, msg.header.tc || dropped_required);
    }

    #[test]
    fn names_print_and_parse_back(name in common::name()) {
        let text = name.to_string();
        let back: Name = text.parse().unwrap();
        prop_assert_eq!(back.as_wire(), name.as_wire());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(msg) = Message::parse(&bytes) {
            let _ = msg.to_string();
            for (_, r) in msg.records() {
                if let Ok(RData::Unknown(_, raw)) = r.data() {
                    prop_assert_eq!(raw, r.rdata());
                }
            }
        }
    }
}

/// Labels from a small alphabet in both cases, so that equal names are frequent.
fn small_labels() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop::collection::vec(prop::sample::select(b"aAbB".to_vec()), 1..3),
        0..4,
    )
}

fn lowered(labels: &[Vec<u8>]) -> Vec<Vec<u8>> {
    labels.iter().map(|l| l.to_ascii_lowercase()).collect()
}

proptest! {
    /// RFC 4343: names compare equal exactly when their labels do, ignoring ASCII case,
    /// whether each is stored whole or as labels followed by a compression pointer.
    #[test]
    fn rfc4343_name_equality_with_and_without_compression(
        a in small_labels(),
        b in small_labels(),
        keep in 0usize..4,
    ) {
        // One question, `a` whole at 12; two answers owned by `b`'s first `keep` labels
        // followed by a pointer to the rest of `a`, and by `b` whole.
        let mut msg = vec![0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0];
        let mut starts = vec![12];
        for label in &a {
            starts.push(msg.len() + 1 + label.len());
            msg.push(label.len() as u8);
            msg.extend_from_slice(label);
        }
        msg.extend_from_slice(&[0, 0, 1, 0, 1]);
        let skip = keep.min(b.len()).min(a.len());
        for label in &b[..skip] {
            msg.push(label.len() as u8);
            msg.extend_from_slice(label);
        }
        let target = starts[skip];
        msg.extend_from_slice(&[0xC0 | (target >> 8) as u8, target as u8]);
        let record = [0, 1, 0, 1, 0, 0, 0, 0, 0, 0];
        msg.extend_from_slice(&record);
        for label in &b {
            msg.push(label.len() as u8);
            msg.extend_from_slice(label);
        }
        msg.push(0);
        msg.extend_from_slice(&record);
        let parsed = Message::parse(&msg).unwrap();
        let whole_a = parsed.question().unwrap().name;
        let mut owners = parsed.answers().map(|r| r.name());
        let (mixed, whole_b) = (owners.next().unwrap(), owners.next().unwrap());
        let mixed_labels: Vec<Vec<u8>> =
            b[..skip].iter().chain(&a[skip..]).cloned().collect();
        prop_assert_eq!(whole_a.eq_ignore_case(&whole_b), lowered(&a) == lowered(&b));
        prop_assert_eq!(mixed.eq_ignore_case(&whole_b), lowered(&mixed_labels) == lowered(&b));
        prop_assert_eq!(whole_b.eq_ignore_case(&mixed), lowered(&mixed_labels) == lowered(&b));
        prop_assert_eq!(mixed.eq_ignore_case(&whole_a), lowered(&mixed_labels) == lowered(&a));
    }
}
