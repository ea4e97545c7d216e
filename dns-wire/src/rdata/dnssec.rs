//! RDATA of the DNSSEC types (RFC 4034, RFC 5155) and TLSA (RFC 6698).

use alloc::vec::Vec;
use core::fmt;

use super::write_name;
use crate::error::{Error, ErrorKind, Result};
use crate::name::{Compression, NameRef};
use crate::reader::Reader;
use crate::text::{write_base32hex, write_base64, write_hex};
use crate::types::Type;

/// DS RDATA (RFC 4034 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ds<'a> {
    /// Key tag of the referenced DNSKEY.
    pub key_tag: u16,
    /// Algorithm of the referenced DNSKEY.
    pub algorithm: u8,
    /// Digest algorithm.
    pub digest_type: u8,
    /// The digest.
    pub digest: &'a [u8],
}

impl<'a> Ds<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            key_tag: r.u16("DS key tag")?,
            algorithm: r.u8("DS algorithm")?,
            digest_type: r.u8("DS digest type")?,
            digest: r.rest(),
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.key_tag.to_be_bytes());
        out.extend_from_slice(&[self.algorithm, self.digest_type]);
        out.extend_from_slice(self.digest);
    }
}

impl fmt::Display for Ds<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} ",
            self.key_tag, self.algorithm, self.digest_type
        )?;
        write_hex(f, self.digest)
    }
}

/// DNSKEY RDATA (RFC 4034 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dnskey<'a> {
    /// Flags (256 zone key, 257 zone key + secure entry point).
    pub flags: u16,
    /// Protocol, always 3.
    pub protocol: u8,
    /// Algorithm.
    pub algorithm: u8,
    /// The public key.
    pub public_key: &'a [u8],
}

impl<'a> Dnskey<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            flags: r.u16("DNSKEY flags")?,
            protocol: r.u8("DNSKEY protocol")?,
            algorithm: r.u8("DNSKEY algorithm")?,
            public_key: r.rest(),
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.flags.to_be_bytes());
        out.extend_from_slice(&[self.protocol, self.algorithm]);
        out.extend_from_slice(self.public_key);
    }
}

impl fmt::Display for Dnskey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {} ", self.flags, self.protocol, self.algorithm)?;
        write_base64(f, self.public_key)
    }
}

/// RRSIG RDATA (RFC 4034 §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rrsig<'a> {
    /// The type of the RRset covered.
    pub type_covered: Type,
    /// Algorithm.
    pub algorithm: u8,
    /// Labels in the original owner name.
    pub labels: u8,
    /// TTL of the covered RRset as signed.
    pub original_ttl: u32,
    /// End of validity, seconds since 1970 (serial arithmetic, RFC 4034 §3.1.5).
    pub expiration: u32,
    /// Start of validity, seconds since 1970.
    pub inception: u32,
    /// Key tag of the signing key.
    pub key_tag: u16,
    /// The zone that signed (never compressed).
    pub signer: NameRef<'a>,
    /// The signature.
    pub signature: &'a [u8],
}

impl<'a> Rrsig<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            type_covered: Type(r.u16("RRSIG type covered")?),
            algorithm: r.u8("RRSIG algorithm")?,
            labels: r.u8("RRSIG labels")?,
            original_ttl: r.u32("RRSIG original TTL")?,
            expiration: r.u32("RRSIG expiration")?,
            inception: r.u32("RRSIG inception")?,
            key_tag: r.u16("RRSIG key tag")?,
            signer: r.name(Compression::Forbidden)?,
            signature: r.rest(),
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.type_covered.0.to_be_bytes());
        out.extend_from_slice(&[self.algorithm, self.labels]);
        for v in [self.original_ttl, self.expiration, self.inception] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&self.key_tag.to_be_bytes());
        write_name(out, &self.signer);
        out.extend_from_slice(self.signature);
    }
}

/// `YYYYMMDDHHmmSS` in UTC for seconds since 1970 (RFC 4034 §3.2).
fn write_timestamp(f: &mut fmt::Formatter<'_>, secs: u32) -> fmt::Result {
    let days = i64::from(secs / 86_400);
    let rem = secs % 86_400;
    // Civil date from a day count (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    write!(
        f,
        "{year:04}{month:02}{day:02}{:02}{:02}{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

impl fmt::Display for Rrsig<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} ",
            self.type_covered, self.algorithm, self.labels, self.original_ttl
        )?;
        write_timestamp(f, self.expiration)?;
        f.write_str(" ")?;
        write_timestamp(f, self.inception)?;
        write!(f, " {} {} ", self.key_tag, self.signer)?;
        write_base64(f, self.signature)
    }
}

/// The type bit maps of NSEC and NSEC3 (RFC 4034 §4.1.2), validated: windows strictly
/// increasing, each 1 to 32 bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeBitmap<'a> {
    bytes: &'a [u8],
}

