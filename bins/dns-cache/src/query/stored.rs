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
    /// Keeps `reply` with every TTL (OPT's excepted) set to `ttl`. `ttls` walks `reply`:
    /// made from it, or from the parsed message it copies (see [`TtlCursor::of`]), so that
    /// storing a reply parses it once. `None` if a TTL lies beyond 64 KiB.
    pub fn new(mut reply: Vec<u8>, mut ttls: TtlCursor, ttl: u32) -> Option<Self> {
        let len = reply.len();
        while let Some(at) = reply.get(..len).and_then(|msg| ttls.next(msg)) {
            if let Some(field) = reply.get_mut(at..).and_then(|f| f.first_chunk_mut::<4>()) {
                *field = ttl.to_be_bytes();
            }
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

    fn stored(ttl: u32) -> StoredReply {
        let bytes = reply();
        let ttls = TtlCursor::new(&bytes).unwrap();
        StoredReply::new(bytes, ttls, ttl).unwrap()
    }

    #[test]
    fn rfc1035_s3_2_1_every_ttl_is_set_and_rewritten_and_rfc6891_opt_is_not() {
        let stored = stored(300);
        let m = Message::parse(stored.message()).unwrap();
        assert!(
            m.records()
                .all(|(_, r)| r.rtype() == Type::OPT || r.ttl() == 300)
        );
        assert_eq!(m.edns(), Message::parse(&reply()).unwrap().edns());
        let mut out = stored.message().to_vec();
        stored.rewrite_ttls(&mut out, |ttl| ttl.saturating_sub(250));
        let m = Message::parse(&out).unwrap();
        let ttls: Vec<_> = m
            .records()
            .filter(|(_, r)| r.rtype() != Type::OPT)
            .map(|(_, r)| r.ttl())
            .collect();
        assert_eq!(ttls, [50, 50, 50]);
        assert_eq!(
            m.edns().unwrap(),
            Message::parse(&reply()).unwrap().edns().unwrap()
        );
    }

    #[test]
    fn a_short_copy_is_left_alone() {
        let stored = stored(300);
        let mut short = stored.message()[..20].to_vec();
        let before = short.clone();
        stored.rewrite_ttls(&mut short, |_| 0);
        assert_eq!(short, before);
    }
}
