//! Probabilities of `-m statistic --mode random` rules (`docs/iptables.md` §4): kube-proxy's
//! `%0.10f` strings, the kernel's 31-bit thresholds, exact distributions and weighted chains.

use alloc::string::String;
use alloc::vec::Vec;

use num_bigint::{BigInt, BigUint};
pub use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::model::Probability;

/// `2^31`: the kernel compares `random & 0x7FFFFFFF` with the stored threshold.
pub const KERNEL_SCALE: u64 = 1 << 31;

/// `round_half_even(num / 2^shift × 10^decimals)` printed with `decimals` decimals.
fn fixed(num: u128, shift: u32, decimals: u32) -> String {
    let scaled = num.saturating_mul(10u128.pow(decimals));
    let (whole, rest) = if shift >= 128 {
        (0, scaled)
    } else {
        (scaled >> shift, scaled & ((1u128 << shift) - 1))
    };
    let half = if shift == 0 || shift >= 128 {
        0
    } else {
        1u128 << (shift - 1)
    };
    let rounded = if shift == 0 || shift >= 128 {
        whole
    } else if rest > half || (rest == half && whole % 2 == 1) {
        whole + 1
    } else {
        whole
    };
    let unit = 10u128.pow(decimals);
    alloc::format!(
        "{}.{:0width$}",
        rounded / unit,
        rounded % unit,
        width = decimals as usize
    )
}

/// Go's `fmt.Sprintf("%0.10f", 1.0/float64(n))`, kube-proxy's `computeProbability`
/// (`docs/iptables.md` §4.1): the binary double `1/n` rounded exactly, ties to even. `n = 0` gives
/// `+Inf`, as Go does.
pub fn compute_probability(n: u64) -> String {
    if n == 0 {
        return "+Inf".into();
    }
    let x = 1.0 / n as f64;
    // x = mantissa × 2^-shift exactly (x ≤ 1 is a normal or subnormal double).
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64;
    let (mantissa, shift) = if exponent == 0 {
        (bits & ((1 << 52) - 1), 1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), 1075 - exponent)
    };
    fixed(
        u128::from(mantissa),
        u32::try_from(shift).unwrap_or(u32::MAX),
        10,
    )
}

/// The threshold `iptables` stores for `--probability p`: `lround(strtod(p) × 2^31)`
/// (`libxt_statistic`); the kernel matches with probability `threshold / 2^31`.
pub fn kernel_threshold(probability: &Probability) -> u32 {
    let p: f64 = probability.as_str().parse().unwrap_or(0.0);
    let x = p * KERNEL_SCALE as f64;
    let whole = x as u64;
    let rounded = if x - whole as f64 >= 0.5 {
        whole + 1
    } else {
        whole
    };
    u32::try_from(rounded).unwrap_or(u32::MAX)
}

/// How `iptables-save` prints a stored threshold: `%.11f` of `threshold / 2^31`
/// (`0.3333333333` → `0.33333333349`).
pub fn save_probability(threshold: u32) -> String {
    fixed(u128::from(threshold), 31, 11)
}

/// The probability as written, as an exact decimal rational (`0.3333333333` = 3333333333/10^10).
pub fn decimal_value(probability: &Probability) -> BigRational {
    let text = probability.as_str();
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits: String = int.chars().chain(frac.chars()).collect();
    let numerator = BigUint::parse_bytes(digits.as_bytes(), 10).unwrap_or_default();
    let denominator = num_traits::pow(BigUint::from(10u8), frac.len());
    BigRational::new(BigInt::from(numerator), BigInt::from(denominator))
}

/// The probability the kernel really applies: `kernel_threshold(p) / 2^31`.
pub fn kernel_value(probability: &Probability) -> BigRational {
    BigRational::new(
        BigInt::from(kernel_threshold(probability)),
        BigInt::from(KERNEL_SCALE),
    )
}

/// Which arithmetic turns kube-proxy's rule `k` (probability `1/k`) into a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    /// The ideal `1/k`.
    Exact,
    /// The `%0.10f` string taken as an exact decimal.
    Decimal,
    /// The kernel's `lround(p × 2^31) / 2^31` of the string.
    Kernel,
}

