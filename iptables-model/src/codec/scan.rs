//! Byte scans eight bytes at a time: the lexer's and the line splitter's inner loops.
//!
//! A chunk is read as a little-endian `u64`; a mask flags the high bit of every byte that may
//! stop the scan. Borrows only run upwards, so the lowest flag of each mask is exact and the
//! first flagged byte is the first candidate; a [`byte_set`](super::byte_set) table then
//! decides.

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
/// The high bit of every byte of a chunk (flags the non-ASCII bytes).
pub(crate) const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// Flags the bytes of `chunk` equal to `byte`.
pub(crate) const fn equal(chunk: u64, byte: u8) -> u64 {
    let x = chunk ^ (ONES * byte as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Flags exactly the bytes of `chunk` equal to `byte`: no byte is flagged for a borrow from
/// the one below it (as [`equal`] may flag one above a match), at two more operations.
pub(crate) const fn equal_exact(chunk: u64, byte: u8) -> u64 {
    let x = chunk ^ (ONES * byte as u64);
    !((x & !HIGHS).wrapping_add(!HIGHS) | x) & HIGHS
}

/// Flags the bytes of `chunk` below `bound` (at most 128).
pub(crate) const fn below(chunk: u64, bound: u8) -> u64 {
    chunk.wrapping_sub(ONES * bound as u64) & !chunk & HIGHS
}

/// The index of the first byte at or after `from` in `set` (or the length). `candidates`
/// flags, in a chunk, at least every byte of `set`.
pub(crate) fn find(
    bytes: &[u8],
    from: usize,
    candidates: impl Fn(u64) -> u64,
    set: &[bool; 256],
) -> usize {
    let stops = |b: u8| set.get(usize::from(b)).copied().unwrap_or(true);
    let mut i = from;
    while let Some(chunk) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let mask = candidates(u64::from_le_bytes(*chunk));
        if mask == 0 {
            i += 8;
            continue;
        }
        let at = i + (mask.trailing_zeros() / 8) as usize;
        if bytes.get(at).is_some_and(|&b| stops(b)) {
            return at;
        }
        i = at + 1;
    }
    bytes
        .get(i..)
        .and_then(|tail| tail.iter().position(|&b| stops(b)))
        .map_or(bytes.len(), |n| i + n)
}

/// Whether `candidates` flags a byte of `bytes`, for a quick "none" before an exact scan:
/// the whole chunks, then the last eight bytes (overlapping), are tested at once. Shorter
/// inputs answer `true`, leaving them to the exact scan.
pub(crate) fn may_contain(bytes: &[u8], candidates: impl Fn(u64) -> u64) -> bool {
    let Some(last) = bytes.last_chunk::<8>() else {
        return true;
    };
    let (chunks, _) = bytes.as_chunks::<8>();
    let flags = chunks
        .iter()
        .fold(candidates(u64::from_le_bytes(*last)), |flags, chunk| {
            flags | candidates(u64::from_le_bytes(*chunk))
        });
    flags != 0
}

/// How many `\n` `text` holds. Blocks of 64 bytes are counted into a byte each, a loop of
/// fixed length the compiler turns into vector compares.
pub(crate) fn newlines(text: &str) -> usize {
    let count = |block: &[u8]| {
        block
            .iter()
            .map(|&b| usize::from(b == b'\n'))
            .sum::<usize>()
    };
    let (blocks, tail) = text.as_bytes().as_chunks::<64>();
    blocks.iter().fold(count(tail), |n, block| {
        n + usize::from(block.iter().fold(0u8, |k, &b| k + u8::from(b == b'\n')))
    })
}

/// The index of the first `\n` at or after `from` in `bytes` (or the length).
pub(crate) fn line_end(bytes: &[u8], from: usize) -> usize {
    const NEWLINE: [bool; 256] = super::byte_set(b"\n");
    find(bytes, from, |c| equal(c, b'\n'), &NEWLINE)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::codec::byte_set;

    proptest! {
        /// Counts what a byte-by-byte count counts, whole blocks, tail and all.
        #[test]
        fn newlines_are_counted_exactly(
            text in proptest::string::string_regex("[a\n]{0,200}").unwrap(),
        ) {
            prop_assert_eq!(newlines(&text), text.matches('\n').count());
        }

        /// Flags exactly the bytes equal to the one asked for.
        #[test]
        fn equal_exact_flags_exactly_the_equal_bytes(chunk in any::<[u8; 8]>(), byte in any::<u8>()) {
            let flags = equal_exact(u64::from_le_bytes(chunk), byte);
            for (k, &b) in chunk.iter().enumerate() {
                prop_assert_eq!(flags >> (8 * k) & 0x80 != 0, b == byte);
            }
        }

        /// Finds what a byte-by-byte scan finds, from any start.
        #[test]
        fn agrees_with_a_byte_scan(
            bytes in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'"'), Just(b'\\'), Just(b'!'), Just(b'\t'), any::<u8>()], 0..40),
            from in 0usize..44,
        ) {
            let set = byte_set(b" \t\"\\");
            let plain = |c| below(c, 0x23) | equal(c, b'\\');
            let expected = (from..bytes.len())
                .find(|&i| set[usize::from(bytes[i])])
                .unwrap_or(bytes.len());
            prop_assert_eq!(find(&bytes, from, plain, &set), expected);
        }

        /// Never answers "none" when a byte is flagged.
        #[test]
        fn may_contain_has_no_false_negatives(
            bytes in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'"'), Just(b'x'), any::<u8>()], 0..40),
        ) {
            let set = byte_set(b" \"");
            let plain = |c| below(c, b'!') | equal(c, b'"');
            if bytes.iter().any(|&b| set[usize::from(b)]) {
                prop_assert!(may_contain(&bytes, plain));
            }
        }
    }
}