impl<'a> TypeBitmap<'a> {
    /// Validates `bytes` as a type bit map.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(bytes, 0);
        let mut last: Option<u8> = None;
        while r.remaining() > 0 {
            let at = r.pos();
            let window = r.u8("bitmap window")?;
            let len = r.u8("bitmap length")?;
            if last.is_some_and(|l| window <= l) {
                return Err(Error::new(
                    ErrorKind::BadRdata {
                        what: "bitmap windows out of order",
                    },
                    at,
                ));
            }
            if !(1..=32).contains(&len) {
                return Err(Error::new(
                    ErrorKind::BadRdata {
                        what: "bitmap length not 1 to 32",
                    },
                    at,
                ));
            }
            r.bytes(usize::from(len), "bitmap")?;
            last = Some(window);
        }
        Ok(Self { bytes })
    }

    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        let start = r.pos();
        Self::new(r.rest()).map_err(|e| Error::new(e.kind(), start + e.offset()))
    }

    /// The types present, in increasing order.
    pub fn types(&self) -> impl Iterator<Item = Type> + 'a {
        let mut r = Reader::new(self.bytes, 0);
        core::iter::from_fn(move || {
            let window = r.u8("window").ok()?;
            let len = r.u8("length").ok()?;
            let bits = r.bytes(usize::from(len), "bitmap").ok()?;
            Some((window, bits))
        })
        .flat_map(|(window, bits)| {
            bits.iter().enumerate().flat_map(move |(i, &byte)| {
                (0..8u16)
                    .filter(move |bit| byte & (0x80 >> bit) != 0)
                    .map(move |bit| Type(u16::from(window) << 8 | (i as u16) << 3 | bit))
            })
        })
    }

    /// The wire bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl fmt::Display for TypeBitmap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.types().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            t.fmt(f)?;
        }
        Ok(())
    }
}

/// NSEC RDATA (RFC 4034 §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nsec<'a> {
    /// The next owner name in canonical order (never compressed).
    pub next: NameRef<'a>,
    /// Types present at the owner.
    pub types: TypeBitmap<'a>,
}

impl<'a> Nsec<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            next: r.name(Compression::Forbidden)?,
            types: TypeBitmap::read(r)?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        write_name(out, &self.next);
        out.extend_from_slice(self.types.as_bytes());
    }
}

impl fmt::Display for Nsec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.next, self.types)
    }
}

/// Salt in presentation form: hex, or `-` when empty (RFC 5155 §3.3).
fn write_salt(f: &mut fmt::Formatter<'_>, salt: &[u8]) -> fmt::Result {
    if salt.is_empty() {
        f.write_str("-")
    } else {
        write_hex(f, salt)
    }
}

/// NSEC3 RDATA (RFC 5155 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nsec3<'a> {
    /// Hash algorithm (1 = SHA-1).
    pub hash_algorithm: u8,
    /// Flags (bit 0x01 = opt-out).
    pub flags: u8,
    /// Extra hash iterations.
    pub iterations: u16,
    /// Salt.
    pub salt: &'a [u8],
    /// Hash of the next owner name.
    pub next_hashed_owner: &'a [u8],
    /// Types present at the owner.
    pub types: TypeBitmap<'a>,
}

impl<'a> Nsec3<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            hash_algorithm: r.u8("NSEC3 hash algorithm")?,
            flags: r.u8("NSEC3 flags")?,
            iterations: r.u16("NSEC3 iterations")?,
            salt: r.character_string("NSEC3 salt")?,
            next_hashed_owner: r.character_string("NSEC3 next hashed owner")?,
            types: TypeBitmap::read(r)?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.hash_algorithm, self.flags]);
        out.extend_from_slice(&self.iterations.to_be_bytes());
        super::basic::write_character_string(out, self.salt);
        super::basic::write_character_string(out, self.next_hashed_owner);
        out.extend_from_slice(self.types.as_bytes());
    }
}

impl fmt::Display for Nsec3<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} ",
            self.hash_algorithm, self.flags, self.iterations
        )?;
        write_salt(f, self.salt)?;
        f.write_str(" ")?;
        write_base32hex(f, self.next_hashed_owner)?;
        if self.types.types().next().is_some() {
            write!(f, " {}", self.types)?;
        }
        Ok(())
    }
}

/// NSEC3PARAM RDATA (RFC 5155 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nsec3param<'a> {
    /// Hash algorithm.
    pub hash_algorithm: u8,
    /// Flags (zero in NSEC3PARAM).
    pub flags: u8,
    /// Extra hash iterations.
    pub iterations: u16,
    /// Salt.
    pub salt: &'a [u8],
}

impl<'a> Nsec3param<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            hash_algorithm: r.u8("NSEC3PARAM hash algorithm")?,
            flags: r.u8("NSEC3PARAM flags")?,
            iterations: r.u16("NSEC3PARAM iterations")?,
            salt: r.character_string("NSEC3PARAM salt")?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.hash_algorithm, self.flags]);
        out.extend_from_slice(&self.iterations.to_be_bytes());
        super::basic::write_character_string(out, self.salt);
    }
}

impl fmt::Display for Nsec3param<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} ",
            self.hash_algorithm, self.flags, self.iterations
        )?;
        write_salt(f, self.salt)
    }
}

/// TLSA RDATA (RFC 6698 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tlsa<'a> {
    /// Certificate usage.
    pub usage: u8,
    /// Selector (full certificate or public key).
    pub selector: u8,
    /// Matching type (exact, SHA-256, SHA-512).
    pub matching_type: u8,
    /// Certificate association data.
    pub data: &'a [u8],
}

impl<'a> Tlsa<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            usage: r.u8("TLSA usage")?,
            selector: r.u8("TLSA selector")?,
            matching_type: r.u8("TLSA matching type")?,
            data: r.rest(),
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[self.usage, self.selector, self.matching_type]);
        out.extend_from_slice(self.data);
    }
}

impl fmt::Display for Tlsa<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} ",
            self.usage, self.selector, self.matching_type
        )?;
        write_hex(f, self.data)
    }
}
