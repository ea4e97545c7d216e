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
