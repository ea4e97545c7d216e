//! Byte strings stored inline when short, so that a parsed tree needs few allocations.

use alloc::vec::Vec;
use core::fmt;
use core::ops::Deref;

/// Inline capacity: most words and indentation runs of real configs fit.
const INLINE: usize = 22;

/// An immutable byte string kept inline up to [`INLINE`] bytes, on the heap beyond.
#[derive(Clone)]
pub(crate) enum SmallBytes {
    /// Short: the first `len` bytes of `buf`.
    Inline { len: u8, buf: [u8; INLINE] },
    /// Long.
    Heap(Vec<u8>),
}

impl SmallBytes {
    /// The empty string.
    pub(crate) const EMPTY: Self = Self::Inline {
        len: 0,
        buf: [0; INLINE],
    };

    /// Copies `bytes`.
    pub(crate) fn new(bytes: &[u8]) -> Self {
        let mut buf = [0; INLINE];
        match (buf.get_mut(..bytes.len()), u8::try_from(bytes.len())) {
            (Some(dst), Ok(len)) => {
                dst.copy_from_slice(bytes);
                Self::Inline { len, buf }
            }
            _ => Self::Heap(bytes.to_vec()),
        }
    }
}

impl Default for SmallBytes {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl From<Vec<u8>> for SmallBytes {
    fn from(bytes: Vec<u8>) -> Self {
        if bytes.len() <= INLINE {
            Self::new(&bytes)
        } else {
            Self::Heap(bytes)
        }
    }
}

impl Deref for SmallBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Inline { len, buf } => buf.get(..usize::from(*len)).unwrap_or_default(),
            Self::Heap(bytes) => bytes,
        }
    }
}

impl PartialEq for SmallBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for SmallBytes {}

impl fmt::Debug for SmallBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.escape_ascii())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_strings_read_back() {
        for len in [0, 1, INLINE, INLINE + 1, 100] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            assert_eq!(&*SmallBytes::new(&bytes), &bytes[..]);
            assert_eq!(&*SmallBytes::from(bytes.clone()), &bytes[..]);
        }
    }
}
