//! In-place helpers for a cache that stores response bytes and replays them (the hit path
//! never builds an owned message): set the ID, age the TTLs, copy the query's 0x20 case,
//! and a lower-case cache key.

use core::hash::{Hash, Hasher};

use crate::error::{Error, ErrorKind, Result};
use crate::header::HEADER_LEN;
use crate::message::{Message, Question};
use crate::name::{self, Compression, MAX_NAME_LEN, NameRef};
use crate::types::Type;

/// Sets the message ID (the first two bytes) in place. (A crafted message may aim a
/// compression pointer into the header; its names then change with the ID.)
pub fn set_id(msg: &mut [u8], id: u16) -> Result<()> {
    let len = msg.len();
    let dst = msg
        .get_mut(..2)
        .ok_or(Error::new(ErrorKind::UnexpectedEnd { what: "header" }, len))?;
    dst.copy_from_slice(&id.to_be_bytes());
    Ok(())
}

/// Subtracts `age` seconds from the TTL of every record, down to 0, in place; the OPT
/// record's TTL field holds flags and is left alone. The whole message is validated first, so
/// on error nothing is changed.
///
/// A crafted message may aim a compression pointer into a TTL field (any earlier offset is a
/// legal target); rewriting that TTL then changes the name. The rewrite never fails or
/// panics, but such a message may no longer parse afterwards.
pub fn age_ttls(msg: &mut [u8], age: u32) -> Result<()> {
    rewrite_ttls(msg, |ttl| ttl.saturating_sub(age))
}

/// Sets the TTL of every record to `ttl` in place, OPT excluded, as [`age_ttls`] does
/// (validated first; nothing changes on error).
pub fn set_ttls(msg: &mut [u8], ttl: u32) -> Result<()> {
    rewrite_ttls(msg, |_| ttl)
}

/// Replaces each TTL (OPT's excepted) of a message that parses by `new(ttl)`.
fn rewrite_ttls(msg: &mut [u8], new: impl Fn(u32) -> u32) -> Result<()> {
    let mut ttls = TtlCursor::new(msg)?;
    // Record positions depend only on bytes stored in place, which TTL rewrites never touch.
    while let Some(at) = ttls.next(msg) {
        if let Some(ttl) = msg.get_mut(at..).and_then(|f| f.first_chunk_mut::<4>()) {
            *ttl = new(u32::from_be_bytes(*ttl)).to_be_bytes();
        }
    }
    Ok(())
}

/// Walks the TTL fields of a message's records, OPT's excepted, in message order.
///
/// A cache finds them once, when it stores a reply, and then patches each hit at those
/// offsets without parsing the reply again. The cursor borrows nothing: each step reads the
/// message it is given, so the caller may rewrite TTLs between steps (record positions do
/// not depend on them).
///
/// ```
/// # use dns_wire::cache::TtlCursor;
/// # use dns_wire::{Class, OwnedMessage, OwnedRecord, RData};
/// let mut reply = OwnedMessage::default();
/// let a = RData::A([192, 0, 2, 1].into());
/// reply.answers.push(OwnedRecord::new("a.example.".parse()?, Class::IN, 300, &a));
/// let bytes = reply.to_vec()?;
/// let mut ttls = TtlCursor::new(&bytes)?;
/// let at = ttls.next(&bytes).unwrap();
/// assert_eq!(bytes[at..at + 4], 300u32.to_be_bytes());
/// assert_eq!(ttls.next(&bytes), None);
/// # Ok::<(), dns_wire::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct TtlCursor {
    pos: usize,
    left: u32,
}

impl TtlCursor {
    /// Validates `msg` (it must parse as a whole) and starts before its first record.
    pub fn new(msg: &[u8]) -> Result<Self> {
        Message::parse(msg).map(|view| Self::of(&view))
    }

    /// Starts before the first record of a message parsed already, which
    /// [`TtlCursor::next`] is then given (or a copy of it, or a prefix that ends where a
    /// record ends: the cursor stops there).
    pub fn of(msg: &Message<'_>) -> Self {
        let counts = msg.counts();
        Self {
            pos: msg.records_start(),
            left: u32::from(counts.answers)
                + u32::from(counts.authority)
                + u32::from(counts.additional),
        }
    }

    /// The offset of the next record's TTL field in `msg`, the message the cursor was made
    /// from (or a copy with other TTLs); `None` after the last record, or where `msg` ends.
    pub fn next(&mut self, msg: &[u8]) -> Option<usize> {
        while self.left > 0 {
            self.left -= 1;
            let at = name::skip(msg, self.pos);
            let &[t0, t1, _, _, _, _, _, _, r0, r1] = msg.get(at..)?.first_chunk::<10>()?;
            self.pos = at + 10 + usize::from(u16::from_be_bytes([r0, r1]));
            if Type(u16::from_be_bytes([t0, t1])) != Type::OPT {
                return Some(at + 4);
            }
        }
        None
    }
}

