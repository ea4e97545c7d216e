//! Monotonic time as plain values: the caller reads its clock and passes [`Instant`]s in.
//!
//! Both types count nanoseconds in a `u64` (about 584 years), like smoltcp's own time types, so
//! the crate never touches `std::time`. Arithmetic saturates instead of overflowing: a deadline
//! computed past the end of time is simply "never".

use core::fmt;
use core::ops::{Add, Sub};

/// A point on the caller's **monotonic** clock, in nanoseconds since an arbitrary origin.
///
/// Never feed wall-clock time here: stepping the wall clock (NTP, `date -s`) would shift every
/// deadline. The origin may differ between processes; only differences on one clock matter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

const NANOS_PER_MILLI: u64 = 1_000_000;
const NANOS_PER_SEC: u64 = 1_000_000_000;

impl Instant {
    /// The origin of the clock.
    pub const ZERO: Self = Self(0);

    /// The instant `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    /// The instant `millis` milliseconds after the origin (saturating).
    pub const fn from_millis(millis: u64) -> Self {
        Self(millis.saturating_mul(NANOS_PER_MILLI))
    }

    /// The instant `secs` seconds after the origin (saturating).
    pub const fn from_secs(secs: u64) -> Self {
        Self(secs.saturating_mul(NANOS_PER_SEC))
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// The time elapsed from `earlier` to `self`, or zero if `earlier` is later.
    pub const fn saturating_duration_since(self, earlier: Self) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// No time at all.
    pub const ZERO: Self = Self(0);

    /// `nanos` nanoseconds.
    pub const fn from_nanos(nanos: u64) -> Self {
        Self(nanos)
    }

    /// `millis` milliseconds (saturating).
    pub const fn from_millis(millis: u64) -> Self {
        Self(millis.saturating_mul(NANOS_PER_MILLI))
    }

    /// `secs` seconds (saturating).
    pub const fn from_secs(secs: u64) -> Self {
        Self(secs.saturating_mul(NANOS_PER_SEC))
    }

    /// The length in nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// The whole seconds in this duration, if it is a whole number of seconds.
    pub const fn whole_secs(self) -> Option<u64> {
        if self.0.is_multiple_of(NANOS_PER_SEC) {
            Some(self.0 / NANOS_PER_SEC)
        } else {
            None
        }
    }

    /// `self × numerator / denominator`, rounded down, saturating; zero if `denominator` is 0.
    pub const fn mul_div(self, numerator: u64, denominator: u64) -> Self {
        if denominator == 0 {
            return Self::ZERO;
        }
        let product = self.0 as u128 * numerator as u128 / denominator as u128;
        if product > u64::MAX as u128 {
            Self(u64::MAX)
        } else {
            Self(product as u64)
        }
    }

    /// `self − other`, or zero if `other` is longer.
    pub const fn saturating_sub(self, other: Self) -> Self {
        Self(self.0.saturating_sub(other.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// Saturates at the end of time.
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_add(rhs.0))
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// Saturates at the origin.
    fn sub(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_sub(rhs.0))
    }
}

impl Add for Duration {
    type Output = Duration;

    /// Saturates at the longest duration.
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_add(rhs.0))
    }
}

impl fmt::Display for Duration {
    /// Seconds with up to nine fractional digits, trailing zeros dropped: `15s`, `1.5s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0 / NANOS_PER_SEC;
        let mut frac = self.0 % NANOS_PER_SEC;
        if frac == 0 {
            return write!(f, "{secs}s");
        }
        let mut width = 9;
        while frac.is_multiple_of(10) {
            frac /= 10;
            width -= 1;
        }
        write!(f, "{secs}.{frac:0width$}s")
    }
}

impl fmt::Display for Instant {
    /// The time since the origin, as a [`Duration`] prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", Duration(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(
            Instant::from_nanos(u64::MAX) + Duration::from_secs(1),
            Instant::from_nanos(u64::MAX)
        );
        assert_eq!(Instant::ZERO - Duration::from_secs(1), Instant::ZERO);
        assert_eq!(
            Duration::from_secs(u64::MAX),
            Duration::from_nanos(u64::MAX)
        );
        assert_eq!(
            Instant::from_secs(1).saturating_duration_since(Instant::from_secs(2)),
            Duration::ZERO
        );
    }

    #[test]
    fn mul_div_is_exact_and_saturating() {
        assert_eq!(
            Duration::from_secs(15).mul_div(99, 101),
            Duration::from_nanos(14_702_970_297)
        );
        assert_eq!(
            Duration::from_nanos(u64::MAX).mul_div(3, 1),
            Duration::from_nanos(u64::MAX)
        );
        assert_eq!(Duration::from_secs(1).mul_div(1, 0), Duration::ZERO);
    }

    #[test]
    fn whole_seconds() {
        assert_eq!(Duration::from_secs(15).whole_secs(), Some(15));
        assert_eq!(Duration::from_millis(1500).whole_secs(), None);
    }

    #[test]
    fn display() {
        assert_eq!(Duration::from_secs(15).to_string(), "15s");
        assert_eq!(Duration::from_millis(1500).to_string(), "1.5s");
        assert_eq!(Duration::from_nanos(1).to_string(), "0.000000001s");
        assert_eq!(Instant::from_millis(2250).to_string(), "@2.25s");
    }
}
