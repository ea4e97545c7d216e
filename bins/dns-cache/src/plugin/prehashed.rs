//! A hasher for map keys that are random already (query IDs, cache keys that are hashes):
//! one multiplication spreads them over every bit, so the maps skip a second full hash.

use std::hash::{BuildHasherDefault, Hasher};

/// Hashes an integer key by one multiplication (Fibonacci hashing).
#[derive(Default)]
pub struct PreHashed(u64);

/// Builds [`PreHashed`] hashers, for `HashMap::with_hasher` / `HashMap::default`.
pub type BuildPreHashed = BuildHasherDefault<PreHashed>;

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(GOLDEN);
        }
    }

    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(GOLDEN);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn small_keys_reach_the_high_bits() {
        // hashbrown takes its control byte from the top seven bits.
        let build = BuildPreHashed::default();
        let tops: std::collections::HashSet<u64> =
            (0u16..64).map(|id| build.hash_one(id) >> 57).collect();
        assert!(tops.len() > 32, "{tops:?}");
    }
}
