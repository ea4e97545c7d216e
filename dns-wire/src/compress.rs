//! Name compression for the encoder (RFC 1035 §4.1.4): a fixed table, no allocation.
//!
//! The table maps a hash of a name suffix (its exact bytes: matching is case-sensitive, so
//! every name keeps its own case) to the offset where that suffix was written. It has a fixed
//! number of slots, probed at most [`PROBES`] times and overwritten when full, so each lookup
//! is O(1) however many names a message holds. A hit is confirmed by comparing the suffix with the bytes already written,
//! so a stale or colliding slot can only cost a missed pointer, never a wrong one. Suffixes
//! at offsets of 0x4000 and beyond are never recorded: a pointer has 14 bits.

use crate::name::{MAX_NAME_LEN, MAX_POINTER_HOPS};

/// Slots in the table (a power of two).
const SLOTS: usize = 256;
/// Slots looked at per lookup or insert (linear probing).
const PROBES: usize = 4;
/// The first offset a pointer cannot reach.
pub(crate) const MAX_POINTER_TARGET: usize = 0x4000;

/// Suffix hash to offset, direct-mapped.
#[derive(Clone, Debug)]
pub(crate) struct Compressor {
    /// `(hash, offset)`; offset 0 marks an empty slot (names never start inside the header).
    slots: [(u32, u16); SLOTS],
}

impl Default for Compressor {
    fn default() -> Self {
        Self {
            slots: [(0, 0); SLOTS],
        }
    }
}

/// The label offsets and suffix hashes of an uncompressed name.
pub(crate) struct Suffixes {
    /// Offset of each label's length byte in the uncompressed name.
    pub(crate) starts: [u8; MAX_NAME_LEN / 2 + 1],
    /// Hash of the suffix that starts at each label.
    pub(crate) hashes: [u32; MAX_NAME_LEN / 2 + 1],
    /// Number of labels (the root excluded).
    pub(crate) count: usize,
}

impl Suffixes {
    /// Label offsets and suffix hashes of `wire`, an uncompressed name.
    pub(crate) fn of(wire: &[u8]) -> Self {
        let mut s = Self {
            starts: [0; MAX_NAME_LEN / 2 + 1],
            hashes: [0; MAX_NAME_LEN / 2 + 1],
            count: 0,
        };
        let mut pos = 0usize;
        while let Some(&len) = wire.get(pos) {
            if len == 0 {
                break;
            }
            let Some(slot) = s.starts.get_mut(s.count) else {
                break;
            };
            *slot = pos as u8;
            s.count += 1;
            pos += 1 + usize::from(len);
        }
        let mut hash = 0x811C_9DC5u32;
        for i in (0..s.count).rev() {
            let start = usize::from(s.starts.get(i).copied().unwrap_or(0));
            let len = usize::from(wire.get(start).copied().unwrap_or(0));
            for &b in wire.get(start..=start + len).unwrap_or_default() {
                hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
            }
            if let Some(h) = s.hashes.get_mut(i) {
                *h = hash;
            }
        }
        s
    }
}

impl Compressor {
    /// The slots to probe for `hash`.
    fn probe(hash: u32) -> impl Iterator<Item = usize> {
        let first = (hash.wrapping_mul(0x9E37_79B1) >> 24) as usize;
        (0..PROBES).map(move |i| (first + i) % SLOTS)
    }

    /// An earlier offset in `out` where the suffix `suffix` (uncompressed, exact bytes) was
    /// written, if the table remembers one and it still matches.
    pub(crate) fn find(&self, out: &[u8], hash: u32, suffix: &[u8]) -> Option<u16> {
        Self::probe(hash)
            .filter_map(|i| self.slots.get(i))
            .take_while(|&&(_, offset)| offset != 0)
            .find(|&&(h, offset)| h == hash && matches(out, usize::from(offset), suffix))
            .map(|&(_, offset)| offset)
    }

    /// Remembers that a suffix with `hash` starts at `offset`, if a pointer can reach it: in
    /// the first free probed slot, or over the first one when all are taken.
    pub(crate) fn insert(&mut self, hash: u32, offset: usize) {
        let Ok(offset @ 1..) = u16::try_from(offset) else {
            return;
        };
        if usize::from(offset) >= MAX_POINTER_TARGET {
            return;
        }
        let slot = Self::probe(hash)
            .find(|&i| self.slots.get(i).is_some_and(|&(_, o)| o == 0))
            .or_else(|| Self::probe(hash).next());
        if let Some(slot) = slot.and_then(|i| self.slots.get_mut(i)) {
            *slot = (hash, offset);
        }
    }
}

/// Whether the name written at `at` in `out` (following our own pointers, strictly backwards)
/// is byte for byte `suffix`.
fn matches(out: &[u8], mut at: usize, suffix: &[u8]) -> bool {
    let mut pos = 0usize;
    let mut hops = 0usize;
    loop {
        let Some(&byte) = out.get(at) else {
            return false;
        };
        if byte >= 0xC0 {
            let Some(&low) = out.get(at + 1) else {
                return false;
            };
            let target = usize::from(u16::from_be_bytes([byte & 0x3F, low]));
            hops += 1;
            if target >= at || hops > MAX_POINTER_HOPS {
                return false;
            }
            at = target;
            continue;
        }
        let len = usize::from(byte);
        let (Some(ours), Some(theirs)) = (suffix.get(pos..=pos + len), out.get(at..=at + len))
        else {
            return false;
        };
        if ours != theirs {
            return false;
        }
        if len == 0 {
            return true;
        }
        pos += len + 1;
        at += len + 1;
    }
}
