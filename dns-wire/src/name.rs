//! Domain names (RFC 1035 §3.1, §4.1.4; RFC 2181 §11).
//!
//! [`NameRef`] is a validated name inside a message, read lazily through compression pointers;
//! [`Name`] is an owned, uncompressed name stored inline (no allocation). Both keep label bytes
//! exactly as received and compare ASCII-case-insensitively.

use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::str::FromStr;

use crate::error::{Error, ErrorKind, Result};
use crate::text::{NAME_SPECIALS, write_escaped};

/// Longest label, in octets (RFC 1035 §2.3.4).
pub const MAX_LABEL_LEN: usize = 63;
/// Longest name in wire form, length bytes and the root byte included (RFC 1035 §2.3.4).
pub const MAX_NAME_LEN: usize = 255;
/// Most compression pointers one name may follow. Pointers must also point strictly
/// backwards, which alone guarantees termination; the cap bounds the work per name.
pub const MAX_POINTER_HOPS: usize = 127;

/// Whether a name may contain compression pointers where it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    /// Pointers are followed (owner names, and RDATA names of the types of RFC 3597 §4).
    Allowed,
    /// A pointer is an error (RDATA names of every other type).
    Forbidden,
}

/// The result of validating one name in place.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scanned {
    /// The offset right after the name where it is stored (after its first pointer, if any).
    pub(crate) end: usize,
}

/// Pointer targets already validated in one message, direct-mapped by offset: the
/// uncompressed length and pointer hops of the suffix stored there. A pointer to one of them
/// needs no second walk (compressed names mostly point at the same few suffixes).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Targets {
    slots: [Suffix; 16],
}

/// One validated suffix.
#[derive(Clone, Copy, Debug, Default)]
struct Suffix {
    /// Its offset + 1; 0 marks an empty slot.
    key: u16,
    /// Uncompressed length.
    len: u8,
    /// Pointers followed.
    hops: u8,
    /// The end of the furthest byte its walk read: it is valid in any prefix of the message
    /// at least this long (RDATA names are read in the message cut at the RDATA's end).
    reach: u16,
}

/// What a validated name or suffix adds up to: uncompressed length, pointer hops, and the
/// end of the furthest byte read.
#[derive(Clone, Copy, Debug)]
struct Totals {
    len: usize,
    hops: usize,
    reach: usize,
}

impl Targets {
    /// The suffix validated at `offset`, if it was validated within the first `limit` bytes.
    fn get(&self, offset: usize, limit: usize) -> Option<Totals> {
        let s = self.slots.get(offset % 16)?;
        let reach = usize::from(s.reach);
        (usize::from(s.key) == offset + 1 && reach <= limit).then_some(Totals {
            len: usize::from(s.len),
            hops: usize::from(s.hops),
            reach,
        })
    }

    /// Records a name validated from `start`, and the suffix at its first pointer's target
    /// when it had one (`(target, octets before the pointer)`). Either is a valid name on its
    /// own: a suffix reached by a pointer is checked against the same "strictly before its own
    /// segment" rule as a name starting there. (The suffix gets the whole name's reach, which
    /// is at least its own.)
    fn remember(&mut self, start: usize, first_jump: Option<(usize, usize)>, name: Totals) {
        if let Some((target, before)) = first_jump {
            self.put(
                target,
                Totals {
                    len: name.len - before,
                    hops: name.hops - 1,
                    reach: name.reach,
                },
            );
        }
        self.put(start, name);
    }

    fn put(&mut self, offset: usize, t: Totals) {
        if let (Ok(key), Ok(len), Ok(hops), Ok(reach), Some(slot)) = (
            u16::try_from(offset + 1),
            u8::try_from(t.len),
            u8::try_from(t.hops),
            u16::try_from(t.reach),
            self.slots.get_mut(offset % 16),
        ) {
            *slot = Suffix {
                key,
                len,
                hops,
                reach,
            };
        }
    }
}

