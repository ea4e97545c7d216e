//! IP addresses and CIDRs as the API server parses them, and the ranges it refuses for
//! endpoints and external IPs.
//!
//! The API server's strict parsing (`IsValidIPForLegacyField` and `IsValidCIDRForLegacyField`
//! of apimachinery's `pkg/util/validation/ip.go` with `StrictIPCIDRValidation`) refuses the
//! ambiguous forms: IPv4 octets with leading zeros (libc reads them as octal, Go's old parser as
//! decimal) and IPv4-mapped IPv6 addresses (some programs read them as IPv4, others as IPv6).
//! Both are refused here too, as they could make this node and the API server disagree on an
//! address. A CIDR with bits set after its prefix length (`10.0.0.1/8`) is accepted, as the
//! API server has long accepted it for the existing fields.

use std::net::{IpAddr, Ipv4Addr};

/// Why `value` is not an IP address, or the address.
pub(super) fn parse_ip(value: &str) -> Result<IpAddr, &'static str> {
    match value.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_some() => {
            Err("must not be an IPv4-mapped IPv6 address")
        }
        Ok(ip) => Ok(ip),
        Err(_) if has_leading_zero_octet(value) => Err("must not have leading 0s"),
        Err(_) => Err("must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
    }
}

/// Whether `value` is dotted IPv4 but for an octet with a leading zero (`010.1.1.1`).
fn has_leading_zero_octet(value: &str) -> bool {
    let octets: Vec<&str> = value.split('.').collect();
    let decimal =
        |octet: &&str| (1..=3).contains(&octet.len()) && octet.bytes().all(|b| b.is_ascii_digit());
    octets.len() == 4
        && octets.iter().all(decimal)
        && octets
            .iter()
            .any(|octet| octet.len() > 1 && octet.starts_with('0'))
}

/// Why `value` is not a CIDR (`ADDRESS/LENGTH`), or its address and prefix length.
pub(super) fn parse_cidr(value: &str) -> Result<(IpAddr, u8), &'static str> {
    const NOT_A_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
    let (address, length) = value.split_once('/').ok_or(NOT_A_CIDR)?;
    let ip = parse_ip(address).map_err(|why| match why {
        "must not have leading 0s" => "must not have leading 0s in IP or prefix length",
        "must not be an IPv4-mapped IPv6 address" => "must not have an IPv4-mapped IPv6 address",
        _ => NOT_A_CIDR,
    })?;
    if length.is_empty() || !length.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NOT_A_CIDR);
    }
    let bits: u8 = length.parse().map_err(|_| NOT_A_CIDR)?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if bits > max {
        return Err(NOT_A_CIDR);
    }
    if length.len() > 1 && length.starts_with('0') {
        return Err("must not have leading 0s in IP or prefix length");
    }
    Ok((ip, bits))
}

/// As the API server's ValidateEndpointIP and ValidateNonSpecialIP (`pkg/apis/core/validation`):
/// why `ip` may not be an endpoint or external IP (unspecified, loopback, link-local unicast or
/// link-local multicast), if it may not.
pub(super) fn special_range(ip: IpAddr) -> Option<&'static str> {
    if ip.is_unspecified() {
        Some("may not be unspecified (0.0.0.0, ::)")
    } else if ip.is_loopback() {
        Some("may not be in the loopback range (127.0.0.0/8, ::1/128)")
    } else if is_link_local_unicast(ip) {
        Some("may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    } else if is_link_local_multicast(ip) {
        Some("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
    } else {
        None
    }
}

fn is_link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// As Go's `net.IP.IsLinkLocalMulticast`: 224.0.0.0/24, and IPv6 multicast of link-local scope
/// (`ffX2::`, whatever the flags `X`).
fn is_link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == Ipv4Addr::new(224, 0, 0, 0).octets()[..3],
        IpAddr::V6(v6) => {
            let [first, second, ..] = v6.octets();
            first == 0xff && second & 0x0f == 0x02
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_the_api_server_strictly_does() {
        // Vectors from apimachinery's pkg/util/validation/ip_test.go (TestIsValidIP,
        // TestIsValidIPForLegacyField with strict validation).
        for good in [
            "1.2.3.4",
            "255.255.255.255",
            "0.0.0.0",
            "::1",
            "2001:db8::ffff",
            "2001:DB8::1",
            "1:2:3:4:5:6:7:8",
            "::",
            "2001:db8::1.2.3.4",
        ] {
            assert!(parse_ip(good).is_ok(), "{good}");
        }
        assert_eq!(parse_ip("010.002.003.004"), Err("must not have leading 0s"));
        assert_eq!(
            parse_ip("::ffff:1.2.3.4"),
            Err("must not be an IPv4-mapped IPv6 address")
        );
        for bad in [
            "",
            "1.2.3",
            "1.2.3.4.5",
            "256.1.1.1",
            "a.b.c.d",
            " 1.2.3.4",
            "1.2.3.4 ",
            "fe80::1%eth0",
            "1.2.3.4/32",
            "2001:db8::ffff::1",
            "12345::",
        ] {
            assert!(parse_ip(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_cidrs_as_the_api_server_strictly_does() {
        // Vectors from apimachinery's pkg/util/validation/ip_test.go (TestIsValidCIDR and
        // TestIsValidCIDRForLegacyField).
        for good in [
            "0.0.0.0/0",
            "1.0.0.0/8",
            "10.9.8.0/24",
            "10.9.8.7/32",
            "::/0",
            "2001:db8::/64",
            "2001:db8::1/128",
            "10.0.0.1/8",
        ] {
            assert!(parse_cidr(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "1.2.3.4",
            "1.2.3.4/",
            "1.2.3.4/33",
            "2001:db8::/129",
            "1.2.3.4/-1",
            "1.2.3.4/+8",
            "010.0.0.0/8",
            "1.0.0.0/08",
            "::ffff:1.2.3.0/120",
            "a.b.c.d/8",
        ] {
            assert!(parse_cidr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn refuses_the_endpoint_special_ranges_as_validate_endpoint_ip() {
        // The hostile endpoints of issue 28, and the cases of TestValidateEndpointIP.
        for special in [
            "127.0.0.1",
            "127.255.0.3",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "::",
            "fe80::1",
            "febf::1",
            "224.0.0.1",
            "224.0.0.255",
            "ff02::1",
            "ff12::2",
        ] {
            let ip = parse_ip(special).unwrap();
            assert!(special_range(ip).is_some(), "{special}");
        }
        for ordinary in [
            "10.0.0.1",
            "1.2.3.4",
            "224.0.1.1",
            "2001:db8::1",
            "fec0::1",
            "ff05::1",
            "169.255.0.1",
        ] {
            let ip = parse_ip(ordinary).unwrap();
            assert_eq!(special_range(ip), None, "{ordinary}");
        }
    }
}
