//! RDATA of the classic types: SOA, MX, TXT, HINFO (RFC 1035), SRV (RFC 2782), NAPTR
//! (RFC 3403) and CAA (RFC 8659).

use alloc::vec::Vec;
use core::fmt;

use super::write_name;
use crate::error::{Error, ErrorKind, Result};
use crate::name::{Compression, NameRef};
use crate::reader::Reader;
use crate::text::write_quoted;

/// SOA RDATA (RFC 1035 §3.3.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Soa<'a> {
    /// Primary name server of the zone.
    pub mname: NameRef<'a>,
    /// Mailbox of the person responsible, as a name.
    pub rname: NameRef<'a>,
    /// Zone serial number.
    pub serial: u32,
    /// Seconds before the zone should be refreshed.
    pub refresh: u32,
    /// Seconds before a failed refresh is retried.
    pub retry: u32,
    /// Seconds after which the zone is no longer authoritative.
    pub expire: u32,
    /// TTL of negative answers (RFC 2308 §4).
    pub minimum: u32,
}

impl<'a> Soa<'a> {
    pub(super) fn read(r: &mut Reader<'a>, c: Compression) -> Result<Self> {
        Ok(Self {
            mname: r.name(c)?,
            rname: r.name(c)?,
            serial: r.u32("SOA serial")?,
            refresh: r.u32("SOA refresh")?,
            retry: r.u32("SOA retry")?,
            expire: r.u32("SOA expire")?,
            minimum: r.u32("SOA minimum")?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        write_name(out, &self.mname);
        write_name(out, &self.rname);
        for v in [
            self.serial,
            self.refresh,
            self.retry,
            self.expire,
            self.minimum,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }
}

impl fmt::Display for Soa<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {} {}",
            self.mname,
            self.rname,
            self.serial,
            self.refresh,
            self.retry,
            self.expire,
            self.minimum
        )
    }
}

/// MX RDATA (RFC 1035 §3.3.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mx<'a> {
    /// Lower is preferred.
    pub preference: u16,
    /// The mail exchanger.
    pub exchange: NameRef<'a>,
}

impl<'a> Mx<'a> {
    pub(super) fn read(r: &mut Reader<'a>, c: Compression) -> Result<Self> {
        Ok(Self {
            preference: r.u16("MX preference")?,
            exchange: r.name(c)?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.preference.to_be_bytes());
        write_name(out, &self.exchange);
    }
}

impl fmt::Display for Mx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.preference, self.exchange)
    }
}

/// A sequence of `<character-string>`s (TXT RDATA, RFC 1035 §3.3.14), validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CharacterStrings<'a> {
    bytes: &'a [u8],
}

impl<'a> CharacterStrings<'a> {
    /// Validates `bytes` as length-prefixed strings that fill it exactly.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(bytes, 0);
        while r.remaining() > 0 {
            r.character_string("TXT string")?;
        }
        Ok(Self { bytes })
    }

    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        let start = r.pos();
        let strings = Self::new(r.rest()).map_err(|e| Error::new(e.kind(), start + e.offset()))?;
        Ok(strings)
    }

    /// The strings, without their length bytes.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let mut r = Reader::new(self.bytes, 0);
        core::iter::from_fn(move || r.character_string("TXT string").ok())
    }

    /// The wire bytes, length bytes included.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl fmt::Display for CharacterStrings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write_quoted(f, s)?;
        }
        Ok(())
    }
}

/// HINFO RDATA (RFC 1035 §3.3.2; RFC 8482 §4.2 reuses it for minimal ANY answers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hinfo<'a> {
    /// CPU type.
    pub cpu: &'a [u8],
    /// Operating system.
    pub os: &'a [u8],
}

impl<'a> Hinfo<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        Ok(Self {
            cpu: r.character_string("HINFO cpu")?,
            os: r.character_string("HINFO os")?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        write_character_string(out, self.cpu);
        write_character_string(out, self.os);
    }
}

