//! Server block keys to zone addresses (`docs/corefile.md` §4.3): scheme, port and default port,
//! CIDR to reverse zones, FQDN and Go-style lower-casing, with CoreDNS's error texts.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::net::{Ipv4Addr, Ipv6Addr};

/// A server transport, chosen by the key's scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    /// `dns://` or no scheme.
    Dns,
    /// `tls://` (DNS over TLS).
    Tls,
    /// `quic://` (DNS over QUIC).
    Quic,
    /// `grpc://`.
    Grpc,
    /// `https://` (DNS over HTTPS).
    Https,
    /// `https3://` (DNS over HTTP/3).
    Https3,
    /// `unix://` (a Unix socket; no port).
    Unix,
}

impl Transport {
    /// Every transport, in the order CoreDNS tests the scheme prefixes.
    pub const ALL: [Transport; 7] = [
        Self::Tls,
        Self::Dns,
        Self::Quic,
        Self::Grpc,
        Self::Https3,
        Self::Https,
        Self::Unix,
    ];

    /// The scheme name (`dns`, `tls`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dns => "dns",
            Self::Tls => "tls",
            Self::Quic => "quic",
            Self::Grpc => "grpc",
            Self::Https => "https",
            Self::Https3 => "https3",
            Self::Unix => "unix",
        }
    }

    /// The port used when a key has none (`dns_port` for plain DNS, `-dns.port` in CoreDNS).
    pub fn default_port(self, dns_port: &str) -> &str {
        match self {
            Self::Dns => dns_port,
            Self::Tls | Self::Quic => "853",
            Self::Grpc | Self::Https | Self::Https3 => "443",
            Self::Unix => "",
        }
    }

    /// Splits a case-sensitive `SCHEME://` prefix off `key` (plugin/pkg/parse `Transport`).
    pub fn split(key: &str) -> (Transport, &str) {
        for transport in Self::ALL {
            if let Some(rest) = key
                .strip_prefix(transport.as_str())
                .and_then(|r| r.strip_prefix("://"))
            {
                return (transport, rest);
            }
        }
        (Self::Dns, key)
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One zone address of a server block.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ZoneAddr {
    /// The transport.
    pub transport: Transport,
    /// The zone: lower-case, fully qualified (reverse zone for a CIDR).
    pub zone: String,
    /// The port, decimal (`""` for unix sockets).
    pub port: String,
}

impl fmt::Display for ZoneAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.transport, self.zone, self.port)
    }
}

/// A key that is not a valid zone address. Display is CoreDNS's text (without the
/// `error inspecting server blocks: ` prefix that [`crate::Error`] adds).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ZoneError {
    /// The key ends with a colon (or is empty).
    NoDataAfterColon(String),
    /// The host is longer than 255 bytes.
    TooLong(usize),
    /// The host is not a domain name by miekg/dns `IsDomainName`.
    InvalidName(String),
    /// An IPv6 CIDR written with a leading `:` or `0`.
    InvalidCidr(String),
}

impl fmt::Display for ZoneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDataAfterColon(key) => {
                write!(f, "expecting data after last colon: {}", GoQuoted(key))
            }
            Self::TooLong(n) => write!(f, "specified zone is too long: {n} > 255"),
            Self::InvalidName(host) => write!(f, "zone is not a valid domain name: {host}"),
            Self::InvalidCidr(host) => write!(f, "invalid CIDR {host}"),
        }
    }
}

impl core::error::Error for ZoneError {}

/// Go's `%q` rendering of a string.
struct GoQuoted<'a>(&'a str);

impl fmt::Display for GoQuoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\t' => f.write_str("\\t")?,
                '\r' => f.write_str("\\r")?,
                '\u{7}' => f.write_str("\\a")?,
                '\u{8}' => f.write_str("\\b")?,
                '\u{c}' => f.write_str("\\f")?,
                '\u{b}' => f.write_str("\\v")?,
                c if (c as u32) < 0x80 && c.is_control() => write!(f, "\\x{:02x}", c as u32)?,
                c if c.is_control() && (c as u32) <= 0xFFFF => write!(f, "\\u{:04x}", c as u32)?,
                c if c.is_control() => write!(f, "\\U{:08x}", c as u32)?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

/// Normalizes one server block key into its zone addresses (several for a CIDR that is not
/// on a label boundary), as CoreDNS's `InspectServerBlocks` does.
pub fn normalize_key(key: &str, dns_port: &str) -> Result<Vec<ZoneAddr>, ZoneError> {
    let (transport, rest) = Transport::split(key);
    let (hosts, port) = split_host_port(rest)?;
    let mut names = Vec::with_capacity(hosts.len());
    for host in &hosts {
        let name = fqdn(host);
        split_host_port(&name)?;
        names.push(name);
    }
    let port = port.unwrap_or_else(|| transport.default_port(dns_port).to_string());
    Ok(names
        .into_iter()
        .map(|name| ZoneAddr {
            transport,
            zone: into_go_lowercase(name),
            port: port.clone(),
        })
        .collect())
}

