//! EDNS(0) (RFC 6891): the OPT pseudo-record's fields and its options.

use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;
use crate::text::{write_escaped, write_hex};

/// The smallest UDP payload size a requestor may advertise; smaller values mean 512
/// (RFC 6891 §6.2.5).
pub const MIN_UDP_PAYLOAD: u16 = 512;

/// Option codes this crate types (IANA "DNS EDNS0 Option Codes").
pub mod code {
    /// Name server identifier (RFC 5001).
    pub const NSID: u16 = 3;
    /// Client subnet (RFC 7871).
    pub const CLIENT_SUBNET: u16 = 8;
    /// Cookie (RFC 7873).
    pub const COOKIE: u16 = 10;
    /// TCP keepalive (RFC 7828).
    pub const TCP_KEEPALIVE: u16 = 11;
    /// Padding (RFC 7830).
    pub const PADDING: u16 = 12;
    /// Extended DNS error (RFC 8914).
    pub const EXTENDED_ERROR: u16 = 15;
}

/// The EDNS fields of an OPT record (RFC 6891 §6.1.2, §6.1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edns<'a> {
    /// Requestor's UDP payload size, as sent (the CLASS field).
    pub udp_payload_size: u16,
    /// Upper 8 bits of the 12-bit extended RCODE.
    pub ext_rcode: u8,
    /// EDNS version (0 today).
    pub version: u8,
    /// DO: DNSSEC answer OK (RFC 3225).
    pub dnssec_ok: bool,
    /// The other 15 flag bits, kept as received.
    pub z: u16,
    /// The options, in wire order.
    pub options: Options<'a>,
}

impl<'a> Edns<'a> {
    /// The fields of an OPT record from its CLASS, TTL and RDATA.
    pub fn from_parts(class: u16, ttl: u32, rdata: &'a [u8]) -> Result<Self> {
        let [ext_rcode, version, flags_hi, flags_lo] = ttl.to_be_bytes();
        let flags = u16::from_be_bytes([flags_hi, flags_lo]);
        Ok(Self {
            udp_payload_size: class,
            ext_rcode,
            version,
            dnssec_ok: flags & 0x8000 != 0,
            z: flags & 0x7FFF,
            options: Options::new(rdata)?,
        })
    }

    /// The payload size to honour: values below 512 count as 512 (RFC 6891 §6.2.5).
    pub fn effective_payload_size(&self) -> u16 {
        self.udp_payload_size.max(MIN_UDP_PAYLOAD)
    }

    /// The OPT record's TTL field (extended RCODE, version, DO, Z).
    pub fn ttl(&self) -> u32 {
        opt_ttl(self.ext_rcode, self.version, self.dnssec_ok, self.z)
    }
}

/// The OPT TTL field from its parts (RFC 6891 §6.1.3).
pub(crate) fn opt_ttl(ext_rcode: u8, version: u8, dnssec_ok: bool, z: u16) -> u32 {
    let flags = if dnssec_ok { 0x8000 } else { 0 } | (z & 0x7FFF);
    u32::from(ext_rcode) << 24 | u32::from(version) << 16 | u32::from(flags)
}

/// The options of an OPT record, validated: each `(code, length, data)` fits the RDATA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Options<'a> {
    bytes: &'a [u8],
}

