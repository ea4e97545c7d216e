//! The duplicate / overlap check of zone addresses and listen addresses (spec section 4.4,
//! CoreDNS `validateZonesAndListeningAddresses`).

use alloc::boxed::Box;
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

/// The checker, on interned ids: feed it every (zone address, listen address) pair in block
/// and key order. Host id [`UNBOUND`] means "no `bind`". Ids keep the check cheap when many
/// zones meet many listen addresses.
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