/// `plugin.SplitHostPort`: the hosts of `s` (reverse zones for a CIDR) and its port.
fn split_host_port(s: &str) -> Result<(Vec<String>, Option<String>), ZoneError> {
    let mut host = s;
    let mut port = None;
    match s.rfind(':') {
        Some(colon) if colon + 1 == s.len() => {
            return Err(ZoneError::NoDataAfterColon(s.to_string()));
        }
        None if s.is_empty() => return Err(ZoneError::NoDataAfterColon(String::new())),
        Some(colon) => {
            if let Some(p) = s.get(colon + 1..).and_then(|p| crate::go::atoi(p).ok()) {
                port = Some(p.to_string());
                host = s.get(..colon).unwrap_or_default();
            }
        }
        None => {}
    }
    if host.len() > 255 {
        return Err(ZoneError::TooLong(host.len()));
    }
    if !is_domain_name(host) {
        return Err(ZoneError::InvalidName(host.to_string()));
    }
    let Some(cidr) = Cidr::parse(host) else {
        return Ok((alloc::vec![host.to_string()], port));
    };
    if host.starts_with(':') || (host.starts_with('0') && host.contains(':')) {
        return Err(ZoneError::InvalidCidr(host.to_string()));
    }
    Ok((cidr.reverse_zones(), port))
}

/// miekg/dns `IsFqdn`: ends with a dot that is not escaped.
pub fn is_fqdn(s: &str) -> bool {
    let Some(body) = s.strip_suffix('.') else {
        return false;
    };
    if !body.ends_with('\\') {
        return true;
    }
    // Go measures from the byte index of the last rune that is not a backslash.
    let last_other = body
        .char_indices()
        .rev()
        .find(|&(_, c)| c != '\\')
        .map_or(-1, |(i, _)| i as i64);
    (body.len() as i64 - last_other) % 2 != 0
}

/// miekg/dns `Fqdn`: `s` with a trailing dot added unless it is already fully qualified.
pub fn fqdn(s: &str) -> String {
    let mut name = String::with_capacity(s.len() + 1);
    name.push_str(s);
    if !is_fqdn(s) {
        name.push('.');
    }
    name
}

/// miekg/dns `IsDomainName`: label lengths, total wire length, dots and escapes, on bytes.
pub fn is_domain_name(s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    // The checks run on `Fqdn(s)`: `s` and, unless it is fully qualified, one more dot.
    let dot = !is_fqdn(s);
    let len = s.len() + usize::from(dot);
    let byte_at = |i: usize| match s.as_bytes().get(i) {
        Some(&b) => Some(b),
        None => (dot && i == s.len()).then_some(b'.'),
    };
    let (mut off, mut begin, mut was_dot, mut escape) = (0usize, 0usize, false, false);
    let mut i = 0usize;
    while let Some(b) = byte_at(i) {
        match b {
            b'\\' => {
                escape = !escape;
                if off + 1 > 256 {
                    return false;
                }
                let ddd = (i + 1..i + 4).all(|j| byte_at(j).is_some_and(|d| d.is_ascii_digit()));
                let skip = if ddd { 3 } else { 1 };
                i += skip;
                begin += skip;
                was_dot = false;
            }
            b'.' => {
                escape = false;
                if i == 0 && len > 1 {
                    return false;
                }
                if was_dot {
                    return false;
                }
                was_dot = true;
                let label_len = i.saturating_sub(begin);
                if label_len >= 64 {
                    return false;
                }
                off += 1 + label_len;
                if off > 256 {
                    return false;
                }
                begin = i + 1;
            }
            _ => was_dot = false,
        }
        i += 1;
    }
    !escape
}

/// Go's `strings.ToLower`: simple per-character case mapping (`İ` → `i`, `Σ` → `σ`).
pub fn go_lowercase(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    s.chars()
        .map(|c| match c {
            '\u{130}' => 'i',
            c => c.to_lowercase().next().unwrap_or(c),
        })
        .collect()
}

/// [`go_lowercase`] of an owned string, in place when it is ASCII.
fn into_go_lowercase(mut s: String) -> String {
    if s.is_ascii() {
        s.make_ascii_lowercase();
        s
    } else {
        go_lowercase(&s)
    }
}

/// Appends the decimal digits of `n`.
fn push_decimal(out: &mut String, n: u8) {
    if n >= 100 {
        out.push(char::from(b'0' + n / 100));
    }
    if n >= 10 {
        out.push(char::from(b'0' + n / 10 % 10));
    }
    out.push(char::from(b'0' + n % 10));
}

/// A network parsed like Go's `net.ParseCIDR` (host bits cleared).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cidr {
    V4(u32, u32),
    V6(u128, u32),
}

