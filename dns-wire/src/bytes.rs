//! [`RdataBytes`]: the RDATA of an owned record, inline when short so that most records of a
//! parsed message need no allocation of their own.

use alloc::vec::Vec;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::Deref;

/// Bytes kept inline (A, AAAA and most name-bearing RDATA fit).
const INLINE: usize = 30;

/// The least capacity taken when the bytes move to the heap.
const SPILL: usize = 2 * INLINE + 4;

/// RDATA bytes: inline up to 30 bytes, on the heap beyond. Reads as a `[u8]`.
#[derive(Clone)]
pub struct RdataBytes(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Vec<u8>),
}

impl RdataBytes {
    /// No bytes.
    pub const fn new() -> Self {
        Self(Repr::Inline {
            len: 0,
            bytes: [0; INLINE],
        })
    }

    /// The bytes as a slice.
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Repr::Heap(v) => v,
        }
    }

    /// Appends `more`, moving to the heap when the inline room runs out.
    pub fn extend_from_slice(&mut self, more: &[u8]) {
        match &mut self.0 {
            Repr::Inline { len, bytes } => {
                let start = usize::from(*len);
                match bytes.get_mut(start..start + more.len()) {
                    Some(dst) => {
                        dst.copy_from_slice(more);
                        *len += more.len() as u8;
                    }
                    None => {
                        // Room for what usually follows too: RDATA with names is built a
                        // piece at a time.
                        let mut v = Vec::with_capacity((start + more.len()).max(SPILL));
                        v.extend_from_slice(bytes.get(..start).unwrap_or_default());
                        v.extend_from_slice(more);
                        self.0 = Repr::Heap(v);
                    }
                }
            }
            Repr::Heap(v) => v.extend_from_slice(more),
        }
    }

    /// Appends one byte.
    pub fn push(&mut self, byte: u8) {
        self.extend_from_slice(&[byte]);
    }

    /// Removes every byte.
    pub fn clear(&mut self) {
        *self = Self::new();
    }
}

impl Default for RdataBytes {
    fn default() -> Self {
        Self::new()
    }
}

impl Deref for RdataBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for RdataBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<&[u8]> for RdataBytes {
    fn from(bytes: &[u8]) -> Self {
        let mut out = Self::new();
        out.extend_from_slice(bytes);
        out
    }
}

impl From<Vec<u8>> for RdataBytes {
    fn from(bytes: Vec<u8>) -> Self {
        if bytes.len() <= INLINE {
            Self::from(bytes.as_slice())
        } else {
            Self(Repr::Heap(bytes))
        }
    }
}

impl PartialEq for RdataBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for RdataBytes {}

impl PartialEq<[u8]> for RdataBytes {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<Vec<u8>> for RdataBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Hash for RdataBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl fmt::Debug for RdataBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_to_the_heap_and_compares_by_content() {
        let mut b = RdataBytes::new();
        b.extend_from_slice(&[1; 20]);
        b.extend_from_slice(&[2; 10]);
        assert!(matches!(b.0, Repr::Inline { len: 30, .. }));
        b.push(3);
        assert!(matches!(b.0, Repr::Heap(_)));
        let mut expected = alloc::vec![1; 20];
        expected.extend_from_slice(&[2; 10]);
        expected.push(3);
        assert_eq!(b, expected);
        assert_eq!(RdataBytes::from(expected), b);
        b.clear();
        assert!(b.is_empty());
    }
}
