//! The iptables-save / iptables-restore text format: parsing ([`parse`]) and writing
//! ([`core::fmt::Display`] on the model, [`Style`] for the two quoting conventions).

mod emit;
mod lex;
mod options;
mod parse;
mod scan;

pub use emit::{Style, Styled};
pub(crate) use emit::{has_special, write_quoted};
pub use parse::{ParseOptions, parse, parse_rule, parse_with};

/// A membership table of `bytes`, built at compile time (byte scans test one entry per byte).
#[allow(clippy::indexing_slicing)] // evaluated at compile time: an error fails the build
pub(crate) const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

/// `text.split_once(separator)` for an ASCII separator, by a plain byte loop: the values it
/// splits (`ADDRESS/MASK`, `0.5000000000`) are a few bytes long, shorter than a searcher
/// takes to set up.
#[inline]
pub(crate) fn split_once_ascii(text: &str, separator: u8) -> Option<(&str, &str)> {
    debug_assert!(separator.is_ascii());
    let at = text.bytes().position(|b| b == separator)?;
    // An ASCII byte is a whole character: both sides are on character boundaries.
    Some((text.get(..at)?, text.get(at + 1..)?))
}

#[cfg(test)]
mod tests {
    use super::split_once_ascii;

    #[test]
    fn splits_as_split_once_does() {
        for text in ["10.0.0.0/8", "/", "a/", "/b", "none", "", "é/ü/x", "1.5"] {
            for separator in [b'/', b'.'] {
                assert_eq!(
                    split_once_ascii(text, separator),
                    text.split_once(char::from(separator)),
                    "{text:?} at {separator}"
                );
            }
        }
    }
}
