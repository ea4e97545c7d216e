//! Whether an upstream counts as down: consecutive failures against `max_fails`, and
//! whether a failure should start the probe loop (the first one since the upstream was
//! last healthy, when `max_fails` is not 0). No socket, no clock: the probes themselves
//! are sent by [`upstream`](super::upstream).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The failure count of one upstream and whether a probe loop is running for it.
#[derive(Debug, Default)]
pub(crate) struct Health {
    /// Failures since the last successful probe.
    fails: AtomicU32,
    /// Set while a probe loop runs.
    checking: AtomicBool,
}

impl Health {
    /// Whether `max_fails` failures in a row mark the upstream down (0: never).
    pub(crate) fn is_down(&self, max_fails: u32) -> bool {
        max_fails > 0 && self.fails.load(Ordering::Relaxed) >= max_fails
    }

    /// Counts a failed exchange; true when the caller should start probing (health
    /// checks are on and no probe loop runs yet).
    pub(crate) fn failed(&self, max_fails: u32) -> bool {
        self.fails.fetch_add(1, Ordering::Relaxed);
        max_fails != 0 && !self.checking.swap(true, Ordering::AcqRel)
    }

    /// Counts a probe that got no reply.
    pub(crate) fn probe_failed(&self) {
        self.fails.fetch_add(1, Ordering::Relaxed);
    }

    /// A probe got a reply: the upstream is healthy again and the probe loop ends.
    pub(crate) fn probe_answered(&self) {
        self.fails.store(0, Ordering::Relaxed);
        self.checking.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_fails_failures_in_a_row_mark_it_down() {
        let health = Health::default();
        assert!(!health.is_down(2));
        health.failed(2);
        assert!(!health.is_down(2));
        health.failed(2);
        assert!(health.is_down(2));
        health.probe_answered();
        assert!(!health.is_down(2));
    }

    #[test]
    fn max_fails_zero_never_marks_it_down_nor_probes() {
        let health = Health::default();
        for _ in 0..5 {
            assert!(!health.failed(0));
        }
        assert!(!health.is_down(0));
    }

    #[test]
    fn one_probe_loop_runs_until_a_probe_is_answered() {
        let health = Health::default();
        assert!(health.failed(3));
        assert!(!health.failed(3));
        health.probe_failed();
        assert!(health.is_down(3));
        health.probe_answered();
        assert!(!health.is_down(3));
        // Healthy again: the next failure starts a new loop.
        assert!(health.failed(3));
    }
}
