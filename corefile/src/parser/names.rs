//! Directive names: the accepted ones in a hash table, ids for any name when all are
//! accepted, the directives of one block found by id, and a block's tokens regrouped by
//! directive.

use alloc::borrow::Cow;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::ops::Range;

use super::server_block::{Directive, Token};

/// The accepted directive names in an open-addressing hash table: a lookup hashes the
/// length and the first and last bytes, and compares one name or two.
pub(super) struct ValidNames<'a> {
    /// Each distinct name once; its index is its id.
    pub(super) names: Vec<&'a str>,
    /// A power-of-two table, at most a quarter full: a name's id plus one, 0 for a free slot.
    slots: Vec<usize>,
}

impl<'a> ValidNames<'a> {
    pub(super) fn new(all: &[&'a str]) -> Self {
        let size = all.len().saturating_mul(4).max(8).next_power_of_two();
        let mut valid = ValidNames {
            names: Vec::with_capacity(all.len()),
            slots: alloc::vec![0; size],
        };
        for &name in all {
            if let Err(free) = valid.find(name)
                && let Some(slot) = valid.slots.get_mut(free)
            {
                valid.names.push(name);
                *slot = valid.names.len();
            }
        }
        valid
    }

    /// The slot of `name`: `Ok` with its id if it is there, `Err` with the free slot it
    /// would take.
    #[inline]
    fn find(&self, name: &str) -> core::result::Result<usize, usize> {
        let bytes = name.as_bytes();
        let first = usize::from(bytes.first().copied().unwrap_or(0));
        let last = usize::from(bytes.last().copied().unwrap_or(0));
        let mask = self.slots.len() - 1;
        let mut at = (first.wrapping_mul(31) ^ last.wrapping_mul(7) ^ bytes.len()) & mask;
        // The table always has free slots, so a probe ends within one lap.
        for _ in 0..self.slots.len() {
            match self.slots.get(at).copied().unwrap_or(0) {
                0 => return Err(at),
                n => {
                    if self
                        .names
                        .get(n - 1)
                        .is_some_and(|&known| same_name(known, name))
                    {
                        return Ok(n - 1);
                    }
                }
            }
            at = (at + 1) & mask;
        }
        Err(at)
    }

    /// The id of `name`, a small number for equality, if it is accepted.
    #[inline]
    fn id(&self, name: &str) -> Option<usize> {
        self.find(name).ok()
    }
}

/// `a == b` for short texts such as directive names, compared in place (a call to `memcmp`
/// costs more than the few bytes it would compare): from 4 to 16 bytes, as two words that
/// overlap in the middle.
#[inline(always)]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match a.len() {
        0..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => {
            a.first_chunk::<4>() == b.first_chunk::<4>()
                && a.last_chunk::<4>() == b.last_chunk::<4>()
        }
        8..=16 => {
            a.first_chunk::<8>() == b.first_chunk::<8>()
                && a.last_chunk::<8>() == b.last_chunk::<8>()
        }
        _ => a == b,
    }
}

/// The id of the directive `name`: its index among the `valid` names, or, when any name is
/// accepted, its id in `any`; `None` for a name that is not valid. Equal names have equal
/// ids.
#[inline(always)]
// `name` is a `Cow` so that a new name keeps its borrow in `any`.
#[allow(clippy::ptr_arg)]
pub(super) fn directive_id<'i>(
    valid: &Option<ValidNames<'_>>,
    any: &mut AnyNames<'i>,
    name: &Cow<'i, str>,
) -> Option<usize> {
    match valid {
        Some(valid) => valid.id(name),
        None => Some(any.id(name)),
    }
}

/// Directive ids when any name is accepted: each new name takes the next id. The first
/// names are found by a scan (a Corefile names a few dozen plugins at most), any more in a
/// map, so that a block of many distinct names stays `O(n log n)`.
#[derive(Default)]
pub(super) struct AnyNames<'i> {
    /// The first [`AnyNames::FEW`] names, by id.
    few: Vec<Cow<'i, str>>,
    /// The others, with their ids.
    many: BTreeMap<Cow<'i, str>, usize>,
}

impl<'i> AnyNames<'i> {
    /// How many names are found by a scan.
    const FEW: usize = 32;

    /// The id of `name`, added if it is new.
    #[inline(never)]
    #[allow(clippy::ptr_arg)] // As in `directive_id`.
    fn id(&mut self, name: &Cow<'i, str>) -> usize {
        if let Some(id) = self.few.iter().position(|known| same_name(known, name)) {
            return id;
        }
        if let Some(&id) = self.many.get(&**name) {
            return id;
        }
        if self.few.len() < Self::FEW {
            self.few.push(name.clone());
            return self.few.len() - 1;
        }
        let id = Self::FEW + self.many.len();
        self.many.insert(name.clone(), id);
        id
    }
}

/// The directives of one block, in order of first appearance, each with its id
/// ([`directive_id`]).
pub(super) struct Found<'i> {
    /// Their names; the token ranges are set once the block is read.
    pub(super) directives: Vec<Directive<'i>>,
    /// By id: the number of the last block that named that directive, and its index in
    /// that block's `directives`. Entries of earlier blocks are stale, so the table serves
    /// every block without being cleared.
    pub(super) by_id: Vec<(u32, u32)>,
    /// The number of this block (from 1).
    pub(super) block: u32,
}