impl Arithmetic {
    /// The probability of a rule written for `k` remaining endpoints.
    pub fn rule_probability(self, k: u64) -> BigRational {
        let text = compute_probability(k);
        match (self, Probability::new(&text)) {
            (Self::Exact, _) | (_, None) => BigRational::new(BigInt::one(), BigInt::from(k.max(1))),
            (Self::Decimal, Some(p)) => decimal_value(&p),
            (Self::Kernel, Some(p)) => kernel_value(&p),
        }
    }
}

/// The outcome distribution of a chain of random rules: `probabilities[i]` is rule i's match
/// probability, and a final unconditional rule takes the rest (`probabilities.len() + 1` outcomes).
pub fn chain_distribution(probabilities: &[BigRational]) -> Vec<BigRational> {
    let mut remaining = BigRational::one();
    let mut out = Vec::with_capacity(probabilities.len() + 1);
    for q in probabilities {
        out.push(&remaining * q);
        remaining *= BigRational::one() - q;
    }
    out.push(remaining);
    out
}

/// The realised split of kube-proxy's rules over `n` endpoints (`p(n)`, `p(n-1)`, …, then an
/// unconditional rule), in `arithmetic`.
pub fn uniform_distribution(n: u64, arithmetic: Arithmetic) -> Vec<BigRational> {
    let probabilities: Vec<BigRational> = (2..=n)
        .rev()
        .map(|k| arithmetic.rule_probability(k))
        .collect();
    chain_distribution(&probabilities)
}

/// The worst relative error of a distribution meant to be uniform: `max |n·P_i − 1|`.
pub fn worst_uniform_error(distribution: &[BigRational]) -> BigRational {
    let n = BigInt::from(distribution.len());
    distribution
        .iter()
        .map(|p| BigRational::new_raw((&n * p.numer() - p.denom()).abs(), p.denom().abs()))
        .max()
        .unwrap_or_else(BigRational::zero)
}

/// An approximation of `value` as a double (exact fractions can have tens of thousands of
/// bits, beyond the range of a direct conversion).
pub fn to_f64(value: &BigRational) -> f64 {
    let bits = value.numer().bits().max(value.denom().bits());
    let shift = usize::try_from(bits.saturating_sub(96)).unwrap_or(usize::MAX);
    let numer = (value.numer() >> shift).to_f64().unwrap_or(f64::NAN);
    let denom = (value.denom() >> shift).to_f64().unwrap_or(f64::NAN);
    numer / denom
}

/// A rule chain for weighted endpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedChain {
    /// The `--probability` of rules `0 … n−2` (the last rule is unconditional).
    pub probabilities: Vec<Probability>,
    /// The realised share of each endpoint with the kernel's arithmetic.
    pub distribution: Vec<BigRational>,
    /// `max |P_i / target_i − 1|` over endpoints with a non-zero weight.
    pub worst_error: BigRational,
}

/// `q` as a 10-decimal probability string, `digits / 10^10` with `digits ≤ 10^10`.
fn ten_decimals(digits: u64) -> Option<Probability> {
    let digits = digits.min(10_000_000_000);
    Probability::new(&alloc::format!(
        "{}.{:010}",
        digits / 10_000_000_000,
        digits % 10_000_000_000
    ))
}

