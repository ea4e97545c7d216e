//! The iptables-save / iptables-restore text format: parsing ([`parse`]) and writing
//! ([`core::fmt::Display`] on the model, [`Style`] for the two quoting conventions).

mod emit;
mod lex;
mod options;
mod parse;

pub use emit::{Style, Styled};
pub(crate) use emit::{needs_quotes, write_quoted};
pub use parse::{ParseOptions, parse, parse_rule, parse_with};
