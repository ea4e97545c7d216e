//! The acquire loop's randomised wait, from a caller-supplied seed (the crate has no randomness).

use crate::config::JITTER_FACTOR_TENTHS;
use crate::time::Duration;

/// A SplitMix64 generator: small, fast, and plenty for spreading out retries.
#[derive(Clone, Debug)]
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 32) as u32
    }

    /// client-go's `JitterUntil(…, RetryPeriod, 1.2, …)`: uniform in `[RP, RP + 1.2·RP)`.
    pub(crate) fn wait(&mut self, retry_period: Duration) -> Duration {
        let extra =
            retry_period.mul_div(JITTER_FACTOR_TENTHS * u64::from(self.next_u32()), 10 << 32);
        retry_period + extra
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/leader-lease.md` §3.2: each wait is uniform in `[RP, 2.2·RP)`.
    #[test]
    fn waits_stay_in_client_go_range() {
        let rp = Duration::from_secs(2);
        let mut jitter = Jitter::new(7);
        let waits: alloc::vec::Vec<Duration> = (0..1000).map(|_| jitter.wait(rp)).collect();
        assert!(
            waits
                .iter()
                .all(|w| *w >= rp && *w < Duration::from_millis(4400))
        );
        assert!(waits.iter().any(|w| *w < Duration::from_millis(2200)));
        assert!(waits.iter().any(|w| *w > Duration::from_millis(4200)));
    }
}