impl Cidr {
    fn parse(s: &str) -> Option<Cidr> {
        let (addr, mask) = s.split_once('/')?;
        if mask.is_empty() || mask.len() > 3 || !mask.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let ones: u32 = mask.parse().ok()?;
        if let Ok(v4) = addr.parse::<Ipv4Addr>() {
            if ones > 32 {
                return None;
            }
            let mask = u32::MAX.checked_shl(32 - ones).unwrap_or(0);
            return Some(Cidr::V4(u32::from(v4) & mask, ones));
        }
        let v6 = addr.parse::<Ipv6Addr>().ok()?;
        if ones > 128 {
            return None;
        }
        let mask = u128::MAX.checked_shl(128 - ones).unwrap_or(0);
        let net = u128::from(v6) & mask;
        Some(Cidr::V6(net, ones))
    }

    /// `cidr.Split` then `cidr.Reverse`: the reverse zones covering the network, each on a
    /// label boundary (8 bits for IPv4, 4 for IPv6), in address order.
    fn reverse_zones(self) -> Vec<String> {
        match self {
            Cidr::V4(net, ones) => {
                let prefix = ones.div_ceil(8) * 8;
                let count = 1u32 << (prefix - ones);
                (0..count)
                    .map(|k| {
                        let base = net | k.checked_shl(32 - prefix).unwrap_or(0);
                        let octets = base.to_be_bytes();
                        let mut zone = String::with_capacity(29);
                        for &octet in octets.iter().take((prefix / 8) as usize).rev() {
                            push_decimal(&mut zone, octet);
                            zone.push('.');
                        }
                        zone.push_str("in-addr.arpa.");
                        zone
                    })
                    .collect()
            }
            Cidr::V6(net, ones) => {
                let prefix = ones.div_ceil(4) * 4;
                let count = 1u32 << (prefix - ones);
                (0..count)
                    .map(|k| {
                        let base = net | u128::from(k).checked_shl(128 - prefix).unwrap_or(0);
                        let mut zone = String::with_capacity(2 * (prefix / 4) as usize + 9);
                        for n in (0..prefix / 4).rev() {
                            let nibble = (base >> (124 - 4 * n)) & 0xF;
                            zone.push(char::from_digit(nibble as u32, 16).unwrap_or('0'));
                            zone.push('.');
                        }
                        zone.push_str("ip6.arpa.");
                        zone
                    })
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    fn zones(key: &str) -> Vec<String> {
        normalize_key(key, "53")
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn err(key: &str) -> String {
        normalize_key(key, "53").unwrap_err().to_string()
    }

    #[test]
    fn schemes_and_default_ports_spec_4_3_1_and_5() {
        assert_eq!(zones("example.org"), ["dns://example.org.:53"]);
        assert_eq!(zones("tls://a"), ["tls://a.:853"]);
        assert_eq!(zones("quic://a"), ["quic://a.:853"]);
        assert_eq!(zones("grpc://a"), ["grpc://a.:443"]);
        assert_eq!(zones("https://a"), ["https://a.:443"]);
        assert_eq!(zones("https3://a"), ["https3://a.:443"]);
        assert_eq!(zones("unix://a"), ["unix://a.:"]);
        assert_eq!(zones("DNS://a"), ["dns://dns://a.:53"]);
    }

    #[test]
    fn ports_are_go_ints_spec_4_3_2() {
        assert_eq!(zones("a:053"), ["dns://a.:53"]);
        assert_eq!(zones("a:+53"), ["dns://a.:53"]);
        assert_eq!(zones("a:-1"), ["dns://a.:-1"]);
        assert_eq!(zones("a:abc"), ["dns://a:abc.:53"]);
        assert_eq!(err("a:"), "expecting data after last colon: \"a:\"");
        assert_eq!(err(""), "expecting data after last colon: \"\"");
    }

    #[test]
    fn host_checks_spec_4_3_3() {
        let long = "a".repeat(256);
        assert_eq!(err(&long), "specified zone is too long: 256 > 255");
        assert_eq!(err("a..b"), "zone is not a valid domain name: a..b");
        assert_eq!(
            err(&"a".repeat(64)),
            format!("zone is not a valid domain name: {}", "a".repeat(64))
        );
        assert!(normalize_key(&"a".repeat(63), "53").is_ok());
        assert_eq!(err(".a"), "zone is not a valid domain name: .a");
    }

    #[test]
    fn cidrs_become_reverse_zones_spec_4_3_4() {
        assert_eq!(zones("10.0.0.1/24"), ["dns://0.0.10.in-addr.arpa.:53"]);
        assert_eq!(
            zones("10.0.0.0/15"),
            ["dns://0.10.in-addr.arpa.:53", "dns://1.10.in-addr.arpa.:53"]
        );
        assert_eq!(zones("172.16.0.0/12").len(), 16);
        assert_eq!(zones("10.9.3.0/18").len(), 64);
        assert_eq!(zones("2001:db8::/29").len(), 8);
        assert_eq!(zones("0.0.0.0/0"), ["dns://in-addr.arpa.:53"]);
        assert_eq!(zones("10.0.0.0/33"), ["dns://10.0.0.0/33.:53"]);
        assert_eq!(err("::/64"), "invalid CIDR ::/64");
    }

    #[test]
    fn go_simple_lowercasing_spec_4_3_6() {
        assert_eq!(zones("EXAMPLE.İΣ"), ["dns://example.iσ.:53"]);
    }
}