/// Validates the name at `start` in `msg`: a loop, never recursion; every pointer must point
/// strictly before the label sequence that contains it; reserved label types are rejected;
/// the uncompressed name must fit 255 octets.
pub(crate) fn scan(msg: &[u8], start: usize, compression: Compression) -> Result<Scanned> {
    scan_with(msg, start, compression, &mut Targets::default())
}

/// [`scan`], reusing and extending what `targets` knows about validated pointer targets.
pub(crate) fn scan_with(
    msg: &[u8],
    start: usize,
    compression: Compression,
    targets: &mut Targets,
) -> Result<Scanned> {
    let mut pos = start;
    let mut segment_start = start;
    let mut end = None;
    let mut len = 0usize;
    let mut hops = 0usize;
    // The first pointer's target and the length before it, to remember the suffix there.
    let mut first_jump = None;
    // The end of the furthest byte read so far (segments end at a pointer or the root).
    let mut reach = start;
    loop {
        let &byte = msg
            .get(pos)
            .ok_or(Error::new(ErrorKind::UnexpectedEnd { what: "name" }, pos))?;
        match byte & 0xC0 {
            0x00 => {
                let label = usize::from(byte);
                len += label + 1;
                if len > MAX_NAME_LEN {
                    return Err(Error::new(ErrorKind::NameTooLong, pos));
                }
                if label == 0 {
                    let reach = reach.max(pos + 1);
                    targets.remember(start, first_jump, Totals { len, hops, reach });
                    let end = end.unwrap_or(pos + 1);
                    return Ok(Scanned { end });
                }
                if pos + 1 + label > msg.len() {
                    return Err(Error::new(ErrorKind::UnexpectedEnd { what: "label" }, pos));
                }
                pos += 1 + label;
            }
            0xC0 => {
                if compression == Compression::Forbidden {
                    return Err(Error::new(ErrorKind::UnexpectedPointer, pos));
                }
                let &low = msg.get(pos + 1).ok_or(Error::new(
                    ErrorKind::UnexpectedEnd {
                        what: "compression pointer",
                    },
                    pos,
                ))?;
                let target = usize::from(u16::from_be_bytes([byte & 0x3F, low]));
                if target >= segment_start {
                    return Err(Error::new(ErrorKind::BadPointer { target }, pos));
                }
                hops += 1;
                if hops > MAX_POINTER_HOPS {
                    return Err(Error::new(ErrorKind::TooManyPointers, pos));
                }
                let end = *end.get_or_insert(pos + 2);
                reach = reach.max(pos + 2);
                if let Some(rest) = targets.get(target, msg.len()) {
                    // The suffix there was validated: only the totals remain to check.
                    if len + rest.len > MAX_NAME_LEN {
                        return Err(Error::new(ErrorKind::NameTooLong, pos));
                    }
                    if hops + rest.hops > MAX_POINTER_HOPS {
                        return Err(Error::new(ErrorKind::TooManyPointers, pos));
                    }
                    let name = Totals {
                        len: len + rest.len,
                        hops: hops + rest.hops,
                        reach: reach.max(rest.reach),
                    };
                    targets.remember(start, first_jump, name);
                    return Ok(Scanned { end });
                }
                first_jump.get_or_insert((target, len));
                segment_start = target;
                pos = target;
            }
            _ => return Err(Error::new(ErrorKind::ReservedLabelType(byte), pos)),
        }
    }
}

/// [`scan_with`] for an owner name (pointers allowed), returning the offset after it, with
/// fast paths for the two most common cases: the root (OPT records), and a lone pointer to a
/// suffix already validated. That needs no walk: the suffix fits 255 octets and took at most
/// 126 hops, so one more hop and no label before it cannot break a limit.
#[inline]
pub(crate) fn scan_owner(msg: &[u8], start: usize, targets: &mut Targets) -> Result<usize> {
    if msg.get(start) == Some(&0) {
        return Ok(start + 1);
    }
    if let Some(&[high, low]) = msg.get(start..).and_then(|rest| rest.first_chunk::<2>()) {
        let target = usize::from(u16::from_be_bytes([high & 0x3F, low]));
        if high & 0xC0 == 0xC0 && target < start && targets.get(target, msg.len()).is_some() {
            return Ok(start + 2);
        }
    }
    scan_with(msg, start, Compression::Allowed, targets).map(|scanned| scanned.end)
}

