//! Chain names without a heap allocation each.
//!
//! The kernel keeps a chain or target name in 29 bytes with its terminating NUL
//! (`XT_EXTENSION_MAXNAMELEN`), so every real name fits in 28 bytes and is stored inline. A
//! longer one (only a non-ASCII name of at most 28 characters passes the parser's check) is
//! kept on the heap, so no accepted name is refused here.

use alloc::boxed::Box;
use alloc::string::String;
use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::Deref;

/// The bytes a name stored inline may take: the kernel's limit for chain and target names.
pub const INLINE_NAME_BYTES: usize = 28;

/// A chain name (or a target extension's name): inline up to [`INLINE_NAME_BYTES`] bytes,
/// on the heap beyond. It reads as a `str` and compares, orders and hashes as one.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChainName(ShortText);

/// Text inline up to [`INLINE_NAME_BYTES`] bytes, on the heap beyond: the storage of chain
/// names and of other short words of a rule (a `--probability`).
#[derive(Clone)]
pub(crate) enum ShortText {
    Inline(heapless::String<INLINE_NAME_BYTES, u8>),
    Heap(Box<str>),
}

impl ShortText {
    /// `text`, without an allocation when it fits inline.
    pub(crate) fn new(text: &str) -> Self {
        match heapless::String::try_from(text) {
            Ok(inline) => Self::Inline(inline),
            Err(_) => Self::Heap(text.into()),
        }
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Inline(s) => s.as_str(),
            Self::Heap(s) => s,
        }
    }
}

impl PartialEq for ShortText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ShortText {}

impl PartialOrd for ShortText {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ShortText {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for ShortText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for ShortText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl ChainName {
    /// The name as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl From<&str> for ChainName {
    fn from(name: &str) -> Self {
        Self(ShortText::new(name))
    }
}

impl From<String> for ChainName {
    fn from(name: String) -> Self {
        Self::from(name.as_str())
    }
}

impl From<&String> for ChainName {
    fn from(name: &String) -> Self {
        Self::from(name.as_str())
    }
}

impl From<&ChainName> for ChainName {
    fn from(name: &ChainName) -> Self {
        name.clone()
    }
}

impl From<ChainName> for String {
    fn from(name: ChainName) -> Self {
        name.as_str().into()
    }
}

impl Deref for ChainName {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for ChainName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for ChainName {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for ChainName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ChainName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<ChainName> for str {
    fn eq(&self, other: &ChainName) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ChainName> for &str {
    fn eq(&self, other: &ChainName) -> bool {
        *self == other.as_str()
    }
}

impl fmt::Debug for ChainName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for ChainName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;

    use super::*;

    #[test]
    fn short_names_are_inline_and_long_ones_kept_whole() {
        let kernel_max = "KUBE-SVC-ABCDEFGHIJKLMNOPQRS"; // 28 bytes
        assert!(matches!(
            ChainName::from(kernel_max).0,
            ShortText::Inline(_)
        ));
        let wide = "é".repeat(28);
        let name = ChainName::from(wide.as_str());
        assert!(matches!(name.0, ShortText::Heap(_)));
        assert_eq!(name, *wide.as_str());
        assert_eq!(ChainName::from(kernel_max).to_string(), kernel_max);
        let (a, b) = (ChainName::from("A"), ChainName::from("B"));
        assert!(a < b);
    }
}
