//! The duplicate / overlap check of zone addresses and listen addresses (`docs/corefile.md` §4.4,
//! CoreDNS `validateZonesAndListeningAddresses`).
//!
//! [`OverlapChecker`] takes CoreDNS's (zone address, listen address) pairs one at a time, as
//! CoreDNS does; [`BlockOverlapChecker`] takes a whole server block (its zones share its
//! listen addresses) and reports the same first conflict without forming the pairs, which
//! is what the CoreDNS view uses.

use alloc::boxed::Box;
use alloc::collections::btree_map::Entry;
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::zone::ZoneAddr;

/// A zone address bound to a listen address (`""` means every address).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Listener {
    /// The zone address.
    pub zone: ZoneAddr,
    /// The listen address from `bind`, or `""` when unbound.
    pub address: String,
}

impl fmt::Display for Listener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.zone)?;
        if !self.address.is_empty() {
            write!(f, " on {}", self.address)?;
        }
        Ok(())
    }
}

/// Two configurations claim the same zone address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OverlapError {
    /// The same zone, port, transport and address twice.
    AlreadyDefined(Box<Listener>),
    /// The same zone, port and transport, one bound to an address and one unbound.
    Overlap {
        /// The listener being added.
        listener: Box<Listener>,
        /// The one it collides with.
        with: Box<Listener>,
    },
}

impl fmt::Display for OverlapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyDefined(l) => write!(f, "cannot serve {l} - it is already defined"),
            Self::Overlap { listener, with } => write!(
                f,
                "cannot serve {listener} - zone overlap listener capacity with {with}"
            ),
        }
    }
}

impl core::error::Error for OverlapError {}

/// The pairwise checker, on interned ids: feed it every (zone address, listen address) pair
/// in block and key order. Host id [`UNBOUND`] means "no `bind`". Its time and memory grow
/// with the number of pairs; [`BlockOverlapChecker`] avoids forming them.
#[derive(Clone, Debug, Default)]
pub struct OverlapChecker {
    registered: PairSet,
    /// Per zone address, the host of the listener registered last (CoreDNS's
    /// `unboundOverlap` map, overwritten on every registration).
    last: BTreeMap<usize, usize>,
}

/// The host id of an unbound listener.
pub const UNBOUND: usize = 0;

/// Why a listener was refused, with the host id of the one it collides with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// The same zone address and host were registered before.
    AlreadyDefined,
    /// The same zone address is registered bound and unbound; the other listener's host.
    Overlap(usize),
}

impl OverlapChecker {
    /// Checks the listener `(zone, host)` and, unless `filtered` (the block uses `view`),
    /// registers it.
    pub fn add(&mut self, zone: usize, host: usize, filtered: bool) -> Result<(), Conflict> {
        if self.registered.contains(zone, host) {
            return Err(Conflict::AlreadyDefined);
        }
        if let Some(&already) = self.last.get(&zone) {
            if host == UNBOUND {
                return Err(Conflict::Overlap(already));
            }
            if self.registered.contains(zone, UNBOUND) {
                return Err(Conflict::Overlap(UNBOUND));
            }
        }
        if !filtered {
            self.registered.insert(zone, host);
            self.last.insert(zone, host);
        }
        Ok(())
    }
}

/// Where a block collides: the positions in its zone and host lists, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockConflict {
    /// Index into the block's zones.
    pub zone: usize,
    /// Index into the block's hosts (0 for an unbound block).
    pub host: usize,
    /// The conflict, as [`OverlapChecker::add`] reports it.
    pub conflict: Conflict,
}

/// The same check as [`OverlapChecker`], a whole block at a time and without ever forming
/// the (zone, host) pairs: every zone of a block shares the block's host list, so a zone
/// records which blocks registered it (a path in a tree of "registered by" classes that
/// zones with the same history share), and a block compares its hosts with each earlier
/// block once. Time and memory grow with zones plus hosts, not with their product.
#[derive(Clone, Debug, Default)]
pub struct BlockOverlapChecker {
    /// Per zone id, what is registered on it; absent means nothing.
    zones: BTreeMap<usize, Registered>,
    /// Registered bound blocks: their host sets and last host.
    blocks: Vec<BoundBlock>,
    /// The class tree: each class is its parent's history plus one block.
    classes: Vec<Class>,
}

