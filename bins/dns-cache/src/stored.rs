//! A reply as the cache keeps it: its bytes and the offsets of its TTL fields, found once
//! when it is stored, so that a hit patches the TTLs without parsing the reply again.

use bytes::Bytes;
use dns_wire::cache::TtlCursor;

/// A cached reply (ID 0, no OPT record) and where its TTLs are. Cloning shares the bytes.
#[derive(Clone, Debug)]
pub struct StoredReply {
    /// The reply, then the offset of each TTL field (OPT has none) as two little-endian bytes.
    bytes: Bytes,
    /// The reply's length.
    len: usize,
}

impl StoredReply {
    /// Keeps `reply`; `None` if it does not parse as a whole.
    pub fn new(mut reply: Vec<u8>) -> Option<Self> {
        let len = reply.len();
        let mut ttls = TtlCursor::new(&reply).ok()?;
        while let Some(at) = reply.get(..len).and_then(|msg| ttls.next(msg)) {
            reply.extend_from_slice(&u16::try_from(at).ok()?.to_le_bytes());
        }
        Some(Self {
            bytes: Bytes::from(reply),
            len,
        })
    }

    /// The reply's bytes.
    pub fn message(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    /// Rewrites each TTL of `out`, a copy of [`StoredReply::message`] (header fields and
    /// question case may differ), as `new(ttl)`.
    pub fn rewrite_ttls(&self, out: &mut [u8], new: impl Fn(u32) -> u32) {
        let offsets = self.bytes.get(self.len..).unwrap_or_default();
        for pair in offsets.chunks_exact(2) {
            let &[lo, hi] = pair else { continue };
            let at = usize::from(u16::from_le_bytes([lo, hi]));
            if let Some(ttl) = out.get_mut(at..).and_then(|f| f.first_chunk_mut::<4>()) {
                *ttl = new(u32::from_be_bytes(*ttl)).to_be_bytes();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dns_wire::{Class, Message, Name, OwnedEdns, OwnedMessage, OwnedRecord, RData, Type};

    fn reply() -> Vec<u8> {
        let name: Name = "a.example.".parse().unwrap();
        let mut m = OwnedMessage::default();
        let a = RData::A([192, 0, 2, 1].into());
        m.answers.push(OwnedRecord::new(name, Class::IN, 300, &a));
        m.answers.push(OwnedRecord::new(name, Class::IN, 200, &a));
        let ns = RData::Ns(name.as_ref());
        m.authority
            .push(OwnedRecord::new(name, Class::IN, 100, &ns));
        m.edns = Some(OwnedEdns::default());
        m.to_vec().unwrap()
    }

    #[test]
    fn rfc1035_s3_2_1_every_ttl_is_rewritten_and_rfc6891_opt_is_not() {
        let stored = StoredReply::new(reply()).unwrap();
        assert_eq!(stored.message(), reply());
        let mut out = stored.message().to_vec();
        stored.rewrite_ttls(&mut out, |ttl| ttl.saturating_sub(250));
        let m = Message::parse(&out).unwrap();
        let ttls: Vec<_> = m
            .records()
            .filter(|(_, r)| r.rtype() != Type::OPT)
            .map(|(_, r)| r.ttl())
            .collect();
        assert_eq!(ttls, [50, 0, 0]);
        assert_eq!(
            m.edns().unwrap(),
            Message::parse(&reply()).unwrap().edns().unwrap()
        );
    }

    #[test]
    fn a_reply_that_does_not_parse_is_not_kept_and_a_short_copy_is_left_alone() {
        let mut bad = reply();
        bad.push(0);
        assert!(StoredReply::new(bad).is_none());
        let stored = StoredReply::new(reply()).unwrap();
        let mut short = stored.message()[..20].to_vec();
        let before = short.clone();
        stored.rewrite_ttls(&mut short, |_| 0);
        assert_eq!(short, before);
    }
}
