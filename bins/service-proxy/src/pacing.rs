//! When to sync: kube-proxy's bounded-frequency runner, with time as a parameter.
//!
//! Syncs start at most once per `min_interval` (measured start to start); with nothing
//! pending, a periodic sync runs every `sync_period` (it checks the canaries); a full resync
//! is due every `full_period`, and after anything that makes the kernel's state uncertain
//! (start-up, a failed restore, a lost canary), which the proxier itself tracks.

use std::time::{Duration, Instant};

/// What the next sync is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Services or EndpointSlices changed.
    Changes,
    /// Nothing changed for `sync_period`: check the canaries.
    Periodic,
    /// The periodic full resync (`full_period`).
    Full,
}

/// What to do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// Sync now.
    Now(Reason),
    /// Nothing to do before this instant (unless something changes).
    At(Instant),
}

/// The pacing state.
#[derive(Clone, Debug)]
pub struct Pacer {
    min_interval: Duration,
    sync_period: Duration,
    full_period: Duration,
    last_start: Option<Instant>,
    last_full: Option<Instant>,
}

impl Pacer {
    /// A pacer that has never synced.
    pub const fn new(min_interval: Duration, sync_period: Duration, full_period: Duration) -> Self {
        Self {
            min_interval,
            sync_period,
            full_period,
            last_start: None,
            last_full: None,
        }
    }

    /// What is due at `now`, given whether changes (or a full sync) are pending.
    pub fn due(&self, now: Instant, pending: bool) -> Due {
        let Some(last) = self.last_start else {
            return Due::Now(Reason::Full);
        };
        let earliest = last + self.min_interval;
        let full_at = self.last_full.map_or(now, |f| f + self.full_period);
        let periodic = last + self.sync_period;
        let (at, reason) = if full_at <= earliest.max(now) {
            (full_at.max(earliest), Reason::Full)
        } else if pending {
            (earliest, Reason::Changes)
        } else if full_at <= periodic {
            (full_at, Reason::Full)
        } else {
            (periodic, Reason::Periodic)
        };
        if at <= now {
            Due::Now(reason)
        } else {
            Due::At(at)
        }
    }

    /// A sync started at `now`; `full` when it rewrote everything.
    pub fn started(&mut self, now: Instant, full: bool) {
        self.last_start = Some(now);
        if full {
            self.last_full = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn pacer() -> Pacer {
        Pacer::new(1000 * MS, 30_000 * MS, 3_600_000 * MS)
    }

    #[test]
    fn the_first_sync_is_full_and_immediate() {
        assert_eq!(pacer().due(Instant::now(), false), Due::Now(Reason::Full));
    }

    #[test]
    fn changes_wait_for_the_minimum_interval_from_the_last_start() {
        let t0 = Instant::now();
        let mut p = pacer();
        p.started(t0, true);
        assert_eq!(p.due(t0 + 200 * MS, true), Due::At(t0 + 1000 * MS));
        assert_eq!(p.due(t0 + 1000 * MS, true), Due::Now(Reason::Changes));
        p.started(t0 + 1000 * MS, false);
        assert_eq!(p.due(t0 + 1500 * MS, true), Due::At(t0 + 2000 * MS));
    }

    #[test]
    fn without_changes_a_periodic_sync_runs_every_sync_period() {
        let t0 = Instant::now();
        let mut p = pacer();
        p.started(t0, true);
        assert_eq!(p.due(t0 + 5000 * MS, false), Due::At(t0 + 30_000 * MS));
        assert_eq!(p.due(t0 + 30_000 * MS, false), Due::Now(Reason::Periodic));
    }

    #[test]
    fn a_full_resync_is_due_every_full_period() {
        let t0 = Instant::now();
        let mut p = pacer();
        p.started(t0, true);
        let mut t = t0;
        for _ in 0..119 {
            t += 30_000 * MS;
            assert_eq!(p.due(t, false), Due::Now(Reason::Periodic));
            p.started(t, false);
        }
        t += 30_000 * MS;
        assert_eq!(p.due(t, false), Due::Now(Reason::Full));
        p.started(t, true);
        assert_eq!(p.due(t + MS, true), Due::At(t + 1000 * MS));
    }
}
