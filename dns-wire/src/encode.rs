//! The encoder: writes a message into a caller's buffer within a size budget, compressing
//! names without allocating (RFC 1035 §4.1.4).
//!
//! Records are written whole or not at all: when one does not fit, the encoder rolls back to
//! the end of the previous record and reports [`ErrorKind::NoSpace`], which is how
//! [`crate::OwnedMessage::encode_truncated`] implements truncation.

use crate::compress::{Compressor, MAX_POINTER_TARGET, ROOT_HASH, hash_label};
use crate::error::{Error, ErrorKind, Result};
use crate::header::{Counts, HEADER_LEN, Header};
use crate::message::Section;
use crate::name::{MAX_NAME_LEN, Name, NameRef};
use crate::rdata::layout::{self, Part};
use crate::types::{Class, Type};

/// How many of a name's last labels are candidates for compression (ip6.arpa names have 34;
/// a power of two keeps the ring arithmetic cheap).
const CANDIDATES: usize = 64;

/// Writes one message into `buf`, up to a size limit.
#[derive(Debug)]
pub struct Encoder<'b> {
    buf: &'b mut [u8],
    len: usize,
    limit: usize,
    header: Header,
    counts: Counts,
    section: Option<Section>,
    names: Compressor,
    /// The previous record's owner name and where a pointer to it can aim: records of one
    /// RRset share their owner, and this skips the table for them.
    last_owner: LastOwner,
}

/// The owner name of the last record written and the offset a pointer to it uses.
#[derive(Debug)]
struct LastOwner {
    wire: [u8; MAX_NAME_LEN],
    len: usize,
    target: Option<u16>,
}

impl LastOwner {
    /// Where a pointer to `wire` can aim, if it is the last owner name and longer than a
    /// pointer (the root stays one zero byte: an OPT owner must be exactly that).
    fn target_for(&self, wire: &[u8]) -> Option<u16> {
        self.target
            .filter(|_| wire.len() > 2 && self.wire.get(..self.len) == Some(wire))
    }
}

impl<'b> Encoder<'b> {
    /// Starts a message with `header` in `buf`; the limit is the buffer's length.
    pub fn new(buf: &'b mut [u8], header: Header) -> Result<Self> {
        let limit = buf.len();
        let mut enc = Self {
            buf,
            len: 0,
            limit,
            header,
            counts: Counts::default(),
            section: None,
            names: Compressor::default(),
            last_owner: LastOwner {
                wire: [0; MAX_NAME_LEN],
                len: 0,
                target: None,
            },
        };
        enc.put(&[0; HEADER_LEN])?;
        Ok(enc)
    }

