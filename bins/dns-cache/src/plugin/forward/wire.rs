//! The bytes of queries sent upstream and of their replies: the ID a query came with, the
//! query with the ID it is sent under, and whether a reply answers the question.

use dns_wire::Message;
use dns_wire::cache::set_id;

/// The ID in a message's first two bytes; `None` when it is shorter than that.
pub(super) fn message_id(message: &[u8]) -> Option<u16> {
    message
        .first_chunk::<2>()
        .map(|&[hi, lo]| u16::from_be_bytes([hi, lo]))
}

/// The ID of a query (0 if it has none).
pub(super) fn original_id(query: &[u8]) -> u16 {
    message_id(query).unwrap_or(0)
}

/// A query with its ID replaced, on the stack when it fits in 512 bytes.
pub(super) struct Rewritten {
    small: [u8; 512],
    large: Vec<u8>,
    len: usize,
}

impl Rewritten {
    /// `query` with ID `id`.
    pub(super) fn new(query: &[u8], id: u16) -> Self {
        let mut wire = Self {
            small: [0; 512],
            large: Vec::new(),
            len: query.len(),
        };
        let bytes = match wire.small.get_mut(..query.len()) {
            Some(small) => {
                small.copy_from_slice(query);
                small
            }
            None => {
                wire.large = query.to_vec();
                wire.large.as_mut_slice()
            }
        };
        let _ = set_id(bytes, id);
        wire
    }

    /// The rewritten query.
    pub(super) fn bytes(&self) -> &[u8] {
        self.small
            .get(..self.len)
            .filter(|_| self.large.is_empty())
            .unwrap_or(&self.large)
    }
}

/// Whether `reply` is a response to `query`'s question (CoreDNS `state.Match`).
pub(super) fn answers(query: &[u8], reply: &[u8]) -> bool {
    // Only the headers and questions are read: the reply's records are validated later,
    // where the reply is cached or scrubbed.
    let (Ok(q), Ok(r)) = (Message::walk(query), Message::walk(reply)) else {
        return false;
    };
    let (Some(qq), Some(rq)) = (q.questions().next(), r.questions().next()) else {
        // A reply without a question (some FORMERR) still answers.
        return r.header().qr;
    };
    r.header().qr
        && qq.qtype == rq.qtype
        && qq.qclass == rq.qclass
        && qq.name.eq_ignore_case(&rq.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dns_wire::{Class, Header, Name, OwnedMessage, OwnedQuestion, Type};

    fn message(qr: bool, name: &str, qtype: Type) -> Vec<u8> {
        let name: Name = name.parse().unwrap();
        OwnedMessage {
            header: Header {
                id: 0x1234,
                qr,
                ..Header::default()
            },
            questions: vec![OwnedQuestion {
                name,
                qtype,
                qclass: Class::IN,
            }],
            ..OwnedMessage::default()
        }
        .to_vec()
        .unwrap()
    }

    #[test]
    fn rfc1035_s4_1_1_the_id_is_the_first_two_bytes() {
        assert_eq!(message_id(&[0xAB, 0xCD, 0x01]), Some(0xABCD));
        assert_eq!(message_id(&[0xAB]), None);
    }

    #[test]
    fn a_query_without_an_id_counts_as_id_zero() {
        assert_eq!(original_id(&[0xAB, 0xCD]), 0xABCD);
        assert_eq!(original_id(&[]), 0);
    }

    #[test]
    fn rewriting_changes_the_id_only() {
        let query = message(false, "a.example.", Type::A);
        let rewritten = Rewritten::new(&query, 0xBEEF);
        assert_eq!(rewritten.bytes()[..2], [0xBE, 0xEF]);
        assert_eq!(rewritten.bytes()[2..], query[2..]);
        // Beyond 512 bytes the copy is on the heap, with the same result.
        let large = vec![0xAA; 600];
        let rewritten = Rewritten::new(&large, 1);
        assert_eq!(rewritten.bytes().len(), 600);
        assert_eq!(rewritten.bytes()[..3], [0, 1, 0xAA]);
    }

    #[test]
    fn a_reply_answers_the_same_question_in_any_case() {
        let query = message(false, "a.example.", Type::A);
        assert!(answers(&query, &message(true, "A.Example.", Type::A)));
        // Not a response, another type, another name, or no message at all.
        assert!(!answers(&query, &message(false, "a.example.", Type::A)));
        assert!(!answers(&query, &message(true, "a.example.", Type::AAAA)));
        assert!(!answers(&query, &message(true, "b.example.", Type::A)));
        assert!(!answers(&query, &[0x12]));
    }

    #[test]
    fn a_response_without_a_question_answers() {
        let query = message(false, "a.example.", Type::A);
        let formerr = OwnedMessage {
            header: Header {
                qr: true,
                rcode: 1,
                ..Header::default()
            },
            ..OwnedMessage::default()
        }
        .to_vec()
        .unwrap();
        assert!(answers(&query, &formerr));
    }
}