/// The offset right after the name stored at `start`, without following pointers. Only for
/// names that [`scan`] already validated.
pub(crate) fn skip(msg: &[u8], mut pos: usize) -> usize {
    while let Some(&byte) = msg.get(pos) {
        match byte {
            0 => return pos + 1,
            0xC0..=0xFF => return pos + 2,
            label => pos += 1 + usize::from(label),
        }
    }
    pos
}

/// The labels of a validated name, following compression pointers; the root label is not
/// yielded.
#[derive(Clone, Debug)]
pub struct Labels<'a> {
    msg: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Labels<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        loop {
            let byte = *self.msg.get(self.pos)?;
            if byte >= 0xC0 {
                let low = *self.msg.get(self.pos + 1)?;
                self.pos = usize::from(u16::from_be_bytes([byte & 0x3F, low]));
                continue;
            }
            if byte == 0 {
                self.pos = self.msg.len();
                return None;
            }
            let start = self.pos + 1;
            let end = start + usize::from(byte);
            self.pos = end;
            return self.msg.get(start..end);
        }
    }
}

/// The stored runs of a validated name, following compression pointers: each run is labels
/// exactly as they sit in the message, without the pointer that ends it; the last run ends
/// with the root byte. Together they are the uncompressed wire form.
#[derive(Clone, Debug)]
pub(crate) struct Segments<'a> {
    msg: &'a [u8],
    /// Where the next run starts; `None` after the last.
    pos: Option<usize>,
}

impl<'a> Iterator for Segments<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.pos.take()?;
        let mut pos = start;
        loop {
            match *self.msg.get(pos)? {
                0 => return self.msg.get(start..=pos),
                byte @ 0xC0..=0xFF => {
                    let low = *self.msg.get(pos + 1)?;
                    self.pos = Some(usize::from(u16::from_be_bytes([byte & 0x3F, low])));
                    return self.msg.get(start..pos);
                }
                label => pos += 1 + usize::from(label),
            }
        }
    }
}

/// A validated name inside a message (or inside uncompressed RDATA): borrowed, lazy, with
/// compression pointers followed on demand.
#[derive(Clone, Copy, Debug)]
pub struct NameRef<'a> {
    msg: &'a [u8],
    start: usize,
}

impl<'a> NameRef<'a> {
    /// Validates the name at `start` in `msg` and returns it with the offset after it.
    pub(crate) fn read(
        msg: &'a [u8],
        start: usize,
        compression: Compression,
    ) -> Result<(Self, usize)> {
        let scanned = scan(msg, start, compression)?;
        Ok((Self::validated(msg, start), scanned.end))
    }

    /// A name that [`scan`] already validated.
    pub(crate) const fn validated(msg: &'a [u8], start: usize) -> Self {
        Self { msg, start }
    }