impl<'i> Found<'i> {
    /// The index of the directive `name` (with id `id`), added if it is new.
    #[inline(always)]
    pub(super) fn slot(&mut self, name: Cow<'i, str>, id: usize) -> usize {
        match self.by_id.get(id).copied() {
            Some((block, slot)) if block == self.block => slot as usize,
            _ => self.add(name, id),
        }
    }

    /// Adds the directive `name` (with id `id`) and returns its index.
    #[inline(always)]
    fn add(&mut self, name: Cow<'i, str>, id: usize) -> usize {
        let slot = self.directives.len();
        self.directives.push(Directive { name, tokens: 0..0 });
        if self.by_id.len() <= id {
            // Ids of names met during the parse (when any is accepted) grow past the table.
            self.by_id.resize(id.saturating_add(1), (0, 0));
        }
        if let Some(entry) = self.by_id.get_mut(id) {
            // Fewer directives than bytes of text, which `check_len` keeps below `u32::MAX`.
            *entry = (self.block, slot as u32);
        }
        slot
    }
}

/// The block's directives and its token list, built from `scratch` (its occurrences' tokens
/// in source order, at the ranges of `occurrences`, whose indices point into `directives`)
/// with each directive's occurrences regrouped into one range. Without a repeated directive
/// `scratch` is the list; otherwise tokens are moved into a new list of the final size.
/// A list less than half full is trimmed.
// Inlined into grammar.rs across codegen units, as for `Parser::plain_directives`.
#[inline]
pub(super) fn group_by_directive<'i>(
    mut scratch: Vec<Token<'i>>,
    mut directives: Vec<Directive<'i>>,
    occurrences: &mut [(usize, Range<usize>)],
) -> (Vec<Directive<'i>>, Vec<Token<'i>>) {
    if directives.capacity() / 2 > directives.len() {
        directives.shrink_to_fit();
    }
    // New names take the next index, so without repeats occurrence `i` is directive `i`.
    if occurrences.len() == directives.len() {
        for (directive, (_, range)) in directives.iter_mut().zip(occurrences.iter()) {
            directive.tokens = range.clone();
        }
        if scratch.capacity() / 2 > scratch.len() {
            scratch.shrink_to_fit();
        }
        return (directives, scratch);
    }
    occurrences.sort_by_key(|(slot, _)| *slot);
    let mut source: Vec<Option<Token<'i>>> = scratch.into_iter().map(Some).collect();
    let mut tokens = Vec::with_capacity(source.len());
    for (slot, range) in occurrences.iter() {
        let start = tokens.len();
        let moved = source.get_mut(range.clone()).unwrap_or_default();
        tokens.extend(moved.iter_mut().filter_map(Option::take));
        if let Some(directive) = directives.get_mut(*slot) {
            // Every occurrence has its name token: an empty range is a directive not seen yet.
            let from = if directive.tokens.is_empty() {
                start
            } else {
                directive.tokens.start
            };
            directive.tokens = from..tokens.len();
        }
    }
    (directives, tokens)
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

    use super::*;

    #[test]
    fn with_any_name_accepted_each_distinct_name_is_one_directive() {
        // Past the 32 names found by a scan, names are found in a map: both must merge
        // repeats (caddy groups a block's occurrences of a directive).
        let mut input = String::from(". {\n");
        for i in 0..100 {
            input.push_str(&alloc::format!("    n{i}\n"));
        }
        input.push_str("    n7 again\n    n70 again\n}\n");
        let blocks = super::super::parse(
            input.as_bytes(),
            super::super::ParseOptions {
                filename: "Corefile",
                directives: None,
                env: &crate::env::NoEnv,
                resolver: &mut crate::import::NoFiles,
            },
        )
        .unwrap();
        let block = &blocks[0];
        assert_eq!(block.directives.len(), 100);
        for name in ["n7", "n70"] {
            let texts: Vec<&str> = block
                .tokens_of(block.directive(name).unwrap())
                .iter()
                .map(|t| &*t.text)
                .collect();
            assert_eq!(texts, [name, name, "again"]);
        }
    }

    #[test]
    fn names_compare_equal_exactly_when_their_bytes_do() {
        // Every length of each way of comparing, and a difference at every position.
        for len in 0..=20 {
            let name: String = (0..len).map(|i| char::from(b'a' + i as u8)).collect();
            assert!(same_name(&name, &name.clone()));
            for at in 0..len {
                let mut other = name.clone().into_bytes();
                other[at] = b'-';
                let other = String::from_utf8(other).unwrap();
                assert!(!same_name(&name, &other), "{name} vs {other}");
            }
            assert!(!same_name(&name, &alloc::format!("{name}x")));
        }
    }

    #[test]
    fn directive_names_are_found_by_hash_including_duplicates_and_misses() {
        let valid = ValidNames::new(&["log", "errors", "log", "loop", "", "whoami"]);
        assert_eq!(valid.names, ["log", "errors", "loop", "", "whoami"]);
        for (id, name) in valid.names.iter().enumerate() {
            assert_eq!(valid.id(name), Some(id));
        }
        assert_eq!(valid.id("lo"), None);
        assert_eq!(valid.id("logs"), None);
        assert_eq!(ValidNames::new(&[]).id("log"), None);
    }
}
