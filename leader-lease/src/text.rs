//! Short strings stored inline, so records, identities and events need no allocator.

use core::fmt;
use core::ops::Deref;

/// The longest identity, holder or strategy a record can carry, in bytes.
///
/// client-go identities are a host name (at most 64 bytes on Linux, 63 for a pod) followed by
/// `_` and a UUID (37 more); 256 leaves room for longer schemes, such as a pod's namespace and
/// name.
pub const TEXT_CAPACITY: usize = 256;

/// A string of at most [`TEXT_CAPACITY`] bytes, stored inline (no allocation).
///
/// Dereferences to `str`; build one with `Text::try_from("...")`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(heapless::String<TEXT_CAPACITY>);

/// A string longer than [`TEXT_CAPACITY`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextTooLong {
    /// Its length in bytes.
    pub len: usize,
}

impl Text {
    /// The empty string (a released lease's holder).
    pub const fn new() -> Self {
        Self(heapless::String::new())
    }

    /// The text as a string slice.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl TryFrom<&str> for Text {
    type Error = TextTooLong;

    fn try_from(value: &str) -> Result<Self, Self::Error> {
        heapless::String::try_from(value)
            .map(Self)
            .map_err(|_| TextTooLong { len: value.len() })
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

#[cfg(feature = "alloc")]
impl PartialEq<alloc::string::String> for Text {
    fn eq(&self, other: &alloc::string::String) -> bool {
        self.as_str() == other
    }
}

#[cfg(feature = "alloc")]
impl PartialEq<Text> for alloc::string::String {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for TextTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes is longer than the {TEXT_CAPACITY} bytes a record field can hold",
            self.len
        )
    }
}

impl core::error::Error for TextTooLong {}

/// `Text::try_from` for tests, where the literal is known to fit.
#[cfg(test)]
pub(crate) fn text(value: &str) -> Text {
    Text::try_from(value).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn holds_up_to_capacity() {
        let longest = "x".repeat(TEXT_CAPACITY);
        let text = Text::try_from(longest.as_str()).unwrap();
        assert_eq!(text.as_str(), longest);
        assert_eq!(text.len(), TEXT_CAPACITY);
        assert_eq!(
            Text::try_from(alloc::format!("{longest}y").as_str()),
            Err(TextTooLong {
                len: TEXT_CAPACITY + 1
            })
        );
    }

    #[test]
    fn compares_and_prints_as_str() {
        let text = Text::try_from("node-a_1b2c").unwrap();
        assert_eq!(text, "node-a_1b2c");
        assert!(Text::new().is_empty());
        assert_eq!(text.to_string(), "node-a_1b2c");
        assert_eq!(alloc::format!("{text:?}"), "\"node-a_1b2c\"");
    }
}