    /// The labels, left to right, without the root.
    pub fn labels(&self) -> Labels<'a> {
        Labels {
            msg: self.msg,
            pos: self.start,
        }
    }

    /// The offset of the name in its message.
    pub const fn offset(&self) -> usize {
        self.start
    }

    /// Length of the uncompressed wire form (length bytes and root included).
    pub fn wire_len(&self) -> usize {
        self.labels().map(|l| l.len() + 1).sum::<usize>() + 1
    }

    /// Whether this is the root name.
    pub fn is_root(&self) -> bool {
        self.labels().next().is_none()
    }

    /// Number of labels, the root excluded.
    pub fn label_count(&self) -> usize {
        self.labels().count()
    }

    /// The stored runs that make up the uncompressed wire form (see [`Segments`]).
    pub(crate) fn segments(&self) -> Segments<'a> {
        Segments {
            msg: self.msg,
            pos: Some(self.start),
        }
    }

    /// The wire bytes of the name when it is stored without compression pointers (always the
    /// case for names in standalone uncompressed RDATA), without copying.
    pub fn uncompressed(&self) -> Option<&'a [u8]> {
        let mut pos = self.start;
        loop {
            match *self.msg.get(pos)? {
                0 => return self.msg.get(self.start..=pos),
                len @ 1..=0x3F => pos += 1 + usize::from(len),
                _ => return None,
            }
        }
    }

    /// An owned, uncompressed copy with the case kept.
    pub fn to_name(&self) -> Name {
        let mut name = Name::root();
        self.write_into(&mut name);
        name
    }

    /// Overwrites `name` with this name (no intermediate copy of the 256-byte `Name`).
    pub(crate) fn write_into(&self, name: &mut Name) {
        let mut len = 0usize;
        for run in self.segments() {
            // A validated name fits: its wire length is at most 255.
            let Some(dst) = name.bytes.get_mut(len..len + run.len()) else {
                break;
            };
            dst.copy_from_slice(run);
            len += run.len();
        }
        name.len = len as u8;
    }

    /// Case-insensitive comparison of two names (RFC 1035 §2.3.3, RFC 4343).
    pub fn eq_ignore_case(&self, other: &NameRef<'_>) -> bool {
        // Uncompressed, both are one run of bytes. Length octets are at most 0x3F, below
        // every upper-case letter, so folding the whole run folds exactly the label bytes.
        if let (Some(a), Some(b)) = (self.uncompressed(), other.uncompressed()) {
            return a.eq_ignore_ascii_case(b);
        }
        let mut a = self.labels();
        let mut b = other.labels();
        loop {
            match (a.next(), b.next()) {
                (None, None) => return true,
                (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => {}
                _ => return false,
            }
        }
    }
}

impl PartialEq for NameRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.eq_ignore_case(other)
    }
}

impl Eq for NameRef<'_> {}

impl fmt::Display for NameRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_root() {
            return f.write_str(".");
        }
        for label in self.labels() {
            write_escaped(f, label, NAME_SPECIALS)?;
            f.write_str(".")?;
        }
        Ok(())
    }
}

/// An owned domain name in uncompressed wire form, stored inline (255 bytes, no allocation).
///
/// Equality, ordering and hashing ignore ASCII case; the bytes keep the case they were given.
#[derive(Clone, Copy)]
pub struct Name {
    bytes: [u8; MAX_NAME_LEN],
    len: u8,
}

impl Name {
    /// The root name `.`.
    pub const fn root() -> Self {
        Self {
            bytes: [0; MAX_NAME_LEN],
            len: 1,
        }
    }

    /// A name from its labels (left to right, without the root).
    pub fn from_labels<'l>(labels: impl IntoIterator<Item = &'l [u8]>) -> Result<Self> {
        let mut name = Self::root();
        let mut len = 0usize;
        for label in labels {
            if label.len() > MAX_LABEL_LEN {
                return Err(Error::new(ErrorKind::LabelTooLong, len));
            }
            if label.is_empty() {
                return Err(Error::new(
                    ErrorKind::BadText {
                        what: "empty label",
                    },
                    len,
                ));
            }
            let next = len + 1 + label.len();
            let dst = name
                .bytes
                .get_mut(len..next)
                .filter(|_| next < MAX_NAME_LEN)
                .ok_or(Error::new(ErrorKind::NameTooLong, len))?;
            if let Some((first, rest)) = dst.split_first_mut() {
                *first = label.len() as u8;
                rest.copy_from_slice(label);
            }
            len = next;
        }
        name.len = (len + 1) as u8;
        Ok(name)
    }

    /// Reads an uncompressed name from the start of `wire` (pointers are rejected).
    pub fn from_wire(wire: &[u8]) -> Result<Self> {
        let (name, _) = NameRef::read(wire, 0, Compression::Forbidden)?;
        Ok(name.to_name())
    }

    /// The uncompressed wire form.
    pub fn as_wire(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }

    /// A borrowed view of this name.
    pub fn as_ref(&self) -> NameRef<'_> {
        NameRef::validated(self.as_wire(), 0)
    }

    /// The labels, left to right, without the root.
    pub fn labels(&self) -> Labels<'_> {
        self.as_ref().labels()
    }

    /// Length of the wire form.
    pub fn wire_len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether this is the root name.
    pub fn is_root(&self) -> bool {
        self.len == 1
    }

    /// The same name in ASCII lower case.
    pub fn to_lowercase(&self) -> Self {
        let mut out = *self;
        lowercase_wire(&mut out.bytes[..]);
        out
    }
}