/// What a zone address has registered.
#[derive(Clone, Copy, Debug)]
enum Registered {
    /// An unbound listener.
    Unbound,
    /// Bound listeners, of the blocks on this class's path.
    Bound(usize),
}

#[derive(Clone, Debug)]
struct BoundBlock {
    hosts: BTreeSet<usize>,
    /// The host registered last (CoreDNS's `unboundOverlap` value).
    last: usize,
}

#[derive(Clone, Copy, Debug)]
struct Class {
    parent: Option<usize>,
    block: usize,
}

impl BlockOverlapChecker {
    /// Checks every `(zone, host)` pair of a block in zone-major order, stopping at the first
    /// conflict, and unless `filtered` registers them. `hosts` empty or `[UNBOUND]` means the
    /// block has no `bind`; otherwise it holds no [`UNBOUND`].
    pub fn add_block(
        &mut self,
        zones: &[usize],
        hosts: &[usize],
        filtered: bool,
    ) -> Result<(), BlockConflict> {
        match hosts {
            [] | [UNBOUND] => self.add_unbound(zones, filtered),
            _ => self.add_bound(zones, hosts, filtered),
        }
    }

    fn add_unbound(&mut self, zones: &[usize], filtered: bool) -> Result<(), BlockConflict> {
        for (at, &zone) in zones.iter().enumerate() {
            let conflict = match self.zones.get(&zone) {
                None => {
                    if !filtered {
                        self.zones.insert(zone, Registered::Unbound);
                    }
                    continue;
                }
                Some(Registered::Unbound) => Conflict::AlreadyDefined,
                Some(&Registered::Bound(class)) => Conflict::Overlap(self.last_host(class)),
            };
            return Err(BlockConflict {
                zone: at,
                host: 0,
                conflict,
            });
        }
        Ok(())
    }

    fn add_bound(
        &mut self,
        zones: &[usize],
        hosts: &[usize],
        filtered: bool,
    ) -> Result<(), BlockConflict> {
        let mut first_at: BTreeMap<usize, usize> = BTreeMap::new();
        let mut repeated = None;
        for (at, &host) in hosts.iter().enumerate() {
            match first_at.entry(host) {
                Entry::Vacant(slot) => {
                    slot.insert(at);
                }
                Entry::Occupied(_) => repeated = repeated.or(Some(at)),
            }
        }
        let mut shared = SharedHosts {
            hosts,
            first_at: &first_at,
            by_class: BTreeMap::new(),
            by_block: BTreeMap::new(),
        };
        let this_block = self.blocks.len();
        if !filtered {
            // Registering a host twice in one block is a conflict like any other.
            shared.by_block.insert(this_block, Some(0));
            self.blocks.push(BoundBlock {
                hosts: first_at.keys().copied().collect(),
                last: hosts.last().copied().unwrap_or(UNBOUND),
            });
        }
        // The class each history moves to when this block registers, made once per history.
        let mut next_class: BTreeMap<Option<usize>, usize> = BTreeMap::new();
        for (at, &zone) in zones.iter().enumerate() {
            let history = match self.zones.get(&zone) {
                Some(Registered::Unbound) => {
                    return Err(BlockConflict {
                        zone: at,
                        host: 0,
                        conflict: Conflict::Overlap(UNBOUND),
                    });
                }
                Some(&Registered::Bound(class)) => Some(class),
                None => None,
            };
            let clash = history.and_then(|class| shared.first_in_class(self, class));
            let clash = if filtered {
                clash
            } else {
                earliest(clash, repeated)
            };
            if let Some(host) = clash {
                return Err(BlockConflict {
                    zone: at,
                    host,
                    conflict: Conflict::AlreadyDefined,
                });
            }
            if !filtered {
                let class = *next_class.entry(history).or_insert_with(|| {
                    self.classes.push(Class {
                        parent: history,
                        block: this_block,
                    });
                    self.classes.len() - 1
                });
                self.zones.insert(zone, Registered::Bound(class));
            }
        }
        Ok(())
    }

    /// The host registered last on a zone whose history is `class`.
    fn last_host(&self, class: usize) -> usize {
        self.classes
            .get(class)
            .and_then(|c| self.blocks.get(c.block))
            .map_or(UNBOUND, |b| b.last)
    }
}

