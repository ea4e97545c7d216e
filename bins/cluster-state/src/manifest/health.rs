//! Whether a source keeps up: the manifest watcher times each scan of the folder, and a scan
//! that has not finished within [`WATCHER_STALL_LIMIT`] makes the source unhealthy, so that a
//! binary's `/healthz` turns red instead of serving stale objects forever.
//!
//! A quiet folder is healthy: the watcher scans only when something changed, so only a scan
//! that started and did not finish counts. Time is an argument, for the tests.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long one scan of the manifest folder may take before the source is unhealthy (2
/// minutes: reading and parsing a folder of the largest files takes seconds).
pub const WATCHER_STALL_LIMIT: Duration = Duration::from_secs(120);

/// Whether a source keeps up, for a binary's `/healthz`; cheap to clone, and it stays current.
///
/// The manifest source is unhealthy while a scan of its folder has been running for longer
/// than [`WATCHER_STALL_LIMIT`] (the watcher thread is stuck); the API source is always
/// healthy here (its watchers retry with backoff, and report through the metrics).
#[derive(Debug, Clone, Default)]
pub struct SourceHealth {
    /// When the running scan started, if one runs; `None` inside: a source without a watcher.
    scanning_since: Option<Arc<Mutex<Option<Instant>>>>,
}

impl SourceHealth {
    /// The health of a watcher that has not scanned yet.
    pub(crate) fn watcher() -> Self {
        Self {
            scanning_since: Some(Arc::default()),
        }
    }

    fn set(&self, value: Option<Instant>) {
        if let Some(since) = &self.scanning_since {
            *since.lock().unwrap_or_else(PoisonError::into_inner) = value;
        }
    }

    /// A scan starts at `now`.
    pub(crate) fn scan_started(&self, now: Instant) {
        self.set(Some(now));
    }

    /// The running scan finished. Not called if the scan panicked: the source then turns
    /// unhealthy once the limit has passed, as it should.
    pub(crate) fn scan_finished(&self) {
        self.set(None);
    }

    /// Why the source is unhealthy at `now` (one line, for a log or a `/healthz` body), or
    /// `None` while it is healthy.
    pub fn problem(&self, now: Instant) -> Option<String> {
        let since = self.scanning_since.as_ref()?;
        let started = (*since.lock().unwrap_or_else(PoisonError::into_inner))?;
        let running = now.saturating_duration_since(started);
        (running > WATCHER_STALL_LIMIT).then(|| {
            format!(
                "the manifest watcher has been stuck in a scan for {} s (the limit is {} s)",
                running.as_secs(),
                WATCHER_STALL_LIMIT.as_secs()
            )
        })
    }

    /// Whether the source is healthy at `now`.
    pub fn healthy(&self, now: Instant) -> bool {
        self.problem(now).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_running_past_the_limit_is_unhealthy_until_it_finishes() {
        let start = Instant::now();
        let health = SourceHealth::watcher();
        let observer = health.clone();
        assert!(
            observer.healthy(start + 10 * WATCHER_STALL_LIMIT),
            "never scanned"
        );
        health.scan_started(start);
        assert!(observer.healthy(start + WATCHER_STALL_LIMIT));
        let late = start + WATCHER_STALL_LIMIT + Duration::from_secs(1);
        assert_eq!(
            observer.problem(late).as_deref(),
            Some("the manifest watcher has been stuck in a scan for 121 s (the limit is 120 s)")
        );
        health.scan_finished();
        assert!(observer.healthy(late));
        // A quiet folder stays healthy, however long.
        assert!(observer.healthy(start + 100 * WATCHER_STALL_LIMIT));
    }

    #[test]
    fn a_source_without_a_watcher_is_healthy() {
        let health = SourceHealth::default();
        health.scan_started(Instant::now());
        assert!(health.healthy(Instant::now() + 2 * WATCHER_STALL_LIMIT));
    }
}
