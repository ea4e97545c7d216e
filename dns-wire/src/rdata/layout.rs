//! Where names sit inside the RDATA of the types whose names may be compressed
//! (RFC 3597 §4), and the two rules built on it:
//!
//! - **decode**: names are decompressed in the RFC 1035 types (CNAME, MB, MD, MF, MG, MINFO,
//!   MR, MX, NS, PTR, SOA) and, as RFC 3597 §4 recommends for old servers, in RP, AFSDB, RT,
//!   SIG, PX, NXT, NAPTR and SRV;
//! - **encode**: names are compressed only in the RFC 1035 types.
//!
//! Every other type is opaque: its bytes are copied unchanged, and a pointer inside a typed
//! view of it is malformed data.

use crate::bytes::RdataBytes;
use crate::error::{Error, ErrorKind, Result};
use crate::name::{self, Compression, NameRef, Targets};
use crate::reader::Reader;
use crate::types::Type;

/// One field of an RDATA layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// A fixed number of bytes.
    Fixed(usize),
    /// A domain name, possibly compressed.
    Name,
    /// A `<character-string>`.
    CharacterString,
    /// The rest of the RDATA, opaque.
    Rest,
}

use Field::{CharacterString as Cs, Fixed, Name, Rest};

/// The layout of `rtype`'s RDATA when it holds names that may be compressed (RFC 3597 §4).
pub fn name_layout(rtype: Type) -> Option<&'static [Field]> {
    Some(match rtype {
        Type::NS
        | Type::MD
        | Type::MF
        | Type::CNAME
        | Type::MB
        | Type::MG
        | Type::MR
        | Type::PTR => &[Name],
        Type::MINFO | Type::RP => &[Name, Name],
        Type::MX | Type::AFSDB | Type::RT => &[Fixed(2), Name],
        Type::SOA => &[Name, Name, Fixed(20)],
        Type::PX => &[Fixed(2), Name, Name],
        Type::SRV => &[Fixed(6), Name],
        Type::NAPTR => &[Fixed(4), Cs, Cs, Cs, Name],
        Type::SIG => &[Fixed(18), Name, Rest],
        Type::NXT => &[Name, Rest],
        _ => return None,
    })
}

/// Whether names in `rtype`'s RDATA are followed through pointers when decoding.
pub fn decompresses(rtype: Type) -> bool {
    name_layout(rtype).is_some()
}

/// Whether names in `rtype`'s RDATA are compressed when encoding: the RFC 1035 types only.
pub fn compresses(rtype: Type) -> bool {
    matches!(
        rtype,
        Type::NS
            | Type::MD
            | Type::MF
            | Type::CNAME
            | Type::MB
            | Type::MG
            | Type::MR
            | Type::PTR
            | Type::MINFO
            | Type::MX
            | Type::SOA
    )
}