/// One block's hosts compared with earlier blocks, remembered per class and per block.
struct SharedHosts<'h> {
    hosts: &'h [usize],
    /// Each host's first position in `hosts`.
    first_at: &'h BTreeMap<usize, usize>,
    /// Per class: the first position in `hosts` of a host some block of its path has.
    by_class: BTreeMap<usize, Option<usize>>,
    /// Per earlier block: the first position in `hosts` of a host it has.
    by_block: BTreeMap<usize, Option<usize>>,
}

impl SharedHosts<'_> {
    /// The first position in `hosts` of a host registered on a zone whose history is
    /// `class`. Walks the path up to the nearest class already answered (no recursion).
    fn first_in_class(&mut self, checker: &BlockOverlapChecker, class: usize) -> Option<usize> {
        let mut path = Vec::new();
        let mut cursor = Some(class);
        let mut known = None;
        while let Some(at) = cursor {
            if let Some(&answer) = self.by_class.get(&at) {
                known = answer;
                break;
            }
            path.push(at);
            cursor = checker.classes.get(at).and_then(|c| c.parent);
        }
        for at in path.into_iter().rev() {
            if let Some(c) = checker.classes.get(at) {
                known = earliest(known, self.first_in_block(checker, c.block));
            }
            self.by_class.insert(at, known);
        }
        known
    }

    /// The first position in `hosts` of a host of the registered block `block`, looking
    /// through the smaller of the two host lists.
    fn first_in_block(&mut self, checker: &BlockOverlapChecker, block: usize) -> Option<usize> {
        if let Some(&answer) = self.by_block.get(&block) {
            return answer;
        }
        let other = &checker.blocks.get(block)?.hosts;
        let answer = if other.len() < self.first_at.len() {
            other
                .iter()
                .filter_map(|host| self.first_at.get(host).copied())
                .min()
        } else {
            self.hosts.iter().position(|host| other.contains(host))
        };
        self.by_block.insert(block, answer);
        answer
    }
}

