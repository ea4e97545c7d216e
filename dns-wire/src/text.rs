//! Presentation-format helpers shared by names, RDATA and EDNS: escapes and binary encodings.

use core::fmt::{self, Write};

/// Writes `bytes` with `\X` for each byte in `special` and `\DDD` for every byte outside
/// printable ASCII (RFC 1035 §5.1).
pub(crate) fn write_escaped(f: &mut impl Write, bytes: &[u8], special: &[u8]) -> fmt::Result {
    for &b in bytes {
        if special.contains(&b) {
            f.write_char('\\')?;
            f.write_char(char::from(b))?;
        } else if (0x21..=0x7E).contains(&b) {
            f.write_char(char::from(b))?;
        } else {
            write!(f, "\\{b:03}")?;
        }
    }
    Ok(())
}

/// Bytes that must be escaped inside a name label.
pub(crate) const NAME_SPECIALS: &[u8] = b".\\\"();@$ ";
/// Bytes that must be escaped inside a quoted `<character-string>`.
const QUOTED_SPECIALS: &[u8] = b"\"\\";

/// A `<character-string>` in double quotes, with escapes (RFC 1035 §5.1).
pub(crate) fn write_quoted(f: &mut impl Write, bytes: &[u8]) -> fmt::Result {
    f.write_char('"')?;
    for &b in bytes {
        if QUOTED_SPECIALS.contains(&b) {
            f.write_char('\\')?;
            f.write_char(char::from(b))?;
        } else if (0x20..=0x7E).contains(&b) {
            f.write_char(char::from(b))?;
        } else {
            write!(f, "\\{b:03}")?;
        }
    }
    f.write_char('"')
}

/// Upper-case hexadecimal, as dig prints digests and keys.
pub(crate) fn write_hex(f: &mut impl Write, bytes: &[u8]) -> fmt::Result {
    bytes.iter().try_for_each(|b| write!(f, "{b:02X}"))
}

/// The symbol of `alphabet` at `index` (callers mask the index to the alphabet's size).
fn symbol(alphabet: &[u8], index: usize) -> char {
    alphabet.get(index).map_or('?', |&b| char::from(b))
}

/// Base64 with padding (RFC 4648 §4).
pub(crate) fn write_base64(f: &mut impl Write, bytes: &[u8]) -> fmt::Result {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let sextet = |v: u32| symbol(ALPHABET, (v & 63) as usize);
    for chunk in bytes.chunks(3) {
        let mut word = [0u8; 4];
        for (dst, src) in word.iter_mut().skip(1).zip(chunk) {
            *dst = *src;
        }
        let v = u32::from_be_bytes(word);
        f.write_char(sextet(v >> 18))?;
        f.write_char(sextet(v >> 12))?;
        f.write_char(if chunk.len() > 1 { sextet(v >> 6) } else { '=' })?;
        f.write_char(if chunk.len() > 2 { sextet(v) } else { '=' })?;
    }
    Ok(())
}

/// Base32 with the extended-hex alphabet and no padding (RFC 4648 §7, RFC 5155 §3.3).
pub(crate) fn write_base32hex(f: &mut impl Write, bytes: &[u8]) -> fmt::Result {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHIJKLMNOPQRSTUV";
    let mut acc = 0u16;
    let mut bits = 0u32;
    for &b in bytes {
        acc = (acc << 8) | u16::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            f.write_char(symbol(ALPHABET, usize::from((acc >> bits) & 31)))?;
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        f.write_char(symbol(ALPHABET, usize::from((acc << (5 - bits)) & 31)))?;
    }
    Ok(())
}

/// A `\# LEN HEX` generic RDATA representation (RFC 3597 §5).
pub(crate) fn write_generic(f: &mut impl Write, bytes: &[u8]) -> fmt::Result {
    write!(f, "\\# {}", bytes.len())?;
    if !bytes.is_empty() {
        f.write_char(' ')?;
        write_hex(f, bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    fn render(w: impl Fn(&mut String) -> fmt::Result) -> String {
        let mut s = String::new();
        w(&mut s).unwrap();
        s
    }

    #[test]
    fn rfc4648_s10_base64_and_base32hex_test_vectors() {
        let cases = [
            ("", "", ""),
            ("f", "Zg==", "CO"),
            ("fo", "Zm8=", "CPNG"),
            ("foo", "Zm9v", "CPNMU"),
        ];
        for (input, b64, b32) in cases {
            assert_eq!(render(|s| write_base64(s, input.as_bytes())), b64);
            assert_eq!(render(|s| write_base32hex(s, input.as_bytes())), b32);
        }
        assert_eq!(render(|s| write_base32hex(s, b"foobar")), "CPNMUOJ1E8");
    }

    #[test]
    fn rfc1035_s5_1_escapes() {
        assert_eq!(
            render(|s| write_escaped(s, b"a.b\x00", NAME_SPECIALS)),
            "a\\.b\\000"
        );
        assert_eq!(
            render(|s| write_quoted(s, b"say \"hi\"\n")),
            "\"say \\\"hi\\\"\\010\""
        );
    }
}