    /// Lowers the size limit to `limit` bytes (never above the buffer's length).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.min(self.buf.len());
    }

    /// The size limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing but the header has been written.
    pub fn is_empty(&self) -> bool {
        self.len <= HEADER_LEN
    }

    /// The header that [`Encoder::finish`] will write (to set TC, for instance).
    pub fn header_mut(&mut self) -> &mut Header {
        &mut self.header
    }

    /// Writes the header with the final counts and returns the message length.
    // Inlined: called out of line, it takes the encoder (with its kilobyte compression table)
    // by value, a copy of the whole of it.
    #[inline]
    pub fn finish(self) -> usize {
        let header = self.header.to_bytes(self.counts);
        if let Some(dst) = self.buf.get_mut(..HEADER_LEN) {
            dst.copy_from_slice(&header);
        }
        self.len
    }

    /// Appends a question. Questions come before every record.
    pub fn question(&mut self, name: &Name, qtype: Type, qclass: Class) -> Result<()> {
        if self.section.is_some() {
            return Err(Error::new(ErrorKind::OutOfOrder, self.len));
        }
        let next = bump(self.counts.questions, self.len)?;
        self.atomically(|enc| {
            enc.name(name.as_wire())?;
            enc.put(&qtype.0.to_be_bytes())?;
            enc.put(&qclass.0.to_be_bytes())
        })?;
        self.counts.questions = next;
        Ok(())
    }

    /// Appends a record to `section`. Sections must come in wire order. `rdata` is the
    /// uncompressed RDATA; its names are compressed only for the RFC 1035 types (RFC 3597 §4).
    /// On failure nothing of the record stays written.
    pub fn record(
        &mut self,
        section: Section,
        name: &Name,
        rtype: Type,
        class: Class,
        ttl: u32,
        rdata: &[u8],
    ) -> Result<()> {
        if self.section.is_some_and(|s| s > section) {
            return Err(Error::new(ErrorKind::OutOfOrder, self.len));
        }
        let count = match section {
            Section::Answer => &mut self.counts.answers,
            Section::Authority => &mut self.counts.authority,
            Section::Additional => &mut self.counts.additional,
        };
        let next = bump(*count, self.len)?;
        let owner = name.as_wire();
        let owner_at = self.len;
        self.atomically(|enc| {
            match enc.last_owner.target_for(owner) {
                Some(target) => enc.put(&(0xC000 | target).to_be_bytes())?,
                None => enc.name(owner)?,
            }
            let [t0, t1] = rtype.0.to_be_bytes();
            let [c0, c1] = class.0.to_be_bytes();
            let [l0, l1, l2, l3] = ttl.to_be_bytes();
            enc.put(&[t0, t1, c0, c1, l0, l1, l2, l3, 0, 0])?;
            let len_at = enc.len - 2;
            enc.rdata(rtype, rdata)?;
            let rdlen = u16::try_from(enc.len - len_at - 2).map_err(|_| {
                Error::new(
                    ErrorKind::BadRdata {
                        what: "over 65535 bytes",
                    },
                    len_at,
                )
            })?;
            if let Some(dst) = enc.buf.get_mut(len_at..len_at + 2) {
                dst.copy_from_slice(&rdlen.to_be_bytes());
            }
            Ok(())
        })?;
        self.remember_owner(owner, owner_at);
        self.section = Some(section);
        match section {
            Section::Answer => self.counts.answers = next,
            Section::Authority => self.counts.authority = next,
            Section::Additional => self.counts.additional = next,
        }
        Ok(())
    }

    /// Remembers the owner name just written at `at` and where a pointer to it may aim: the
    /// pointer it starts with, or its own offset if a pointer can reach it.
    fn remember_owner(&mut self, wire: &[u8], at: usize) {
        let target = match self.buf.get(at..at + 2) {
            Some(&[hi, lo]) if hi >= 0xC0 => Some(u16::from_be_bytes([hi & 0x3F, lo])),
            _ => u16::try_from(at)
                .ok()
                .filter(|&t| usize::from(t) < MAX_POINTER_TARGET),
        };
        let last = &mut self.last_owner;
        match last.wire.get_mut(..wire.len()) {
            Some(dst) => {
                dst.copy_from_slice(wire);
                last.len = wire.len();
                last.target = target;
            }
            None => last.target = None,
        }
    }

    /// Runs `write`; if it fails, forgets everything it wrote.
    fn atomically(&mut self, write: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let start = self.len;
        write(self).inspect_err(|_| self.len = start)
    }

    fn rdata(&mut self, rtype: Type, rdata: &[u8]) -> Result<()> {
        let layout = layout::name_layout(rtype).filter(|_| layout::compresses(rtype));
        let Some(layout) = layout else {
            return self.put(rdata);
        };
        layout::walk(layout, rdata, 0, rdata.len(), false, |part| match part {
            Part::Bytes(b) => self.put(b),
            Part::Name(n) => self.name_ref(n),
        })
    }

    fn name_ref(&mut self, name: NameRef<'_>) -> Result<()> {
        match name.uncompressed() {
            Some(wire) => self.name(wire),
            None => self.name(name.to_name().as_wire()),
        }
    }

    /// Writes an uncompressed wire name, ending in a pointer to the longest suffix already
    /// written, and remembers its new suffixes. Only the suffixes of the last
    /// [`CANDIDATES`] labels are looked up and remembered, which bounds the work per name.
    fn name(&mut self, wire: &[u8]) -> Result<()> {
        // Where the last labels start (a ring), then the hash of the suffix from each of them,
        // built from the root backwards.
        let mut starts = [0u8; CANDIDATES];
        let mut count = 0usize;
        let mut pos = 0usize;
        while let Some(&len @ 1..) = wire.get(pos) {
            if let Some(slot) = starts.get_mut(count % CANDIDATES) {
                *slot = pos as u8;
            }
            count += 1;
            pos += 1 + usize::from(len);
        }
        let first = count.saturating_sub(CANDIDATES);
        let start_of = |i: usize| usize::from(starts.get(i % CANDIDATES).copied().unwrap_or(0));
        let mut hashes = [0u32; CANDIDATES];
        let mut hash = ROOT_HASH;
        for i in (first..count).rev() {
            let at = start_of(i);
            let len = usize::from(wire.get(at).copied().unwrap_or(0));
            hash = hash_label(hash, wire.get(at..=at + len).unwrap_or_default());
            if let Some(h) = hashes.get_mut(i % CANDIDATES) {
                *h = hash;
            }
        }
        let hash_of = |i: usize| hashes.get(i % CANDIDATES).copied().unwrap_or(0);
        // The longest suffix already written.
        let written = self.buf.get(..self.len).unwrap_or_default();
        let mut fresh = count;
        let mut pointer = None;
        for i in first..count {
            let at = start_of(i);
            if let Some(offset) =
                self.names
                    .find(written, hash_of(i), wire.get(at..).unwrap_or_default())
            {
                fresh = i;
                pointer = Some((at, offset));
                break;
            }
        }
        let start = self.len;
        match pointer {
            Some((at, offset)) => {
                self.put(wire.get(..at).unwrap_or_default())?;
                self.put(&(0xC000 | offset).to_be_bytes())?;
            }
            None => self.put(wire)?,
        }
        for i in first..fresh {
            self.names.insert(hash_of(i), start + start_of(i));
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.len + bytes.len();
        let dst = self
            .buf
            .get_mut(self.len..end)
            .filter(|_| end <= self.limit)
            .ok_or(Error::new(ErrorKind::NoSpace, self.len))?;
        dst.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }
}

