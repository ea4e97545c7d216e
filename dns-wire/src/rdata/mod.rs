//! Typed RDATA: views decoded on demand over the RDATA bytes of a record.
//!
//! [`RData::parse`] reads the RDATA of one record for the types this crate knows; every other
//! type is [`RData::Unknown`], opaque bytes that round-trip unchanged (RFC 3597). Names inside
//! RDATA are followed through compression pointers only for the types RFC 3597 §4 lists
//! ([`layout`]); everywhere else a pointer is malformed data. Cargo features never change how
//! bytes are read.

use alloc::vec::Vec;
use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

use crate::edns::Options;
use crate::error::{Error, ErrorKind, Result};
use crate::name::{Compression, NameRef};
use crate::reader::Reader;
use crate::text::write_generic;
use crate::types::Type;

mod basic;
mod dnssec;
pub mod layout;
mod svcb;

pub use basic::{Caa, CharacterStrings, Hinfo, Mx, Naptr, Soa, Srv};
pub use dnssec::{Dnskey, Ds, Nsec, Nsec3, Nsec3param, Rrsig, Tlsa, TypeBitmap};
pub use svcb::{SvcParam, SvcParams, Svcb};

/// The RDATA of one record, typed where this crate knows the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RData<'a> {
    /// IPv4 address (RFC 1035 §3.4.1).
    A(Ipv4Addr),
    /// IPv6 address (RFC 3596 §2.2).
    Aaaa(Ipv6Addr),
    /// Authoritative name server (RFC 1035 §3.3.11).
    Ns(NameRef<'a>),
    /// Canonical name (RFC 1035 §3.3.1).
    Cname(NameRef<'a>),
    /// Domain name pointer (RFC 1035 §3.3.12).
    Ptr(NameRef<'a>),
    /// Delegation name (RFC 6672 §2.1); never compressed.
    Dname(NameRef<'a>),
    /// Start of a zone of authority (RFC 1035 §3.3.13).
    Soa(Soa<'a>),
    /// Mail exchange (RFC 1035 §3.3.9).
    Mx(Mx<'a>),
    /// Text strings (RFC 1035 §3.3.14).
    Txt(CharacterStrings<'a>),
    /// Host information (RFC 1035 §3.3.2).
    Hinfo(Hinfo<'a>),
    /// Server selection (RFC 2782).
    Srv(Srv<'a>),
    /// Naming authority pointer (RFC 3403 §4.1).
    Naptr(Naptr<'a>),
    /// Certification authority authorization (RFC 8659 §4.1).
    Caa(Caa<'a>),
    /// Delegation signer (RFC 4034 §5.1).
    Ds(Ds<'a>),
    /// DNSSEC public key (RFC 4034 §2.1).
    Dnskey(Dnskey<'a>),
    /// DNSSEC signature (RFC 4034 §3.1).
    Rrsig(Rrsig<'a>),
    /// Next secure record (RFC 4034 §4.1).
    Nsec(Nsec<'a>),
    /// Hashed next secure record (RFC 5155 §3.2).
    Nsec3(Nsec3<'a>),
    /// NSEC3 parameters (RFC 5155 §4.2).
    Nsec3param(Nsec3param<'a>),
    /// TLS association (RFC 6698 §2.1).
    Tlsa(Tlsa<'a>),
    /// Service binding (RFC 9460 §2.2).
    Svcb(Svcb<'a>),
    /// HTTPS service binding (RFC 9460 §9).
    Https(Svcb<'a>),
    /// EDNS(0) options of an OPT record (RFC 6891 §6.1.2).
    Opt(Options<'a>),
    /// Any other type: opaque bytes (RFC 3597).
    Unknown(Type, &'a [u8]),
}

impl<'a> RData<'a> {
    /// Decodes the RDATA of type `rtype` that spans `msg[start..end]`. `msg` is the whole
    /// message (compression pointers address it) or just the uncompressed RDATA.
    pub fn parse(rtype: Type, msg: &'a [u8], start: usize, end: usize) -> Result<Self> {
        Self::parse_checked(rtype, msg, start, end, false)
    }

    /// [`RData::parse`], skipping the names that may be compressed when
    /// [`layout::names_valid`] validated them already (`names_checked`).
    pub(crate) fn parse_checked(
        rtype: Type,
        msg: &'a [u8],
        start: usize,
        end: usize,
        names_checked: bool,
    ) -> Result<Self> {
        let buf = msg.get(..end).ok_or(Error::new(
            ErrorKind::UnexpectedEnd { what: "RDATA" },
            msg.len(),
        ))?;
        let mut r = Reader::with_names_checked(buf, start, names_checked);
        let data = Self::read(rtype, &mut r)?;
        if r.remaining() != 0 {
            return Err(Error::new(ErrorKind::RdataLengthMismatch, r.pos()));
        }
        Ok(data)
    }

    /// Decodes standalone, uncompressed RDATA bytes.
    pub fn from_bytes(rtype: Type, rdata: &'a [u8]) -> Result<Self> {
        Self::parse(rtype, rdata, 0, rdata.len())
    }

    fn read(rtype: Type, r: &mut Reader<'a>) -> Result<Self> {
        let compressible = layout::decompresses(rtype);
        let c = if compressible {
            Compression::Allowed
        } else {
            Compression::Forbidden
        };
        Ok(match rtype {
            Type::A => Self::A(Ipv4Addr::from(r.array::<4>("A address")?)),
            Type::AAAA => Self::Aaaa(Ipv6Addr::from(r.array::<16>("AAAA address")?)),
            Type::NS => Self::Ns(r.name(c)?),
            Type::CNAME => Self::Cname(r.name(c)?),
            Type::PTR => Self::Ptr(r.name(c)?),
            Type::DNAME => Self::Dname(r.name(c)?),
            Type::SOA => Self::Soa(Soa::read(r, c)?),
            Type::MX => Self::Mx(Mx::read(r, c)?),
            Type::TXT => Self::Txt(CharacterStrings::read(r)?),
            Type::HINFO => Self::Hinfo(Hinfo::read(r)?),
            Type::SRV => Self::Srv(Srv::read(r, c)?),
            Type::NAPTR => Self::Naptr(Naptr::read(r, c)?),
            Type::CAA => Self::Caa(Caa::read(r)?),
            Type::DS => Self::Ds(Ds::read(r)?),
            Type::DNSKEY => Self::Dnskey(Dnskey::read(r)?),
            Type::RRSIG => Self::Rrsig(Rrsig::read(r)?),
            Type::NSEC => Self::Nsec(Nsec::read(r)?),
            Type::NSEC3 => Self::Nsec3(Nsec3::read(r)?),
            Type::NSEC3PARAM => Self::Nsec3param(Nsec3param::read(r)?),
            Type::TLSA => Self::Tlsa(Tlsa::read(r)?),
            Type::SVCB => Self::Svcb(Svcb::read(r)?),
            Type::HTTPS => Self::Https(Svcb::read(r)?),
            Type::OPT => Self::Opt(Options::read(r)?),
            other => Self::Unknown(other, r.rest()),
        })
    }

    /// The record type this RDATA belongs to.
    pub fn rtype(&self) -> Type {
        match self {
            Self::A(_) => Type::A,
            Self::Aaaa(_) => Type::AAAA,
            Self::Ns(_) => Type::NS,
            Self::Cname(_) => Type::CNAME,
            Self::Ptr(_) => Type::PTR,
            Self::Dname(_) => Type::DNAME,
            Self::Soa(_) => Type::SOA,
            Self::Mx(_) => Type::MX,
            Self::Txt(_) => Type::TXT,
            Self::Hinfo(_) => Type::HINFO,
            Self::Srv(_) => Type::SRV,
            Self::Naptr(_) => Type::NAPTR,
            Self::Caa(_) => Type::CAA,
            Self::Ds(_) => Type::DS,
            Self::Dnskey(_) => Type::DNSKEY,
            Self::Rrsig(_) => Type::RRSIG,
            Self::Nsec(_) => Type::NSEC,
            Self::Nsec3(_) => Type::NSEC3,
            Self::Nsec3param(_) => Type::NSEC3PARAM,
            Self::Tlsa(_) => Type::TLSA,
            Self::Svcb(_) => Type::SVCB,
            Self::Https(_) => Type::HTTPS,
            Self::Opt(_) => Type::OPT,
            Self::Unknown(t, _) => *t,
        }
    }

    /// Appends the uncompressed wire form (what RDLENGTH counts when nothing is compressed).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Self::A(a) => out.extend_from_slice(&a.octets()),
            Self::Aaaa(a) => out.extend_from_slice(&a.octets()),
            Self::Ns(n) | Self::Cname(n) | Self::Ptr(n) | Self::Dname(n) => write_name(out, n),
            Self::Soa(v) => v.write_to(out),
            Self::Mx(v) => v.write_to(out),
            Self::Txt(v) => out.extend_from_slice(v.as_bytes()),
            Self::Hinfo(v) => v.write_to(out),
            Self::Srv(v) => v.write_to(out),
            Self::Naptr(v) => v.write_to(out),
            Self::Caa(v) => v.write_to(out),
            Self::Ds(v) => v.write_to(out),
            Self::Dnskey(v) => v.write_to(out),
            Self::Rrsig(v) => v.write_to(out),
            Self::Nsec(v) => v.write_to(out),
            Self::Nsec3(v) => v.write_to(out),
            Self::Nsec3param(v) => v.write_to(out),
            Self::Tlsa(v) => v.write_to(out),
            Self::Svcb(v) | Self::Https(v) => v.write_to(out),
            Self::Opt(v) => out.extend_from_slice(v.as_bytes()),
            Self::Unknown(_, bytes) => out.extend_from_slice(bytes),
        }
    }
}

/// Appends a name in uncompressed wire form.
pub(crate) fn write_name(out: &mut Vec<u8>, name: &NameRef<'_>) {
    for label in name.labels() {
        out.push(label.len() as u8);
        out.extend_from_slice(label);
    }
    out.push(0);
}

/// Zone-file presentation of the RDATA (RFC 1035 §5.1); unknown types and OPT use the
/// generic `\# LEN HEX` form (RFC 3597 §5).
impl fmt::Display for RData<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::A(a) => a.fmt(f),
            Self::Aaaa(a) => a.fmt(f),
            Self::Ns(n) | Self::Cname(n) | Self::Ptr(n) | Self::Dname(n) => n.fmt(f),
            Self::Soa(v) => v.fmt(f),
            Self::Mx(v) => v.fmt(f),
            Self::Txt(v) => v.fmt(f),
            Self::Hinfo(v) => v.fmt(f),
            Self::Srv(v) => v.fmt(f),
            Self::Naptr(v) => v.fmt(f),
            Self::Caa(v) => v.fmt(f),
            Self::Ds(v) => v.fmt(f),
            Self::Dnskey(v) => v.fmt(f),
            Self::Rrsig(v) => v.fmt(f),
            Self::Nsec(v) => v.fmt(f),
            Self::Nsec3(v) => v.fmt(f),
            Self::Nsec3param(v) => v.fmt(f),
            Self::Tlsa(v) => v.fmt(f),
            Self::Svcb(v) | Self::Https(v) => v.fmt(f),
            Self::Opt(v) => write_generic(f, v.as_bytes()),
            Self::Unknown(_, bytes) => write_generic(f, bytes),
        }
    }
}
