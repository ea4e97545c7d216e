//! One shard of a cache table: entries by key, and the same keys in a vector, so that a
//! full shard evicts a random entry in constant time.
//!
//! CoreDNS evicts the first key of Go's map iteration, which starts at a random place. A
//! Rust `HashMap` iterates from the same place every time, so picking its n-th key walks n
//! of them: with a large `cache` capacity (1,000,000 is 3,906 entries per shard) that was
//! thousands of steps on every insert into a full shard.

use std::collections::HashMap;

use crate::plugin::prehashed::BuildPreHashed;

/// A value and the position of its key in [`Shard::keys`].
struct Slot<V> {
    index: usize,
    value: V,
}

/// Values by `u64` key (a hash already), at most `capacity` of them.
pub(super) struct Shard<V> {
    map: HashMap<u64, Slot<V>, BuildPreHashed>,
    /// Every key of `map`, each at its slot's `index`.
    keys: Vec<u64>,
    /// xorshift64 state for the eviction choice; never 0.
    rng: u64,
}

/// What [`Shard::insert`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Inserted {
    /// The key was there: its value is replaced.
    Replaced,
    /// A new key, with room for it.
    Added,
    /// A new key in a full shard: a random other entry made room.
    Evicted,
}

impl<V> Shard<V> {
    /// An empty shard whose eviction choices follow `seed`.
    pub(super) fn new(seed: u64) -> Self {
        Self {
            map: HashMap::default(),
            keys: Vec::new(),
            rng: seed | 1,
        }
    }

    /// The number of entries.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The value under `key`.
    pub(super) fn get_mut(&mut self, key: u64) -> Option<&mut V> {
        self.map.get_mut(&key).map(|slot| &mut slot.value)
    }

    /// Stores `value` under `key`. A new key in a shard that holds `capacity` entries (at
    /// least one) first evicts a random entry.
    pub(super) fn insert(&mut self, key: u64, value: V, capacity: usize) -> Inserted {
        if let Some(slot) = self.map.get_mut(&key) {
            slot.value = value;
            return Inserted::Replaced;
        }
        let evicted = self.len() >= capacity.max(1) && self.evict_random();
        let index = self.keys.len();
        self.map.insert(key, Slot { index, value });
        self.keys.push(key);
        if evicted {
            Inserted::Evicted
        } else {
            Inserted::Added
        }
    }

    /// Removes `key`'s entry; whether there was one.
    pub(super) fn remove(&mut self, key: u64) -> bool {
        let Some(slot) = self.map.remove(&key) else {
            return false;
        };
        if slot.index < self.keys.len() {
            self.keys.swap_remove(slot.index);
            // The last key moved into the freed place.
            if let Some(&moved) = self.keys.get(slot.index)
                && let Some(moved) = self.map.get_mut(&moved)
            {
                moved.index = slot.index;
            }
        }
        true
    }

    /// Removes a random entry; false if the shard is empty.
    fn evict_random(&mut self) -> bool {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let len = self.keys.len() as u64;
        let victim = match self.rng.checked_rem(len) {
            Some(at) => usize::try_from(at).ok().and_then(|at| self.keys.get(at)),
            None => None,
        };
        match victim {
            Some(&victim) => self.remove(victim),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key is in the map, at the index the map says, and nothing else is.
    fn assert_consistent<V>(shard: &Shard<V>) {
        assert_eq!(shard.map.len(), shard.keys.len());
        for (i, key) in shard.keys.iter().enumerate() {
            assert_eq!(shard.map[key].index, i);
        }
    }

    #[test]
    fn insert_replace_and_remove_keep_keys_and_map_in_step() {
        let mut shard = Shard::new(7);
        for k in 0..10u64 {
            assert_eq!(shard.insert(k, k * 10, 100), Inserted::Added);
        }
        assert_eq!(shard.insert(3, 333, 100), Inserted::Replaced);
        assert_eq!(shard.get_mut(3), Some(&mut 333));
        for k in [0, 9, 4, 4, 42] {
            shard.remove(k);
            assert_consistent(&shard);
        }
        assert_eq!(shard.len(), 7);
        assert!(shard.get_mut(4).is_none());
        assert_eq!(shard.get_mut(5), Some(&mut 50));
    }

    #[test]
    fn a_full_shard_evicts_one_random_entry_per_new_key() {
        let mut shard = Shard::new(0xDEAD_BEEF);
        let mut evicted = 0;
        for k in 0..1000u64 {
            if shard.insert(k, (), 39) == Inserted::Evicted {
                evicted += 1;
            }
            assert!(shard.len() <= 39);
        }
        assert_consistent(&shard);
        assert_eq!(shard.len(), 39);
        assert_eq!(evicted, 1000 - 39);
        // Random: neither the first 39 keys nor the last 39 are all that is left.
        assert!(shard.keys.iter().any(|&k| k >= 39));
        assert!(shard.keys.iter().any(|&k| k < 1000 - 39));
        // A key already there is replaced, even when full.
        let kept = shard.keys[0];
        assert_eq!(shard.insert(kept, (), 39), Inserted::Replaced);
        assert_eq!(shard.len(), 39);
    }

    #[test]
    fn capacity_zero_still_holds_one_entry() {
        let mut shard = Shard::new(1);
        assert_eq!(shard.insert(1, 'a', 0), Inserted::Added);
        assert_eq!(shard.insert(2, 'b', 0), Inserted::Evicted);
        assert_eq!(shard.len(), 1);
        assert_eq!(shard.get_mut(2), Some(&mut 'b'));
        assert_consistent(&shard);
    }
}
