//! Numbers and addresses appended to text without the formatter: the rule generators' hot
//! path (`core::fmt` costs several times more per address), shared with nftables-model. The
//! text is what `Display` writes.

use alloc::string::String;
use core::fmt::Write as _;
use core::net::IpAddr;

/// Appends the decimal digits of `n`.
pub fn push_u32(out: &mut String, n: u32) {
    let mut digits = [0u8; 10];
    let mut len = 0;
    let mut rest = n;
    loop {
        if let Some(slot) = digits.get_mut(len) {
            *slot = b'0' + (rest % 10) as u8;
        }
        len += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for digit in digits.iter().take(len).rev() {
        out.push(char::from(*digit));
    }
}

/// Appends the one to three decimal digits of `n`.
fn push_u8(out: &mut String, n: u8) {
    if n >= 100 {
        out.push(char::from(b'0' + n / 100));
    }
    if n >= 10 {
        out.push(char::from(b'0' + n / 10 % 10));
    }
    out.push(char::from(b'0' + n % 10));
}

/// Appends `ip` as Rust (and Go) print it: dotted quad, or RFC 5952 for IPv6.
pub fn push_ip(out: &mut String, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            push_u8(out, a);
            for octet in [b, c, d] {
                out.push('.');
                push_u8(out, octet);
            }
        }
        // Rare: the formatter's RFC 5952 compression is worth its cost.
        IpAddr::V6(v6) => {
            let _ = write!(out, "{v6}");
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use core::net::{Ipv4Addr, Ipv6Addr};

    use proptest::prelude::*;

    use super::*;

    /// The text is what `Display` writes, at the edges of each digit count.
    #[test]
    fn numbers_and_addresses_as_display_writes_them() {
        for n in [
            0,
            9,
            10,
            99,
            100,
            65_535,
            999_999_999,
            1_000_000_000,
            u32::MAX,
        ] {
            let mut out = String::from("x");
            push_u32(&mut out, n);
            assert_eq!(out, alloc::format!("x{n}"));
        }
        let addresses: [IpAddr; 4] = [
            Ipv4Addr::new(0, 0, 0, 0).into(),
            Ipv4Addr::new(255, 255, 255, 255).into(),
            Ipv4Addr::new(10, 100, 9, 1).into(),
            Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1).into(),
        ];
        for ip in addresses {
            let mut out = String::new();
            push_ip(&mut out, ip);
            assert_eq!(out, ip.to_string());
        }
    }

    proptest! {
        #[test]
        fn any_number_or_address_as_display_writes_it(n: u32, octets: [u8; 4]) {
            let mut out = String::new();
            push_u32(&mut out, n);
            prop_assert_eq!(out, n.to_string());
            let ip = IpAddr::from(octets);
            let mut out = String::new();
            push_ip(&mut out, ip);
            prop_assert_eq!(out, ip.to_string());
        }
    }
}
