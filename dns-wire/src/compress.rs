//! Name compression for the encoder (RFC 1035 §4.1.4): a fixed table, no allocation.
//!
//! The table maps a hash of a name suffix (its exact bytes: matching is case-sensitive, so
//! every name keeps its own case) to the offset where that suffix was written. It has a fixed
//! number of slots, probed at most [`PROBES`] times and overwritten when full, so each lookup
//! is O(1) however many names a message holds. A hit is confirmed by comparing the suffix with the bytes already written,
//! so a stale or colliding slot can only cost a missed pointer, never a wrong one. Suffixes
//! at offsets of 0x4000 and beyond are never recorded: a pointer has 14 bits.

use crate::name::MAX_POINTER_HOPS;

/// Slots in the table (a power of two).
const SLOTS: usize = 256;
/// Slots looked at per lookup or insert (linear probing).
const PROBES: usize = 4;
/// The first offset a pointer cannot reach.
pub(crate) const MAX_POINTER_TARGET: usize = 0x4000;

/// Suffix hash to offset.
#[derive(Clone, Debug)]
pub(crate) struct Compressor {
    /// `(hash tag, offset)`; offset 0 marks an empty slot (names never start in the header).
    slots: [(u16, u16); SLOTS],
}

impl Default for Compressor {
    fn default() -> Self {
        Self {
            slots: [(0, 0); SLOTS],
        }
    }
}

/// The hash of a suffix: its first label (length byte included) combined with the hash of
/// the rest (FNV-1a over exact bytes, so case matters).
pub(crate) fn hash_label(rest: u32, label: &[u8]) -> u32 {
    label
        .iter()
        .fold(rest, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// The hash of the root suffix, where every name ends.
pub(crate) const ROOT_HASH: u32 = 0x811C_9DC5;

impl Compressor {
    /// The slots to probe for `hash`, and the tag stored with it.
    fn probe(hash: u32) -> (impl Iterator<Item = usize>, u16) {
        let first = hash as usize;
        (
            (0..PROBES).map(move |i| (first + i) % SLOTS),
            (hash >> 16) as u16,
        )
    }

    /// An earlier offset in `out` where the suffix `suffix` (uncompressed, exact bytes) was
    /// written, if the table remembers one and it still matches.
    pub(crate) fn find(&self, out: &[u8], hash: u32, suffix: &[u8]) -> Option<u16> {
        let (slots, tag) = Self::probe(hash);
        slots
            .filter_map(|i| self.slots.get(i))
            .take_while(|&&(_, offset)| offset != 0)
            .find(|&&(t, offset)| t == tag && matches(out, usize::from(offset), suffix))
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
        let (mut slots, tag) = Self::probe(hash);
        let first = slots.next().unwrap_or(0);
        let free = core::iter::once(first)
            .chain(slots)
            .find(|&i| self.slots.get(i).is_some_and(|&(_, o)| o == 0))
            .unwrap_or(first);
        if let Some(slot) = self.slots.get_mut(free) {
            *slot = (tag, offset);
        }
    }
}

/// Whether the name written at `at` in `out` (following our own pointers, strictly backwards)
/// is byte for byte `suffix`. Each run of labels up to a pointer is compared in one go.
fn matches(out: &[u8], mut at: usize, suffix: &[u8]) -> bool {
    let mut pos = 0usize;
    let mut hops = 0usize;
    loop {
        let mut end = at;
        let ends_in_root = loop {
            match out.get(end) {
                Some(0) => break true,
                Some(&len @ 1..=0x3F) => end += 1 + usize::from(len),
                Some(_) => break false,
                None => return false,
            }
        };
        let run_end = end + usize::from(ends_in_root);
        let (Some(run), Some(ours)) = (out.get(at..run_end), suffix.get(pos..pos + run_end - at))
        else {
            return false;
        };
        if run != ours {
            return false;
        }
        if ends_in_root {
            return true;
        }
        pos += run.len();
        let Some(&[hi, lo]) = out.get(end..end + 2).and_then(|p| p.first_chunk::<2>()) else {
            return false;
        };
        let target = usize::from(u16::from_be_bytes([hi & 0x3F, lo]));
        hops += 1;
        if target >= end || hops > MAX_POINTER_HOPS {
            return false;
        }
        at = target;
    }
}