/// Copies the letter case of the query's question name onto the response's question name,
/// in place, so a client using 0x20 case randomization sees its own case back. The names
/// must be equal ignoring case, and the response's must not be compressed.
pub fn copy_question_case(response: &mut [u8], query: &[u8]) -> Result<()> {
    let (query_name, _) = NameRef::read(query, HEADER_LEN, Compression::Allowed)?;
    copy_name_case(response, &query_name)
}

/// [`copy_question_case`] with the query's question name already read, for example from a
/// parsed query.
pub fn copy_name_case(response: &mut [u8], name: &NameRef<'_>) -> Result<()> {
    let mismatch = |at| Error::new(ErrorKind::QuestionMismatch, at);
    // An uncompressed name is one run of bytes. Its length octets (at most 0x3F) equal only
    // themselves ignoring case, so a run of the response equal to it ignoring case is the
    // same name, uncompressed and ending at the same place: one comparison, one copy.
    if let Some(wire) = name.uncompressed() {
        let dst = response
            .get_mut(HEADER_LEN..HEADER_LEN + wire.len())
            .ok_or(mismatch(HEADER_LEN))?;
        // Most often the case is already the same, and a plain comparison settles it.
        if dst != wire {
            if !dst.eq_ignore_ascii_case(wire) {
                return Err(mismatch(HEADER_LEN));
            }
            dst.copy_from_slice(wire);
        }
        return Ok(());
    }
    let end = name::scan(response, HEADER_LEN, Compression::Forbidden)?.end;
    let stored = NameRef::validated(response, HEADER_LEN);
    if !stored.eq_ignore_case(name) {
        return Err(mismatch(HEADER_LEN));
    }
    let mut pos = HEADER_LEN;
    for label in name.labels() {
        let dst = response
            .get_mut(pos + 1..pos + 1 + label.len())
            .filter(|_| pos + 1 + label.len() < end)
            .ok_or(mismatch(pos))?;
        dst.copy_from_slice(label);
        pos += 1 + label.len();
    }
    Ok(())
}

/// A cache key for a question: the lower-cased uncompressed name, QTYPE and QCLASS, stored
/// inline. Equal for questions that differ only in case.
#[derive(Clone, Copy)]
pub struct CacheKey {
    bytes: [u8; MAX_NAME_LEN + 4],
    len: u16,
}

impl CacheKey {
    /// The key of `question`.
    pub fn new(question: &Question<'_>) -> Self {
        let mut bytes = [0; MAX_NAME_LEN + 4];
        let mut len = 0usize;
        for label in question.name.labels() {
            let Some(dst) = bytes.get_mut(len..len + 1 + label.len()) else {
                break;
            };
            if let Some((first, rest)) = dst.split_first_mut() {
                *first = label.len() as u8;
                rest.copy_from_slice(label);
            }
            len += 1 + label.len();
        }
        len += 1; // the root byte is already 0
        if let Some(name) = bytes.get_mut(..len) {
            name.make_ascii_lowercase();
        }
        for part in [question.qtype.0, question.qclass.0] {
            if let Some(dst) = bytes.get_mut(len..len + 2) {
                dst.copy_from_slice(&part.to_be_bytes());
            }
            len += 2;
        }
        Self {
            bytes,
            len: len as u16,
        }
    }

    /// The key bytes: lower-case wire name, QTYPE, QCLASS.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }
}