/// A piece of RDATA handed out by [`walk`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Part<'a> {
    /// Opaque bytes, copied as they are.
    Bytes(&'a [u8]),
    /// A name, which may have been compressed.
    Name(NameRef<'a>),
}

/// Whether every name field of `rtype`'s RDATA `msg[start..end]` is a valid name (read in
/// `msg[..end]`, as [`walk`] and `RData::parse` read it), for the types with a name layout;
/// `targets` holds the suffixes validated so far in `msg` and learns these names. `true` lets
/// later reads of this RDATA skip its names instead of validating them again.
#[inline]
pub(crate) fn names_valid(
    rtype: Type,
    msg: &[u8],
    start: usize,
    end: usize,
    targets: &mut Targets,
) -> bool {
    match name_layout(rtype) {
        Some(layout) => layout_names_valid(layout, msg, start, end, targets),
        None => true,
    }
}

/// [`names_valid`] for the types with a name layout.
fn layout_names_valid(
    layout: &[Field],
    msg: &[u8],
    start: usize,
    end: usize,
    targets: &mut Targets,
) -> bool {
    let Some(buf) = msg.get(..end) else {
        return false;
    };
    let mut r = Reader::new(buf, start);
    for field in layout {
        let read = match *field {
            Fixed(n) => r.bytes(n, "RDATA field").is_ok(),
            Name => match name::scan_with(buf, r.pos(), Compression::Allowed, targets) {
                Ok(scanned) => {
                    r = Reader::new(buf, scanned.end);
                    true
                }
                Err(_) => false,
            },
            Cs => r.character_string("RDATA string").is_ok(),
            Rest => true,
        };
        if !read {
            return false;
        }
    }
    true
}

/// Visits the RDATA `msg[start..end]` of a type with a name layout, field by field. Fails
/// unless the layout fills the RDATA exactly. `names_checked`: [`names_valid`] said so.
pub(crate) fn walk<'a>(
    layout: &[Field],
    msg: &'a [u8],
    start: usize,
    end: usize,
    names_checked: bool,
    mut visit: impl FnMut(Part<'a>) -> Result<()>,
) -> Result<()> {
    let buf = msg.get(..end).ok_or(Error::new(
        ErrorKind::UnexpectedEnd { what: "RDATA" },
        msg.len(),
    ))?;
    let mut r = Reader::with_names_checked(buf, start, names_checked);
    for field in layout {
        match *field {
            Fixed(n) => visit(Part::Bytes(r.bytes(n, "RDATA field")?))?,
            Name => visit(Part::Name(r.name(Compression::Allowed)?))?,
            Cs => {
                let at = r.pos();
                r.character_string("RDATA string")?;
                visit(Part::Bytes(buf.get(at..r.pos()).unwrap_or_default()))?;
            }
            Rest => visit(Part::Bytes(r.rest()))?,
        }
    }
    if r.remaining() != 0 {
        return Err(Error::new(ErrorKind::RdataLengthMismatch, r.pos()));
    }
    Ok(())
}

/// Appends the RDATA `msg[start..end]` of `rtype` with every name decompressed (decode rule
/// above); RDATA of other types is copied unchanged. `names_checked`: [`names_valid`] said so.
pub(crate) fn decompress_into(
    rtype: Type,
    msg: &[u8],
    start: usize,
    end: usize,
    names_checked: bool,
    out: &mut RdataBytes,
) -> Result<()> {
    match name_layout(rtype) {
        Some(layout) => walk(layout, msg, start, end, names_checked, |part| {
            match part {
                Part::Bytes(b) => out.extend_from_slice(b),
                Part::Name(n) => n.segments().for_each(|run| out.extend_from_slice(run)),
            }
            Ok(())
        }),
        None => {
            let bytes = msg.get(start..end).ok_or(Error::new(
                ErrorKind::UnexpectedEnd { what: "RDATA" },
                start,
            ))?;
            out.extend_from_slice(bytes);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3597_s4_decode_set_is_wider_than_encode_set() {
        for t in [
            Type::SRV,
            Type::NAPTR,
            Type::RP,
            Type::AFSDB,
            Type::RT,
            Type::PX,
            Type::SIG,
            Type::NXT,
        ] {
            assert!(decompresses(t) && !compresses(t), "{t}");
        }
        for t in [
            Type::NS,
            Type::CNAME,
            Type::SOA,
            Type::MX,
            Type::PTR,
            Type::MINFO,
            Type::MB,
        ] {
            assert!(decompresses(t) && compresses(t), "{t}");
        }
        for t in [
            Type::DNAME,
            Type::RRSIG,
            Type::NSEC,
            Type::SVCB,
            Type::HTTPS,
            Type(65280),
        ] {
            assert!(!decompresses(t) && !compresses(t), "{t}");
        }
    }

    #[test]
    fn a_cached_suffix_that_reads_past_the_rdata_end_is_walked_again() {
        // Three answers, no question. 12: opaque RDATA holding one length byte (20) at 23, so
        // the name at 23 reads to the root at 44, past the next record's end. 24: owner
        // pointer to 23 (valid in the whole message, so cached), CNAME RDATA at 36 pointing
        // to 23 too, which must fail in the message cut at 38 as a fresh walk does. 38: a
        // root-owned record whose TTL holds the root byte at 44.
        let mut msg = alloc::vec![0, 0, 0x80, 0, 0, 0, 0, 3, 0, 0, 0, 0];
        msg.extend_from_slice(&[0, 0xFF, 0, 0, 1, 0, 0, 0, 0, 0, 1, 20]);
        msg.extend_from_slice(&[0xC0, 23, 0, 5, 0, 1, 0, 0, 0, 0, 0, 2, 0xC0, 23]);
        msg.extend_from_slice(&[0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
        let parsed = crate::Message::parse(&msg).unwrap();
        let cname = parsed.answers().nth(1).unwrap();
        assert_eq!(cname.rdata_offset(), 36);
        let fresh = crate::RData::parse(Type::CNAME, &msg, 36, 38);
        assert!(fresh.is_err());
        assert_eq!(cname.data(), fresh);
        assert!(crate::OwnedMessage::parse(&msg).is_err());
    }

    #[test]
    fn rfc3597_s4_srv_target_is_decompressed_on_decode() {
        // offset 0: "a" + root; SRV RDATA at 3: 6 fixed bytes then a pointer to 0.
        let msg = [1, b'a', 0, 0, 1, 0, 2, 0, 3, 0xC0, 0x00];
        let mut out = RdataBytes::new();
        decompress_into(Type::SRV, &msg, 3, msg.len(), false, &mut out).unwrap();
        assert_eq!(out.as_slice(), [0, 1, 0, 2, 0, 3, 1, b'a', 0]);
    }
}
