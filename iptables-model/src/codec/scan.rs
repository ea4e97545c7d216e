//! Byte scans eight bytes at a time: the lexer's and the line splitter's inner loops.
//!
//! A chunk is read as a little-endian `u64`; a mask flags the high bit of every byte that may
//! stop the scan. Borrows only run upwards, so the lowest flag of each mask is exact and the
//! first flagged byte is the first candidate; a [`byte_set`](super::byte_set) table then
//! decides. [`block_flags`] gathers the masks of eight chunks into one bit per byte, for
//! scans that visit many flagged bytes (the word splitter: every blank).

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
/// The high bit of every byte of a chunk (flags the non-ASCII bytes).
pub(crate) const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// Flags the bytes of `chunk` equal to `byte`.
pub(crate) const fn equal(chunk: u64, byte: u8) -> u64 {
    let x = chunk ^ (ONES * byte as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Flags the bytes of `chunk` below `bound` (at most 128).
pub(crate) const fn below(chunk: u64, bound: u8) -> u64 {
    chunk.wrapping_sub(ONES * bound as u64) & !chunk & HIGHS
}

/// A chunk's flags (high bits of its bytes) gathered into its low eight bits, byte `k`'s
/// flag in bit `k`: the multiplier moves the flag of byte `k` (bit `8k` after the shift) to
/// bit `56 + k`, and no two products meet, so nothing carries.
const fn gather(flags: u64) -> u64 {
    (flags >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// The flags of up to 64 bytes from `at`, one bit each (bit `k` for byte `at + k`), and how
/// many of those bytes there are. `candidates` flags a chunk's bytes in their high bits, as
/// [`below`] and [`equal`] do. One mask for a whole block lets a scan loop over the flagged
/// bytes of 64 at once, so its exit branch is taken once per block, not once per chunk.
#[inline(always)]
pub(crate) fn block_flags(
    bytes: &[u8],
    at: usize,
    candidates: impl Fn(u64) -> u64,
) -> (u64, usize) {
    let rest = bytes.get(at..).unwrap_or_default();
    let flags = |block: &[u8; 64]| {
        let (chunks, _) = block.as_chunks::<8>();
        chunks.iter().enumerate().fold(0, |flags, (k, chunk)| {
            flags | gather(candidates(u64::from_le_bytes(*chunk))) << (8 * k)
        })
    };
    if let Some(block) = rest.first_chunk::<64>() {
        return (flags(block), 64);
    }
    // The last, short block: padded, and the padding's flags dropped.
    let mut padded = [0u8; 64];
    if let Some(head) = padded.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    let real = u64::MAX.checked_shr(64 - rest.len() as u32).unwrap_or(0);
    (flags(&padded) & real, rest.len())
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

/// The `\n` of one block of 64 bytes, counted into a byte: a loop of fixed length the
/// compiler turns into vector compares.
fn block_newlines(block: &[u8; 64]) -> usize {
    usize::from(block.iter().fold(0u8, |k, &b| k + u8::from(b == b'\n')))
}

/// How many `\n` `bytes` holds, a block of 64 bytes at a time.
pub(crate) fn newlines(bytes: &[u8]) -> usize {
    let count = |block: &[u8]| {
        block
            .iter()
            .map(|&b| usize::from(b == b'\n'))
            .sum::<usize>()
    };
    let (blocks, tail) = bytes.as_chunks::<64>();
    blocks
        .iter()
        .fold(count(tail), |n, block| n + block_newlines(block))
}

/// How many lines a table section that starts at the beginning of `bytes` may hold: the
/// newlines before the next table's header (a line whose first non-blank byte is `*`), or,
/// without one, every line left. One pass of 64 bytes at a time: a block's newlines are
/// counted into a byte, and only a block that holds a `*` is searched for a header. The
/// count sizes the section's line vector; lines of later sections counted in would be
/// reserved and given back.
pub(crate) fn section_lines(bytes: &[u8]) -> usize {
    let is_header = |i: usize| {
        let before = bytes.get(..i).unwrap_or_default();
        bytes.get(i) == Some(&b'*')
            && matches!(
                before.iter().rev().find(|&&b| b != b' ' && b != b'\t'),
                None | Some(b'\n')
            )
    };
    let header = |from: usize, to: usize| (from..to).find(|&i| is_header(i));
    let (blocks, _) = bytes.as_chunks::<64>();
    let mut lines = 0;
    for (k, block) in blocks.iter().enumerate() {
        let star = block.iter().fold(0u8, |any, &b| any | u8::from(b == b'*'));
        if star != 0
            && let Some(end) = header(k * 64, k * 64 + 64)
        {
            return lines + newlines(bytes.get(k * 64..end).unwrap_or_default());
        }
        lines += block_newlines(block);
    }
    let tail = blocks.len() * 64;
    match header(tail, bytes.len()) {
        Some(end) => lines + newlines(bytes.get(tail..end).unwrap_or_default()),
        None => lines + newlines(bytes.get(tail..).unwrap_or_default()) + 1,
    }
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
            prop_assert_eq!(newlines(text.as_bytes()), text.matches('\n').count());
        }

        /// Counts the lines before the first line whose first non-blank byte is `*`, or all
        /// lines, wherever the header and stray stars fall across blocks of 64 bytes.
        #[test]
        fn section_lines_stop_at_the_next_header(
            text in proptest::string::string_regex("([a *]{0,70}\n){0,12}[ \t]{0,2}(\\*nat\n)?[a\n*]{0,80}").unwrap(),
        ) {
            let expected = text
                .split('\n')
                .position(|line| line.trim_start_matches([' ', '\t']).starts_with('*'))
                .unwrap_or(text.matches('\n').count() + 1);
            prop_assert_eq!(section_lines(text.as_bytes()), expected);
        }

        /// One bit per byte, in order, as the chunk masks flag them; nothing past the end.
        #[test]
        fn block_flags_gathers_every_chunk_flag_in_order(
            bytes in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'"'), Just(b'a'), any::<u8>()], 0..150),
            at in 0usize..160,
        ) {
            let candidates = |c| below(c, b'#') | equal(c, b'\\');
            let (flags, real) = block_flags(&bytes, at, candidates);
            let rest = bytes.get(at..).unwrap_or_default();
            prop_assert_eq!(real, rest.len().min(64));
            // Each byte's flag as the chunk mask of its own eight bytes (zero-padded) has it.
            for k in 0..64 {
                let chunk_start = k / 8 * 8;
                let mut chunk = [0u8; 8];
                for (j, slot) in chunk.iter_mut().enumerate() {
                    *slot = rest.get(chunk_start + j).copied().unwrap_or(0);
                }
                let flagged = candidates(u64::from_le_bytes(chunk)) >> (8 * (k % 8) + 7) & 1 == 1;
                prop_assert_eq!(flags >> k & 1 == 1, flagged && k < real, "byte {}", k);
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