/// Turns endpoint weights into a chain of 10-decimal probabilities whose realised (kernel)
/// shares are as close to `w_i / Σw` as the arithmetic allows: each rule corrects for the
/// rounding of the rules before it. `None` when there are no weights or they sum to zero.
pub fn weighted_chain(weights: &[u64]) -> Option<WeightedChain> {
    let total: u128 = weights.iter().map(|w| u128::from(*w)).sum();
    if total == 0 {
        return None;
    }
    let target = |w: u64| BigRational::new(BigInt::from(w), BigInt::from(total));
    let scale = BigRational::from_integer(BigInt::from(10_000_000_000u64));
    let mut remaining = BigRational::one();
    let mut probabilities = Vec::new();
    let mut distribution = Vec::new();
    let (_, rules) = weights.split_last()?;
    for w in rules {
        let goal = target(*w);
        let ideal = if remaining.is_zero() {
            BigRational::zero()
        } else {
            &goal / &remaining
        };
        let floor = (ideal * &scale).floor().to_integer().to_u64().unwrap_or(0);
        let best = [floor, floor.saturating_add(1)]
            .into_iter()
            .filter_map(ten_decimals)
            .min_by_key(|p| (&remaining * kernel_value(p) - &goal).abs())?;
        let q = kernel_value(&best);
        distribution.push(&remaining * &q);
        remaining *= BigRational::one() - q;
        probabilities.push(best);
    }
    distribution.push(remaining);
    let worst_error = weights
        .iter()
        .zip(&distribution)
        .filter(|(w, _)| **w > 0)
        .map(|(w, p)| (p / target(*w) - BigRational::one()).abs())
        .max()
        .unwrap_or_else(BigRational::zero);
    Some(WeightedChain {
        probabilities,
        distribution,
        worst_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_probability_matches_go_spec_4_1() {
        assert_eq!(compute_probability(1), "1.0000000000");
        assert_eq!(compute_probability(3), "0.3333333333");
        assert_eq!(compute_probability(100_001), "0.0000099999");
        // 1/2048 = 0.00048828125 exactly: a tie, rounded to even as Go does.
        assert_eq!(compute_probability(2048), "0.0004882812");
        assert_eq!(compute_probability(4096), "0.0002441406");
    }

    #[test]
    fn kernel_threshold_and_save_spelling_spec_4_2() {
        let p = |s: &str| Probability::new(s).unwrap();
        assert_eq!(
            save_probability(kernel_threshold(&p("0.3333333333"))),
            "0.33333333349"
        );
        assert_eq!(
            save_probability(kernel_threshold(&p("0.2"))),
            "0.20000000019"
        );
        assert_eq!(
            save_probability(kernel_threshold(&p("0.0001"))),
            "0.00009999983"
        );
        assert_eq!(
            save_probability(kernel_threshold(&p("0.5000000000"))),
            "0.50000000000"
        );
        assert_eq!(kernel_threshold(&p("1")), 1 << 31);
        assert_eq!(kernel_threshold(&p("0.0000000001")), 0);
    }

    #[test]
    fn three_endpoints_split_spec_4_3() {
        let d: Vec<f64> = uniform_distribution(3, Arithmetic::Kernel)
            .iter()
            .map(to_f64)
            .collect();
        assert!((d[0] - 0.333333333489).abs() < 1e-12, "{d:?}");
        assert!((d[1] - 0.333333333256).abs() < 1e-12, "{d:?}");
        assert_eq!(
            uniform_distribution(2, Arithmetic::Kernel),
            [
                BigRational::new(1.into(), 2.into()),
                BigRational::new(1.into(), 2.into())
            ]
        );
    }

    #[test]
    fn worst_errors_match_the_table_of_spec_4_3() {
        for (n, decimal, kernel) in [(3u64, 1.0e-10, 4.7e-10), (100, 4.8e-9, 2.2e-8)] {
            let d = to_f64(&worst_uniform_error(&uniform_distribution(
                n,
                Arithmetic::Decimal,
            )));
            let k = to_f64(&worst_uniform_error(&uniform_distribution(
                n,
                Arithmetic::Kernel,
            )));
            assert!((d / decimal - 1.0).abs() < 0.06, "n={n} decimal {d}");
            assert!((k / kernel - 1.0).abs() < 0.06, "n={n} kernel {k}");
        }
    }

    #[test]
    fn weighted_chain_follows_the_weights() {
        let chain = weighted_chain(&[1, 2, 1]).unwrap();
        assert_eq!(chain.probabilities.len(), 2);
        assert_eq!(chain.probabilities[0].as_str(), "0.2500000000");
        assert!(
            to_f64(&chain.worst_error) < 1e-9,
            "{}",
            to_f64(&chain.worst_error)
        );
        let uniform = weighted_chain(&[1, 1, 1]).unwrap();
        let kube = to_f64(&worst_uniform_error(&uniform_distribution(
            3,
            Arithmetic::Kernel,
        )));
        assert!(to_f64(&uniform.worst_error) <= kube);
        assert!(weighted_chain(&[0, 0]).is_none());
        assert_eq!(
            weighted_chain(&[0, 5]).unwrap().probabilities[0].as_str(),
            "0.0000000000"
        );
    }
}
