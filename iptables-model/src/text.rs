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
