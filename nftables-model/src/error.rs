//! Errors: a value refused before it could become nftables syntax ([`Error`]), and an
//! operation the in-memory ruleset cannot apply ([`ApplyError`]).

use alloc::string::String;
use core::fmt;

/// A value that cannot be written into an `nft -f` transaction as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// An object name (table, chain, set, map) outside nft's identifier syntax: 1 to 255
    /// bytes, a letter, `_` or `.` first, then letters, digits, `/`, `-`, `_` or `.`.
    Name(String),
    /// A comment with a `"`, a `\`, a control character, or more than 128 bytes.
    Comment(String),
    /// An interface name (for the local-traffic detector) with a byte nft would read as syntax.
    Interface(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(n) => write!(f, "{n:?} is not an nftables object name"),
            Self::Comment(c) => write!(f, "{c:?} cannot be written as an nftables comment"),
            Self::Interface(i) => write!(f, "{i:?} cannot be written as an interface name"),
        }
    }
}

impl core::error::Error for Error {}

/// An operation [`crate::Ruleset::apply`] refuses, as the kernel would refuse the transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// The table does not exist (an operation before `add table`).
    NoTable,
    /// The named chain does not exist.
    NoChain(String),
    /// The named set or map does not exist (or is the other kind).
    NoContainer(String),
    /// `delete element` of a key the set or map does not hold.
    NoElement(String),
    /// `add element` of a key a map holds with another value.
    ElementExists(String),
    /// `add set`/`add map`/`add chain` of an existing object with other properties.
    Redefined(String),
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoTable => f.write_str("no such table"),
            Self::NoChain(c) => write!(f, "no such chain {c}"),
            Self::NoContainer(c) => write!(f, "no such set or map {c}"),
            Self::NoElement(e) => write!(f, "no such element {e}"),
            Self::ElementExists(e) => write!(f, "element {e} exists with another value"),
            Self::Redefined(o) => write!(f, "{o} exists with other properties"),
        }
    }
}

impl core::error::Error for ApplyError {}
