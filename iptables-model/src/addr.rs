//! Addresses and CIDRs as iptables writes them (`10.0.0.1`, `10.0.0.0/8`, `fd00::/64`).

use core::fmt;
use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use core::str::FromStr;

/// An address with an optional prefix length, kept as written: `10.180.0.1` stays without a
/// prefix, `10.180.0.1/32` keeps it (the save-format normaliser adds it, see
/// [`Cidr::with_full_prefix`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cidr {
    /// The address as written (not masked).
    pub addr: IpAddr,
    /// The prefix length, when one was written.
    pub prefix: Option<u8>,
}

impl Cidr {
    /// A single host address without a prefix.
    pub const fn host(addr: IpAddr) -> Self {
        Self { addr, prefix: None }
    }

    /// The longest prefix of this address family (32 or 128).
    pub const fn max_prefix(&self) -> u8 {
        match self.addr {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        }
    }

    /// The effective prefix length (the family's maximum when none was written).
    pub fn prefix_len(&self) -> u8 {
        self.prefix.unwrap_or(self.max_prefix())
    }

    /// The form `iptables-save` prints: network address (host bits cleared) with an explicit
    /// prefix length (`10.180.0.1` → `10.180.0.1/32`, `10.1.2.3/8` → `10.0.0.0/8`).
    pub fn with_full_prefix(&self) -> Self {
        let prefix = self.prefix_len();
        let addr = match self.addr {
            IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from_bits(a.to_bits() & mask32(prefix))),
            IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from_bits(a.to_bits() & mask128(prefix))),
        };
        Self {
            addr,
            prefix: Some(prefix),
        }
    }

    /// Whether `ip` lies inside this network (always false across address families).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let prefix = self.prefix_len();
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                (net.to_bits() ^ ip.to_bits()) & mask32(prefix) == 0
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                (net.to_bits() ^ ip.to_bits()) & mask128(prefix) == 0
            }
            _ => false,
        }
    }

    /// Parses the way kube-proxy's "sloppy" parser does for API fields: surrounding spaces
    /// are ignored and IPv4 octets and prefix lengths may have leading zeros
    /// (`203.0.113.000/025` → `203.0.113.0/25`). The result is masked to its network when a
    /// prefix is given, as Go's `net.ParseCIDR` does.
    pub fn parse_lenient(text: &str) -> Option<Self> {
        let text = text.trim();
        let (addr, prefix) = match crate::codec::split_once_ascii(text, b'/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr = parse_ip_lenient(addr)?;
        let cidr = Self { addr, prefix: None };
        match prefix {
            None => Some(cidr),
            Some(p) => {
                let len: u8 = parse_decimal(p)?.try_into().ok()?;
                if len > cidr.max_prefix() {
                    return None;
                }
                Some(
                    Self {
                        addr,
                        prefix: Some(len),
                    }
                    .with_full_prefix(),
                )
            }
        }
    }
}

/// Parses an address leniently (see [`Cidr::parse_lenient`]), without a prefix.
pub fn parse_ip_lenient(text: &str) -> Option<IpAddr> {
    // The strict spelling (nearly every API address) reads the same either way, faster.
    if let Ok(ip) = IpAddr::from_str(text) {
        return Some(ip);
    }
    let text = text.trim();
    if text.contains(':') {
        return Ipv6Addr::from_str(text).ok().map(IpAddr::V6);
    }
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        *octet = parse_decimal(parts.next()?)?.try_into().ok()?;
    }
    parts
        .next()
        .is_none()
        .then_some(IpAddr::V4(Ipv4Addr::from(octets)))
}

/// A non-empty run of ASCII digits (leading zeros allowed), at most 9 of them.
fn parse_decimal(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn mask32(prefix: u8) -> u32 {
    u32::MAX
        .checked_shl(32u32.saturating_sub(u32::from(prefix)))
        .unwrap_or(0)
}

fn mask128(prefix: u8) -> u128 {
    u128::MAX
        .checked_shl(128u32.saturating_sub(u32::from(prefix)))
        .unwrap_or(0)
}

/// Error of [`Cidr::from_str`]: the text is not an address, `address/length` or
/// `address/dotted-mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidCidr;

impl fmt::Display for InvalidCidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("expected an IP address, ADDRESS/LENGTH or ADDRESS/MASK")
    }
}

impl core::error::Error for InvalidCidr {}

impl FromStr for Cidr {
    type Err = InvalidCidr;

    /// Parses iptables' strict spelling: `ADDRESS`, `ADDRESS/LENGTH` or (IPv4)
    /// `ADDRESS/DOTTED-MASK` with a contiguous mask.
    fn from_str(text: &str) -> Result<Self, InvalidCidr> {
        let (addr, prefix) = match crate::codec::split_once_ascii(text, b'/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr = IpAddr::from_str(addr).map_err(|_| InvalidCidr)?;
        let max = Self::host(addr).max_prefix();
        let prefix = match prefix {
            None => None,
            Some(p) => Some(match (parse_decimal(p), addr) {
                (Some(len), _) if len <= u32::from(max) => len as u8,
                (None, IpAddr::V4(_)) => {
                    let bits = Ipv4Addr::from_str(p).map_err(|_| InvalidCidr)?.to_bits();
                    let len = bits.leading_ones();
                    if bits.checked_shl(len).unwrap_or(0) != 0 {
                        return Err(InvalidCidr);
                    }
                    len as u8
                }
                _ => return Err(InvalidCidr),
            }),
        };
        Ok(Self { addr, prefix })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.prefix {
            Some(p) => write!(f, "{}/{p}", self.addr),
            None => write!(f, "{}", self.addr),
        }
    }
}

impl From<IpAddr> for Cidr {
    fn from(addr: IpAddr) -> Self {
        Self::host(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn lenient_parsing_strips_leading_zeros_spec_1_2() {
        // `docs/iptables.md` §1.2 / vector 03: `172.30.0.041` → `172.30.0.41`,
        // `203.0.113.000/025` → `/25`.
        assert_eq!(
            Cidr::parse_lenient("172.30.0.041").unwrap().to_string(),
            "172.30.0.41"
        );
        assert_eq!(
            Cidr::parse_lenient("203.0.113.000/025")
                .unwrap()
                .to_string(),
            "203.0.113.0/25"
        );
        assert_eq!(
            Cidr::parse_lenient(" 203.0.113.0/25").unwrap().to_string(),
            "203.0.113.0/25"
        );
        assert_eq!(
            Cidr::parse_lenient("fd00::1").unwrap().to_string(),
            "fd00::1"
        );
        assert!(Cidr::parse_lenient("1.2.3.256").is_none());
        assert!(Cidr::parse_lenient("1.2.3.4/33").is_none());
    }

    #[test]
    fn strict_parsing_accepts_masks_and_keeps_spelling() {
        let c: Cidr = "10.1.2.3/255.0.0.0".parse().unwrap();
        assert_eq!(c.to_string(), "10.1.2.3/8");
        assert_eq!(c.with_full_prefix().to_string(), "10.0.0.0/8");
        assert!("10.0.0.0/255.0.255.0".parse::<Cidr>().is_err());
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        let h: Cidr = "::1".parse().unwrap();
        assert_eq!(h.with_full_prefix().to_string(), "::1/128");
        assert!(c.contains("10.200.0.1".parse().unwrap()));
        assert!(!c.contains("11.0.0.1".parse().unwrap()));
        assert!(!c.contains("::1".parse().unwrap()));
    }
}