/// `count + 1`, or an error when a section would pass 65,535 entries.
fn bump(count: u16, at: usize) -> Result<u16> {
    count
        .checked_add(1)
        .ok_or(Error::new(ErrorKind::CountOverflow, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    fn encode(owners: &[&str], with_opt: bool) -> alloc::vec::Vec<u8> {
        let mut buf = [0u8; 512];
        let mut enc = Encoder::new(&mut buf, Header::default()).unwrap();
        for owner in owners {
            let name: Name = owner.parse().unwrap();
            enc.record(
                Section::Answer,
                &name,
                Type::A,
                Class::IN,
                60,
                &[192, 0, 2, 1],
            )
            .unwrap();
        }
        if with_opt {
            enc.record(
                Section::Additional,
                &Name::root(),
                Type::OPT,
                Class(1232),
                0,
                &[],
            )
            .unwrap();
        }
        let len = enc.finish();
        buf[..len].to_vec()
    }

    #[test]
    fn rfc1035_s4_1_4_records_of_one_rrset_point_at_the_first_owner() {
        let wire = encode(
            &["www.Example.com.", "www.Example.com.", "www.Example.com."],
            false,
        );
        // Header, one literal name (17 bytes), then two 2-byte pointers; 14 fixed bytes each.
        assert_eq!(wire.len(), 12 + 17 + 14 + 2 * (2 + 14));
        let msg = Message::parse(&wire).unwrap();
        for r in msg.answers() {
            assert_eq!(alloc::format!("{}", r.name()), "www.Example.com.");
        }
    }

    #[test]
    fn rfc6891_s6_1_2_root_owners_stay_one_zero_byte_before_opt() {
        let wire = encode(&[".", "."], true);
        assert_eq!(wire.len(), 12 + 3 * 11 + 4 * 2);
        let msg = Message::parse(&wire).unwrap();
        assert!(msg.edns().is_some());
    }

    #[test]
    fn rfc1035_s4_1_4_case_differences_are_not_compressed_away() {
        let wire = encode(&["a.example.", "A.example."], false);
        let msg = Message::parse(&wire).unwrap();
        let names: alloc::vec::Vec<_> = msg
            .answers()
            .map(|r| alloc::format!("{}", r.name()))
            .collect();
        assert_eq!(names, ["a.example.", "A.example."]);
    }
}
