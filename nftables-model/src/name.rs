//! The two kinds of free text a transaction carries, each checked when it is made so that no
//! value can change the shape of the line it is written into: object names ([`Name`]) and
//! comments ([`Comment`]).

use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;

use crate::error::Error;

/// The longest object name nft accepts (`NFT_NAME_MAXLEN` less its NUL).
pub const MAX_NAME: usize = 255;

/// The longest comment nft accepts (`NFT_USERDATA_MAXLEN` for comments).
pub const MAX_COMMENT: usize = 128;

/// The text of a [`Name`] or [`Comment`]: a constant of this crate, or text made at run
/// time and shared, so that a clone never copies (a chain's name is in its `add chain`, in
/// each of its rules and in every verdict that reaches it).
#[derive(Clone)]
enum Text {
    Fixed(&'static str),
    Shared(Arc<str>),
}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Self::Fixed(s) => s,
            Self::Shared(s) => s,
        }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        // One text shared (a name kept from a sync to the next and found in an index) is
        // equal without reading it.
        match (self, other) {
            (Self::Shared(a), Self::Shared(b)) if Arc::ptr_eq(a, b) => true,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for Text {}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl core::hash::Hash for Text {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Whether `byte` may be in a name (after its first byte, which is also not a digit, `/` or
/// `-`).
pub(crate) const fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'_' | b'.')
}

/// The name of a table, chain, set or map: nft's identifier syntax, so it is written bare.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(Text);

impl Name {
    /// `text` as a name.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] when it is empty, longer than [`MAX_NAME`], does not start with a
    /// letter, `_` or `.`, or has a byte other than a letter, a digit, `/`, `-`, `_` or `.`.
    pub fn new(text: &str) -> Result<Self, Error> {
        let bytes = text.as_bytes();
        let first_ok = bytes
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'.'));
        let rest_ok = bytes.iter().copied().all(is_name_byte);
        if first_ok && rest_ok && bytes.len() <= MAX_NAME {
            Ok(Self(Text::Shared(text.into())))
        } else {
            Err(Error::Name(text.into()))
        }
    }

    /// `text`, which its caller made of parts known to be valid in a name and in a valid
    /// order (a per-service name: a prefix, a hash and checked text).
    pub(crate) fn checked(text: &str) -> Self {
        debug_assert!(Self::new(text).is_ok(), "{text}");
        Self(Text::Shared(text.into()))
    }

    /// One of this crate's constant names, known to be valid (a test checks each).
    pub(crate) fn trusted(text: &'static str) -> Self {
        debug_assert!(Self::new(text).is_ok(), "{text}");
        Self(Text::Fixed(text))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A comment, written between double quotes as Go's `%q` writes printable text: without `"`,
/// `\` or control characters there is nothing to escape and nothing can end the quotes early.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Comment(Text);

impl Comment {
    /// `text` as a comment.
    ///
    /// # Errors
    ///
    /// [`Error::Comment`] when it has a `"`, a `\`, a control character, or more than
    /// [`MAX_COMMENT`] bytes.
    pub fn new(text: &str) -> Result<Self, Error> {
        let ok = text.len() <= MAX_COMMENT
            && !text
                .chars()
                .any(|c| c.is_control() || matches!(c, '"' | '\\'));
        if ok {
            Ok(Self(Text::Shared(text.into())))
        } else {
            Err(Error::Comment(text.into()))
        }
    }

    /// One of this crate's constant comments, known to be valid (a test checks each).
    pub(crate) fn trusted(text: &'static str) -> Self {
        debug_assert!(Self::new(text).is_ok(), "{text}");
        Self(Text::Fixed(text))
    }

    /// The comment's text (without quotes).
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Appends the comment between its quotes.
    pub(crate) fn push_quoted(&self, out: &mut String) {
        out.push('"');
        out.push_str(self.as_str());
        out.push('"');
    }
}

impl fmt::Display for Comment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_nft_identifiers() {
        assert!(Name::new("service-ULMVA6XW-ns1/svc1/tcp/p80").is_ok());
        assert!(Name::new("endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80").is_ok());
        for bad in [
            "", "1abc", "a b", "a;b", "a\nb", "a{", "a}", "a\"", "a#b", "a@b", "a:b",
        ] {
            assert!(Name::new(bad).is_err(), "{bad:?}");
        }
        assert!(Name::new(&"a".repeat(MAX_NAME)).is_ok());
        assert!(Name::new(&"a".repeat(MAX_NAME + 1)).is_err());
    }

    #[test]
    fn comments_cannot_close_their_quotes() {
        assert_eq!(
            Comment::new("ns2/svc2:p80").map(|c| alloc::format!("{c}")),
            Ok("\"ns2/svc2:p80\"".into())
        );
        for bad in ["a\"b", "a\\b", "a\nb", "a\0b"] {
            assert!(Comment::new(bad).is_err(), "{bad:?}");
        }
        assert!(Comment::new(&"x".repeat(MAX_COMMENT + 1)).is_err());
    }
}