/// The smaller of two optional positions, `None` meaning none.
fn earliest(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A set of `(zone, host)` id pairs: a hash table (open addressing, linear probing, at most
/// three quarters full) of the pair packed into a `u64`, and a sorted set for ids too large to pack.
/// Many zones times many listen addresses make millions of pairs; the table keeps each
/// lookup at a few neighbouring memory accesses and a pair at 11 to 21 bytes.
#[derive(Clone, Debug, Default)]
struct PairSet {
    /// Packed pairs ([`pack`]), 0 for an empty slot; the length is 0 or a power of two.
    table: Vec<u64>,
    /// The number of pairs in `table`.
    len: usize,
    /// Pairs that do not pack (ids of 2^32 - 1 and above).
    spill: BTreeSet<(usize, usize)>,
}

/// Packs a pair into a non-zero `u64`, if both ids are small enough.
fn pack(zone: usize, host: usize) -> Option<u64> {
    let zone = u32::try_from(zone).ok().filter(|&z| z < u32::MAX)?;
    let host = u32::try_from(host).ok()?;
    Some((u64::from(zone) + 1) << 32 | u64::from(host))
}

impl PairSet {
    /// The slot holding `key`, or the empty slot where it belongs; `None` for no table.
    fn slot(&self, key: u64) -> Option<usize> {
        let mask = self.table.len().checked_sub(1)?;
        // Fibonacci hashing: the high bits of the product mix every bit of the key.
        let mut at = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
        loop {
            match self.table.get(at) {
                Some(&slot) if slot != 0 && slot != key => at = (at + 1) & mask,
                _ => return Some(at),
            }
        }
    }

    fn contains(&self, zone: usize, host: usize) -> bool {
        match pack(zone, host) {
            Some(key) => self
                .slot(key)
                .is_some_and(|at| self.table.get(at) == Some(&key)),
            None => self.spill.contains(&(zone, host)),
        }
    }

    fn insert(&mut self, zone: usize, host: usize) {
        let Some(key) = pack(zone, host) else {
            self.spill.insert((zone, host));
            return;
        };
        if self.len.saturating_mul(4) >= self.table.len().saturating_mul(3) {
            self.grow();
        }
        if let Some(slot) = self.slot(key).and_then(|at| self.table.get_mut(at))
            && *slot == 0
        {
            *slot = key;
            self.len += 1;
        }
    }

    /// Doubles the table (16 slots at first) and reinserts every pair.
    fn grow(&mut self) {
        let size = self.table.len().saturating_mul(2).max(16);
        let old = core::mem::replace(&mut self.table, alloc::vec![0; size]);
        for key in old.into_iter().filter(|&key| key != 0) {
            if let Some(slot) = self.slot(key).and_then(|at| self.table.get_mut(at)) {
                *slot = key;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_found_whatever_their_ids() {
        let mut set = PairSet::default();
        let big = [
            0,
            1,
            7,
            u32::MAX as usize - 1,
            u32::MAX as usize,
            usize::MAX,
        ];
        for &zone in &big {
            for &host in &big {
                assert!(!set.contains(zone, host));
                set.insert(zone, host);
                assert!(set.contains(zone, host));
            }
        }
        for zone in 0..300 {
            for host in 0..30 {
                set.insert(zone, host);
            }
        }
        assert!((0..300).all(|z| (0..30).all(|h| set.contains(z, h))));
        assert!(!set.contains(300, 0) && !set.contains(0, 30));
        assert!(big.iter().all(|&z| big.iter().all(|&h| set.contains(z, h))));
    }

    /// Checks blocks `(zones, hosts, filtered)` pair by pair with [`OverlapChecker`], in
    /// CoreDNS's order, and reports the first conflict as [`BlockOverlapChecker`] does.
    fn pairwise(blocks: &[(Vec<usize>, Vec<usize>, bool)]) -> Option<(usize, BlockConflict)> {
        let mut checker = OverlapChecker::default();
        for (at, (zones, hosts, filtered)) in blocks.iter().enumerate() {
            let hosts = if hosts.is_empty() {
                &alloc::vec![UNBOUND]
            } else {
                hosts
            };
            for (z, &zone) in zones.iter().enumerate() {
                for (h, &host) in hosts.iter().enumerate() {
                    if let Err(conflict) = checker.add(zone, host, *filtered) {
                        let clash = BlockConflict {
                            zone: z,
                            host: h,
                            conflict,
                        };
                        return Some((at, clash));
                    }
                }
            }
        }
        None
    }

    fn by_blocks(blocks: &[(Vec<usize>, Vec<usize>, bool)]) -> Option<(usize, BlockConflict)> {
        let mut checker = BlockOverlapChecker::default();
        blocks
            .iter()
            .enumerate()
            .find_map(|(at, (zones, hosts, filtered))| {
                checker
                    .add_block(zones, hosts, *filtered)
                    .err()
                    .map(|c| (at, c))
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The block checker reports exactly the first conflict the pairwise one finds.
        #[test]
        fn block_checker_agrees_with_pairs(
            blocks in proptest::collection::vec(
                (
                    proptest::collection::vec(0usize..4, 1..4),
                    proptest::collection::vec(1usize..5, 0..4),
                    proptest::bool::weighted(0.2),
                ),
                1..6,
            )
        ) {
            proptest::prop_assert_eq!(by_blocks(&blocks), pairwise(&blocks));
        }
    }

    #[test]
    fn many_zones_times_many_hosts_form_no_pairs() {
        let mut checker = BlockOverlapChecker::default();
        let zones: Vec<usize> = (0..100_000).collect();
        let hosts: Vec<usize> = (1..=1_000).collect();
        assert_eq!(checker.add_block(&zones, &hosts, false), Ok(()));
        let more: Vec<usize> = (1_001..=2_000).collect();
        assert_eq!(checker.add_block(&zones, &more, false), Ok(()));
        assert_eq!(checker.classes.len(), 2);
        assert_eq!(
            checker.add_block(&zones[5..], &[3_000, 1_500], false),
            Err(BlockConflict {
                zone: 0,
                host: 1,
                conflict: Conflict::AlreadyDefined
            })
        );
    }

    #[test]
    fn checker_reports_like_coredns() {
        let mut checker = OverlapChecker::default();
        assert_eq!(checker.add(0, 1, false), Ok(()));
        assert_eq!(checker.add(0, 1, false), Err(Conflict::AlreadyDefined));
        assert_eq!(checker.add(0, UNBOUND, false), Err(Conflict::Overlap(1)));
        assert_eq!(checker.add(1, UNBOUND, false), Ok(()));
        assert_eq!(checker.add(1, 2, true), Err(Conflict::Overlap(UNBOUND)));
    }
}