impl<'a> Options<'a> {
    /// Validates `bytes` as a list of options.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(bytes, 0);
        while r.remaining() > 0 {
            let at = r.pos();
            let framed = r.u16("option code").and_then(|_| r.u16("option length"));
            let len = framed.map_err(|_| Error::new(ErrorKind::BadEdnsOption, at))?;
            r.bytes(usize::from(len), "option data")
                .map_err(|_| Error::new(ErrorKind::BadEdnsOption, at))?;
        }
        Ok(Self { bytes })
    }

    pub(crate) fn read(r: &mut Reader<'a>) -> Result<Self> {
        let start = r.pos();
        Self::new(r.rest()).map_err(|e| Error::new(e.kind(), start + e.offset()))
    }

    /// The options in wire order as `(code, data)`.
    pub fn raw(&self) -> impl Iterator<Item = (u16, &'a [u8])> + 'a {
        let mut r = Reader::new(self.bytes, 0);
        core::iter::from_fn(move || {
            let code = r.u16("code").ok()?;
            let len = r.u16("length").ok()?;
            Some((code, r.bytes(usize::from(len), "data").ok()?))
        })
    }

    /// The options in wire order, typed where known.
    pub fn iter(&self) -> impl Iterator<Item = EdnsOption<'a>> + 'a {
        self.raw().map(|(code, data)| EdnsOption::new(code, data))
    }

    /// The wire bytes of all options.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// One EDNS option. Known codes whose data is malformed stay [`EdnsOption::Unknown`], so
/// nothing is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EdnsOption<'a> {
    /// Client subnet (RFC 7871 §6).
    ClientSubnet {
        /// Address family (1 IPv4, 2 IPv6).
        family: u16,
        /// Prefix length of the source.
        source_prefix: u8,
        /// Prefix length the answer covers.
        scope_prefix: u8,
        /// The address, cut to `ceil(source_prefix / 8)` bytes.
        address: &'a [u8],
    },
    /// Cookie (RFC 7873 §4).
    Cookie {
        /// 8-byte client cookie.
        client: &'a [u8],
        /// Server cookie, empty or 8 to 32 bytes.
        server: &'a [u8],
    },
    /// Name server identifier (RFC 5001 §2.3), opaque.
    Nsid(&'a [u8]),
    /// Padding (RFC 7830 §3).
    Padding(&'a [u8]),
    /// Extended DNS error (RFC 8914 §2).
    ExtendedError {
        /// INFO-CODE.
        info_code: u16,
        /// EXTRA-TEXT, UTF-8 by the RFC but kept as bytes.
        extra_text: &'a [u8],
    },
    /// TCP keepalive (RFC 7828 §3.1): timeout in units of 100 ms, absent in queries.
    TcpKeepalive(Option<u16>),
    /// Any other option, or a known one with malformed data.
    Unknown {
        /// Option code.
        code: u16,
        /// Option data.
        data: &'a [u8],
    },
}

impl<'a> EdnsOption<'a> {
    /// Types option `code` with `data`.
    pub fn new(code: u16, data: &'a [u8]) -> Self {
        Self::typed(code, data).unwrap_or(Self::Unknown { code, data })
    }

    fn typed(code: u16, data: &'a [u8]) -> Option<Self> {
        Some(match code {
            code::NSID => Self::Nsid(data),
            code::PADDING => Self::Padding(data),
            code::COOKIE => {
                let (client, server) = data.split_at_checked(8)?;
                if !(server.is_empty() || (8..=32).contains(&server.len())) {
                    return None;
                }
                Self::Cookie { client, server }
            }
            code::CLIENT_SUBNET => {
                let (&[f0, f1, source_prefix, scope_prefix], address) = data.split_first_chunk()?;
                let family = u16::from_be_bytes([f0, f1]);
                let max = match family {
                    1 => 32,
                    2 => 128,
                    _ => return None,
                };
                let needed = usize::from(source_prefix).div_ceil(8);
                if source_prefix > max || scope_prefix > max || address.len() != needed {
                    return None;
                }
                Self::ClientSubnet {
                    family,
                    source_prefix,
                    scope_prefix,
                    address,
                }
            }
            code::EXTENDED_ERROR => {
                let (&[c0, c1], extra_text) = data.split_first_chunk()?;
                Self::ExtendedError {
                    info_code: u16::from_be_bytes([c0, c1]),
                    extra_text,
                }
            }
            code::TCP_KEEPALIVE => match *data {
                [] => Self::TcpKeepalive(None),
                [a, b] => Self::TcpKeepalive(Some(u16::from_be_bytes([a, b]))),
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// The layout `dig` uses in its OPT pseudosection.
impl fmt::Display for EdnsOption<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ClientSubnet {
                family,
                source_prefix,
                scope_prefix,
                address,
            } => {
                f.write_str("CLIENT-SUBNET: ")?;
                if family == 1 {
                    let mut a = [0u8; 4];
                    a.iter_mut().zip(address).for_each(|(d, s)| *d = *s);
                    write!(f, "{}", Ipv4Addr::from(a))?;
                } else {
                    let mut a = [0u8; 16];
                    a.iter_mut().zip(address).for_each(|(d, s)| *d = *s);
                    write!(f, "{}", Ipv6Addr::from(a))?;
                }
                write!(f, "/{source_prefix}/{scope_prefix}")
            }
            Self::Cookie { client, server } => {
                f.write_str("COOKIE: ")?;
                client
                    .iter()
                    .chain(server)
                    .try_for_each(|b| write!(f, "{b:02x}"))
            }
            Self::Nsid(data) => {
                f.write_str("NSID: ")?;
                write_hex(f, data)?;
                f.write_str(" (\"")?;
                write_escaped(f, data, b"\"")?;
                f.write_str("\")")
            }
            Self::Padding(data) => write!(f, "PADDING: ({} bytes)", data.len()),
            Self::ExtendedError {
                info_code,
                extra_text,
            } => {
                write!(f, "EDE: {info_code}")?;
                if !extra_text.is_empty() {
                    f.write_str(": (")?;
                    write_escaped(f, extra_text, b"")?;
                    f.write_str(")")?;
                }
                Ok(())
            }
            Self::TcpKeepalive(None) => f.write_str("TCP-KEEPALIVE"),
            Self::TcpKeepalive(Some(t)) => {
                write!(f, "TCP-KEEPALIVE: {}.{} secs", t / 10, t % 10)
            }
            Self::Unknown { code, data } => {
                write!(f, "OPT={code}: ")?;
                write_hex(f, data)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6891_s6_1_3_ttl_field_holds_ext_rcode_version_and_do() {
        let edns = Edns::from_parts(1232, 0x0100_8000, &[]).unwrap();
        assert_eq!(
            (edns.ext_rcode, edns.version, edns.dnssec_ok, edns.z),
            (1, 0, true, 0)
        );
        assert_eq!(edns.ttl(), 0x0100_8000);
    }

    #[test]
    fn rfc6891_s6_2_5_payload_below_512_counts_as_512() {
        assert_eq!(
            Edns::from_parts(100, 0, &[])
                .unwrap()
                .effective_payload_size(),
            512
        );
    }

    #[test]
    fn rfc6891_s6_1_2_option_past_the_end_is_an_error() {
        assert_eq!(
            Options::new(&[0, 10, 0, 9, 1]).unwrap_err().kind(),
            ErrorKind::BadEdnsOption
        );
        assert_eq!(
            Options::new(&[0, 10, 0]).unwrap_err().kind(),
            ErrorKind::BadEdnsOption
        );
    }

    #[test]
    fn rfc7873_s4_cookie_lengths() {
        let ok = [1u8; 8];
        assert!(matches!(
            EdnsOption::new(code::COOKIE, &ok),
            EdnsOption::Cookie { .. }
        ));
        assert!(matches!(
            EdnsOption::new(code::COOKIE, &[1; 12]),
            EdnsOption::Unknown { .. }
        ));
        assert!(
            matches!(EdnsOption::new(code::COOKIE, &[1; 16]), EdnsOption::Cookie { server, .. } if server.len() == 8)
        );
    }

    #[test]
    fn rfc7871_s6_ecs_address_length_must_match_prefix() {
        let ok = [0, 1, 24, 0, 192, 0, 2];
        assert!(matches!(
            EdnsOption::new(code::CLIENT_SUBNET, &ok),
            EdnsOption::ClientSubnet {
                source_prefix: 24,
                ..
            }
        ));
        let bad = [0, 1, 24, 0, 192, 0, 2, 1];
        assert!(matches!(
            EdnsOption::new(code::CLIENT_SUBNET, &bad),
            EdnsOption::Unknown { .. }
        ));
    }

    #[test]
    fn rfc8914_s2_extended_error_and_rfc7828_keepalive() {
        let ede = [0, 18, b'n', b'o'];
        assert!(matches!(
            EdnsOption::new(code::EXTENDED_ERROR, &ede),
            EdnsOption::ExtendedError {
                info_code: 18,
                extra_text: b"no"
            }
        ));
        assert_eq!(
            EdnsOption::new(code::TCP_KEEPALIVE, &[0, 100]),
            EdnsOption::TcpKeepalive(Some(100))
        );
        assert_eq!(EdnsOption::new(code::NSID, b"x"), EdnsOption::Nsid(b"x"));
    }
}
