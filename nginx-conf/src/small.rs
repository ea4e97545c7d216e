//! Byte strings stored inline when short, so that a parsed tree needs few allocations.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::ops::Deref;

/// Inline capacity: most words and indentation runs of real configs fit, and with the length
/// and the tag the type takes 24 bytes on 64-bit targets, a parsed tree being mostly these.
const INLINE: usize = 22;

/// An immutable byte string kept inline up to [`INLINE`] bytes, on the heap beyond.
#[derive(Clone)]
pub(crate) enum SmallBytes {
    /// Short: the first `len` bytes of `buf` (the bytes after them are unspecified).
    Inline { len: u8, buf: [u8; INLINE] },
    /// Long.
    Heap(Box<[u8]>),
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
            _ => Self::Heap(bytes.into()),
        }
    }

    /// Copies `input[start..end]`. A short string is copied as a whole buffer's worth of
    /// `input` when `input` has that many bytes from `start`: a fixed-size copy, much cheaper
    /// than a call to `memcpy` for each word of a parsed file.
    pub(crate) fn from_input(input: &[u8], start: usize, end: usize) -> Self {
        let len = end.saturating_sub(start);
        match (u8::try_from(len), input.get(start..start + INLINE)) {
            (Ok(short), Some(window)) if len <= INLINE => {
                let mut buf = [0; INLINE];
                buf.copy_from_slice(window);
                Self::Inline { len: short, buf }
            }
            _ => Self::new(input.get(start..end).unwrap_or_default()),
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
            Self::Heap(bytes.into_boxed_slice())
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

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn three_words_on_64_bit_targets() {
        assert_eq!(core::mem::size_of::<SmallBytes>(), 24);
    }

    #[test]
    fn copies_of_input_read_back_whatever_follows() {
        let input: Vec<u8> = (0..100u8).collect();
        for (start, end) in [
            (0, 0),
            (3, 10),
            (0, INLINE),
            (5, 5 + INLINE + 1),
            (90, 100),
            (99, 100),
        ] {
            let copy = SmallBytes::from_input(&input, start, end);
            assert_eq!(&*copy, &input[start..end]);
            assert_eq!(copy, SmallBytes::new(&input[start..end]));
        }
        assert!(SmallBytes::from_input(&input, 90, 120).is_empty());
    }
}