impl PartialEq for CacheKey {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for CacheKey {}

impl Hash for CacheKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl core::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("CacheKey").field(&self.as_bytes()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    /// `www.example.com. IN A` with one A record (TTL 300) and an OPT record.
    fn response(name: &[u8; 15]) -> alloc::vec::Vec<u8> {
        let mut m = alloc::vec![0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 1];
        m.push(3);
        m.extend_from_slice(&name[..3]);
        m.push(7);
        m.extend_from_slice(&name[4..11]);
        m.push(3);
        m.extend_from_slice(&name[12..]);
        m.extend_from_slice(&[0, 0, 1, 0, 1]);
        m.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 192, 0, 2, 1]);
        m.extend_from_slice(&[0, 0, 41, 4, 208, 0, 0, 0x80, 0, 0, 0]);
        m
    }

    #[test]
    fn rfc1035_s4_1_1_id_is_rewritten_in_place() {
        let mut m = response(b"www.example.com");
        set_id(&mut m, 0xBEEF).unwrap();
        assert_eq!(Message::parse(&m).unwrap().header().id, 0xBEEF);
        assert!(set_id(&mut [0], 1).is_err());
    }

    #[test]
    fn rfc1035_s3_2_1_ttls_age_and_floor_at_zero_but_opt_is_untouched() {
        let mut m = response(b"www.example.com");
        age_ttls(&mut m, 100).unwrap();
        let msg = Message::parse(&m).unwrap();
        assert_eq!(msg.answers().next().unwrap().ttl(), 200);
        assert!(msg.edns().unwrap().dnssec_ok);
        age_ttls(&mut m, 1000).unwrap();
        assert_eq!(
            Message::parse(&m).unwrap().answers().next().unwrap().ttl(),
            0
        );
    }

    #[test]
    fn rfc2181_s8_every_ttl_is_set_but_opt_is_untouched() {
        let mut m = response(b"www.example.com");
        set_ttls(&mut m, 42).unwrap();
        let msg = Message::parse(&m).unwrap();
        assert!(
            msg.records()
                .all(|(_, r)| r.rtype() == Type::OPT || r.ttl() == 42)
        );
        assert!(msg.edns().unwrap().dnssec_ok);
        m.push(0);
        let before = m.clone();
        assert!(set_ttls(&mut m, 7).is_err());
        assert_eq!(m, before);
    }

    #[test]
    fn rfc6891_s6_1_1_the_ttl_cursor_skips_opt_whose_ttl_holds_flags() {
        let mut m = response(b"www.example.com");
        let mut ttls = TtlCursor::new(&m).unwrap();
        let at = ttls.next(&m).unwrap();
        assert_eq!(m[at..at + 4], 300u32.to_be_bytes());
        assert_eq!(ttls.next(&m), None);
        assert_eq!(ttls.next(&m), None);
        m.push(0);
        assert!(TtlCursor::new(&m).is_err());
        // A cursor given a shorter message than it was made for stops, it does not panic.
        let mut ttls = TtlCursor::new(&m[..m.len() - 1]).unwrap();
        assert_eq!(ttls.next(&m[..20]), None);
    }

    #[test]
    fn rfc6891_s6_1_1_a_cursor_of_a_parsed_message_stops_before_a_trailing_opt_cut_off() {
        let m = response(b"www.example.com");
        let view = Message::parse(&m).unwrap();
        let mut ttls = TtlCursor::of(&view);
        let mut again = TtlCursor::new(&m).unwrap();
        assert_eq!(ttls.next(&m), again.next(&m));
        assert_eq!(ttls.next(&m), None);
        // The same message without its OPT record, the last one: the answer's TTL, then the
        // end of the bytes.
        let opt_start = view.opt().unwrap().ttl_offset() - 5;
        let mut ttls = TtlCursor::of(&view);
        let cut = &m[..opt_start];
        let at = ttls.next(cut).unwrap();
        assert_eq!(cut[at..at + 4], 300u32.to_be_bytes());
        assert_eq!(ttls.next(cut), None);
    }

    #[test]
    fn aging_a_malformed_message_changes_nothing() {
        let mut m = response(b"www.example.com");
        m.push(0);
        let before = m.clone();
        assert_eq!(
            age_ttls(&mut m, 5).unwrap_err().kind(),
            ErrorKind::TrailingBytes
        );
        assert_eq!(m, before);
    }

    #[test]
    fn case_randomization_0x20_is_copied_from_the_query() {
        let mut m = response(b"www.example.com");
        let query = response(b"wWw.ExAmple.cOM");
        copy_question_case(&mut m, &query).unwrap();
        let msg = Message::parse(&m).unwrap();
        assert_eq!(
            alloc::format!("{}", msg.question().unwrap().name),
            "wWw.ExAmple.cOM."
        );
        let other = response(b"www.example.net");
        assert_eq!(
            copy_question_case(&mut m, &other).unwrap_err().kind(),
            ErrorKind::QuestionMismatch
        );
    }

    #[test]
    fn case_is_copied_from_a_compressed_name_and_lengths_must_match() {
        // The answer's owner is a pointer to the question: a compressed name.
        let source = response(b"WwW.eXaMPLE.CoM");
        let parsed = Message::parse(&source).unwrap();
        let owner = parsed.answers().next().unwrap().name();
        assert!(owner.uncompressed().is_none());
        let mut m = response(b"www.example.com");
        copy_name_case(&mut m, &owner).unwrap();
        assert_eq!(&m[12..29], b"\x03WwW\x07eXaMPLE\x03CoM\x00");
        // A query name one label byte shorter than the stored one is a mismatch.
        let mut shorter = [0u8; 12].to_vec();
        shorter.extend_from_slice(b"\x03www\x07example\x02co\x00\x00\x01\x00\x01");
        let mut m = response(b"www.example.com");
        assert_eq!(
            copy_question_case(&mut m, &shorter).unwrap_err().kind(),
            ErrorKind::QuestionMismatch
        );
        assert_eq!(m, response(b"www.example.com"), "unchanged on mismatch");
    }

    #[test]
    fn cache_key_ignores_case() {
        let a = response(b"www.example.com");
        let b = response(b"WWW.EXAMPLE.com");
        let key = |m: &[u8]| CacheKey::new(&Message::parse(m).unwrap().question().unwrap());
        assert_eq!(key(&a), key(&b));
        assert_eq!(&key(&a).as_bytes()[..5], b"\x03www\x07");
        assert_ne!(key(&a), key(&response(b"www.example.net")));
    }
}