/// Lower-cases the label bytes of an uncompressed wire name in place (length bytes are below
/// 64, never ASCII upper case, so a plain byte-wise pass is exact).
pub(crate) fn lowercase_wire(wire: &mut [u8]) {
    wire.make_ascii_lowercase();
}

impl Default for Name {
    fn default() -> Self {
        Self::root()
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.as_wire().eq_ignore_ascii_case(other.as_wire())
    }
}

impl Eq for Name {}

impl PartialEq<NameRef<'_>> for Name {
    fn eq(&self, other: &NameRef<'_>) -> bool {
        self.as_ref().eq_ignore_case(other)
    }
}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for b in self.as_wire() {
            state.write_u8(b.to_ascii_lowercase());
        }
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    /// Orders by lower-cased wire bytes (a total order consistent with `Eq`; not the
    /// canonical DNSSEC order of RFC 4034 §6.1).
    fn cmp(&self, other: &Self) -> Ordering {
        let a = self.as_wire().iter().map(u8::to_ascii_lowercase);
        let b = other.as_wire().iter().map(u8::to_ascii_lowercase);
        a.cmp(b)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

impl FromStr for Name {
    type Err = Error;

    /// Reads presentation form (RFC 1035 §5.1): labels separated by dots, `\X` for a literal
    /// byte and `\DDD` for a decimal byte value. A trailing dot is optional: every name is
    /// taken as fully qualified. Error offsets are byte indices into `text`.
    fn from_str(text: &str) -> Result<Self> {
        if text == "." {
            return Ok(Self::root());
        }
        let mut name = Self::root();
        let mut len_at = 0usize; // index of the current label's length byte
        let mut pos = 1usize; // next index to write
        let mut chars = text.bytes().enumerate();
        let close_label = |name: &mut Self, len_at: usize, pos: usize, at: usize| -> Result<()> {
            let label = pos - len_at - 1;
            if label == 0 {
                return Err(Error::new(
                    ErrorKind::BadText {
                        what: "empty label",
                    },
                    at,
                ));
            }
            if let Some(slot) = name.bytes.get_mut(len_at) {
                *slot = label as u8;
            }
            Ok(())
        };
        while let Some((at, byte)) = chars.next() {
            let byte = match byte {
                b'.' => {
                    close_label(&mut name, len_at, pos, at)?;
                    len_at = pos;
                    pos += 1;
                    continue;
                }
                b'\\' => unescape(&mut chars, at)?,
                other => other,
            };
            if pos - len_at > MAX_LABEL_LEN {
                return Err(Error::new(ErrorKind::LabelTooLong, at));
            }
            let slot = name
                .bytes
                .get_mut(pos)
                .ok_or(Error::new(ErrorKind::NameTooLong, at))?;
            *slot = byte;
            pos += 1;
        }
        if pos - len_at > 1 {
            close_label(&mut name, len_at, pos, text.len())?;
            len_at = pos;
        }
        let root = name
            .bytes
            .get_mut(len_at)
            .ok_or(Error::new(ErrorKind::NameTooLong, text.len()))?;
        *root = 0;
        name.len =
            u8::try_from(len_at + 1).map_err(|_| Error::new(ErrorKind::NameTooLong, text.len()))?;
        Ok(name)
    }
}

/// The byte after a backslash at `at`: `\DDD` (decimal, at most 255) or `\X`.
fn unescape(chars: &mut impl Iterator<Item = (usize, u8)>, at: usize) -> Result<u8> {
    let bad = |what| Error::new(ErrorKind::BadText { what }, at);
    match chars.next() {
        Some((_, d0)) if d0.is_ascii_digit() => {
            let mut value = u32::from(d0 - b'0');
            for _ in 0..2 {
                match chars.next() {
                    Some((_, d)) if d.is_ascii_digit() => value = value * 10 + u32::from(d - b'0'),
                    _ => return Err(bad("\\DDD needs three digits")),
                }
            }
            u8::try_from(value).map_err(|_| bad("\\DDD above 255"))
        }
        Some((_, other)) => Ok(other),
        None => Err(bad("backslash at the end")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    /// The uncompressed length of the name at `start`, or why it is invalid.
    fn wire(msg: &[u8], start: usize) -> Result<usize> {
        NameRef::read(msg, start, Compression::Allowed).map(|(n, _)| n.wire_len())
    }

    #[test]
    fn rfc1035_s4_1_4_pointer_to_an_earlier_name() {
        let mut msg = [0u8; 12].to_vec();
        msg.extend_from_slice(b"\x03www\x07example\x03com\x00\x03ftp\xc0\x10");
        let (name, end) = NameRef::read(&msg, 29, Compression::Allowed).unwrap();
        assert_eq!(end, msg.len());
        assert_eq!(name.to_string(), "ftp.example.com.");
        assert_eq!(name.wire_len(), 17);
    }

    #[test]
    fn rfc1035_s4_1_4_self_pointer_is_rejected() {
        let mut msg = [0u8; 12].to_vec();
        msg.extend_from_slice(&[0xC0, 0x0C]);
        assert_eq!(
            wire(&msg, 12).unwrap_err().kind(),
            ErrorKind::BadPointer { target: 12 }
        );
    }

    #[test]
    fn rfc1035_s4_1_4_forward_pointer_is_rejected() {
        let msg = [0xC0, 0x04, 0, 0, 0];
        assert_eq!(
            wire(&msg, 0).unwrap_err().kind(),
            ErrorKind::BadPointer { target: 4 }
        );
    }

    #[test]
    fn rfc1035_s4_1_4_pointer_into_own_labels_is_rejected() {
        // "a" then a pointer back to the start of the same name: a loop.
        let msg = [1, b'a', 0xC0, 0x00];
        assert_eq!(
            wire(&msg, 0).unwrap_err().kind(),
            ErrorKind::BadPointer { target: 0 }
        );
    }

    #[test]
    fn rfc1035_s4_1_4_loop_a_to_b_to_a_is_rejected() {
        // offset 0: "x" -> pointer to 4; offset 4: "y" -> pointer to 0.
        let msg = [1, b'x', 0xC0, 0x04, 1, b'y', 0xC0, 0x00];
        assert!(wire(&msg, 4).is_err());
        assert!(wire(&msg, 0).is_err());
    }

    #[test]
    fn rfc1035_s4_1_4_short_backward_pointer_is_legal() {
        // domain PR #636: a pointer fewer than 12 bytes back is fine.
        let msg = [0, 0xC0, 0x00];
        assert_eq!(wire(&msg, 1).unwrap(), 1);
    }

    #[test]
    fn rfc1035_s4_1_4_reserved_label_types_are_rejected() {
        for byte in [0x40, 0x80] {
            assert_eq!(
                wire(&[byte, 0], 0).unwrap_err().kind(),
                ErrorKind::ReservedLabelType(byte)
            );
        }
    }

    #[test]
    fn pointer_chains_are_capped() {
        // 200 pointers, each to the one before: strictly backwards, but too many hops.
        let mut msg = alloc::vec![0u8];
        for i in 0..200u16 {
            let target = if i == 0 { 0 } else { 1 + 2 * (i - 1) };
            msg.extend_from_slice(&(0xC000 | target).to_be_bytes());
        }
        let last = msg.len() - 2;
        assert_eq!(
            wire(&msg, last).unwrap_err().kind(),
            ErrorKind::TooManyPointers
        );
        assert!(wire(&msg, 1 + 2 * 100).is_ok());
    }

    #[test]
    fn rfc1035_s2_3_4_names_over_255_octets_are_rejected() {
        let mut msg = alloc::vec::Vec::new();
        for _ in 0..4 {
            msg.push(63);
            msg.extend_from_slice(&[b'a'; 63]);
        }
        msg.push(0);
        assert_eq!(wire(&msg, 0).unwrap_err().kind(), ErrorKind::NameTooLong);
        // 3 x 64 + 62 + 1 = 255 is the longest legal name.
        let mut ok = msg[..192].to_vec();
        ok.push(61);
        ok.extend_from_slice(&[b'b'; 61]);
        ok.push(0);
        assert_eq!(wire(&ok, 0).unwrap(), 255);
    }

    #[test]
    fn truncated_label_is_an_error() {
        assert_eq!(
            wire(&[5, b'a', b'b'], 0).unwrap_err().kind(),
            ErrorKind::UnexpectedEnd { what: "label" }
        );
    }

    #[test]
    fn rfc2181_s11_any_byte_is_a_label_byte() {
        let name = Name::from_wire(b"\x03a.\xff\x00").unwrap();
        assert_eq!(name.to_string(), r"a\.\255.");
        assert_eq!(
            "a\\.\\255".parse::<Name>().unwrap().as_wire(),
            name.as_wire()
        );
    }

    #[test]
    fn rfc4343_comparison_ignores_case_but_keeps_bytes() {
        let a: Name = "WWW.Example.COM.".parse().unwrap();
        let b: Name = "www.example.com".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "WWW.Example.COM.");
        assert_eq!(a.to_lowercase().as_wire(), b.as_wire());
    }

    #[test]
    fn rfc4343_comparison_of_compressed_and_uncompressed_forms() {
        // "WWW.Example.COM." at 12, "ftp" + pointer to "Example.COM." at 29, and an
        // uncompressed "ftp.example.com." at 35.
        let mut msg = [0u8; 12].to_vec();
        msg.extend_from_slice(b"\x03WWW\x07Example\x03COM\x00\x03ftp\xc0\x10");
        msg.extend_from_slice(b"\x03FTP\x07example\x03com\x00\x03www\x07example\x02co\x00");
        let at = |start| NameRef::read(&msg, start, Compression::Allowed).unwrap().0;
        let (www, ftp_compressed, ftp, www_co) = (at(12), at(29), at(35), at(52));
        assert!(ftp.uncompressed().is_some() && ftp_compressed.uncompressed().is_none());
        assert!(ftp_compressed.eq_ignore_case(&ftp));
        assert!(ftp.eq_ignore_case(&ftp_compressed));
        assert!(!www.eq_ignore_case(&ftp));
        assert!(!www.eq_ignore_case(&www_co), "a shorter last label");
        assert!(!www_co.eq_ignore_case(&www));
        // Label boundaries count: "a.bc." is not "ab.c." (same bytes apart from lengths).
        let split = b"\x01a\x02bc\x00\x02ab\x01c\x00";
        let a = NameRef::read(split, 0, Compression::Allowed).unwrap().0;
        let b = NameRef::read(split, 5, Compression::Allowed).unwrap().0;
        assert!(!a.eq_ignore_case(&b));
    }

    #[test]
    fn rfc1035_s5_1_presentation_form_errors() {
        assert_eq!(
            "a..b".parse::<Name>().unwrap_err().kind(),
            ErrorKind::BadText {
                what: "empty label"
            }
        );
        let long = "a".repeat(64);
        assert_eq!(
            long.parse::<Name>().unwrap_err().kind(),
            ErrorKind::LabelTooLong
        );
        assert!("a".repeat(63).parse::<Name>().is_ok());
        let too_long = ["a".repeat(63).as_str(); 4].join(".");
        assert_eq!(
            too_long.parse::<Name>().unwrap_err().kind(),
            ErrorKind::NameTooLong
        );
        assert!("\\256".parse::<Name>().is_err());
        assert_eq!(".".parse::<Name>().unwrap(), Name::root());
    }
}
