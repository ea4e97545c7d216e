//! Real time for the state machine: a monotonic clock mapped to [`leader_lease::Instant`], and the
//! wall clock that only stamps `acquireTime`/`renewTime`.

use std::time::{SystemTime, UNIX_EPOCH};

use leader_lease::MicroTime;
use tokio::time::Instant;

/// Maps `tokio::time::Instant` (monotonic; paused and advanced in tests) to the state machine's
/// [`leader_lease::Instant`], counting nanoseconds from a fixed origin taken at creation.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: Instant,
}

impl Clock {
    /// A clock whose origin is the current instant.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }

    /// The current instant on the state machine's time line.
    pub fn now(&self) -> leader_lease::Instant {
        self.to_lease(Instant::now())
    }

    /// `instant` on the state machine's time line (the origin if it is earlier).
    pub fn to_lease(&self, instant: Instant) -> leader_lease::Instant {
        let nanos = instant.saturating_duration_since(self.origin).as_nanos();
        leader_lease::Instant::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// `instant` of the state machine back on tokio's clock.
    pub fn to_tokio(&self, instant: leader_lease::Instant) -> Instant {
        let offset = std::time::Duration::from_nanos(instant.as_nanos());
        // Past the end of tokio's range means "never": a date far enough away serves.
        self.origin
            .checked_add(offset)
            .unwrap_or_else(|| self.origin + FAR_FUTURE)
    }

    /// The wall clock, for the record's human-readable timestamps only. A clock set before 1970
    /// reads as the epoch.
    pub fn wall(&self) -> MicroTime {
        let micros = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
        MicroTime::from_unix_micros(micros)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// About 30 years: later than any deadline the state machine computes from sane timings.
const FAR_FUTURE: std::time::Duration = std::time::Duration::from_secs(86_400 * 365 * 30);

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn instants_map_both_ways() {
        let clock = Clock::new();
        assert_eq!(clock.now(), leader_lease::Instant::ZERO);
        tokio::time::advance(std::time::Duration::from_millis(1500)).await;
        let now = clock.now();
        assert_eq!(now, leader_lease::Instant::from_millis(1500));
        assert_eq!(clock.to_tokio(now), Instant::now());
        assert_eq!(
            clock.to_lease(clock.origin - std::time::Duration::from_secs(1)),
            leader_lease::Instant::ZERO
        );
    }

    #[test]
    fn the_wall_clock_is_after_2020() {
        let wall = Clock::new().wall();
        assert!(wall > MicroTime::from_unix_micros(1_577_836_800_000_000));
    }
}
