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