impl fmt::Display for Hinfo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_quoted(f, self.cpu)?;
        f.write_str(" ")?;
        write_quoted(f, self.os)
    }
}

/// Appends a `<character-string>`; longer input is cut at 255 bytes, the most one can hold.
pub(crate) fn write_character_string(out: &mut Vec<u8>, s: &[u8]) {
    let s = s.get(..255).unwrap_or(s);
    out.push(s.len() as u8);
    out.extend_from_slice(s);
}

/// SRV RDATA (RFC 2782).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Srv<'a> {
    /// Lower is tried first.
    pub priority: u16,
    /// Relative weight among equal priorities.
    pub weight: u16,
    /// Service port.
    pub port: u16,
    /// The host (never compressed on encode; decompressed on decode, RFC 3597 §4).
    pub target: NameRef<'a>,
}

impl<'a> Srv<'a> {
    pub(super) fn read(r: &mut Reader<'a>, c: Compression) -> Result<Self> {
        Ok(Self {
            priority: r.u16("SRV priority")?,
            weight: r.u16("SRV weight")?,
            port: r.u16("SRV port")?,
            target: r.name(c)?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        for v in [self.priority, self.weight, self.port] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        write_name(out, &self.target);
    }
}

impl fmt::Display for Srv<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {}",
            self.priority, self.weight, self.port, self.target
        )
    }
}

/// NAPTR RDATA (RFC 3403 §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Naptr<'a> {
    /// Order in which records must be processed.
    pub order: u16,
    /// Preference among equal orders.
    pub preference: u16,
    /// Flags string.
    pub flags: &'a [u8],
    /// Services string.
    pub services: &'a [u8],
    /// Substitution expression.
    pub regexp: &'a [u8],
    /// Next name to query.
    pub replacement: NameRef<'a>,
}

impl<'a> Naptr<'a> {
    pub(super) fn read(r: &mut Reader<'a>, c: Compression) -> Result<Self> {
        Ok(Self {
            order: r.u16("NAPTR order")?,
            preference: r.u16("NAPTR preference")?,
            flags: r.character_string("NAPTR flags")?,
            services: r.character_string("NAPTR services")?,
            regexp: r.character_string("NAPTR regexp")?,
            replacement: r.name(c)?,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.order.to_be_bytes());
        out.extend_from_slice(&self.preference.to_be_bytes());
        write_character_string(out, self.flags);
        write_character_string(out, self.services);
        write_character_string(out, self.regexp);
        write_name(out, &self.replacement);
    }
}

impl fmt::Display for Naptr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} ", self.order, self.preference)?;
        for s in [self.flags, self.services, self.regexp] {
            write_quoted(f, s)?;
            f.write_str(" ")?;
        }
        self.replacement.fmt(f)
    }
}

/// CAA RDATA (RFC 8659 §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caa<'a> {
    /// Flags; bit 0x80 is "issuer critical".
    pub flags: u8,
    /// Property tag (`issue`, `issuewild`, `iodef`, ...), 1 to 255 bytes.
    pub tag: &'a [u8],
    /// Property value, any bytes.
    pub value: &'a [u8],
}

impl<'a> Caa<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        let flags = r.u8("CAA flags")?;
        let at = r.pos();
        let tag = r.character_string("CAA tag")?;
        if tag.is_empty() {
            return Err(Error::new(
                ErrorKind::BadRdata {
                    what: "empty CAA tag",
                },
                at,
            ));
        }
        Ok(Self {
            flags,
            tag,
            value: r.rest(),
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.push(self.flags);
        write_character_string(out, self.tag);
        out.extend_from_slice(self.value);
    }
}

impl fmt::Display for Caa<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.flags)?;
        crate::text::write_escaped(f, self.tag, b"")?;
        f.write_str(" ")?;
        write_quoted(f, self.value)
    }
}
