//! SVCB and HTTPS RDATA (RFC 9460).

use alloc::vec::Vec;
use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

use super::write_name;
use crate::error::{Error, ErrorKind, Result};
use crate::name::{Compression, NameRef};
use crate::reader::Reader;
use crate::text::{write_base64, write_escaped};

/// SVCB or HTTPS RDATA (RFC 9460 §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Svcb<'a> {
    /// 0 for alias form, otherwise the service priority.
    pub priority: u16,
    /// The target name (never compressed).
    pub target: NameRef<'a>,
    /// Service parameters, in increasing key order.
    pub params: SvcParams<'a>,
}

impl<'a> Svcb<'a> {
    pub(super) fn read(r: &mut Reader<'a>) -> Result<Self> {
        let priority = r.u16("SVCB priority")?;
        let target = r.name(Compression::Forbidden)?;
        let start = r.pos();
        let params =
            SvcParams::new(r.rest()).map_err(|e| Error::new(e.kind(), start + e.offset()))?;
        Ok(Self {
            priority,
            target,
            params,
        })
    }

    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.priority.to_be_bytes());
        write_name(out, &self.target);
        out.extend_from_slice(self.params.bytes);
    }
}

impl fmt::Display for Svcb<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.priority, self.target)?;
        for param in self.params.iter() {
            write!(f, " {param}")?;
        }
        Ok(())
    }
}

/// Registered SvcParamKeys (RFC 9460 §14.3.2).
mod key {
    pub(super) const MANDATORY: u16 = 0;
    pub(super) const ALPN: u16 = 1;
    pub(super) const NO_DEFAULT_ALPN: u16 = 2;
    pub(super) const PORT: u16 = 3;
    pub(super) const IPV4HINT: u16 = 4;
    pub(super) const ECH: u16 = 5;
    pub(super) const IPV6HINT: u16 = 6;
}

/// The SvcParams of an SVCB record, validated: keys strictly increasing (RFC 9460 §2.2) and
/// the values of the registered keys well formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvcParams<'a> {
    bytes: &'a [u8],
}

impl<'a> SvcParams<'a> {
    /// Validates `bytes` as a list of SvcParams.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(bytes, 0);
        let mut last: Option<u16> = None;
        while r.remaining() > 0 {
            let at = r.pos();
            let key = r.u16("SvcParamKey")?;
            let len = r.u16("SvcParam length")?;
            let value = r.bytes(usize::from(len), "SvcParamValue")?;
            let bad = |what| Err(Error::new(ErrorKind::BadRdata { what }, at));
            if last.is_some_and(|l| key <= l) {
                return bad("SvcParamKeys not in increasing order");
            }
            last = Some(key);
            let ok = match key {
                key::MANDATORY => !value.is_empty() && value.len().is_multiple_of(2),
                key::ALPN => {
                    !value.is_empty()
                        && super::CharacterStrings::new(value)
                            .is_ok_and(|s| s.iter().all(|id| !id.is_empty()))
                }
                key::NO_DEFAULT_ALPN => value.is_empty(),
                key::PORT => value.len() == 2,
                key::IPV4HINT => !value.is_empty() && value.len().is_multiple_of(4),
                key::IPV6HINT => !value.is_empty() && value.len().is_multiple_of(16),
                // An ECHConfigList: a 2-byte length of the rest, then at least 4 bytes
                // (RFC 9849 §4).
                key::ECH => match value.split_first_chunk::<2>() {
                    Some((len, rest)) => {
                        usize::from(u16::from_be_bytes(*len)) == rest.len() && rest.len() >= 4
                    }
                    None => false,
                },
                _ => true,
            };
            if !ok {
                return bad("SvcParamValue does not fit its key");
            }
        }
        Ok(Self { bytes })
    }

    /// The parameters in wire order.
    pub fn iter(&self) -> impl Iterator<Item = SvcParam<'a>> + 'a {
        let mut r = Reader::new(self.bytes, 0);
        core::iter::from_fn(move || {
            let key = r.u16("key").ok()?;
            let len = r.u16("length").ok()?;
            let value = r.bytes(usize::from(len), "value").ok()?;
            Some(SvcParam { key, value })
        })
    }

    /// The wire bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// One SvcParam: its key and raw value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvcParam<'a> {
    /// The SvcParamKey.
    pub key: u16,
    /// The SvcParamValue in wire form.
    pub value: &'a [u8],
}

/// `key=value` in the presentation form of RFC 9460 §2.1 and §7.
impl fmt::Display for SvcParam<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list =
            |f: &mut fmt::Formatter<'_>,
             chunk: usize,
             item: &dyn Fn(&mut fmt::Formatter<'_>, &[u8]) -> fmt::Result| {
                for (i, c) in self.value.chunks(chunk).enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    item(f, c)?;
                }
                Ok(())
            };
        match self.key {
            key::MANDATORY => {
                f.write_str("mandatory=")?;
                list(f, 2, &|f, c| {
                    write_key(f, u16::from_be_bytes([first(c, 0), first(c, 1)]))
                })
            }
            key::ALPN => {
                f.write_str("alpn=\"")?;
                let ids = super::CharacterStrings::new(self.value).ok();
                for (i, id) in ids.iter().flat_map(|s| s.iter()).enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    // A comma inside an ALPN id is escaped twice (RFC 9460 Appendix A.1).
                    for &b in id {
                        match b {
                            b',' => f.write_str("\\\\,")?,
                            b'\\' => f.write_str("\\\\\\\\")?,
                            _ => write_escaped(f, &[b], b"\"")?,
                        }
                    }
                }
                f.write_str("\"")
            }
            key::NO_DEFAULT_ALPN => f.write_str("no-default-alpn"),
            key::PORT => write!(
                f,
                "port={}",
                u16::from_be_bytes([first(self.value, 0), first(self.value, 1)])
            ),
            key::IPV4HINT => {
                f.write_str("ipv4hint=")?;
                list(f, 4, &|f, c| {
                    let mut a = [0u8; 4];
                    a.iter_mut().zip(c).for_each(|(d, s)| *d = *s);
                    write!(f, "{}", Ipv4Addr::from(a))
                })
            }
            key::ECH => {
                f.write_str("ech=")?;
                write_base64(f, self.value)
            }
            key::IPV6HINT => {
                f.write_str("ipv6hint=")?;
                list(f, 16, &|f, c| {
                    let mut a = [0u8; 16];
                    a.iter_mut().zip(c).for_each(|(d, s)| *d = *s);
                    write!(f, "{}", Ipv6Addr::from(a))
                })
            }
            other => {
                write_key(f, other)?;
                if !self.value.is_empty() {
                    f.write_str("=\"")?;
                    write_escaped(f, self.value, b"\"\\")?;
                    f.write_str("\"")?;
                }
                Ok(())
            }
        }
    }
}

/// Byte `i` of `bytes`, or 0 (values were validated when the list was read).
fn first(bytes: &[u8], i: usize) -> u8 {
    bytes.get(i).copied().unwrap_or(0)
}

/// A SvcParamKey's name (RFC 9460 §14.3.2) or `keyNNNNN`.
fn write_key(f: &mut fmt::Formatter<'_>, k: u16) -> fmt::Result {
    let name = match k {
        key::MANDATORY => "mandatory",
        key::ALPN => "alpn",
        key::NO_DEFAULT_ALPN => "no-default-alpn",
        key::PORT => "port",
        key::IPV4HINT => "ipv4hint",
        key::ECH => "ech",
        key::IPV6HINT => "ipv6hint",
        other => return write!(f, "key{other}"),
    };
    f.write_str(name)
}
