//! How the kernel draws `numgen random mod N`: `nft_ng_random_eval` takes a 32-bit random
//! number `v` and answers `reciprocal_scale(v, N) = (v × N) >> 32`, so bucket `i` gets the
//! values from `⌈i·2^32/N⌉` up to `⌈(i+1)·2^32/N⌉`, which is not always exactly `2^32/N`.

use num_bigint::BigInt;
use num_rational::BigRational;

const SPACE: u128 = 1 << 32;

/// The first 32-bit value that lands in `bucket` of `modulus`.
fn first(bucket: u128, modulus: u128) -> u128 {
    (bucket * SPACE).div_ceil(modulus)
}

/// The kernel's probability of `bucket` under `numgen random mod modulus` (0 for a bucket at
/// or past the modulus).
pub(crate) fn kernel_share(bucket: u32, modulus: u32) -> BigRational {
    let (bucket, modulus) = (u128::from(bucket), u128::from(modulus));
    if modulus == 0 || bucket >= modulus {
        return BigRational::new(BigInt::from(0), BigInt::from(1));
    }
    let count = first(bucket + 1, modulus) - first(bucket, modulus);
    BigRational::new(BigInt::from(count), BigInt::from(SPACE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::One;

    #[test]
    fn buckets_cover_every_value_once() {
        for modulus in [1u32, 2, 3, 7, 10, 1000] {
            let total = (0..modulus)
                .map(|b| kernel_share(b, modulus))
                .fold(BigRational::new(0.into(), 1.into()), |a, b| a + b);
            assert!(total.is_one(), "mod {modulus}");
        }
        // Three buckets of 2^32 values: 1431655766, 1431655765, 1431655765.
        assert_eq!(
            kernel_share(0, 3),
            BigRational::new(1_431_655_766.into(), (1u64 << 32).into())
        );
        assert_eq!(
            kernel_share(2, 3),
            BigRational::new(1_431_655_765.into(), (1u64 << 32).into())
        );
        assert_eq!(kernel_share(3, 3), BigRational::new(0.into(), 1.into()));
    }
}
